"""The Parity page's view model: the form's fields read, the check run, each text's token rows for the template.

Side A and B are a preset's name or an opened file's id each (as the Compare box's B), with a box for
whether it splits out its special tokens; the texts are one a line, none for the built-in probes.

What it does not do: read a JSON body (checking.py), attribute (webapp.tokenizer.parity), render.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from webapp.infra import inputs
from webapp.infra.errors import ApiError
from webapp.tokenizer import TokenizerError
from webapp.tokenizer.parity import PROBES, STAGES
from webapp.web.common.viewmodels import (
    TokenGroup, TokenView, byte_segments, distinct_neighbour_hues, hex_bytes, printable_bytes,
)
from webapp.web.parity.checking import read_texts, run_check, sides_of

#: What the page calls each stage.
STAGE_LABELS = {"special": "special tokens", "normalizer": "normalizer", "pre_tokenizer": "pre-tokenizer",
                "merges": "merges", "vocab": "vocabulary", "post_processor": "post-processor"}
#: The page's first look: Llama 3 beside Qwen3.
DEFAULT_SIDES = ("llama3", "qwen3")


@dataclass
class Row:
    """One text as the page shows it."""

    text: str
    name: str  # the probe's name, or "" for a typed text
    stage: str | None
    detail: dict[str, Any] | None
    a: list[TokenGroup]
    b: list[TokenGroup]
    counts: tuple[int, int]


@dataclass
class PageState:
    fields: dict[str, str]
    errors: dict[str, Any] = field(default_factory=dict)
    rows: list[Row] = field(default_factory=list)
    summary: dict[str, int] | None = None
    labels: tuple[str, str] = ("", "")


def _groups(tokens: list[dict[str, Any]]) -> list[TokenGroup]:
    """One side's tokens as the token rows show them (bytes that are not UTF-8 alone as hex)."""
    views = []
    offset = 0
    for index, token in enumerate(tokens):
        data = bytes(token["bytes"])
        segments, valid = byte_segments(data)
        views.append(TokenView(index, token["id"], "", segments, printable_bytes(data), hex_bytes(data), offset,
                               offset + len(data), "bytes", "", valid=valid, differs=token["differs"],
                               tab_stop=index == 0))
        offset += len(data)
    return distinct_neighbour_hues([TokenGroup([view]) for view in views])


def read_fields(values: Mapping[str, Any]) -> dict[str, str]:
    """The form's fields as typed (strings), with the page's defaults for sides not given."""
    def text(key: str, default: str = "") -> str:
        value = values.get(key)
        return value if isinstance(value, str) else default

    return {"a": text("a", DEFAULT_SIDES[0]), "b": text("b", DEFAULT_SIDES[1]),
            "a_special": text("a_special"), "b_special": text("b_special"), "texts": text("texts")}


def _spec(fields: Mapping[str, str], name: str) -> dict[str, Any]:
    return {"tokenizer": fields[name].strip(), "allowed_special": "all" if fields[f"{name}_special"] else "none"}


def compute(fields: dict[str, str]) -> PageState:
    """The check the form asks for; problems land under the field they name (a, b or texts)."""
    state = PageState(fields)
    typed = [line for line in inputs.normalize_newlines(fields["texts"]).split("\n") if line]
    try:
        texts = read_texts(typed) if typed else None
        a, b = sides_of({"a": _spec(fields, "a"), "b": _spec(fields, "b")}, inputs.current_limits())
        answer = run_check(a, b, texts)
    except (TokenizerError, ApiError) as exc:
        state.errors[exc.field.split(".")[0].split("[")[0] if exc.field else "texts"] = exc
        return state
    names = [name for name, _text in PROBES] if texts is None else [""] * len(typed)
    state.labels = (answer["a"], answer["b"])
    state.summary = answer["summary"]
    state.rows = [Row(e["text"], name, e["stage"], e["detail"], _groups(e["a"]["tokens"]), _groups(e["b"]["tokens"]),
                      (len(e["a"]["ids"]), len(e["b"]["ids"])))
                  for name, e in zip(names, answer["texts"])]
    return state


def context(values: Mapping[str, Any]) -> dict[str, Any]:
    """Everything parity.html shows."""
    state = compute(read_fields(values))
    return {"tool": "parity", "title": "Parity", "state": state, "stages": STAGES, "stage_labels": STAGE_LABELS,
            "probe_count": len(PROBES)}


__all__ = ["DEFAULT_SIDES", "STAGE_LABELS", "context", "read_fields"]
