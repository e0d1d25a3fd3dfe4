"""Long pieces of a tokenizer.json's BPE model: cut where no merge can join, and their ids assembled with numpy.

A piece longer than library.py's LONG_PIECE is cut between neighbours no rule
can join (exact: the parts then merge independently), and the parts merged
and cached one by one; `long_piece_ids` reads single-character parts from
the model's `char_table` and puts every piece's ids back in order.

What it does not do: merge a segment (library.py's `LibraryModel`).
"""

from __future__ import annotations

from itertools import accumulate, chain
from typing import Callable, Mapping, Protocol

import numpy as np

from webapp.tokenizer.core.library_order.score_order import PairIndex


class CutModel(Protocol):
    """What cutting reads of a model: its vocab, its single-character tokens and its rules' edges."""

    @property
    def vocab(self) -> Mapping[str, int]: ...

    def char_table(self) -> np.ndarray: ...

    def edge_index(self) -> PairIndex: ...

    def inert_characters(self, codes: list[int]) -> list[int]:
        """Of these code points (no vocab token each), the ones whose symbols no rule ever joins."""
        ...


def code_points(text: str) -> np.ndarray:
    """The text's code points (int64; lone surrogates too)."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int64)


def piece_cuts(model: CutModel, codes: np.ndarray, ends: list[int], char_ids: np.ndarray | None = None) -> np.ndarray:
    """Where pieces in a row (their code points, int64, and where each ends) are cut: 0, each cut,
    the end (int64). Between two characters that are vocab tokens, a merge can join only if some
    rule's left token ends with the first and its right token starts with the second; at any other
    pair of neighbours the piece is cut, and where one piece ends and the next starts. Beside a
    character that is not in the vocab, only when its fallback bytes are named by no rule and the
    neighbour is a vocab token or such a character too (`_beside_inert`). The neighbour pairs are
    looked up at once in the edge array's hash table (`edge_index`).
    `char_ids`: `char_table()` read at each code point, if the caller has it."""
    pairs = (codes[:-1] << 21) | codes[1:]
    cut = ~model.edge_index().has(pairs)
    if char_ids is None:
        table = model.char_table()
        char_ids = table[np.minimum(codes, len(table) - 1)]
    # (a character with no single-character token in the table may still be a vocab token: past
    # CHAR_TABLE_LIMIT; the few distinct ones are asked of the vocab)
    vocab = model.vocab
    missing = char_ids < 0
    odd = np.unique(codes[missing]).tolist()
    tokens = [code for code in odd if chr(code) in vocab]
    if len(tokens) < len(odd):  # (some characters are not in the vocab: known are the others)
        known = ~missing | _among(codes, tokens)
        inert = model.inert_characters(sorted(set(odd) - set(tokens)))
        cut &= known[:-1] & known[1:]
        if inert:  # (a character whose fallback bytes no rule names stays apart: cut on both its sides)
            cut |= _beside_inert(known, _among(codes, inert))
    if len(ends) > 1:
        cut[np.array(ends[:-1], dtype=np.int64) - 1] = True  # (where one piece ends and the next starts)
    return np.concatenate(([0], np.flatnonzero(cut) + 1, [len(codes)])).astype(np.int64)


def segments_of(model: CutModel, piece: str) -> list[str]:
    """A long piece's parts, cut where no merge can ever join (`piece_cuts`): they merge independently."""
    codes = code_points(piece)
    bounds = piece_cuts(model, codes, [len(piece)])
    return _texts_between(piece, codes, bounds[:-1], bounds[1:])


def _among(codes: np.ndarray, chosen: list[int]) -> np.ndarray:
    """Which code points are among `chosen` (bool)."""
    if len(chosen) > 8:
        return np.isin(codes, chosen)
    found = np.zeros(len(codes), dtype=bool)
    for code in chosen:  # (a few, mostly none: a comparison each is cheaper than isin's sort)
        found |= codes == code
    return found


def _beside_inert(known: np.ndarray, inert: np.ndarray) -> np.ndarray:
    """Which neighbours (bool, one per pair) may be parted beside an inert character: both known or inert,
    and no unknown token waiting. The library holds an unknown token back until the next vocab token
    (fusing a later one into it), putting the fallback bytes between them first."""
    unknown = ~known & ~inert
    spots = np.arange(len(known))
    last = np.maximum.accumulate(np.where(inert, -1, spots))  # (the last character at or before that is not inert)
    waiting: np.ndarray = (last >= 0) & unknown[np.maximum(last, 0)]  # (true at an unknown character too)
    parted: np.ndarray = (inert[:-1] | inert[1:]) & ~waiting[:-1] & ~unknown[1:]
    return parted


