"""Encoding (and tracing, decoding) with a loaded tokenizer, in the file's ids.

With a tokenizer.json's pipeline (normalizer, added tokens, pre-tokenizer,
decoder), as the library applies it; otherwise playground pre-tokenization
and merges, then the file's id map. A pipeline that is only a known split
(a Tekken file's) encodes through the split-text encoder (textencode.py)
with that split as its scheme: the same ids, with its caches. What it does not do: parse files, or
character-level encoding without a pipeline (`bpe_encode_text` does that).
"""

from __future__ import annotations

import operator
import threading
from dataclasses import replace
from itertools import chain, islice
from typing import Any, Sequence

import numpy as np

from webapp.tokenizer.core.list_order.byte_level import compile_byte_merges, encode_trace
from webapp.tokenizer.core.list_order.char_level import compile_char_merges, encode_text_trace
from webapp.tokenizer.hf import pipeline as hp
from webapp.tokenizer.hf.alphabet import bytes_to_token
from webapp.tokenizer.hf.library_trace import library_scheme_ids, library_trace
from webapp.tokenizer.hf.model import LibraryModel
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.pretokenize.pretokenized import pretokenized_encode, pretokenized_encode_trace
from webapp.tokenizer.pretokenize.textencode import encode_split
from webapp.tokenizer.traces import DEFAULT_TRACE_LIMITS, Token, TraceLimits
from webapp.tokenizer.validation import validate_text


#: Stands for a byte the file has no token for, when the file has no unknown
#: token either: the library drops such bytes, and so do `encode_loaded*`.
DROPPED = -1


def relabel_map(tok: LoadedTokenizer) -> dict[int, int]:
    """Playground id -> file id for a trace: the id map, and unknown bytes as unk_id or DROPPED."""
    mapping = dict(tok.id_map)
    for b in tok.unknown_bytes:
        mapping[b] = tok.unk_id if tok.unk_id is not None else DROPPED
    return mapping


def uses_pipeline(tok: LoadedTokenizer, scheme: str | None = None) -> bool:
    """Does encoding apply the file's own pipeline? Yes unless another scheme is chosen."""
    return bool(tok.pipeline) and (scheme is None or scheme == tok.pretokenize)


def special_default(tok: LoadedTokenizer, scheme: str | None = None) -> str:
    """The API's default for `allowed_special`: "all" for a tokenizer.json's pipeline (the library splits its
    added tokens out), "none" otherwise and for a SentencePiece model (its `encode` reads control pieces'
    text as plain text; user-defined pieces are not special and always match)."""
    if not uses_pipeline(tok, scheme) or '"type":"SentencePiece"' in tok.pipeline:
        return "none"
    return "all"


def typed_offsets(tok: LoadedTokenizer, text: str) -> list[int] | None:
    """For a SentencePiece model's pipeline: for each UTF-8 byte offset of the text its model sees (and its
    end), the byte offset in `text` it comes from, as sentencepiece's `norm_to_orig` (a token's span in the
    typed text is then [offsets[start], offsets[end])). None for other tokenizers."""
    if not uses_pipeline(tok) or '"type":"SentencePiece"' not in tok.pipeline:
        return None
    normalizer = hp.compile_pipeline(tok.pipeline).normalizer
    alignment = getattr(normalizer, "alignment", None)
    return alignment(validate_text(text))[1] if alignment is not None else None


def library_model(tok: LoadedTokenizer) -> LibraryModel:
    """The file's model in the library's order (made once per loaded tokenizer, kept with it)."""
    found = tok.__dict__.get("_library_model")
    if found is None:
        with _MODEL_LOCK:
            found = tok.__dict__.get("_library_model")
            if found is None:
                found = _build_model(tok)
                object.__setattr__(tok, "_library_model", found)  # (a cache of what the frozen fields say)
    return found


_MODEL_LOCK = threading.Lock()


def attach_model(tok: LoadedTokenizer, model: LibraryModel) -> None:
    """Keep an already built model with its tokenizer (a preset's precompiled form)."""
    object.__setattr__(tok, "_library_model", model)


