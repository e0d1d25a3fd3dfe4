"""Compare two tokenizers on one text: the JSON API and the Bytes page's comparison.

- `POST /api/compare` `{"text", "a": spec, "b": spec}`, each spec
  `{"tokenizer": preset name or opened file id}` or `{"merges": ...}`, with
  optional `"pretokenize"` and `"allowed_special"` -> both sides' ids, tokens
  (byte spans, `differs`) and counts, and the boundaries they share or not.
  Errors name the field inside a spec (`a.merges`, `b.tokenizer`).
- The Bytes page: side A is the page's own tokenizer (typed merges, preset or
  opened file), side B comes from the "Compare with…" fields (`compare`:
  a preset name, an opened file's id, or "merges" for `compare_merges`;
  `compare_pretokenize`; `compare_special`). `page_compare(state)` computes
  what partials/compare.html shows; `swap_sides(state)` exchanges A and B (so
  an opened file can become B).

Both sides are byte-level and their spans are byte offsets into the text's
UTF-8, so the boundary sets compare directly (webapp.tokenizer.compare).
Character-level files are refused with a message.

What it does not do: parse input (webapp.infra.inputs), encode (the tokenizer
package and webapp.web.files.routes), or render tokens itself (webapp.web.common.viewmodels).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Mapping

from flask import Blueprint, Response, jsonify

from webapp.infra import body, errors as http
from webapp.infra import inputs, ratelimit, timebudget
from webapp.jobs import queue
from webapp.jobs import views as jobs
from webapp.jobs.registry import Cancelled, JobOutput, Progress, job_kind
from webapp.jobs.thresholds import rule_count, text_chars
from webapp.opened import active as act
from webapp.web.common import viewmodels as vm
from webapp.opened.store import OpenedStatus
from webapp.tokenizer import (
    EncodeTrace,
    ImpliedVocab,
    OutOfTime,
    PresetMissing,
    SpanComparison,
    TokenizerError,
    TraceLimits,
    allowed_set,
    charged,
    check_request_budget,
    compare_spans,
    get_preset,
    is_preset,
    pretokenized_encode_trace,
    spans_from_lengths,
)

bp = Blueprint("compare", __name__)

#: The Bytes page fields of side B (kept in share links).
PAGE_FIELDS = ("compare", "compare_merges", "compare_pretokenize", "compare_special")
#: `compare` takes this value when side B is the typed `compare_merges`.
TYPED = "merges"
#: Page field showing each spec field's errors.
_PAGE_FIELD = {"tokenizer": "compare", "allowed_special": "compare", "merges": "compare_merges",
               "pretokenize": "compare_pretokenize"}


@dataclass(frozen=True)
class Side:
    """One side encoded: every id, every token's byte span, and a (possibly capped) trace."""

    label: str
    scheme: str
    ids: list[int]
    spans: list[tuple[int, int]]
    trace: EncodeTrace  # tokens up to the cap asked for
    special_ids: frozenset[int]
    special_index: frozenset[int]  # positions in trace.tokens that are special tokens


def _label(ref: str) -> str:
    if is_preset(ref):
        return get_preset(ref).name
    return f"opened file {ref[:8]}…" if len(ref) > 8 else f"opened file {ref}"


def _full_spans(trace: EncodeTrace, vocab: Any, data: bytes, redo: Any) -> list[tuple[int, int]]:
    """Every token's byte span: from the trace when it holds them all, else from the ids' bytes.

    `vocab()` gives {id: bytes} for the ids (None when they would not fit in
    the text). When the ids' bytes do not spell the text (a file that drops
    bytes it cannot map, or a typed list defining an id twice), `redo()`
    gives an uncapped trace instead.
    """
    if not trace.tokens_truncated:
        return [(t.start, t.end) for t in trace.tokens]
    table = vocab() or {}
    token_bytes = [table.get(i) for i in trace.ids]
    if all(p is not None for p in token_bytes) and b"".join(token_bytes) == data:  # type: ignore[arg-type]
        return spans_from_lengths(len(p) for p in token_bytes)  # type: ignore[arg-type]
    return [(t.start, t.end) for t in redo().tokens]


