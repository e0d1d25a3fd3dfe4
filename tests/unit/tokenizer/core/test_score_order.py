"""SentencePiece's score order (core/library_order/score_order.py): the batch of many words against the literal order.

The literal statement (written here): in a word, the pair whose rule has the
least level fires, the leftmost among equal levels, even when the tied pairs
make different pieces. `ScoreMerges.merge` must equal it, and so must
`merge_many`, which merges many words at once in rounds with numpy (from
BATCH_WORDS words), for any rules: levels shared by several pairs, new ids that
are operands of other rules, long words that outlast the rounds.
"""

from __future__ import annotations

from itertools import accumulate

import pytest
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from webapp.tokenizer.core.library_order.score_order import BATCH_WORDS, ROUNDS_FEW_LEFT, PairIndex, ScoreMerges, _merge_round

ids = st.integers(min_value=0, max_value=6)


@st.composite
def score_rules(draw: st.DrawFn) -> tuple[list[tuple[int, int, int]], list[int]]:
    """Distinct pairs, each with a new id (0..14: often an operand of another rule) and a level, in level order."""
    pairs = draw(st.lists(st.tuples(ids, ids), unique=True, max_size=20))
    news = [draw(st.integers(min_value=0, max_value=14)) for _ in pairs]
    levels = sorted(draw(st.lists(st.integers(min_value=0, max_value=5), min_size=len(pairs), max_size=len(pairs))))
    return [(a, b, n) for (a, b), n in zip(pairs, news)], levels


def literal(word: list[int], rules: list[tuple[int, int, int]], levels: list[int]) -> list[int]:
    found = {(a, b): (level, new) for (a, b, new), level in zip(rules, levels)}
    seq = list(word)
    while True:
        present = [(found[pair][0], i) for i, pair in enumerate(zip(seq, seq[1:])) if pair in found]
        if not present:
            return seq
        _, i = min(present)
        seq[i:i + 2] = [found[(seq[i], seq[i + 1])][1]]


@settings(max_examples=examples(300), deadline=None)
@given(score_rules(), st.lists(ids, max_size=60))
def test_one_word_equals_the_literal_order(rules_levels, word):
    rules, levels = rules_levels
    merges = ScoreMerges(rules, levels)
    assert merges.merge(word) == literal(word, rules, levels)
    assert merges.merge(word, []) == literal(word, rules, levels)  # (the heap path)


@pytest.mark.slow
@settings(max_examples=examples(150), deadline=None)
@given(score_rules(), st.lists(st.lists(ids, min_size=1, max_size=40), min_size=BATCH_WORDS, max_size=BATCH_WORDS + 40))
def test_many_words_at_once_equal_the_literal_order(rules_levels, words):
    rules, levels = rules_levels
    # (merge_many takes symbols below the rules' shift, as its callers give it: a last rule naming 15
    # makes the shift 16; no word has 15 and no rule makes it)
    rules, levels = [*rules, (15, 15, 15)], [*levels, (levels[-1] if levels else 0) + 1]
    merges = ScoreMerges(rules, levels)
    symbols = np.array([s for w in words for s in w], dtype=np.int64)
    assert merges.shift > int(symbols.max())
    before = symbols.copy()
    ends = list(accumulate(map(len, words)))
    assert merges.merge_many(symbols, ends) == [literal(w, rules, levels) for w in words]
    assert np.array_equal(symbols, before)  # (the caller's array is left as it was)


def test_long_words_outlast_the_rounds_and_ties_go_leftmost():
    # "a a" and "b b" share a level: in "a a b b" the leftmost fires first; words of 300 symbols need
    # more rounds than the batch runs once ROUNDS_FEW_LEFT words are left, and finish one by one.
    rules, levels = [(0, 0, 2), (1, 1, 3), (2, 3, 4), (3, 3, 5)], [0, 0, 1, 2]
    merges = ScoreMerges(rules, levels)
    words = [[0, 0, 1, 1]] * BATCH_WORDS + [[0] * 300, [1] * 301] + [[0, 1]] * (ROUNDS_FEW_LEFT + 1)
    symbols = np.array([s for w in words for s in w], dtype=np.int64)
    got = merges.merge_many(symbols, list(accumulate(map(len, words))))
    assert got[0] == [4] and got == [literal(w, rules, levels) for w in words]


