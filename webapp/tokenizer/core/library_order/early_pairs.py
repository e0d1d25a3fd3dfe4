"""Pairs of a word's first symbols that may be merged before anything else: fewer steps in the merge loop.

What it does not do: the merging itself (merges.py), or text.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from webapp.tokenizer.core.ranks import INF

UNITS = 256
#: Two more unit numbers: OTHER for a character that is no unit (or a token that is no one unit),
#: NONE for "no neighbour" (a word's end). The tables are WIDTH x WIDTH, read at row * WIDTH + column.
OTHER, NONE = UNITS, UNITS + 1
WIDTH = UNITS + 2


@dataclass(frozen=True)
class EarlyPairs:
    """The tables for one rule list (numpy arrays; ids below the list's shift)."""

    unit_of: np.ndarray  # id -> its unit if the token is one unit, else OTHER (int16, as the next two)
    first_unit: np.ndarray  # id -> the unit its text starts with (OTHER: another character)
    last_unit: np.ndarray  # id -> the unit its text ends with (OTHER: another character)
    # Unit X ends with * WIDTH + unit -> lowest rank of a rule (X, that unit's token); NONE rows: INF
    # (nothing on the left), OTHER rows and the OTHER column: -1 (never early).
    left_min: np.ndarray
    # Unit * WIDTH + unit Y starts with -> lowest rank of a rule (that unit's token, Y); the same margins.
    right_min: np.ndarray
    operand_min: np.ndarray  # id -> lowest rank of a rule with it as an operand (INF: none)
    unit_rank: np.ndarray  # unit * WIDTH + unit -> the rank of the pair of their tokens (INF: no rule; -1: OTHER)
    news: np.ndarray  # rank -> the id its rule makes

    @classmethod
    def build(cls, keys: np.ndarray, ranks: np.ndarray, shift: int, news: np.ndarray, unit_of: np.ndarray,
              first_unit: np.ndarray, last_unit: np.ndarray) -> EarlyPairs:
        """From the rules' pair keys (left * shift + right) and ranks, and each id's units (arrays of
        `shift` ids, OTHER for none)."""
        left, right = keys // shift, keys % shift
        unit_of, first_unit, last_unit = (a.astype(np.int64) for a in (unit_of, first_unit, last_unit))
        # (a rule whose X ends with no unit never applies: X's last character is s_i-1's, a unit's)
        left_min = _margins(np.full(WIDTH * WIDTH, INF, dtype=np.int64), rows_none=True)
        use = (unit_of[right] < UNITS) & (last_unit[left] < UNITS)
        np.minimum.at(left_min, last_unit[left[use]] * WIDTH + unit_of[right[use]], ranks[use])
        right_min = _margins(np.full(WIDTH * WIDTH, INF, dtype=np.int64), rows_none=False)
        use = (unit_of[left] < UNITS) & (first_unit[right] < UNITS)
        np.minimum.at(right_min, unit_of[left[use]] * WIDTH + first_unit[right[use]], ranks[use])
        operand_min = np.full(shift, INF, dtype=np.int64)
        np.minimum.at(operand_min, left, ranks)
        np.minimum.at(operand_min, right, ranks)
        square = np.full((WIDTH, WIDTH), INF, dtype=np.int64)
        square[OTHER:, :] = square[:, OTHER:] = -1
        unit_rank = square.reshape(-1)
        use = (unit_of[left] < UNITS) & (unit_of[right] < UNITS)
        unit_rank[unit_of[left[use]] * WIDTH + unit_of[right[use]]] = ranks[use]  # (one rank a pair)
        small = [a.astype(np.int16) for a in (unit_of, first_unit, last_unit)]
        return cls(small[0], small[1], small[2], left_min, right_min, operand_min, unit_rank, news)

    def unit_pair_ranks(self, ids: np.ndarray) -> np.ndarray:
        """The rank of each neighbouring pair of `ids` (each below the shift) when both are one-unit
        tokens (INF: no rule), from a table; -1 where either is not (look those up)."""
        unit = self.unit_of[ids].astype(np.int64)
        found: np.ndarray = self.unit_rank[unit[:-1] * WIDTH + unit[1:]]
        return found

    def merge_early(self, ids: np.ndarray, rank: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every early pair of every word merged: (the ids after, each word's new length).

        `ids`: the words' first symbols in a row (each below the shift); `rank[i]`: the rank
        of pair (i, i + 1), INF where it has no rule or crosses into the next word;
        `lengths`: each word's length (at least 1).
        """
        n = len(ids)
        at = np.flatnonzero(rank < INF)  # the pairs with a rule: (at, at + 1)
        if not len(at):
            return ids, lengths
        r = rank[at]
        ends = np.cumsum(lengths)
        starts = ends - lengths
        before = np.empty(n, dtype=np.int64)  # the unit the symbol on each one's left ends with
        before[1:] = self.last_unit[ids[:-1]]
        before[starts] = NONE
        after = np.empty(n, dtype=np.int64)  # the unit the symbol on each one's right starts with
        after[:-1] = self.first_unit[ids[1:]]
        after[ends - 1] = NONE
        unit = self.unit_of[ids].astype(np.int64)
        early = ((self.left_min[before[at] * WIDTH + unit[at]] > r)
                 & (self.right_min[unit[at + 1] * WIDTH + after[at + 1]] > r)
                 & (self.operand_min[self.news[r]] > r))
        fire = at[early]
        if not len(fire):
            return ids, lengths
        merged = ids.copy()
        merged[fire] = self.news[rank[fire]]
        keep = np.ones(n, dtype=bool)
        keep[fire + 1] = False
        return merged[keep], np.add.reduceat(keep, starts).astype(np.int64)


def _margins(table: np.ndarray, rows_none: bool) -> np.ndarray:
    """A WIDTH x WIDTH table's margins (flat): the OTHER row and column -1 (never early); the NONE
    row (left table, `rows_none`) or column (right table) INF (no neighbour takes the symbol)."""
    square = table.reshape(WIDTH, WIDTH)
    if rows_none:
        square[NONE, :] = INF
        square[OTHER, :] = -1
        square[:, OTHER:] = -1  # (the right operand is always one of the pair: never NONE)
    else:
        square[:, NONE] = INF
        square[:, OTHER] = -1
        square[OTHER:, :] = -1
    return table


__all__ = ["NONE", "OTHER", "UNITS", "WIDTH", "EarlyPairs"]
