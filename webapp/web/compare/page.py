"""The Bytes page's comparison: side A is the page's tokenizer, side B the "Compare with…" fields.

What it does not do: encode a side (webapp.web.compare.comparing), routes,
or render tokens itself (webapp.web.common.viewmodels).

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

from typing import Any, Mapping

from webapp.infra import compound_inputs, inputs
from webapp.opened import active as act
from webapp.opened.store import OpenedStatus
from webapp.web.common import viewmodels as vm
from webapp.web.compare.comparing import Side, compare_sides, encode_side
from webapp.tokenizer import TokenizerError, is_preset

#: The Bytes page fields of side B (kept in share links).
PAGE_FIELDS = ("compare", "compare_merges", "compare_pretokenize", "compare_special")
#: `compare` takes this value when side B is the typed `compare_merges`.
TYPED = "merges"
#: Page field showing each spec field's errors.
_PAGE_FIELD = {"tokenizer": "compare", "allowed_special": "compare", "merges": "compare_merges",
               "pretokenize": "compare_pretokenize"}



def _spec_a(state: Mapping[str, str]) -> dict[str, Any]:
    ref = state.get("tokenizer", "")
    spec: dict[str, Any] = {"tokenizer": ref} if ref else {"merges": state.get("merges", "")}
    spec["pretokenize"] = state.get("pretokenize") or "none"
    spec["allowed_special"] = state.get("special", "")
    return spec


def _spec_b(state: Mapping[str, str]) -> dict[str, Any]:
    choice = state.get("compare", "")
    spec: dict[str, Any] = {"merges": state.get("compare_merges", "")} if choice == TYPED else {"tokenizer": choice}
    spec["pretokenize"] = state.get("compare_pretokenize", "")
    spec["allowed_special"] = state.get("compare_special", "")
    return spec


def _page_error(exc: TokenizerError) -> tuple[str, TokenizerError]:
    """A "b.merges: ..." error as the page shows it, beside the B field it names."""
    inner = exc.field.split(".", 1)[1] if "." in exc.field else exc.field
    message = exc.message[2:] if exc.message.startswith("b.") else exc.message
    name = _PAGE_FIELD.get(inner, "compare")
    return name, TokenizerError(message, field=name, location=exc.location)


def _side_view(side: Side, differs: tuple[bool, ...], text: str) -> dict[str, Any]:
    groups = vm.byte_token_views(side.trace, text, side.special_ids)
    for group in groups:
        for view in group.tokens:
            view.differs = differs[view.index]
    return {"label": side.label, "scheme": side.scheme, "count": len(side.ids), "groups": groups,
            "shown": len(side.trace.tokens), "differing": sum(differs)}


def page_compare(state: Mapping[str, str]) -> tuple[dict[str, Any] | None, dict[str, TokenizerError]]:
    """What the comparison card shows for a Bytes page state, and errors of the B fields.

    None when no comparison is asked for or side A does not encode (the page
    shows A's errors already).
    """
    if not state.get("compare"):
        return None, {}
    limits = inputs.current_limits()
    try:
        text = inputs.read_text(state.get("text", ""), limits, form=True)
        spec_a = compound_inputs.read_tokenizer_spec(_spec_a(state), "a", limits)
    except TokenizerError:
        return None, {}  # the page shows these errors beside A's own fields
    try:
        side_a = encode_side(spec_a, text, limits.render_max_tokens)
    except TokenizerError as exc:  # A encodes for the page but cannot be compared (a text-changing file)
        return {"error": exc.message, "side": "A"}, {}
    try:
        spec_b = compound_inputs.read_tokenizer_spec(_spec_b(state), "b", limits)
        try:
            side_b = encode_side(spec_b, text, limits.render_max_tokens)
        except TokenizerError as exc:
            raise compound_inputs.within("b", exc) from None
    except TokenizerError as exc:
        name, shown = _page_error(exc)
        return {"error": shown.message, "side": "B"}, {name: shown}
    size = len(text.encode("utf-8"))
    result = compare_sides(side_a, side_b, size)
    percent = 100.0 * result.shared_ratio
    return {
        # side A's tokens are the page's own Tokens view: only its marks travel (not its tokens again)
        "a": {"label": side_a.label, "scheme": side_a.scheme, "count": len(side_a.ids),
              "differing": sum(result.a_differs)},
        "a_differs": result.a_differs,
        "b": _side_view(side_b, result.b_differs, text),
        "shared": len(result.shared),
        "union": result.union,
        "percent": f"{percent:.1f}" if 0 < percent < 100 else f"{percent:.0f}",
        "identical": result.identical,
    }, {}


def _own_scheme(ref: str) -> str:
    """The pre-tokenization a preset or opened file uses by itself ("none" when unknown)."""
    side = act.of_ref(ref)
    return side.entry.tok.pretokenize if side.entry is not None else "none"


def choice_status(state: Mapping[str, str]) -> OpenedStatus:
    """The opened file chosen as side B (its summary for the select box), or nothing for a preset / typed merges."""
    choice = state.get("compare", "")
    if not choice or choice == "merges" or is_preset(choice):
        return OpenedStatus()
    return act.of_ref(choice).status()


def swap_sides(state: dict[str, str]) -> tuple[str, ...]:
    """Exchange side A (the page's tokenizer) and side B in a page state; the fields changed."""
    choice = state.get("compare", "")
    if not choice:
        return ()
    a_ref = state.get("tokenizer", "")
    a_scheme = state.get("pretokenize") or "none"
    b_scheme = state.get("compare_pretokenize") or (_own_scheme(choice) if choice != TYPED else "none")
    state["tokenizer"] = "" if choice == TYPED else choice
    state["compare"] = a_ref or TYPED
    state["merges"], state["compare_merges"] = state.get("compare_merges", ""), state.get("merges", "")
    state["pretokenize"], state["compare_pretokenize"] = b_scheme, a_scheme
    state["special"], state["compare_special"] = state.get("compare_special", ""), state.get("special", "")
    return ("tokenizer", "compare", "merges", "compare_merges", "pretokenize", "compare_pretokenize", "special",
            "compare_special")
