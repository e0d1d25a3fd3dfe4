"""Long pieces of a tokenizer.json's BPE model: cut where no merge can join, and their ids assembled with numpy.

A piece longer than library.py's LONG_PIECE is cut between neighbours no rule
can join (exact: the parts then merge independently), and the parts merged
and cached one by one; `long_piece_ids` reads single-character parts from
the model's `char_table` and puts every piece's ids back in order.

What it does not do: merge a segment (library.py's `LibraryModel`).
"""

from __future__ import annotations

from itertools import accumulate
from typing import Callable, Mapping, Sequence

import numpy as np

from webapp.tokenizer.core.joined import joined_ids
from webapp.tokenizer.core.library_order.merges import LibraryMerges
from webapp.tokenizer.core.library_order.score_order import PairIndex, sorted_distinct

#: Code points past this are never in `char_table` (their pieces take the one-by-one way).
CHAR_TABLE_LIMIT = 0x30000
#: At most this many cells (bytes) in `CutTables.edge_grid`; a model whose edges need more looks them up hashed.
EDGE_GRID_CELLS = 1 << 22
#: `CutTables.character_kinds`: a vocab token all the same (past the table's end), spelt by fallback bytes
#: that no rule names (its symbols never merge), any other (the unknown token, or bytes some rule names).
TOKEN, INERT, OTHER = 1, 2, 3


