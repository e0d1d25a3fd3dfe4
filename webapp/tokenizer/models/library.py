"""A tokenizer.json's BPE model as the `tokenizers` library runs it on one piece.

What it does not do: the post-processor (hf/post_processors.py), dropout (a random order; a note says it is left out),
continuing_subword_prefix / end_of_word_suffix (refused when importing),
normalizers and pre-tokenizers (hf/pipeline.py).

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import json
from contextlib import nullcontext
from itertools import accumulate, chain, compress, repeat
from operator import is_
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from webapp.tokenizer.caches import LIST_BUDGET, BoundedCache
from webapp.tokenizer.core.collector import collector_paused
from webapp.tokenizer.core.joined import joined_ids
from webapp.tokenizer.core.library_order.early_pairs import OTHER, WIDTH, EarlyPairs
from webapp.tokenizer.core.library_order.merges import Firing, LibraryMerges
from webapp.tokenizer.core.library_order.score_order import ScoreMerges, levels_from_runs
from webapp.tokenizer.core.alphabet import ALPHABET_BYTE
from webapp.tokenizer.models.long_pieces import CutTables, long_piece_ids, segments_of
from webapp.tokenizer.models.row_symbols import row_symbols
from webapp.tokenizer.models.space_runs import SPACE, joined, led_segments, parts_of, runs_last

MODEL_VERSION = 1
#: Pieces cached per model, and their total characters (the cache joins the worker-wide LIST_BUDGET).
PIECE_CACHE_ENTRIES = 65_536
PIECE_CACHE_CHARS = 1_000_000
PIECE_CACHE_MAX_CHARS = 256
#: A piece longer than this is cut where no merge can join, and the parts merged (and cached) one by one.
LONG_PIECE = 64
#: From this many pieces to merge at once, their symbols and first pair ranks are looked up with numpy.
BATCH_MERGE = 16
#: From this many segments of long pieces in one batch, the collector is paused while they are looked up,
#: merged and put together (a few hundred new tuples for the cache, and the lists around them: enough to set
#: off collections that walk what the process made before; the one after the pause walks them once).
PAUSE_SEGMENTS = 256
FIND_WHOLE_BATCH = 32_768  # (tokens merged at once by `find_whole`: a batch's arrays grow with it)
#: Characters whose fallback bytes a model remembers (then it starts again).
SPELT_CODES = 4096
_FALLBACK = tuple(f"<0x{b:02X}>" for b in range(256))


def read_model_options(model: Mapping[str, Any]) -> tuple[str, list[str]]:
    """(canonical JSON of the encoding options, notes) of a BPE model object; the library's order."""
    notes: list[str] = []
    unk = model.get("unk_token")
    dropout = model.get("dropout")
    if isinstance(dropout, (int, float)) and not isinstance(dropout, bool) and dropout > 0:
        notes.append("the file's BPE dropout (random skipping of merges) is not applied")
    desc = {
        "v": MODEL_VERSION,
        "order": "library",
        "ignore_merges": bool(model.get("ignore_merges", False)),
        "byte_fallback": bool(model.get("byte_fallback", False)),
        "fuse_unk": bool(model.get("fuse_unk", False)),
        "unk_token": unk if isinstance(unk, str) else None,
    }
    return json.dumps(desc, sort_keys=True, separators=(",", ":")), notes


