"""SentencePiece's score order (core/score_order.py): the batch of many words against the literal order.

The literal statement (written here): in a word, the pair whose rule has the
least level fires, the leftmost among equal levels, even when the tied pairs
make different pieces. `ScoreMerges.merge` must equal it, and so must
`merge_many`, which merges many words at once in rounds with numpy (from
BATCH_WORDS words), for any rules: levels shared by several pairs, new ids that
are operands of other rules, long words that outlast the rounds.
"""

from __future__ import annotations

from itertools import accumulate

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from webapp.tokenizer.core.score_order import BATCH_WORDS, ROUNDS_FEW_LEFT, ScoreMerges

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


@settings(max_examples=300, deadline=None)
@given(score_rules(), st.lists(ids, max_size=60))
def test_one_word_equals_the_literal_order(rules_levels, word):
    rules, levels = rules_levels
    merges = ScoreMerges(rules, levels)
    assert merges.merge(word) == literal(word, rules, levels)
    assert merges.merge(word, []) == literal(word, rules, levels)  # (the heap path)


@settings(max_examples=150, deadline=None)
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