# --------------------------------------------------------------------------
# Several pairs of a word in one round, and the pair index


def one_round(merges: ScoreMerges, words: list[list[int]]) -> list[list[int]]:
    """The words after one `_merge_round` of the batch (its state set up as `merge_many_flat` sets it)."""
    index, shift = merges.level_table(), merges.shift
    lengths = np.array(list(map(len, words)), dtype=np.int64)
    syms = np.array([s for w in words for s in w], dtype=np.int64)
    pair = np.append(index.packed(syms[:-1] * shift + syms[1:]), index.missing)
    pair[np.cumsum(lengths)[:-1] - 1] = index.missing
    starts = np.cumsum(lengths) - lengths
    key = (pair >> 32) * len(syms) + np.arange(len(syms))
    best = np.minimum.reduceat(key, starts)
    syms, _, lengths = _merge_round(syms, pair, lengths, starts, key, best, index, shift)
    flat, bounds = syms.tolist(), [0, *accumulate(lengths.tolist())]
    return [flat[a:b] for a, b in zip(bounds, bounds[1:])]


def test_a_round_fires_every_pair_the_literal_order_fires_next():
    # a b c d e f: "a b" (level 0) and "c d" (1) and "e f" (2) make no pair with a rule: all three fire
    # at once. The best pair always fires; "c d" must wait when the piece "a b" makes with c has a
    # level at or below its own (the literal order then takes c from it).
    rules, levels = [(0, 1, 10), (2, 3, 11), (4, 5, 12), (10, 2, 13)], [0, 1, 2, 3]
    merges = ScoreMerges(rules, levels)
    assert one_round(merges, [[0, 1, 2, 3, 4, 5]]) == [[10, 11, 12]]
    merges = ScoreMerges([(0, 1, 10), (10, 2, 13), (2, 3, 11), (4, 5, 12)], [0, 1, 1, 2])
    assert one_round(merges, [[0, 1, 2, 3, 4, 5]]) == [[10, 2, 3, 4, 5]]
    assert literal([0, 1, 2, 3, 4, 5], [(0, 1, 10), (10, 2, 13), (2, 3, 11), (4, 5, 12)], [0, 1, 1, 2]) == [13, 3, 12]
    # Two new pieces side by side: their own pair counts too ("x y" at level 1 stops "e f" at 2).
    merges = ScoreMerges([(0, 1, 10), (2, 3, 11), (10, 11, 14), (4, 5, 12)], [0, 0, 1, 2])
    assert one_round(merges, [[0, 1, 2, 3, 4, 5]]) == [[10, 11, 4, 5]]


@st.composite
def crowded_rules(draw: st.DrawFn) -> tuple[list[tuple[int, int, int]], list[int]]:
    """Few symbols, many rules, few levels (long runs of tied levels), new ids often operands again."""
    pairs = draw(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), unique=True, min_size=1, max_size=16))
    news = [draw(st.integers(min_value=0, max_value=7)) for _ in pairs]
    levels = sorted(draw(st.lists(st.integers(min_value=0, max_value=2), min_size=len(pairs), max_size=len(pairs))))
    return [(a, b, n) for (a, b), n in zip(pairs, news)], levels


@settings(max_examples=examples(200), deadline=None)
@given(crowded_rules(), st.lists(st.lists(st.integers(0, 7), min_size=1, max_size=90),
                                 min_size=BATCH_WORDS, max_size=BATCH_WORDS + 20))
@pytest.mark.slow
def test_long_words_over_few_symbols_equal_the_literal_order(rules_levels, words):
    rules, levels = rules_levels
    rules, levels = [*rules, (8, 8, 8)], [*levels, levels[-1] + 1]  # (every symbol below the shift)
    merges = ScoreMerges(rules, levels)
    symbols = np.array([s for w in words for s in w], dtype=np.int64)
    ends = list(accumulate(map(len, words)))
    want = [literal(w, rules, levels) for w in words]
    assert merges.merge_many(symbols, ends) == want
    flat, sizes = merges.merge_many_flat(symbols, ends)
    assert sizes.tolist() == list(map(len, want)) and flat.tolist() == [s for w in want for s in w]


