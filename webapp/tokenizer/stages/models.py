"""The model stage: how a tokenizer's merges turn pieces into ids, one class per merge order.

What it does not do: split text (splitters.py), choose the model
(tokenizer.py's `tokenizer_of` does, once), parse files or HTTP.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import threading
from dataclasses import replace
from itertools import accumulate, chain, islice
from typing import Any, Mapping, Protocol, TypeVar

from webapp.tokenizer.core.list_order.byte_level import CompiledByteMerges, compile_byte_merges
from webapp.tokenizer.core.list_order.byte_trace import encode_trace
from webapp.tokenizer.core.list_order.char_level import CompiledCharMerges, bpe_encode_text, compile_char_merges, encode_text_trace
from webapp.tokenizer.hf import pipeline as hp
from webapp.tokenizer.models.library_trace import library_scheme_ids, library_trace
from webapp.tokenizer.core.joined import joined_ids
from webapp.tokenizer.models.library import LibraryModel
from webapp.tokenizer.loaded import LoadedTokenizer, Part
from webapp.tokenizer.pieces import Pieces, around_added
from webapp.tokenizer.pretokenize.pretokenized import pretokenized_encode
from webapp.tokenizer.pretokenize.patterns import PATTERNS
from webapp.tokenizer.pretokenize.textencode import encode_split, encode_split_batch
from webapp.tokenizer.traces import EncodeTrace, TraceLimits
from webapp.tokenizer.validation import validate_text


#: Stands for a byte the file has no token for, when the file has no unknown
#: token either: the library drops such bytes, and so do the models here.
DROPPED = -1


def relabel_map(tok: LoadedTokenizer) -> dict[int, int]:
    """Playground id -> file id for a trace: the id map, and unknown bytes as unk_id or DROPPED."""
    mapping = dict(tok.id_map)
    for b in tok.unknown_bytes:
        mapping[b] = tok.unk_id if tok.unk_id is not None else DROPPED
    return mapping


def ordinary_bytes(tok: LoadedTokenizer) -> dict[int, bytes]:
    """{id: bytes} of a loaded tokenizer's ordinary tokens, in the file's ids (a character-level vocab's
    tokens as their UTF-8)."""
    return tok.unit.ordinary_bytes(tok)


_R = TypeVar("_R", covariant=True)


class ModelVisitor(Protocol[_R]):
    """One method per model kind, called by the model's `visit` (see splitters.SplitVisitor)."""

    def in_list_order_bytes(self, model: "ListOrderBytes") -> _R: ...
    def in_list_order_chars(self, model: "ListOrderChars") -> _R: ...
    def in_library_order(self, model: "LibraryOrder") -> _R: ...


