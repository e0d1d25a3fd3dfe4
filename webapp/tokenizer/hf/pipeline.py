"""What a tokenizer.json does around its BPE model, done the way `tokenizers` does it.

What it does not do: the BPE itself (models/library.py), pairs of texts,
truncation or padding, offsets.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import json
from itertools import accumulate, islice
from functools import lru_cache
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from webapp.tokenizer.core.byte_decode import check_decoded_size, decoded_size, utf8_size
from webapp.tokenizer.decoders import decoders as hd
from webapp.tokenizer.normalize import normalizers as hn
from webapp.tokenizer.pretokenize import pre_tokenizers as hp
from webapp.tokenizer.reading.fields import Unsupported
from webapp.tokenizer.hf.added_tokens import AddedSplitter, AddedToken
from webapp.tokenizer.core.alphabet import bytes_to_token, token_to_bytes
from webapp.tokenizer.hf.longest_first import LongestFirstSplitter
from webapp.tokenizer.core.alphabet import model_pieces
from webapp.tokenizer.hf.post_processors import read_post_processor
from webapp.tokenizer.pretokenize.pre_runs import build_pre_tokenizer_runs
from webapp.tokenizer.reading.regex_size import PatternTooLarge, file_patterns
from webapp.tokenizer.reading.text import bounded, check_growth, time_left
from webapp.tokenizer.pretokenize.chunks import CLASS_SPLITS
from webapp.tokenizer.pretokenize.class_split import ClassSplit

PIPELINE_VERSION = 1
MAX_ADDED_TOKENS = 20_000
MAX_ADDED_CONTENT = 1_000
MAX_ADDED_CHARS = 262_144  # (in all; each a trie node and an automaton node: reading/longest_match.py)


Part = tuple[int | None, Any]  # (added token id, its content) or (None, [piece strings])


# --------------------------------------------------------------------------
# Reading the file


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _read_added(items: Any, notes: list[str]) -> list[list[Any]]:
    """added_tokens -> [[content, id, special, normalized, lstrip, rstrip, single_word], ...]."""
    out: list[list[Any]] = []
    if items is None:
        return out
    if not isinstance(items, list):
        notes.append("added_tokens is not a list; no added tokens are split out")
        return out
    skipped = 0
    if len(items) > MAX_ADDED_TOKENS:
        notes.append(f"the file has {len(items):,} added tokens; only the first {MAX_ADDED_TOKENS:,} are split out")
        items = items[:MAX_ADDED_TOKENS]
    chars = 0
    for index, item in enumerate(items):
        if not (isinstance(item, dict) and isinstance(item.get("content"), str)
                and 0 < len(item["content"]) <= MAX_ADDED_CONTENT and _is_int(item.get("id")) and item["id"] >= 0):
            skipped += 1
            continue
        chars += len(item["content"])
        if chars > MAX_ADDED_CHARS:
            notes.append(f"the file's added tokens have over {MAX_ADDED_CHARS:,} characters together; only the "
                         f"first {index:,} are split out")
            break
        special = bool(item.get("special", False))
        normalized = item.get("normalized")
        out.append([
            item["content"], item["id"], special,
            (not special) if normalized is None else bool(normalized),
            bool(item.get("lstrip", False)), bool(item.get("rstrip", False)), bool(item.get("single_word", False)),
        ])
    if skipped:
        notes.append(f"{skipped} added token(s) without a content string (of 1 to {MAX_ADDED_CONTENT} characters) "
                     "and an id are left out")
    return out


def _read_lenient(node: Any, describe: Callable[[Any], Any], key: str, what: str, notes: list[str]) -> Any:
    """Describe a component; in a top-level Sequence, leave out only the parts that fail. A pattern
    too large to compile safely refuses the file (PatternTooLarge, naming the field)."""
    field = {"normalizers": "normalizer", "pretokenizers": "pre_tokenizer", "decoders": "decoder"}[key]
    try:
        return _read_parts(node, describe, key, what, notes)
    except PatternTooLarge as exc:
        raise PatternTooLarge(f"{field}.pattern.Regex: {exc}", field=field) from None


def _read_parts(node: Any, describe: Callable[[Any], Any], key: str, what: str, notes: list[str]) -> Any:
    if node is None:
        return None
    if isinstance(node, dict) and node.get("type") == "Sequence" and isinstance(node.get(key), list):
        kept = []
        for child in node[key]:
            try:
                kept.append(describe(child))
            except Unsupported as exc:
                notes.append(f"the file's {what} includes {exc}, which the playground leaves out, "
                             "so ids may differ from the library's on some texts")
        return {"type": "Sequence", key: kept}
    try:
        return describe(node)
    except Unsupported as exc:
        notes.append(f"the file's {what} is {exc}, which the playground leaves out, "
                     "so ids may differ from the library's on some texts")
        return None


def read_pipeline(data: Mapping[str, Any]) -> tuple[str, list[str]]:
    """(canonical JSON description, notes) for a parsed tokenizer.json."""
    with file_patterns():  # (all the file's regexes measured together)
        return _read_pipeline(data)


def _read_pipeline(data: Mapping[str, Any]) -> tuple[str, list[str]]:
    notes: list[str] = []
    model_node = data.get("model")
    model: Mapping[str, Any] = model_node if isinstance(model_node, dict) else {}
    desc = {
        "v": PIPELINE_VERSION,
        "normalizer": _read_lenient(data.get("normalizer"), hn.describe_normalizer, "normalizers", "normalizer", notes),
        "pre_tokenizer": _read_lenient(
            data.get("pre_tokenizer"), hp.describe_pre_tokenizer, "pretokenizers", "pre-tokenizer", notes),
        "decoder": _read_lenient(data.get("decoder"), hd.describe_decoder, "decoders", "decoder", notes),
        "added_tokens": _read_added(data.get("added_tokens"), notes),
        "fuse_unk": bool(model.get("fuse_unk", False)),
    }
    post = read_post_processor(data.get("post_processor"), notes)
    if post is not None:  # (only then: files without one keep the description they always had)
        desc["post"] = post
    return json.dumps(desc, ensure_ascii=False, sort_keys=True, separators=(",", ":")), notes


# --------------------------------------------------------------------------
# The pipeline


class Pipeline:
    """A compiled description: `parts(text)` for encoding, `decode(tokens)` for decoding."""

    def __init__(self, desc: Mapping[str, Any]) -> None:
        self.normalizer = hn.build_normalizer(desc["normalizer"]) if desc["normalizer"] else None
        self._normalizer_desc = desc["normalizer"]
        # Only Metaspace's prepend_scheme "first" asks where a piece started.
        self._asks_origin = '"prepend_scheme":"first"' in json.dumps(desc["pre_tokenizer"], separators=(",", ":"))
        pre = desc["pre_tokenizer"]
        # (over all the runs between added tokens at once: a known split then makes one pass)
        self.pre_tokenizer = build_pre_tokenizer_runs(pre) if pre else None
        # A known split then ByteLevel: the model's pieces are cut straight from the text's bytes.
        self._split_then_bytes = hp.split_then_bytes(pre)
        # Pieces come out in GPT-2's byte alphabet only when a step runs after ByteLevel.
        self.spelt_in_alphabet = hp.maps_bytes(pre) and not hp.ends_with_byte_level(pre)
        self.byte_level = hp.maps_bytes(pre)
        self.decoder = hd.build_decoder(desc["decoder"]) if desc["decoder"] else None
        self.added = [AddedToken(*row) for row in desc["added_tokens"]]
        self.fuse_unk = bool(desc.get("fuse_unk", False))
        self.by_id = {t.id: t for t in self.added}
        # The library names a normalized added token by its normalized content (a SentencePiece
        # model's normalizer says `added_verbatim`: its symbols are matched by their own text).
        content_normalizer = None if getattr(self.normalizer, "added_verbatim", False) else self.normalizer
        self.token_text = {
            t.id: content_normalizer(t.content) if t.normalized and content_normalizer is not None else t.content
            for t in self.added
        }
        self.special_ids = frozenset(t.id for t in self.added if t.special)
        # The post-processor's ids before and after a single text (add_special_tokens).
        post = desc.get("post") or [[], []]
        self.post_before: tuple[int, ...] = tuple(post[0])
        self.post_after: tuple[int, ...] = tuple(post[1])
        raw = [t for t in self.added if not t.normalized]
        #: "longest_first": llama.cpp's way of cutting special tokens out (a GGUF file's; hf/longest_first.py)
        self.added_order = str(desc.get("added_order", "leftmost"))
        self._raw: AddedSplitter | LongestFirstSplitter = (
            LongestFirstSplitter(raw) if self.added_order == "longest_first" else AddedSplitter(raw, None))
        # A pipeline that is only a known split (no normalizer, no added tokens; a Tekken file's):
        # its name as a scheme of pretokenize/chunks.py, so a byte-level model can encode the text
        # with the playground's own split-text encoder (chunk and pre-token caches, whole tokens).
        known = hp.plain_class_split(pre) if self.normalizer is None and not self.added else None
        self.plain_scheme = known.name if known is not None and known.name in CLASS_SPLITS else None
        self._normalized = AddedSplitter([t for t in self.added if t.normalized], content_normalizer)

    def parts(self, text: str, allowed: frozenset[str] | None = None, for_model: bool = False) -> list[Part]:
        """The text cut into added tokens and pieces (bounded: see text.bounded).

        `allowed`: the special tokens to recognise (None: all, the library's default).
        `for_model`: the pieces as the model reads them (`model_pieces`: spelt in the
        byte alphabet for a byte-level pipeline), else as the pre-tokenizer gives them.
        """
        with bounded(len(text)):
            return self._parts(text, allowed, for_model)

    def parts_batch(self, texts: list[str], allowed: frozenset[str] | None = None,
                    for_model: bool = False) -> list[list[Part]]:
        """`parts` of each text; under a known split spelt for the model, every text's pieces are cut and
        spelt in one pass (many short texts, a vocabulary's tokens say, then cost one numpy call)."""
        if not self._spells_known_split(for_model):
            return [self.parts(text, allowed, for_model) for text in texts]
        cut = []
        for text in texts:
            with bounded(len(text)):  # (each text its own budget, as `parts` gives it)
                cut.append(self._split_normalize(text, allowed))
        with bounded(sum(map(len, texts))):
            spelt = iter(self._split_spelt([run for _, runs in cut for run in runs]))
        return [self._assemble(out, list(islice(spelt, len(runs)))) for out, runs in cut]

    def _spells_known_split(self, for_model: bool) -> bool:
        """Are the model's pieces cut by a known split straight from the byte spelling (`_split_spelt`)?"""
        return for_model and self._split_then_bytes is not None and not self.spelt_in_alphabet

    def _split_spelt(self, runs: list[list[hp.Piece]]) -> list[list[str]]:
        """Each run's pieces under the known split, spelt in the byte alphabet (`_spelt_pieces`)."""
        assert self._split_then_bytes is not None
        time_left()  # (the known patterns match in linear time; the budget is only checked)
        return self._spelt_pieces(self._split_then_bytes, [run[0][0] for run in runs])

    def normalized(self, text: str, allowed: frozenset[str] | None = None) -> list[tuple[int | None, str]]:
        """The text as the normalizer leaves it, before the pre-tokenizer: (added token id, its content)
        or (None, a normalized stretch between added tokens), in order (bounded as `parts`)."""
        with bounded(len(text)):
            out, runs = self._split_normalize(text, allowed)
        return [(added, value) if added is not None else (None, runs[value][0][0]) for added, value in out]

    def _split_normalize(self, text: str, allowed: frozenset[str] | None) -> tuple[list[Part], list[list[hp.Piece]]]:
        """Added tokens split out and the stretches between them normalized: the parts, each stretch as
        its index in the runs, and the runs (one piece each, with whether it is at the text's start)."""
        out: list[Part] = []
        runs: list[list[hp.Piece]] = []  # the stretches between added tokens, pre-tokenized together later
        for token, start, end in self._raw.split(text, allowed):
            if token is not None:
                out.append((token.id, text[start:end]))
                continue
            if start == end:
                continue
            segment = text[start:end]
            # (a piece is "at the start" only if its first character is the text's first one)
            at_start = start == 0 and (not self._asks_origin or hn.keeps_start(self._normalizer_desc, segment))
            if self.normalizer is not None:
                segment = self.normalizer(segment)
                check_growth(len(segment))
            for inner, s, e in self._normalized.split(segment, allowed):
                if inner is not None:
                    out.append((inner.id, segment[s:e]))
                elif e > s:
                    out.append((None, len(runs)))  # (its pieces once the runs are pre-tokenized)
                    runs.append([(segment[s:e], at_start and s == 0)])
        return out, runs

    def _parts(self, text: str, allowed: frozenset[str] | None, for_model: bool = False) -> list[Part]:
        out, runs = self._split_normalize(text, allowed)
        if self._spells_known_split(for_model):
            pieces = self._split_spelt(runs)
        else:
            if self.pre_tokenizer is not None:
                runs = self.pre_tokenizer(runs)
            pieces = [[p for p, _ in run] for run in runs]
            if for_model:
                spelt = iter(model_pieces([p for run in pieces for p in run], self.byte_level, self.spelt_in_alphabet))
                pieces = [list(islice(spelt, len(run))) for run in pieces]
        return self._assemble(out, pieces)

    @staticmethod
    def _assemble(out: list[Part], pieces: list[list[str]]) -> list[Part]:
        """The parts with each run's index replaced by its pieces (a run left with none dropped)."""
        return [(added, value) if added is not None else (None, pieces[value])
                for added, value in out if added is not None or pieces[value]]

    @staticmethod
    def _spelt_pieces(split: ClassSplit, texts: list[str]) -> list[list[str]]:
        """Each text's pieces under a known split, spelt in the byte alphabet: the same as splitting,
        then `model_pieces`, but cut straight from the joined text's spelling (its pieces' ends moved
        from characters to UTF-8 bytes) with no string made per piece on the way."""
        joined, ends, counts = split.piece_ends(texts)
        data = joined.encode("utf-8", "surrogatepass")
        if len(data) != len(joined):
            codes = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
            width = 1 + (codes >= 0x80).astype(np.int64) + (codes >= 0x800) + (codes >= 0x10000)
            ends = np.cumsum(width)[ends - 1]
        stops = ends.tolist()
        spelt = bytes_to_token(data)
        flat = list(map(spelt.__getitem__, map(slice, [0, *stops[:-1]], stops)))
        return [flat[a:b] for a, b in zip(counts, counts[1:])]

    def piece_bytes(self, piece: str) -> bytes:
        """A piece as the bytes the byte-level model sees."""
        if self.spelt_in_alphabet:
            data = token_to_bytes(piece)
            if data is not None:
                return data
        return piece.encode("utf-8", "surrogatepass")

    def decode(self, tokens: list[str]) -> str:
        if self.decoder is None:
            return " ".join(tokens)
        return "".join(self.decoder(tokens))


@lru_cache(maxsize=32)
def compile_pipeline(description: str) -> Pipeline:
    return Pipeline(json.loads(description))


# --------------------------------------------------------------------------
# Encoding with a model, laying out a trace, decoding


def encode_byte_parts(
    pipeline: Pipeline, parts: list[Part], encode_runs: Callable[[list[tuple[bytes, list[int]]]], list[list[int]]],
    drop: frozenset[int] = frozenset(),
) -> list[int]:
    """Ids for parts: added tokens as their ids, the runs of pieces between them through `encode_runs`."""
    runs: list[tuple[bytes, list[int]]] = []
    table = bytes.maketrans(b"", b"")
    for added_id, value in parts:
        if added_id is not None:
            continue
        joined = "".join(value)
        if not drop and not pipeline.spelt_in_alphabet and joined.isascii():
            # one character per byte: the cuts are the pieces' lengths added up
            runs.append((joined.encode("ascii"), list(accumulate(map(len, value)))))
            continue
        chunks = [pipeline.piece_bytes(p) for p in value]
        if drop:
            chunks = [c.translate(table, bytes(drop)) for c in chunks]
        runs.append((b"".join(chunks), list(accumulate(map(len, chunks)))))
    encoded = iter(encode_runs(runs) if runs else [])
    ids: list[int] = []
    for added_id, _value in parts:
        if added_id is not None:
            ids.append(added_id)
        else:
            ids.extend(next(encoded))
    return ids


def encode_char_parts(
    pipeline: Pipeline, parts: list[Part], tokens_of: Callable[[str], list[str]],
    vocab: Mapping[str, int], unk_id: int | None,
) -> list[int]:
    """Ids for character-level parts: each piece's tokens looked up (`char_piece_ids`)."""
    ids: list[int] = []
    cache: dict[str, list[int]] = {}
    for added_id, value in parts:
        if added_id is not None:
            ids.append(added_id)
            continue
        for piece in value:
            found = cache.get(piece)
            if found is None:
                found = cache[piece] = char_piece_ids(piece, tokens_of, vocab, unk_id, pipeline.fuse_unk)
            ids.extend(found)
    return ids


def char_piece_ids(piece: str, tokens_of: Callable[[str], list[str]], vocab: Mapping[str, int],
                   unk_id: int | None, fuse_unk: bool) -> list[int]:
    """One character-level piece's ids: its tokens looked up; unknown -> unk (fused into the unk before it
    with `fuse_unk`), or, without an unknown token, left out before merging (their neighbours may then merge)."""
    found: list[int] = []
    known = piece if unk_id is not None else "".join(ch for ch in piece if ch in vocab)
    for token in tokens_of(known):
        tid = vocab.get(token)
        if tid is None:
            if unk_id is None or (fuse_unk and found and found[-1] == unk_id):
                continue
            tid = unk_id
        found.append(tid)
    return found


def layout(pipeline: Pipeline, parts: list[Part], *, unit: str) -> tuple[str, list[tuple[int, int]], list[tuple[int, int, int]]]:
    """The text the model sees, piece spans, and added-token spans (start, end, id).

    `unit` "bytes" gives UTF-8 byte offsets (pieces as the bytes the model
    sees); "chars" gives code point offsets.
    """
    texts: list[str] = []
    pieces: list[tuple[int, int]] = []
    added: list[tuple[int, int, int]] = []
    offset = 0
    for added_id, value in parts:
        items = [value] if added_id is not None else list(value)
        for item in items:
            if unit == "bytes":
                data = pipeline.piece_bytes(item) if added_id is None else item.encode("utf-8", "surrogatepass")
                shown = data.decode("utf-8", "surrogatepass")
                size = len(data)
            else:
                shown, size = item, len(item)
            if added_id is None:
                pieces.append((offset, offset + size))
            else:
                added.append((offset, offset + size, added_id))
            texts.append(shown)
            offset += size
    return "".join(texts), pieces, added


def decode_ids(
    pipeline: Pipeline, ids: Sequence[int], token_of: Callable[[int], str | None], *, skip_special: bool = True,
    max_bytes: int | None = None,
) -> str:
    """The library's `decode(ids, skip_special_tokens=...)`: ids -> token strings -> decoder; with `max_bytes`
    the strings' UTF-8 is added up first and a larger total refused (docs/limits.md: what that bounds)."""
    def text_of(i: int) -> str | None:
        added = pipeline.by_id.get(i)
        if added is not None:
            return None if skip_special and added.special else pipeline.token_text[i]
        return token_of(i)

    if max_bytes is not None:
        check_decoded_size(decoded_size(ids, lambda i: utf8_size(text_of(i))), len(ids), max_bytes)
    return pipeline.decode([token for token in map(text_of, ids) if token is not None])