@settings(max_examples=examples(100), deadline=None)
@given(crowded_rules(), st.lists(st.lists(st.integers(0, 7), min_size=1, max_size=12), min_size=1, max_size=30))
def test_one_round_is_a_prefix_of_the_literal_order(rules_levels, words):
    # After one round, merging on by the literal order ends where the literal order from the start ends.
    rules, levels = rules_levels
    rules, levels = [*rules, (8, 8, 8)], [*levels, levels[-1] + 1]  # (every symbol below the shift)
    merges = ScoreMerges(rules, levels)
    assert [literal(w, rules, levels) for w in one_round(merges, words)] == [literal(w, rules, levels) for w in words]


def test_pair_index_answers_like_a_dict_and_keeps_crowded_keys_sorted():
    rng = np.random.default_rng(7)
    keys = np.unique(rng.integers(0, 1 << 40, 5000))
    levels, news = rng.integers(0, 100, len(keys)), rng.integers(0, 1 << 20, len(keys))
    index = PairIndex(keys, levels, news, 100)
    assert index.sorted_keys is None  # (spread keys: the hash table)
    probe = np.concatenate((keys, rng.integers(0, 1 << 40, 5000), keys + 1))
    rules = dict(zip(keys.tolist(), zip(levels.tolist(), news.tolist())))
    for idx in (index,):
        got_levels, got_news = idx.look_up(probe)
        want = [rules.get(k, (100, None)) for k in probe.tolist()]
        assert got_levels.tolist() == [lv for lv, _ in want]
        assert [n for n, (_, w) in zip(got_news.tolist(), want) if w is not None] == [w for _, w in want if w is not None]
        assert idx.has(probe).tolist() == [k in rules for k in probe.tolist()]
    # Keys that all share one home slot (a file could choose them): kept sorted, the same answers.
    small = PairIndex(np.arange(40, dtype=np.int64), np.zeros(40, dtype=np.int64), np.zeros(40, dtype=np.int64), 1)
    homes = small._home(np.arange(400_000, dtype=np.int64))
    crowded = np.flatnonzero(homes == 0)[:40].astype(np.int64)
    assert len(crowded) == 40
    index = PairIndex(crowded, np.arange(40, dtype=np.int64), np.arange(40, dtype=np.int64) + 5, 40)
    assert index.sorted_keys is not None
    got_levels, got_news = index.look_up(np.concatenate((crowded, crowded + 1)))
    assert got_levels.tolist() == list(range(40)) + [40] * 40 and got_news[:40].tolist() == list(range(5, 45))
    assert index.has(np.concatenate((crowded, crowded + 1))).tolist() == [True] * 40 + [False] * 40
    empty = PairIndex(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), 0)
    assert empty.look_up(np.array([3], dtype=np.int64))[0].tolist() == [0]


@settings(max_examples=examples(200), deadline=None)
@given(score_rules())
def test_the_atom_grid_answers_every_pair_as_the_level_table(rules_levels):
    # merge_many_flat reads a batch's first pairs from `atom_grid` (the rules joining two ids no rule makes),
    # the others from `level_table`: every pair of ids below the shift gets the table's answer, and alike
    # when the grid would be too big (None: the table alone)
    from webapp.tokenizer.core.library_order import score_order

    rules, levels = rules_levels
    for cells in (score_order.ATOM_GRID_CELLS, 0):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(score_order, "ATOM_GRID_CELLS", cells)
            merges = ScoreMerges(rules, levels)
            assert (merges.atom_grid() is None) == (cells == 0)
            left, right = (side.ravel() for side in np.meshgrid(np.arange(merges.shift), np.arange(merges.shift)))
            want = merges.level_table().packed(left * merges.shift + right)
            assert merges.packed_pairs(left, right).tolist() == want.tolist()