class ListOrderBytes:
    """Byte-level rules in list order; the compiled list is given (a preset's precompiled form) or made once."""

    kind = "list order, bytes"
    pages: tuple[str, ...] = ("bytes",)  # (the pages that can show it: see `Tokenizer.shows_on`)

    def __init__(self, tok: LoadedTokenizer, compiled: CompiledByteMerges | None = None) -> None:
        self.tok = tok
        self._compiled = compiled
        self._lock = threading.Lock()

    def offer(self, compiled: CompiledByteMerges) -> None:
        """Use `compiled` (the same rules, already compiled: a preset's precompiled form) if none is made yet."""
        if self._compiled is None:
            with self._lock:
                if self._compiled is None:
                    self._compiled = compiled

    @property
    def compiled(self) -> CompiledByteMerges:
        """The compiled rule list (equal lists share one: compile_byte_merges keeps them by content)."""
        if self._compiled is None:
            with self._lock:
                if self._compiled is None:
                    self._compiled = compile_byte_merges(list(self.tok.merges))
        return self._compiled

    def ordinary_bytes(self) -> dict[int, bytes]:
        return self.tok.file_vocab()

    def encode_pieces(self, text: str, scheme: str) -> list[int]:
        """The file's ids for special-token-free `text` split by a playground scheme, each piece merged alone."""
        tok = self.tok
        if not tok.unknown_bytes:  # the usual case: the file's ids straight from the encoder
            return pretokenized_encode(text, self.compiled, scheme, tok.id_map)
        return tok.file_ids(pretokenized_encode(text, self.compiled, scheme))

    def encode_pieces_batch(self, texts: list[str], scheme: str) -> list[list[int]]:
        """`encode_pieces` of each text; split by a pattern, all texts' new pre-tokens merged in one batch."""
        tok = self.tok
        if tok.unknown_bytes or scheme not in PATTERNS or len(texts) < 2:
            return [self.encode_pieces(text, scheme) for text in texts]
        return encode_split_batch(self.compiled, texts, scheme, tok.id_map)

    def merge_bytes(self, data: bytes) -> list[int]:
        """The file's ids of `data` merged as one piece (no split)."""
        return self.tok.file_ids(self.compiled.encode_bytes(data))

    def encode_parts(self, pipeline: hp.Pipeline, texts: list[str], allowed: frozenset[str] | None) -> list[list[int]]:
        """The file's ids for each text through its pipeline: added tokens as their ids, pieces merged alone."""
        tok = self.tok
        if pipeline.plain_scheme is not None and not tok.unknown_bytes:
            # Only a known split (a Tekken file): the same ids as the pieces below encoded one by
            # one, through the split-text encoder and its caches.
            if len(texts) == 1:
                return [encode_split(self.compiled, texts[0], pipeline.plain_scheme, tok.id_map)]
            return encode_split_batch(self.compiled, texts, pipeline.plain_scheme, tok.id_map)
        drop = tok.unknown_bytes if tok.unk_id is None else frozenset()
        return [hp.encode_byte_parts(pipeline, pipeline.parts(text, allowed), self._encode_runs, drop)
                for text in texts]

    def _encode_runs(self, runs: list[tuple[bytes, list[int]]]) -> list[list[int]]:
        """Each run's file ids, merged in one call: the runs joined, cut where each ends (no merge crosses a
        cut), the ids split back by their tokens' byte lengths."""
        tok = self.tok
        engine = self.compiled
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

    def known(self, piece: str) -> str:
        return piece

    def tokenize(self, pieces: Pieces) -> list[int]:
        """The file's ids of `pieces`: each run between added tokens merged in one call, cut at each piece."""
        tok = self.tok
        data = pieces.encoded
        drop = bytes(tok.unknown_bytes) if pieces.drop_unknown_first and tok.unk_id is None else b""
        runs: list[tuple[bytes, list[int]]] = []
        for run in pieces.runs():
            chunks = [data[start:end].translate(None, drop) if drop else data[start:end] for start, end in run]
            runs.append((b"".join(chunks), list(accumulate(map(len, chunks)))))
        return pieces.in_order(self._encode_runs(runs))

    def record(self, pieces: Pieces, limits: TraceLimits) -> tuple[EncodeTrace, list[int]]:
        """The trace of `pieces` in the file's ids (bytes it has no token for: unk, or left out), and the
        indexes of the added tokens among its recorded tokens."""
        tok = self.tok

        def run(text: str, cuts: list[int]) -> EncodeTrace:
            trace = encode_trace(text, self.compiled, limits=limits, cuts=cuts, relabel=relabel_map(tok))
            if tok.unknown_bytes and tok.unk_id is None:
                trace = replace(trace, ids=[i for i in trace.ids if i != DROPPED],
                                tokens=[t for t in trace.tokens if t.id != DROPPED])
            return trace

        if not pieces.added and not (pieces.drop_unknown_first and tok.unknown_bytes and tok.unk_id is None):
            # One run gives the ids and the record (an added token's id, or a byte left out before
            # merging, would need the ids of the text around it: tokenize's).
            return around_added(pieces, run, None, limits)
        return around_added(pieces, run, self.tokenize(pieces), limits)

    def visit(self, visitor: ModelVisitor[_R]) -> _R:
        return visitor.in_list_order_bytes(self)


class ListOrderChars:
    """Character-level rules in list order with the file's (or the typed) `{token: id}` vocab."""

    kind = "list order, characters"
    pages: tuple[str, ...] = ("chars",)

    def __init__(self, tok: LoadedTokenizer) -> None:
        self.tok = tok
        self._compiled: CompiledCharMerges | None = None

    @property
    def compiled(self) -> CompiledCharMerges:
        if self._compiled is None:  # (two threads may both compile: equal lists, one kept)
            self._compiled = compile_char_merges(list(self.tok.merges))
        return self._compiled

    def ordinary_bytes(self) -> dict[int, bytes]:
        return ordinary_bytes(self.tok)

    def encode_whole(self, text: str) -> list[int]:
        """The ids of `text` as one piece (a character-level file without a pipeline: no split, no specials)."""
        return bpe_encode_text(text, self.tok.vocab, self.compiled)

    def encode_pieces(self, text: str, scheme: str) -> list[int]:
        raise ValueError("a character-level file encodes through its own pipeline, not a playground scheme")

    def encode_pieces_batch(self, texts: list[str], scheme: str) -> list[list[int]]:
        return [self.encode_pieces(text, scheme) for text in texts]

    def merge_bytes(self, data: bytes) -> list[int]:
        raise ValueError("character-level rules merge characters, not bytes")

    def encode_parts(self, pipeline: hp.Pipeline, texts: list[str], allowed: frozenset[str] | None) -> list[list[int]]:
        tok = self.tok
        return [hp.encode_char_parts(pipeline, pipeline.parts(text, allowed), self.compiled.tokens, tok.vocab,
                                     tok.unk_id) for text in texts]

    def known(self, piece: str) -> str:
        """`piece` as the model reads it: without an unknown token the library leaves unknown characters out
        before merging (their neighbours may then merge)."""
        if self.tok.unk_id is not None:
            return piece
        vocab = self.tok.vocab
        return "".join(ch for ch in piece if ch in vocab)

    def tokenize(self, pieces: Pieces) -> list[int]:
        """The file's ids of `pieces` (character offsets): each piece's tokens looked up."""
        tok, text, tokens_of = self.tok, pieces.text, self.compiled.tokens

        def ids_of(start: int, end: int) -> list[int]:
            return hp.char_piece_ids(text[start:end], tokens_of, tok.vocab, tok.unk_id, pieces.fuse_unk)

        return pieces.in_order([[i for start, end in run for i in ids_of(start, end)] for run in pieces.runs()])

    def record(self, pieces: Pieces, limits: TraceLimits) -> tuple[EncodeTrace, list[int]]:
        """The trace of `pieces` (code point offsets) in the file's ids, and the added tokens' indexes."""
        tok = self.tok
        vocab = dict(tok.vocab)

        def run(text: str, cuts: list[int]) -> EncodeTrace:
            if tok.unk_id is not None:
                for ch in set(text).difference(vocab):
                    vocab[ch] = tok.unk_id
            return encode_text_trace(text, vocab, list(tok.merges), cuts=cuts, limits=limits)

        return around_added(pieces, run, self.tokenize(pieces), limits)

    def visit(self, visitor: ModelVisitor[_R]) -> _R:
        return visitor.in_list_order_chars(self)