class LibraryModel:
    """The file's vocab {token string: id}, its rules in file ids, and its options (see the module doc)."""

    def __init__(
        self, vocab: Mapping[str, int], rules: Sequence[Sequence[int]] | np.ndarray, options: str,
        unk_id: int | None, edges: np.ndarray | None = None, pair_table: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        """`edges`, `pair_table`: what a stored form kept of `edge_array()` and the rules' `pair_table()`."""
        opts = json.loads(options)
        self.vocab = vocab
        # (a SentencePiece model's rules fire by piece score, leftmost on ties: core/library_order/score_order.py)
        self.merges = (ScoreMerges(rules, levels_from_runs(opts["level_runs"])) if opts.get("order") == "score"
                       else LibraryMerges(rules, pair_table))
        self.ignore_merges = bool(opts["ignore_merges"])
        self.fuse_unk = bool(opts["fuse_unk"])
        self.unk_id = unk_id  # (the file's unk_token's id, read with the vocab)
        # (the library falls back only when every byte of the character has its token: with a
        # partial set of <0xXX> tokens, some characters can and others cannot)
        fallback = [vocab.get(code) for code in _FALLBACK] if opts["byte_fallback"] else []
        self.fallback: list[int | None] | None = fallback or None
        self._runs_last: bool | None = None
        self._early: EarlyPairs | None = None
        self._spelt: dict[int, list[int] | None] = {}  # (`_fallback_of`'s answers)
        #: What cutting a long piece reads (long_pieces.py): made on first use, or read from a stored form.
        self.cut = CutTables(vocab, self.merges, self.fallback, self._fallback_of, edges)
        #: By id: 1 when the token's own characters merge back into it (see `find_whole`), else 0; None until known.
        self.whole: bytes | None = None
        self.cache: BoundedCache[str, tuple[int, ...]] = BoundedCache(
            PIECE_CACHE_ENTRIES, PIECE_CACHE_CHARS, budget=LIST_BUDGET
        )

    def __len__(self) -> int:
        return len(self.merges)

    def symbols(self, piece: str, unit: str = "utf8") -> tuple[list[int], list[int]]:
        """The piece's symbols before any merge, and the size of each in `unit` of the piece.

        `unit`: "utf8" (UTF-8 bytes of the piece), "chars" (code points: a character's
        fallback bytes after the first have size 0) or "alphabet" (one byte per
        character: a byte-level piece spelt in GPT-2's alphabet).
        """
        vocab = self.vocab
        ids: list[int] = []
        sizes: list[int] = []
        unk: list[int] | None = None  # [id, size] of an unknown token waiting to be added
        gap = 0  # the size of characters left out (no unknown token): given to the next symbol
        for ch in piece:
            tid = vocab.get(ch)
            size = len(ch.encode("utf-8", "surrogatepass")) if unit == "utf8" else 1
            if tid is not None:
                if unk is not None:
                    ids.append(unk[0])
                    sizes.append(unk[1])
                    unk = None
                ids.append(tid)
                sizes.append(size + gap)
                gap = 0
                continue
            codes = self._fallback(ch)
            if codes is not None:  # (the library adds them without flushing a waiting unknown token)
                ids.extend(codes)
                sizes.extend([1] * len(codes) if unit != "chars" else [1] + [0] * (len(codes) - 1))
                sizes[len(sizes) - len(codes)] += gap
                gap = 0
                continue
            if self.unk_id is None:
                gap += size
                continue
            if unk is not None and self.fuse_unk:
                unk[1] += size
                continue
            if unk is not None:
                ids.append(unk[0])
                sizes.append(unk[1])
            unk = [self.unk_id, size + gap]
            gap = 0
        if unk is not None:
            ids.append(unk[0])
            sizes.append(unk[1])
        if gap and sizes:
            sizes[-1] += gap
        return ids, sizes

    def _fallback(self, ch: str) -> list[int] | None:
        if self.fallback is None:
            return None
        codes: list[int] = []
        for b in ch.encode("utf-8", "surrogatepass"):
            code = self.fallback[b]
            if code is None:
                return None
            codes.append(code)
        return codes

    def _fallback_of(self, code: int) -> list[int] | None:
        """The fallback bytes' ids of a character that is no vocab token (None: it is one, or has none), remembered."""
        try:  # (read once: another thread may clear the dict between a check and a read)
            return self._spelt[code]
        except KeyError:
            if len(self._spelt) >= SPELT_CODES:
                self._spelt.clear()
            found = self._spelt[code] = None if chr(code) in self.vocab else self._fallback(chr(code))
            return found

    def encode_pieces(self, pieces: list[str]) -> list[int]:
        """The file's ids for pieces in a row (`piece_ids`, joined)."""
        return joined_ids(self.piece_ids(pieces))

    def piece_ids(self, pieces: list[str]) -> list[tuple[int, ...]]:
        """The file's ids of each piece (`tokenize`): cached ones looked up in one pass, the missed
        ones merged in one batch, long ones cut first (`_uncached_ids`)."""
        found: list[tuple[int, ...] | None]
        if self.ignore_merges:  # (a piece that is a vocab token is that token, never cached: one pass for them)
            whole = list(map(self.vocab.get, pieces))
            if None not in whole:
                return list(zip(whole))  # type: ignore[arg-type]
            found = [(i,) if i is not None else self.cache.data.get(p) for i, p in zip(whole, pieces)]
        elif self.whole is not None:  # (a vocab token marked whole is that token: read in the same pass)
            marks, get = self.whole, self.cache.data.get
            tokens = list(map(self.vocab.get, pieces))
            found = [(t,) if t is not None and marks[t] else get(p) for t, p in zip(tokens, pieces)]
        else:
            found = list(map(self.cache.data.get, pieces))
        missing = [i for i, ids in enumerate(found) if ids is None]
        if missing:
            # What `tokenize` would still do for a short missing piece when the pass above already took
            # the vocab's shortcut (ignore_merges or whole tokens) and the cache: merge it, and cache it.
            made = self._uncached_ids(list(dict.fromkeys(pieces[i] for i in missing)),
                                      merge_short=self.ignore_merges or self.whole is not None)
            for i in missing:
                piece = pieces[i]
                ids = made.get(piece)
                if ids is None:
                    ids = made[piece] = self.tokenize(piece)
                found[i] = ids
        return found  # type: ignore[return-value]

    def tokenize(self, piece: str) -> tuple[int, ...]:
        """The file's ids for one piece."""
        if not piece:
            return ()
        if self.ignore_merges:
            whole = self.vocab.get(piece)
            if whole is not None:
                return (whole,)
        elif self.whole is not None:
            token = self.vocab.get(piece)
            if token is not None and self.whole[token]:
                return (token,)
        found = self.cache.data.get(piece)
        if found is None:
            if len(piece) > LONG_PIECE:
                return self._uncached_ids([piece], merge_short=False)[piece]
            found = self._merged(piece)
        return found

    def merge_alone(self, piece: str) -> tuple[int, ...]:
        """The rules alone on the piece's symbols: no vocab shortcut (ignore_merges), no cache."""
        return self._merge_segment(piece) if piece else ()

    def _uncached_ids(self, unique: list[str], merge_short: bool) -> dict[str, tuple[int, ...]]:
        """The ids of distinct pieces missed by the cache, in one batch: the long ones cut
        (`long_piece_ids`, long_pieces.py) and their segments read from the cache; the new segments, and the
        short pieces when `merge_short`, merged together (`_merge_segments`) and cached. Short pieces are
        left out of the answer when not `merge_short`. From PAUSE_SEGMENTS segments, with the collector
        paused (core/collector.py; see PAUSE_SEGMENTS)."""
        long = [p for p in unique if len(p) > LONG_PIECE]
        texts, assemble = long_piece_ids(self.cut, long) if long else ([], None)
        with collector_paused() if len(texts) >= PAUSE_SEGMENTS else nullcontext():
            return self._segment_ids(unique, merge_short, long, texts, assemble)

    def _segment_ids(
        self, unique: list[str], merge_short: bool, long: list[str], texts: list[str],
        assemble: Callable[[Sequence[tuple[int, ...]]], list[tuple[int, ...]]] | None,
    ) -> dict[str, tuple[int, ...]]:
        """`_uncached_ids` once the long pieces are cut: `texts`, their segments (repeats kept), and
        `assemble`, which puts each piece's ids together from the texts' (long_pieces.py)."""
        found = list(map(self.cache.data.get, texts))  # (read now: caching the batch below may evict them)
        fresh = list(dict.fromkeys(compress(texts, map(is_, found, repeat(None))))) if None in found else []
        made, fresh = self._whole_tokens(fresh)
        # (only where two spaces come in a row may a segment be led by a run)
        runs = bool(fresh) and any(SPACE * 2 in piece for piece in long)
        led = led_segments(fresh) if runs else {}  # (space_runs.py)
        if led and not self.runs_last():
            led = {}
        parts = parts_of(led) if led else []
        part_hits = list(map(self.cache.data.get, parts))
        if None in part_hits:
            whole, _ = self._whole_tokens([part for part, ids in zip(parts, part_hits) if ids is None])
            part_hits = [ids if ids is not None else whole.get(part) for part, ids in zip(parts, part_hits)]
        if led:
            fresh = [text for text in fresh if text not in led]
        short = [p for p in unique if p and len(p) <= LONG_PIECE] if merge_short else []
        batch = (list(dict.fromkeys([*short, *fresh, *(p for p, ids in zip(parts, part_hits) if ids is None)]))
                 if short or parts else fresh)
        merged = self._merge_segments(batch)
        self.cache.put_many(list(zip(batch, merged)) if max(map(len, batch), default=0) <= PIECE_CACHE_MAX_CHARS
                            else [item for item in zip(batch, merged) if len(item[0]) <= PIECE_CACHE_MAX_CHARS])
        made.update(zip(batch, merged))
        if led:
            made.update((part, ids) for part, ids in zip(parts, part_hits) if ids is not None)
            space = self.vocab[SPACE]
            made_led = [(text, joined(text, run, made, space)) for text, run in led.items()]
            made.update(made_led)
            self.cache.put_many([item for item in made_led if len(item[0]) <= PIECE_CACHE_MAX_CHARS])
        out = {piece: made[piece] for piece in short}
        if assemble is not None:
            if made:  # (each text the cache missed: its ids as made now, in one C pass; a text `made` has
                # and the cache had too gets the same ids from either)
                found = list(map(made.get, texts, found))
            out.update(zip(long, assemble(found)))  # type: ignore[arg-type]
        return out

    def _whole_tokens(self, pieces: list[str]) -> tuple[dict[str, tuple[int, ...]], list[str]]:
        """({piece: (id,)} for the pieces that are vocab tokens marked whole, now cached; the other pieces).
        The pieces are distinct and missed by the cache (in prose, many a new segment is a word that is a token)."""
        if self.whole is None or not pieces:
            return {}, pieces
        marks, get = self.whole, self.vocab.get
        whole: dict[str, tuple[int, ...]] = {piece: (token,) for piece, token in zip(pieces, map(get, pieces))
                                             if token is not None and marks[token]}
        if not whole:
            return whole, pieces
        self.cache.put_many([item for item in whole.items() if len(item[0]) <= PIECE_CACHE_MAX_CHARS])
        return whole, [piece for piece in pieces if piece not in whole]

    def runs_last(self) -> bool:
        """Whether segments led by a run of spaces may be merged in parts (space_runs.py), found on first use."""
        if self._runs_last is None:  # (SentencePiece's score order only: a tokenizer.json's list order would
            # build its whole pair map to check it, which its first encodes leave out)
            self._runs_last = isinstance(self.merges, ScoreMerges) and runs_last(self.vocab, self.merges)
        return self._runs_last

    def find_whole(self) -> bytes:
        """Which vocab tokens encode to themselves (by id, 1 or 0): such a piece is then one lookup."""
        flags = bytearray(max(self.vocab.values(), default=-1) + 1)
        tokens = [token for token in self.vocab if token]
        # (the short ones merged in batches, as a batch of missed pieces is: qwen3's 151,643 took 0.85 s,
        # 1.14 s one by one; the long ones, and every one under ignore_merges, as `tokenize` takes them)
        short = [] if self.ignore_merges else [token for token in tokens if len(token) <= LONG_PIECE]
        rest = [token for token in tokens if self.ignore_merges or len(token) > LONG_PIECE]
        saved, self.whole = self.whole, None
        try:
            merged = chain.from_iterable(self._merge_segments(short[at:at + FIND_WHOLE_BATCH])
                                         for at in range(0, len(short), FIND_WHOLE_BATCH))
            for token, ids in chain(zip(short, merged), zip(rest, map(self._merged_uncached, rest))):
                if ids == (self.vocab[token],):
                    flags[self.vocab[token]] = 1
        finally:
            self.whole = saved
        return bytes(flags)

    def _merged_uncached(self, piece: str) -> tuple[int, ...]:
        if self.ignore_merges and piece in self.vocab:
            return (self.vocab[piece],)
        if len(piece) > LONG_PIECE:
            return tuple(chain.from_iterable(self._merge_segment(part) for part in segments_of(self.cut, piece)))
        return self._merge_segment(piece)

    def _merge_segment(self, segment: str) -> tuple[int, ...]:
        try:  # (the usual case, every character a vocab token: its ids without the sizes symbols() adds up)
            ids = list(map(self.vocab.__getitem__, segment))
        except KeyError:
            ids = self.symbols(segment)[0]
        return tuple(self.merges.merge(ids))

    def _merge_segments(self, segments: list[str]) -> list[tuple[int, ...]]:
        """`_merge_segment` of each (non-empty) segment. From BATCH_MERGE of them, their characters'
        ids (`char_table`) and the ranks of their first pairs are looked up in one numpy pass
        (LibraryMerges.merge_many; the score order's `merge_many_flat` gives them in a row), a character
        with no token as its fallback bytes (row_symbols.py); a segment with another character (the
        unknown token) or an id past the rules' shift goes one by one."""
        if len(segments) < BATCH_MERGE or not all(segments):
            return list(map(self._merge_segment, segments))
        codes = np.frombuffer("".join(segments).encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        ids, sizes, odd = row_symbols(codes, list(map(len, segments)), self.cut.char_table(), self.merges.shift,
                                      self._fallback_of)
        out: list[tuple[int, ...] | None] = [None] * len(segments)
        any_odd = bool(odd.any())
        if any_odd:
            for i in odd.nonzero()[0].tolist():
                out[i] = self._merge_segment(segments[i])
        ends = sizes.cumsum().tolist()
        merged: Iterable[tuple[int, ...]]
        if isinstance(self.merges, ScoreMerges):  # (they come in a row: each piece's tuple sliced from it, no list)
            row, counts = self.merges.merge_many_flat(ids, ends)
            flat, bounds = tuple(row.tolist()), [0, *accumulate(counts.tolist())]
            merged = map(flat.__getitem__, map(slice, bounds, bounds[1:]))
        else:
            merged = map(tuple, self.merges.merge_many(ids, ends, self.early_pairs()))
        if not any_odd:
            return list(merged)
        each = iter(merged)
        return [done if done is not None else next(each) for done in out]

    def early_pairs(self) -> EarlyPairs | None:
        """The tables that find the pairs a batch of pieces may merge first (core/library_order/early_pairs.py), its
        units being the characters of GPT-2's byte alphabet. Made on first use (a pass over the vocab);
        a preset's stored form brings them. None when the rules have no pair table."""
        if self._early is None:
            table = self.merges.pair_table()
            if table is None:
                return None
            shift = self.merges.shift
            units = np.full((3, shift), OTHER, dtype=np.int16)  # unit of a one-unit token, first unit, last unit
            for token, i in self.vocab.items():
                if token and i < shift:
                    first, last = ALPHABET_BYTE.get(token[0], OTHER), ALPHABET_BYTE.get(token[-1], OTHER)
                    units[1, i], units[2, i] = first, last
                    if len(token) == 1:
                        units[0, i] = first
            self._early = EarlyPairs.build(table[0], table[1], shift, np.asarray(self.merges.news, dtype=np.int64),
                                           units[0], units[1], units[2])
        return self._early

    def set_early_pairs(self, early: EarlyPairs) -> None:
        """Keep stored `early_pairs()` tables (checked against the rules' sizes)."""
        shift = self.merges.shift
        if (any(len(a) != shift for a in (early.unit_of, early.first_unit, early.last_unit, early.operand_min))
                or len(early.news) != len(self.merges)
                or any(len(a) != WIDTH * WIDTH for a in (early.left_min, early.right_min, early.unit_rank))):
            raise ValueError("the stored early-pair tables do not match the rules")
        self._early = early

    def _merged(self, segment: str) -> tuple[int, ...]:
        found = self.cache.data.get(segment)
        if found is None:
            found = self._merge_segment(segment)
            if len(segment) <= PIECE_CACHE_MAX_CHARS:
                self.cache.put(segment, found)
        return found

    def tokenize_trace(self, piece: str, unit: str = "utf8") -> tuple[list[int], list[int], list[Firing], bool]:
        """(initial symbols, their sizes in `unit`, the merges in firing order, taken whole by ignore_merges)."""
        ids, sizes = self.symbols(piece, unit)
        if self.ignore_merges and piece in self.vocab:
            return ids, sizes, [], True
        firings: list[Firing] = []
        self.merges.merge(ids, firings)
        return ids, sizes, firings, False


__all__ = ["LibraryModel", "read_model_options"]