class CutTables:
    """What cutting reads of a model: its single-character tokens (`char_table`), its rules' edges
    (`edge_array`, then `edge_grid` or `edge_index`) and the kinds of the other characters (`character_kinds`), each made
    on first use (a preset's stored form brings the first two)."""

    def __init__(self, vocab: Mapping[str, int], merges: LibraryMerges, fallback: Sequence[int | None] | None,
                 fallback_of: Callable[[int], list[int] | None], edges: np.ndarray | None = None) -> None:
        """`fallback`: the file's byte tokens by byte (None: no byte fallback); `fallback_of`: a character's
        byte tokens when it is no vocab token and has them all."""
        self.vocab, self.merges, self.fallback, self.fallback_of = vocab, merges, fallback, fallback_of
        self._edge_array: np.ndarray | None = edges
        self._edge_index: PairIndex | None = None
        self._edge_grid: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._grid_tried = False
        self._char_table: np.ndarray | None = None
        self._single_ids: np.ndarray | None = None  # (`single_ids`' tuples by id, and which are made)
        self._single_made: np.ndarray | None = None
        self._kinds: np.ndarray | None = None  # (`character_kinds` by code point; 0: not asked yet)
        self._named_bytes: frozenset[int] | None = None  # (the byte tokens some rule names)

    def char_table(self) -> np.ndarray:
        """By code point: the id of the character's single-character token, -1 when there is none
        (int64, up to CHAR_TABLE_LIMIT; its last entry is -1: the code points past it are clipped there)."""
        if self._char_table is None:
            singles = [(ord(token), i) for token, i in self.vocab.items()
                       if len(token) == 1 and ord(token) < CHAR_TABLE_LIMIT]
            table = np.full(max((code for code, _ in singles), default=0) + 2, -1, dtype=np.int64)
            if singles:
                codes, ids = zip(*singles)
                table[list(codes)] = ids
            self._char_table = table
        return self._char_table

    def single_ids(self, ids: np.ndarray) -> np.ndarray:
        """(id,) for each of these ids of single-character tokens (object array), each tuple made once, on first use."""
        table, made = self._single_ids, self._single_made
        if table is None or made is None:
            size = int(self.char_table().max()) + 1
            table, made = self._single_ids, self._single_made = np.empty(size, dtype=object), np.zeros(size, dtype=bool)
        new = ids[~made[ids]]
        if len(new):  # (the distinct ids not met before: prose brings a few, a model's first long piece most)
            new = sorted_distinct(new)
            table[new] = np.fromiter(zip(new.tolist()), dtype=object, count=len(new))
            made[new] = True
        found: np.ndarray = table[ids]
        return found

    def set_char_table(self, table: np.ndarray) -> None:
        """Keep a stored `char_table()`."""
        if table.ndim != 1 or not len(table) or table[-1] != -1:
            raise ValueError("the stored character table has the wrong shape")
        self._char_table, self._single_ids, self._single_made = table, None, None

    def edge_array(self) -> np.ndarray:
        """(last character of a rule's left token, first of its right token) of every rule, packed
        (last << 21 | first) in a sorted int64 array."""
        if self._edge_array is not None:
            return self._edge_array
        size = max(self.vocab.values(), default=0) + 1
        first = np.zeros(size, dtype=np.int64)
        last = np.zeros(size, dtype=np.int64)
        for token, i in self.vocab.items():
            if token:
                first[i] = ord(token[0])
                last[i] = ord(token[-1])
        keys = self.merges.pair_keys()
        left, right = keys // self.merges.shift, keys % self.merges.shift
        known = (left < size) & (right < size)
        self._edge_array = np.unique((last[left[known]] << 21) | first[right[known]])
        return self._edge_array

    def edge_index(self) -> PairIndex:
        """`edge_array()` in a hash table (score_order.py's PairIndex: one slot read per lookup where a
        binary search reads a dozen)."""
        if self._edge_index is None:
            edges = self.edge_array()
            zeros = np.zeros(len(edges), dtype=np.int64)
            self._edge_index = PairIndex(edges, zeros, zeros, 1)
        return self._edge_index

    def edge_grid(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The edges between single-character tokens of `char_table` as a grid: (by token id, its row's
        first cell; by token id, its column; the cells, True where some rule joins that row's character
        to that column's), id -1 (no token) on a row and a column no rule joins. None when the grid
        would pass EDGE_GRID_CELLS (then `edge_index`). Made on first use."""
        if not self._grid_tried:
            self._grid_tried = True
            edges, table = self.edge_array(), self.char_table()
            lasts = table[np.minimum(edges >> 21, len(table) - 1)]
            firsts = table[np.minimum(edges & ((1 << 21) - 1), len(table) - 1)]
            both = (lasts >= 0) & (firsts >= 0)  # (an edge on a character past the table: `piece_cuts` asks the index)
            lasts, firsts = lasts[both], firsts[both]
            row_ids, column_ids = sorted_distinct(lasts), sorted_distinct(firsts)
            width = len(column_ids) + 1
            if (len(row_ids) + 1) * width <= EDGE_GRID_CELLS:
                size = int(table.max()) + 2  # (id -1 reads the last entry, which no token has)
                rows = np.full(size, len(row_ids) * width, dtype=np.int32)  # (cells fit in int32)
                rows[row_ids] = np.arange(len(row_ids), dtype=np.int32) * width
                columns = np.full(size, len(column_ids), dtype=np.int32)
                columns[column_ids] = np.arange(len(column_ids), dtype=np.int32)
                cells = np.zeros((len(row_ids) + 1) * width, dtype=bool)
                cells[rows[lasts] + columns[firsts]] = True
                self._edge_grid = rows, columns, cells
        return self._edge_grid

    def character_kinds(self, codes: np.ndarray) -> np.ndarray:
        """By code point (int64, none a single-character token of `char_table`): TOKEN, INERT or OTHER
        (uint8), remembered by code point below CHAR_TABLE_LIMIT."""
        table = self._kinds
        if table is None:
            table = self._kinds = np.zeros(CHAR_TABLE_LIMIT + 1, dtype=np.uint8)
        kinds: np.ndarray = table[np.minimum(codes, CHAR_TABLE_LIMIT)]
        asked = kinds == 0
        if asked.any():
            new = sorted_distinct(codes[asked])
            found = np.array(list(map(self._kind_of, new.tolist())), dtype=np.uint8)
            kinds[asked] = found[new.searchsorted(codes[asked])]
            below = new < CHAR_TABLE_LIMIT
            table[new[below]] = found[below]
        return kinds

    def _kind_of(self, code: int) -> int:
        if chr(code) in self.vocab:
            return TOKEN
        spelt = self.fallback_of(code)
        if spelt is None:
            return OTHER
        if self._named_bytes is None:  # (mostly none)
            keys, shift = self.merges.pair_keys(), self.merges.shift
            byte_ids = np.array([i for i in self.fallback or () if i is not None], dtype=np.int64)
            named = np.isin(byte_ids, keys // shift) | np.isin(byte_ids, keys % shift)
            self._named_bytes = frozenset(byte_ids[named].tolist())
        return INERT if self._named_bytes.isdisjoint(spelt) else OTHER


def code_points(text: str) -> np.ndarray:
    """The text's code points (int64; lone surrogates too)."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int64)


def piece_cuts(model: CutTables, codes: np.ndarray, ends: list[int], char_ids: np.ndarray | None = None) -> np.ndarray:
    """Where pieces in a row (their code points, int64, and where each ends) are cut: 0, each cut,
    the end (int64). Between two characters that are vocab tokens, a merge can join only if some
    rule's left token ends with the first and its right token starts with the second; at any other
    pair of neighbours the piece is cut, and where one piece ends and the next starts. Beside a
    character that is not in the vocab, only when its fallback bytes are named by no rule and the
    neighbour is a vocab token or such a character too (`_beside_inert`). The neighbour pairs are
    read at once from the edge grid (`edge_grid`), or from the edges' hash table (`edge_index`).
    `char_ids`: `char_table()` read at each code point, if the caller has it."""
    if char_ids is None:
        table = model.char_table()
        char_ids = table[np.minimum(codes, len(table) - 1)]
    grid = model.edge_grid()
    if grid is None:
        cut = ~model.edge_index().has((codes[:-1] << 21) | codes[1:])
    else:
        rows, columns, cells = grid
        cut = ~cells[rows[char_ids[:-1]] + columns[char_ids[1:]]]
    missing = (char_ids < 0).nonzero()[0]
    if len(missing):  # (a character with no token in the table: its kind, of the model, decides)
        kinds = model.character_kinds(codes[missing])
        if (kinds == INERT).all():  # (the usual case, prose's newlines and rarer letters: cut on both sides)
            cut[missing[missing > 0] - 1] = True
            cut[missing[missing < len(cut)]] = True
        else:
            _cut_beside_missing(model, cut, codes, missing, kinds, grid is not None)
    if len(ends) > 1:
        cut[np.array(ends[:-1], dtype=np.int64) - 1] = True  # (where one piece ends and the next starts)
    return np.concatenate(([0], cut.nonzero()[0] + 1, [len(codes)])).astype(np.int64)


def _cut_beside_missing(model: CutTables, cut: np.ndarray, codes: np.ndarray, missing: np.ndarray,
                        kinds: np.ndarray, gridded: bool) -> None:
    """`piece_cuts` beside the characters with no token in the table (at `missing`, of these `kinds`), in
    `cut`: a token past the table has its pairs looked up in the edge index (when the grid, `gridded`, read
    them as no edge); a character not in the vocab is parted from no neighbour, unless it is inert."""
    is_token = kinds == TOKEN
    if gridded and is_token.any():
        spots = missing[is_token]
        near = sorted_distinct(np.concatenate((spots[spots > 0] - 1, spots[spots < len(codes) - 1])))
        cut[near] = ~model.edge_index().has((codes[near] << 21) | codes[near + 1])
    if is_token.all():
        return
    known = np.ones(len(codes), dtype=bool)
    known[missing] = is_token
    cut &= known[:-1] & known[1:]
    is_inert = kinds == INERT
    if is_inert.any():  # (spelt by bytes no rule names: cut on both its sides)
        inert = np.zeros(len(codes), dtype=bool)
        inert[missing] = is_inert
        cut |= _beside_inert(known, inert)


def segments_of(model: CutTables, piece: str) -> list[str]:
    """A long piece's parts, cut where no merge can ever join (`piece_cuts`): they merge independently."""
    codes = code_points(piece)
    bounds = piece_cuts(model, codes, [len(piece)])
    return _texts_between(piece, codes, bounds[:-1], bounds[1:])


def _beside_inert(known: np.ndarray, inert: np.ndarray) -> np.ndarray:
    """Which neighbours (bool, one per pair) may be parted beside an inert character: both known or inert,
    and no unknown token waiting. The library holds an unknown token back until the next vocab token
    (fusing a later one into it), putting the fallback bytes between them first."""
    unknown = ~known & ~inert
    if not unknown.any():  # (the usual case: every character a token or inert)
        beside: np.ndarray = inert[:-1] | inert[1:]
        return beside
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
    firsts = lengths.cumsum() - lengths  # (where each one's code points start, NULs left out)
    within = np.arange(int(lengths.sum()), dtype=np.int64) - firsts.repeat(lengths)
    out = np.zeros(len(within) + len(lengths), dtype=np.uint32)  # (the zeros left are the NULs)
    out[within + (firsts + np.arange(len(lengths))).repeat(lengths)] = codes[starts.repeat(lengths) + within]
    return out.tobytes().decode("utf-32-le", "surrogatepass").split("\x00")[:-1]


def long_piece_ids(model: CutTables, pieces: list[str]) -> tuple[
    list[str], Callable[[Sequence[tuple[int, ...]]], list[tuple[int, ...]]],
]:
    """The ids of long pieces, in two steps: (the texts of their segments of two or more characters,
    or of one that is no single-character token, in order, repeats kept; and a function that, given
    each of those texts' ids in the same order, gives each piece's ids). The pieces are cut where
    `piece_cuts` cuts them; a segment of one character with a single-character token is that token
    (what merging it gives), read from `char_table` with numpy, so that only the other segments
    become strings."""
    joined = "".join(pieces)
    codes = code_points(joined)
    ends = list(accumulate(map(len, pieces)))
    table = model.char_table()
    char_ids = table[np.minimum(codes, len(table) - 1)]
    bounds = piece_cuts(model, codes, ends, char_ids)
    starts = bounds[:-1]
    first = char_ids[starts]
    single = (bounds[1:] - starts == 1) & (first >= 0)
    others = (~single).nonzero()[0]
    texts = _texts_between(joined, codes, starts[others], bounds[others + 1])
    cuts = [0, *starts.searchsorted(ends).tolist()]  # (each piece's first segment, and the end)

    def assemble(found: Sequence[tuple[int, ...]]) -> list[tuple[int, ...]]:
        """Each piece's ids, given each text's ids in order: every segment's tuple put in its place (a
        single character's from `single_ids`) in an object array, then joined."""
        each = np.empty(len(starts), dtype=object)
        each[single] = model.single_ids(first[single])
        each[others] = np.fromiter(found, dtype=object, count=len(found))
        tuples = each.tolist()
        if len(cuts) == 2:
            return [tuple(joined_ids(tuples))]
        return [tuple(joined_ids(tuples[a:b])) for a, b in zip(cuts, cuts[1:])]

    return texts, assemble
