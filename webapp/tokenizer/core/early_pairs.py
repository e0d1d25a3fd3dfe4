"""Pairs of a word's first symbols that may be merged before anything else: fewer steps in the merge loop.

In the library's order (core/library_order.py) the lowest-ranked pair present
fires, the leftmost among equal ones, until no pair has a rule. Take a word's
first symbols s_0 .. s_n-1 and a pair p = (s_i, s_i+1) whose rule, of rank
r, makes the token T. Call p *early* when

1. every rule (X, s_i) whose X ends with the character s_i-1 ends with has a
   rank above r (nothing on p's left can take s_i first), and so has every
   rule (s_i+1, Y) whose Y starts with the character s_i+2 starts with
   (nothing on its right can take s_i+1); a side with no neighbour passes;
2. every rule with T as an operand has a rank above r.

Then merging p before anything else gives the same result. Until p fires in
the library's order, the global minimum is at most r (p is there), so no
rule of the kind in (1) fires and s_i, s_i+1 stay; every other pair is the
same in both runs, and the pairs beside T in the early run rank above r by
(2), so both runs fire the same rules in the same order, and once p fires
they hold the same symbols. (Whatever X or Y has grown into meanwhile still
ends or starts with the same character: merging joins texts.) Taking every
early pair of a word at once is exact too, one after another by the same
argument; two early pairs never overlap (for p and the pair to its right, (1)
makes each one's rank lower than the other's).

The tables work on *units*: the 256 characters of GPT-2's byte alphabet (for a
byte-level model every first symbol is one) - which unit a token is, if it
is one character, and which units its text starts and ends with.
`benchmarks/bench_chat_counts.py` chats: about 57% of the merges of words
never seen before are early ones, done here with numpy.

What it does not do: the merging itself (library_order.py), or text.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from webapp.tokenizer.core.engine import INF

UNITS = 256


@dataclass(frozen=True)
class EarlyPairs:
    """The tables for one rule list (int64 numpy arrays; ids below the list's shift)."""

    unit_of: np.ndarray  # id -> its unit, if the token is one unit; else -1 (int16, as the next two)
    first_unit: np.ndarray  # id -> the unit its text starts with; -1: another character
    last_unit: np.ndarray  # id -> the unit its text ends with; -1: another character
    left_min: np.ndarray  # unit X ends with * UNITS + unit -> lowest rank of a rule (X, that unit's token)
    right_min: np.ndarray  # unit * UNITS + unit Y starts with -> lowest rank of a rule (that unit's token, Y)
    operand_min: np.ndarray  # id -> lowest rank of a rule with it as an operand (INF: none)
    unit_rank: np.ndarray  # unit * UNITS + unit -> the rank of the pair of their tokens (INF: no rule)
    news: np.ndarray  # rank -> the id its rule makes

    @classmethod
    def build(cls, keys: np.ndarray, ranks: np.ndarray, shift: int, news: np.ndarray, unit_of: np.ndarray,
              first_unit: np.ndarray, last_unit: np.ndarray) -> EarlyPairs:
        """From the rules' pair keys (left * shift + right) and ranks, and each id's units (arrays of `shift` ids)."""
        left, right = keys // shift, keys % shift
        unit_of, first_unit, last_unit = (a.astype(np.int64) for a in (unit_of, first_unit, last_unit))
        left_min = np.full(UNITS * UNITS, INF, dtype=np.int64)
        # (a rule whose X ends with no unit never applies: X's last character is s_i-1's, a unit's)
        use = (unit_of[right] >= 0) & (last_unit[left] >= 0)
        np.minimum.at(left_min, last_unit[left[use]] * UNITS + unit_of[right[use]], ranks[use])
        right_min = np.full(UNITS * UNITS, INF, dtype=np.int64)
        use = (unit_of[left] >= 0) & (first_unit[right] >= 0)
        np.minimum.at(right_min, unit_of[left[use]] * UNITS + first_unit[right[use]], ranks[use])
        operand_min = np.full(shift, INF, dtype=np.int64)
        np.minimum.at(operand_min, left, ranks)
        np.minimum.at(operand_min, right, ranks)
        unit_rank = np.full(UNITS * UNITS, INF, dtype=np.int64)
        use = (unit_of[left] >= 0) & (unit_of[right] >= 0)
        unit_rank[unit_of[left[use]] * UNITS + unit_of[right[use]]] = ranks[use]  # (one rank a pair)
        small = [a.astype(np.int16) for a in (unit_of, first_unit, last_unit)]
        return cls(small[0], small[1], small[2], left_min, right_min, operand_min, unit_rank, news)

    def unit_pair_ranks(self, ids: np.ndarray) -> np.ndarray:
        """The rank of each neighbouring pair of `ids` (each below the shift) when both are one-unit
        tokens (INF: no rule), from a 256 x 256 table; -1 where either is not (look those up)."""
        unit = self.unit_of[ids].astype(np.int64)
        both = (unit[:-1] >= 0) & (unit[1:] >= 0)
        return np.where(both, self.unit_rank[np.maximum(unit[:-1], 0) * UNITS + np.maximum(unit[1:], 0)], -1)

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
        unit = self.unit_of[ids].astype(np.int64)
        mine, theirs = unit[at], unit[at + 1]
        early = (mine >= 0) & (theirs >= 0) & (self.operand_min[self.news[r]] > r)
        ends = np.cumsum(lengths)
        first = np.zeros(n, dtype=bool)
        first[ends - lengths] = True  # (a word's first position: no left neighbour)
        last = np.zeros(n, dtype=bool)
        last[ends - 1] = True
        before = np.where(first[at], 0, self.last_unit[ids[at - 1]].astype(np.int64))  # (at - 1 is read only inside a word)
        early &= first[at] | ((before >= 0) & (self.left_min[np.maximum(before, 0) * UNITS + mine] > r))
        has_after = ~last[at + 1]
        after = np.where(has_after, self.first_unit[ids[np.minimum(at + 2, n - 1)]].astype(np.int64), 0)
        early &= ~has_after | ((after >= 0) & (self.right_min[theirs * UNITS + np.maximum(after, 0)] > r))
        fire = at[early]
        if not len(fire):
            return ids, lengths
        merged = ids.copy()
        merged[fire] = self.news[rank[fire]]
        keep = np.ones(n, dtype=bool)
        keep[fire + 1] = False
        return merged[keep], np.add.reduceat(keep, ends - lengths).astype(np.int64)


__all__ = ["EarlyPairs", "UNITS"]