def encode_side(spec: inputs.TokenizerSpec, text: str, max_tokens: int) -> Side:
    """Encode `text` with one spec; the trace records at most `max_tokens` tokens."""
    data = text.encode("utf-8")
    if spec.tokenizer:
        entry = act.of_ref(spec.tokenizer).loaded()
        if not entry.stages().on_bytes_page:
            raise TokenizerError(
                "tokenizer: this is a character-level tokenizer; comparisons are between byte-level ones",
                field="tokenizer",
            )
        scheme = spec.pretokenize or entry.tok.pretokenize
        stages = entry.stages(scheme)
        special = spec.special
        if special is None:  # a tokenizer.json recognises its special tokens by default, as the library does
            special = "all" if stages.special_default == "all" else ()
        allowed = allowed_set(special, entry.tok.special_tokens)

        def run(cap: int) -> tuple[EncodeTrace, list[int]]:
            # No per-rule steps or sequences: the comparison shows tokens only.
            return stages.trace(text, allowed, TraceLimits.tokens_only(cap))

        trace, special_index = run(max_tokens)
        offsets = stages.typed_offsets(text) if trace.text is not None and trace.text != text else None
        if offsets is not None and trace.text is not None:  # (a SentencePiece model: spans mapped back to the text)
            shown = trace.text.encode("utf-8", "surrogatepass")
            spans = _full_spans(trace, lambda: None, shown, lambda: run(len(shown) + 1)[0])
            spans = [(offsets[a], offsets[b]) for a, b in spans]
            return Side(_label(spec.tokenizer), scheme, trace.ids, spans, trace,
                        frozenset(entry.tok.special_tokens.values()), frozenset(special_index))
        if trace.text is not None and trace.text != text:
            # Its spans index the changed text: no boundary there lines up with the other side's.
            raise TokenizerError(
                "tokenizer: this tokenizer.json changes the text before splitting it (its normalizer or "
                "pre-tokenizer), so its token boundaries do not fall on the typed text; compare it on text it "
                "leaves as it is, or choose another pre-tokenization for it",
                field="tokenizer",
            )
        spans = _full_spans(trace, lambda: entry.file_vocab, data, lambda: run(len(data) + 1)[0])
        return Side(_label(spec.tokenizer), scheme, trace.ids, spans, trace,
                    frozenset(entry.tok.special_tokens.values()), frozenset(special_index))
    scheme = spec.pretokenize or "none"
    merges = spec.merges

    def run_typed(cap: int) -> EncodeTrace:
        return pretokenized_encode_trace(text, merges, scheme, limits=TraceLimits.tokens_only(cap))

    trace = run_typed(max_tokens)
    # Only the ids used, and only if their bytes fit in the text: a few rules can
    # imply tokens of terabytes (webapp.tokenizer.token_sizes).
    spans = _full_spans(trace, lambda: ImpliedVocab(merges.rules).bytes_for(trace.ids, len(data)), data,
                        lambda: run_typed(len(data) + 1))
    return Side("typed merges", scheme, trace.ids, spans, trace, frozenset(), frozenset())


def compare_sides(a: Side, b: Side, length: int) -> SpanComparison:
    return compare_spans(a.spans, b.spans, length)


# --- JSON API -------------------------------------------------------------------------


def _api_side(spec: inputs.TokenizerSpec, side: Side, differs: tuple[bool, ...]) -> dict[str, Any]:
    tokens = []
    for index, token in enumerate(side.trace.tokens):
        value = token.value if isinstance(token.value, bytes) else str(token.value).encode("utf-8")
        try:
            shown: str | None = value.decode("utf-8")
        except UnicodeDecodeError:
            shown = None
        item: dict[str, Any] = {"id": token.id, "text": shown, "bytes": list(value), "start": token.start,
                                "end": token.end, "differs": differs[index]}
        if index in side.special_index:
            item["special"] = True
        tokens.append(item)
    return {"tokenizer": spec.tokenizer or None, "pretokenize": side.scheme, "count": len(side.ids),
            "ids": side.ids, "tokens": tokens}