def _build_model(tok: LoadedTokenizer) -> LibraryModel:
    if tok.level == "chars":
        vocab = dict(tok.vocab)
        if max(vocab.values(), default=0) >= 1 << 62:  # (ids past int64: Python ints)
            return LibraryModel(vocab, [(vocab[a], vocab[b], vocab[a + b]) for a, b in tok.merges], tok.model,
                                tok.unk_id)
        # (the usual case: the three columns looked up in C-level loops, into one int64 array)
        lefts, rights = zip(*tok.merges) if tok.merges else ((), ())
        get = vocab.__getitem__
        table = np.empty((len(lefts), 3), dtype=np.int64)
        for column, names in enumerate((lefts, rights, map(operator.add, lefts, rights))):
            table[:, column] = np.fromiter(map(get, names), dtype=np.int64, count=len(lefts))
        return LibraryModel(vocab, table, tok.model, tok.unk_id)
    fid = tok.id_map.get
    strings = {bytes_to_token(data): i for i, data in tok.file_vocab().items()}
    rules = [(fid(a, a), fid(b, b), fid(n, n)) for a, b, n in tok.merges]
    return LibraryModel(strings, rules, tok.model, tok.unk_id)


def _library_ids(tok: LoadedTokenizer, parts: list[hp.Part]) -> list[int]:
    """The ids of parts whose pieces are spelt for the model (`Pipeline.parts(for_model=True)`)."""
    # The pieces of every run between added tokens go to the model together (a long text cut by
    # many added tokens, gemma3's newlines say, is then one batch), their ids put back in order.
    each = iter(library_model(tok).piece_ids(list(chain.from_iterable(
        value for added_id, value in parts if added_id is None))))
    out: list[tuple[int, ...]] = []
    for added_id, value in parts:
        if added_id is not None:
            out.append((added_id,))
        else:
            out.extend(islice(each, len(value)))
    return list(chain.from_iterable(out))


def _pipeline_ids(tok: LoadedTokenizer, text: str, compiled: Any, allowed: frozenset[str] | None = None) -> list[int]:
    """The file's ids for `text` through its normalizer, added tokens and pre-tokenizer."""

    text = validate_text(text)
    pipeline = hp.compile_pipeline(tok.pipeline)
    if pipeline.plain_scheme is not None and not tok.model and tok.level == "bytes" and not tok.unknown_bytes:
        # Only a known split, then byte-level merges in list order (a Tekken file): the same ids as the
        # pieces below encoded one by one, through the split-text encoder and its caches.
        engine = compiled if compiled is not None else compile_byte_merges(list(tok.merges))
        return encode_split(engine, text, pipeline.plain_scheme, tok.id_map)
    if tok.model:
        return _library_ids(tok, pipeline.parts(text, allowed, for_model=True))
    parts = pipeline.parts(text, allowed)
    if tok.level == "chars":
        merges = compiled if compiled is not None else compile_char_merges(list(tok.merges))
        return hp.encode_char_parts(pipeline, parts, merges.tokens, tok.vocab, tok.unk_id)
    engine = compiled if compiled is not None else compile_byte_merges(list(tok.merges))
    drop = tok.unknown_bytes if tok.unk_id is None else frozenset()
    return hp.encode_byte_parts(pipeline, parts, lambda runs: _encode_runs(tok, engine, runs), drop)


def _encode_runs(tok: LoadedTokenizer, engine: Any, runs: list[tuple[bytes, list[int]]]) -> list[list[int]]:
    """Each run's file ids, merged in one call: the runs joined, cut where each ends (no merge crosses a
    cut), the ids split back by their tokens' byte lengths."""
    if len(runs) == 1:
        data, cuts = runs[0]
        return [tok.file_ids(engine.encode_bytes(data, cuts))]
    all_cuts: list[int] = []
    offset = 0
    for data, cuts in runs:
        all_cuts.extend(offset + c for c in cuts)
        offset += len(data)
        all_cuts.append(offset)
    ids = engine.encode_bytes(b"".join(data for data, _ in runs), all_cuts)
    vocab = tok.vocab
    out: list[list[int]] = []
    at = 0
    for data, _ in runs:
        start, need = at, len(data)
        while need > 0:
            token = ids[at]
            need -= 1 if token < 256 else len(vocab[token])
            at += 1
        out.append(tok.file_ids(ids[start:at]))
    return out


