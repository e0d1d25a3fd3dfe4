"""Two tokenizers on one text: each side encoded with its byte spans, and the /api/compare answer.

What it does not do: routes (webapp.web.compare.routes), the Bytes page's
comparison card (webapp.web.compare.page), parse input (webapp.infra.inputs),
or encode (the tokenizer package).

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from webapp.infra import compound_inputs, inputs, timebudget
from webapp.opened import active as act, store as tokenizer_store
from webapp.tokenizer import (
    EncodeTrace,
    ImpliedVocab,
    OutOfTime,
    TokenizerError,
    TraceLimits,
    allowed_set,
    compare_spans,
    get_preset,
    is_preset,
    pretokenized_encode_trace,
)
from webapp.tokenizer.compare import SpanComparison, spans_from_lengths
from webapp.tokenizer.stages import Tokenizer
from webapp.tokenizer.reading.text import charged, check_request_budget


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


@dataclass(frozen=True)
class LoadedSide:
    """A spec's preset or opened file, ready to encode: its stages, scheme and allowed special tokens."""

    label: str
    scheme: str
    stages: Tokenizer
    allowed: frozenset[str]
    special_ids: frozenset[int]
    entry: tokenizer_store.Loaded


def load_side(spec: compound_inputs.TokenizerSpec) -> LoadedSide:
    """The stages a spec naming a tokenizer (`spec.tokenizer`) encodes with, as a comparison runs them:
    its own pre-tokenization unless the spec names one, its special tokens as the spec or its default says."""
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
    return LoadedSide(_label(spec.tokenizer), scheme, stages, allowed, frozenset(entry.tok.special_tokens.values()),
                      entry)


def encode_side(spec: compound_inputs.TokenizerSpec, text: str, max_tokens: int) -> Side:
    """Encode `text` with one spec; the trace records at most `max_tokens` tokens."""
    data = text.encode("utf-8")
    if spec.tokenizer:
        side = load_side(spec)
        entry, scheme, stages, allowed = side.entry, side.scheme, side.stages, side.allowed

        def run(cap: int) -> tuple[EncodeTrace, list[int]]:
            # No per-rule steps or sequences: the comparison shows tokens only.
            return stages.trace(text, allowed, TraceLimits.tokens_only(cap))

        trace, special_index = run(max_tokens)
        offsets = stages.typed_offsets(text) if trace.text is not None and trace.text != text else None
        if offsets is not None and trace.text is not None:  # (a SentencePiece model: spans mapped back to the text)
            shown = trace.text.encode("utf-8", "surrogatepass")
            spans = _full_spans(trace, lambda: None, shown, lambda: run(len(shown) + 1)[0])
            spans = [(offsets[a], offsets[b]) for a, b in spans]
            return Side(side.label, scheme, trace.ids, spans, trace, side.special_ids, frozenset(special_index))
        if trace.text is not None and trace.text != text:
            # Its spans index the changed text: no boundary there lines up with the other side's.
            raise TokenizerError(
                "tokenizer: this tokenizer.json changes the text before splitting it (its normalizer or "
                "pre-tokenizer), so its token boundaries do not fall on the typed text; compare it on text it "
                "leaves as it is, or choose another pre-tokenization for it",
                field="tokenizer",
            )
        spans = _full_spans(trace, lambda: entry.file_vocab, data, lambda: run(len(data) + 1)[0])
        return Side(side.label, scheme, trace.ids, spans, trace, side.special_ids, frozenset(special_index))
    scheme = spec.pretokenize or "none"
    merges = spec.merges

    def run_typed(cap: int) -> EncodeTrace:
        return pretokenized_encode_trace(text, merges, scheme, limits=TraceLimits.tokens_only(cap))

    trace = run_typed(max_tokens)
    # Only the ids used, and only if their bytes fit in the text: a few rules can
    # imply tokens of terabytes (webapp.tokenizer.core.token_sizes).
    spans = _full_spans(trace, lambda: ImpliedVocab(merges.rules).bytes_for(trace.ids, len(data)), data,
                        lambda: run_typed(len(data) + 1))
    return Side("typed merges", scheme, trace.ids, spans, trace, frozenset(), frozenset())


def compare_sides(a: Side, b: Side, length: int) -> SpanComparison:
    return compare_spans(a.spans, b.spans, length)


# --- JSON API -------------------------------------------------------------------------


def _api_side(spec: compound_inputs.TokenizerSpec, side: Side, differs: tuple[bool, ...]) -> dict[str, Any]:
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
    specs = {name: compound_inputs.read_tokenizer_spec(data[name], name, limits) for name in ("a", "b")}
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
            raise compound_inputs.within(name, exc) from None
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