class LibraryOrder:
    """A Hugging Face file's merges in the library's order; its `LibraryModel` is made once per loaded tokenizer."""

    kind = "library order"

    def __init__(self, tok: LoadedTokenizer) -> None:
        self.tok = tok
        # The Bytes page shows any file in the library's order; a character-level one also the Characters page.
        self.pages: tuple[str, ...] = tuple(dict.fromkeys(("bytes", *tok.unit.pages)))

    @property
    def library(self) -> LibraryModel:
        """The file's model (kept with the loaded tokenizer: a preset's stored form brings it built)."""
        return library_model(self.tok)

    def ordinary_bytes(self) -> dict[int, bytes]:
        return ordinary_bytes(self.tok)

    def encode_pieces(self, text: str, scheme: str) -> list[int]:
        """Ids of `text` split by a playground scheme, each piece through the file's model."""
        return library_scheme_ids(self.library, self.tok, validate_text(text), scheme)

    def encode_pieces_batch(self, texts: list[str], scheme: str) -> list[list[int]]:
        return [self.encode_pieces(text, scheme) for text in texts]

    def merge_bytes(self, data: bytes) -> list[int]:
        raise ValueError("a file in the library's order merges its own symbols, not raw bytes")

    def encode_parts(self, pipeline: hp.Pipeline, texts: list[str], allowed: frozenset[str] | None) -> list[list[int]]:
        """The ids of each text's parts, spelt for the model (`Pipeline.parts_batch(for_model=True)`)."""
        every = pipeline.parts_batch(texts, allowed, for_model=True)
        # The pieces of every run of every text go to the model together (a long text cut by many
        # added tokens, gemma3's newlines say, or a vocabulary's tokens, is then one batch), their
        # ids put back in order.
        each = iter(self.library.piece_ids(list(chain.from_iterable(
            value for parts in every for added_id, value in parts if added_id is None))))
        out: list[list[int]] = []
        for parts in every:
            ids: list[tuple[int, ...]] = []
            for added_id, value in parts:
                if added_id is not None:
                    ids.append((added_id,))
                else:
                    ids.extend(islice(each, len(value)))
            out.append(joined_ids(ids))
        return out

    def known(self, piece: str) -> str:
        return piece

    def record(self, pieces: Pieces, limits: TraceLimits) -> tuple[EncodeTrace, list[int]]:
        """The trace of `pieces`, merges in the order they fire (the run gives the ids too), and the added
        tokens' indexes."""
        return library_trace(self.tok, self.library, pieces, limits)

    def visit(self, visitor: ModelVisitor[_R]) -> _R:
        return visitor.in_library_order(self)


#: A file's model in the library's order, kept with the loaded tokenizer (a reader that builds it with the
#: file keeps it there; a copy of the tokenizer whose fields it reads carries it: `Built.carry`).
LIBRARY_MODEL: Part[LibraryModel] = Part("library model")


def library_model(tok: LoadedTokenizer) -> LibraryModel:
    """The file's model in the library's order (made once per loaded tokenizer, kept in its `built` holder)."""
    return tok.built.get(LIBRARY_MODEL, lambda: _build_model(tok))


def _build_model(tok: LoadedTokenizer) -> LibraryModel:
    strings, rules = tok.unit.library_parts(tok)
    return LibraryModel(strings, rules, tok.model, tok.unk_id)


__all__ = ["DROPPED", "LIBRARY_MODEL", "ModelVisitor", "LibraryOrder", "ListOrderBytes", "ListOrderChars", "library_model", "relabel_map"]