def post_process(tok: LoadedTokenizer, ids: list[int]) -> list[int]:
    """What the file's post-processor adds around a single text's ids (the library's add_special_tokens)."""
    if not tok.pipeline:
        return ids
    pipeline = hp.compile_pipeline(tok.pipeline)
    if not (pipeline.post_before or pipeline.post_after):
        return ids
    return [*pipeline.post_before, *ids, *pipeline.post_after]


def encode_loaded(
    tok: LoadedTokenizer, text: str, scheme: str | None = None, *, compiled: Any = None,
    allowed_special: frozenset[str] | None = None,
) -> list[int]:
    """The file's ids for `text`.

    With the file's pipeline (a tokenizer.json, its own scheme): normalizer,
    added tokens and pre-tokenizer as the library applies them, then the
    merges per pre-token; `allowed_special` (None: all, the library's default)
    says which special tokens are split out, the others stay text as with the
    library's `encode_special_tokens`. Otherwise: playground encoding per
    pre-token of `scheme`, then the id map. Character level needs a pipeline.
    """

    if uses_pipeline(tok, scheme):
        return _pipeline_ids(tok, text, compiled, allowed_special)
    if tok.library_order:
        return library_scheme_ids(library_model(tok), tok, validate_text(text), scheme or tok.pretokenize)
    if tok.level != "bytes":
        raise ValueError("encode_loaded is for byte-level tokenizers; use bpe_encode_text for characters")
    merges = compiled if compiled is not None else tok.merges
    if not tok.unknown_bytes:  # the usual case: the file's ids straight from the encoder
        return pretokenized_encode(text, merges, scheme or tok.pretokenize, tok.id_map)
    return tok.file_ids(pretokenized_encode(text, merges, scheme or tok.pretokenize))


def encode_loaded_trace(
    tok: LoadedTokenizer,
    text: str,
    scheme: str | None = None,
    *,
    compiled: Any = None,
    limits: TraceLimits = DEFAULT_TRACE_LIMITS,
    allowed_special: frozenset[str] | None = None,
) -> Any:
    """`pretokenized_encode_trace` shown in the file's ids (tokens, steps and sequences too);
    with the file's pipeline, `_pipeline_trace` (`allowed_special` as for `encode_loaded`).
    A file in the library's merge order: `library_trace` (character-level ones too)."""

    if tok.library_order:
        ids = encode_loaded(tok, text, scheme, allowed_special=allowed_special)
        return library_trace(tok, library_model(tok), validate_text(text), ids, unit="bytes", allowed=allowed_special,
                             scheme=scheme, limits=limits)
    if tok.level != "bytes":
        raise ValueError("encode_loaded_trace is for byte-level tokenizers")
    if uses_pipeline(tok, scheme):
        return _pipeline_trace(tok, text, compiled, limits, allowed_special)
    trace = pretokenized_encode_trace(
        text,
        compiled if compiled is not None else tok.merges,
        scheme or tok.pretokenize,
        limits=limits,
        relabel=relabel_map(tok),
    )
    if tok.unknown_bytes and tok.unk_id is None:
        trace = replace(
            trace,
            ids=[i for i in trace.ids if i != DROPPED],
            tokens=[t for t in trace.tokens if t.id != DROPPED],
        )
    return trace