def _texts_between(text: str, codes: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> list[str]:
    """The text from each start to its end (int64, in order, not overlapping): their code points with a NUL
    after each, decoded and split at once, where slicing them one by one took three times as long; the slices
    when the text holds a NUL itself."""
    lengths = ends - starts
    if "\x00" in text or not len(lengths):
        return list(map(text.__getitem__, map(slice, starts.tolist(), ends.tolist())))
    firsts = np.cumsum(lengths) - lengths  # (where each one's code points start, NULs left out)
    within = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(firsts, lengths)
    out = np.zeros(len(within) + len(lengths), dtype=np.uint32)  # (the zeros left are the NULs)
    out[within + np.repeat(firsts + np.arange(len(lengths)), lengths)] = codes[np.repeat(starts, lengths) + within]
    return out.tobytes().decode("utf-32-le", "surrogatepass").split("\x00")[:-1]


def long_piece_ids(model: CutModel, pieces: list[str]) -> tuple[
    list[str], Callable[[Mapping[str, tuple[int, ...]], tuple[np.ndarray, np.ndarray] | None], list[tuple[int, ...]]],
]:
    """The ids of long pieces, in two steps: (the distinct segments of two or more characters, or of
    one that is no single-character token, and a function that, given those segments' ids, gives
    each piece's ids). The pieces are cut where `piece_cuts` cuts them; a segment of one character
    with a single-character token is that token (what merging it gives), read from `char_table`
    with numpy, so that only the other segments become strings; the ids are put in order with
    numpy too."""
    joined = "".join(pieces)
    codes = code_points(joined)
    ends = list(accumulate(map(len, pieces)))
    table = model.char_table()
    char_ids = table[np.minimum(codes, len(table) - 1)]
    bounds = piece_cuts(model, codes, ends, char_ids)
    starts = bounds[:-1]
    first = char_ids[starts]
    single = (bounds[1:] - starts == 1) & (first >= 0)
    others = np.flatnonzero(~single)
    texts = _texts_between(joined, codes, starts[others], bounds[others + 1])
    distinct = list(dict.fromkeys(texts))
    index = dict(zip(distinct, range(len(distinct))))
    which = np.fromiter(map(index.__getitem__, texts), dtype=np.int64, count=len(texts))
    piece_segments = np.searchsorted(starts, ends)  # (segments starting before each piece's end)

    def assemble(found: Mapping[str, tuple[int, ...]], row: tuple[np.ndarray, np.ndarray] | None
                 ) -> list[tuple[int, ...]]:
        """Each piece's ids, given the distinct segments' ids: in `found`, or, when `row` is given, in
        a row in the order of the distinct segments (their ids in a row, each one's count)."""
        if row is not None:
            flat, sizes = row
        else:
            merged = list(map(found.__getitem__, distinct))
            sizes = np.fromiter(map(len, merged), dtype=np.int64, count=len(merged))
        counts = np.ones(len(starts), dtype=np.int64)
        counts[others] = sizes[which]
        out_ends = np.cumsum(counts)
        out_starts = out_ends - counts
        out = np.empty(int(out_ends[-1]) if len(out_ends) else 0, dtype=np.int64)
        singles = np.flatnonzero(single)
        out[out_starts[singles]] = first[singles]
        if len(others):  # (each other segment's ids copied from its distinct segment's: one gather)
            if row is None:
                flat = np.fromiter(chain.from_iterable(merged), dtype=np.int64, count=int(sizes.sum()))
            repeat = sizes[which]
            within = np.arange(int(repeat.sum()), dtype=np.int64) - np.repeat(np.cumsum(repeat) - repeat, repeat)
            source = np.repeat((np.cumsum(sizes) - sizes)[which], repeat) + within
            out[np.repeat(out_starts[others], repeat) + within] = flat[source]
        ids = out.tolist()
        cuts = [0, *np.concatenate(([0], out_ends))[piece_segments].tolist()]
        return [tuple(ids[a:b]) for a, b in zip(cuts, cuts[1:])]

    return distinct, assemble