def compare_json(data: Mapping[str, Any], limits: inputs.Limits) -> dict[str, Any]:
    """The /api/compare answer for a body already checked to hold text, a and b."""
    text = inputs.read_text(data["text"], limits)
    specs = {name: inputs.read_tokenizer_spec(data[name], name, limits) for name in ("a", "b")}
    size = len(text.encode("utf-8"))
    sides = {}
    for index, (name, spec) in enumerate(specs.items()):
        try:
            with charged():  # the whole side counts against the request's time budget (timebudget)
                sides[name] = encode_side(spec, text, size + 1)
            if index == 0:
                check_request_budget()  # spent by side a: refused before side b, naming a
        except OutOfTime as exc:
            raise timebudget.out_of_time(exc, spec.tokenizer or "typed merges", index, 2) from None
        except TokenizerError as exc:
            raise inputs.within(name, exc) from None
    result = compare_sides(sides["a"], sides["b"], size)
    return {
        "unit": "bytes",
        "a": _api_side(specs["a"], sides["a"], result.a_differs),
        "b": _api_side(specs["b"], sides["b"], result.b_differs),
        "boundaries": {
            "shared": sorted(result.shared),
            "only_a": sorted(result.only_a),
            "only_b": sorted(result.only_b),
            "shared_count": len(result.shared),
            "union_count": result.union,
            "shared_ratio": result.shared_ratio,
        },
        "identical": result.identical,
    }


def _heavy(data: Mapping[str, Any]) -> bool:
    """Over the thresholds /api/encode hands to a job: a long text, or a long typed merge list on a side."""
    if text_chars(data.get("text")) > queue.threshold("JOB_ENCODE_CHARS"):
        return True
    specs = [data.get(name) for name in ("a", "b")]
    return any(isinstance(s, dict) and rule_count(s.get("merges")) > queue.threshold("JOB_ENCODE_RULES")
               for s in specs)


@bp.post("/api/compare")
def api_compare() -> Response:
    """Both encodings and their boundaries; a long text or merge list is a job (202), as /api/encode."""
    data = body.read_json_object(("text", "a", "b"), ("text", "a", "b"))
    limits = inputs.current_limits()
    try:
        if _heavy(data):
            # Cheap checks first, as /api/encode: over LIMIT_TEXT_CHARS or LIMIT_RULES stays a 400.
            inputs.read_text(data["text"], limits)
            for name in ("a", "b"):
                spec = data[name]
                if not isinstance(spec, dict):
                    inputs.read_tokenizer_spec(spec, name, limits)  # raises: not an object
                elif isinstance(spec.get("merges"), list) and len(spec["merges"]) > limits.rules:
                    inputs.read_tokenizer_spec(spec, name, limits)  # raises the limit's message
            return jobs.accepted(queue.submit("compare", {"body": dict(data), "limits": asdict(limits)}))
        ratelimit.charge_work(len(inputs.read_text(data["text"], limits)), 2)
        return jsonify(compare_json(data, limits))
    except PresetMissing as exc:  # a preset this installation lacks: 503, the message says how to install it
        raise http.ApiError.from_tokenizer(exc, 503) from None


@job_kind("compare", label="Comparing")
def compare_job(params: dict[str, Any], progress: Progress, cancelled: Cancelled) -> JobOutput:
    """/api/compare for a long text, in the job process (opened files need the worker's app)."""
    progress(0.1, "encoding the text twice")
    with queue.worker_app().app_context():
        return JobOutput(compare_json(params["body"], inputs.limits_of(params)))


# --- the Bytes page -------------------------------------------------------------------


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
        spec_a = inputs.read_tokenizer_spec(_spec_a(state), "a", limits)
    except TokenizerError:
        return None, {}  # the page shows these errors beside A's own fields
    try:
        side_a = encode_side(spec_a, text, limits.render_max_tokens)
    except TokenizerError as exc:  # A encodes for the page but cannot be compared (a text-changing file)
        return {"error": exc.message, "side": "A"}, {}
    try:
        spec_b = inputs.read_tokenizer_spec(_spec_b(state), "b", limits)
        try:
            side_b = encode_side(spec_b, text, limits.render_max_tokens)
        except TokenizerError as exc:
            raise inputs.within("b", exc) from None
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