def _pipeline_trace(
    tok: LoadedTokenizer, text: str, compiled: Any, limits: TraceLimits, allowed: frozenset[str] | None = None
) -> Any:
    """The trace of the text the model sees (normalized, prefixed), in the file's ids.

    Spans index `trace.text` (the pipeline's output), not the typed text.
    Added tokens get a cut at every byte (so no rule touches them) and are
    shown as one token each; `ids` are `encode_loaded`'s.
    """

    if tok.level == "chars":
        raise ValueError("the pipeline trace here is for byte-level tokenizers; see char_pipeline_trace")
    text = validate_text(text)
    pipeline = hp.compile_pipeline(tok.pipeline)
    parts = pipeline.parts(text, allowed)
    shown, pretokens, added = hp.layout(pipeline, parts, unit="bytes")
    cuts = [start for start, _ in pretokens]
    for start, end, _ in added:
        cuts.extend(range(start, end))
    trace = encode_trace(shown, compiled if compiled is not None else tok.merges,
                            cuts=sorted(cuts), relabel=relabel_map(tok), limits=limits)
    at = {start: (end, aid) for start, end, aid in added}
    tokens: list[Any] = []
    skip_to = -1
    data = shown.encode("utf-8", "surrogatepass")
    for token in trace.tokens:
        if token.start < skip_to:
            continue
        if token.start in at:
            end, aid = at[token.start]
            tokens.append(Token(id=aid, value=data[token.start:end], start=token.start, end=end))
            skip_to = end
        elif token.id != DROPPED:
            tokens.append(token)
    ids = encode_loaded(tok, text, compiled=compiled, allowed_special=allowed)
    return replace(trace, ids=ids, tokens=tokens, pretokens=pretokens, text=shown)


def char_pipeline_trace(
    tok: LoadedTokenizer, text: str, *, allowed_special: frozenset[str] | None = None,
    limits: TraceLimits = DEFAULT_TRACE_LIMITS,
) -> Any:
    """For the Characters page: the trace of what the model sees, in the file's ids (see _pipeline_trace)."""

    text = validate_text(text)
    if tok.library_order:
        ids = encode_loaded(tok, text, allowed_special=allowed_special)
        return library_trace(tok, library_model(tok), text, ids, unit="chars", allowed=allowed_special, scheme=None,
                             limits=limits)
    pipeline = hp.compile_pipeline(tok.pipeline)
    vocab = dict(tok.vocab)
    parts = pipeline.parts(text, allowed_special)
    if tok.unk_id is None:  # the library leaves unknown characters out before merging
        parts = [p if p[0] is not None else (None, ["".join(ch for ch in piece if ch in vocab) for piece in p[1]])
                 for p in parts]
    shown, pretokens, added = hp.layout(pipeline, parts, unit="chars")
    pretokens = [(s, e) for s, e in pretokens if e > s]
    cuts = [start for start, _ in pretokens]
    if tok.unk_id is not None:
        for ch in set(shown).difference(vocab):
            vocab[ch] = tok.unk_id
    for start, end, aid in added:
        cuts.extend(range(start, end))
        for ch in shown[start:end]:
            vocab.setdefault(ch, aid)  # (shown as one token below; the lookup must not fail)
    trace = encode_text_trace(shown, vocab, list(tok.merges), cuts=sorted(cuts), limits=limits)
    at = {start: (end, aid) for start, end, aid in added}
    tokens: list[Any] = []
    skip_to = -1
    for token in trace.tokens:
        if token.start < skip_to:
            continue
        if token.start in at:
            end, aid = at[token.start]
            tokens.append(Token(id=aid, value=shown[token.start:end], start=token.start, end=end))
            skip_to = end
        else:
            tokens.append(token)
    ids = encode_loaded(tok, text, allowed_special=allowed_special)
    return replace(trace, ids=ids, tokens=tokens, pretokens=pretokens, text=shown)


def decode_loaded(tok: LoadedTokenizer, ids: Sequence[int], *, skip_special: bool = True) -> str:
    """The library's `decode(ids, skip_special_tokens=skip_special)` for a file with a pipeline."""
    if not tok.pipeline:
        raise ValueError("decode_loaded needs a tokenizer.json pipeline")
    pipeline = hp.compile_pipeline(tok.pipeline)
    if tok.level == "chars":
        inverse = {v: k for k, v in tok.vocab.items()}
        return hp.decode_ids(pipeline, ids, inverse.get, skip_special=skip_special)
    by_id = tok.file_vocab()
    return hp.decode_ids(
        pipeline, ids, lambda i: bytes_to_token(by_id[i]) if i in by_id else None, skip_special=skip_special
    )
