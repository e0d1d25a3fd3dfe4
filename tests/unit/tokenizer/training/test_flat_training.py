"""The corpus trainer over a flat array (training/flat.py): every path against the literal algorithm.

A merge runs in Python (few listed positions) or vectorised in numpy (many);
new positions are kept as ints or as numpy chunks. Real corpora only reach
the vectorised path with dozens of positions, so these tests move the
thresholds (`vector_min`, `chunk_min`) to reach every path on small inputs,
and check each against the literal oracles of webapp/tokenizer/reference.py
and against each other, state for state.

The strategies aim at the cases the paths handle apart: runs where the pair
overlaps itself ("aaaa", "aaa": only the left match of an overlap is taken),
adjacent matches of a pair of two symbols ("abab": the pair between them
becomes (new, new)), ties in counts (small alphabets, equal frequencies), a
new pair made on the left of a match in one word and on the right in
another, and words of characters beyond latin-1 (the code-point layout).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from webapp.tokenizer import reference
from webapp.tokenizer.training.corpus import train_counts
from webapp.tokenizer.training import flat
from webapp.tokenizer.training.flat import FlatTrainer

# (vector_min, chunk_min): all in Python; all vectorised with every new position an int;
# all vectorised with every new position a chunk; a mix decided per merge.
PATHS = [(10**9, 10**9), (0, 10**9), (0, 1), (3, 2)]

# Pieces that make overlapping runs, adjacent matches and tokens spelled two ways.
PIECES = ["a", "aa", "aaa", "aaaa", "ab", "ba", "abab", "b", "bb", "c", "abc", "bc", "cab"]
word = st.lists(st.sampled_from(PIECES), min_size=1, max_size=6).map("".join)
wide_word = st.text(alphabet="aé日€b", min_size=1, max_size=12)  # é is latin-1, 日 and € are not
frequencies = st.dictionaries(st.one_of(word, word, wide_word), st.integers(1, 4), min_size=1, max_size=8)


def run(freq: dict[str, int], num_merges: int, vector_min: int, chunk_min: int
        ) -> tuple[list[tuple[tuple[str, str], int, int]], int]:
    """Each step's (pair, count, runner-up count), and the symbols merged away in all."""
    trainer = FlatTrainer(freq, vector_min=vector_min, chunk_min=chunk_min)
    steps = []
    for _ in range(num_merges):
        best = trainer.take_best()
        if best is None:
            break
        trainer.merge(best[0])
        steps.append(best)
    return steps, trainer.merged_away


def literal(freq: dict[str, int], num_merges: int) -> tuple[list[tuple[tuple[str, str], int, int]], int]:
    """The same from the literal algorithm: full pair counts every step."""
    words = [w for w, n in freq.items() for _ in range(n)]
    out = []
    for pair, counts in reference.train_steps(words, num_merges):
        others = [c for p, c in counts.items() if p != pair]
        out.append((pair, counts[pair], max(others, default=0)))
    split = [list(w) for w in words]
    for (first, second), _, _ in out:
        split = [reference.merge(s, first, second, first + second) for s in split]
    return out, sum(map(len, words)) - sum(map(len, split))


@settings(max_examples=examples(300), deadline=None)
@given(freq=frequencies, num_merges=st.integers(1, 30), path=st.sampled_from(PATHS))
def test_every_path_is_the_literal_algorithm(freq: dict[str, int], num_merges: int, path: tuple[int, int]) -> None:
    assert run(freq, num_merges, *path) == literal(freq, num_merges)


@settings(max_examples=examples(150), deadline=None)
@given(freq=frequencies, num_merges=st.integers(1, 30))
def test_both_paths_leave_the_same_state_after_every_merge(freq: dict[str, int], num_merges: int) -> None:
    slow = FlatTrainer(freq, vector_min=10**9)
    fast = FlatTrainer(freq, vector_min=0, chunk_min=1)
    for _ in range(num_merges):
        best = slow.take_best()
        assert fast.take_best() == best
        if best is None:
            break
        slow.merge(best[0])
        fast.merge(best[0])
        assert fast.counts == slow.counts
        assert fast.tok == slow.tok
        assert list(fast.sym) == list(slow.sym)
        live = [p for p, s in enumerate(slow.sym) if s >= 0]
        assert [fast.nxt[p] for p in live] == [slow.nxt[p] for p in live]
        assert [fast.prv[p] for p in live] == [slow.prv[p] for p in live]
        assert not any(fast.mark)  # the scratch marks are cleared after each merge


@settings(max_examples=examples(200), deadline=None)
@given(freq=st.dictionaries(word, st.integers(1, 4), min_size=1, max_size=8), num_merges=st.integers(1, 30),
       path=st.sampled_from(PATHS))
def test_bytes_level_through_train_counts_on_every_path(freq: dict[str, int], num_merges: int,
                                                        path: tuple[int, int]) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(flat, "VECTOR_MIN", path[0])
        patch.setattr(flat, "CHUNK_MIN", path[1])
        result = train_counts(freq, "bytes", num_merges)
    pieces = [w.encode() for w, n in freq.items() for _ in range(n)]
    expected, final = reference.train_byte_steps(pieces, num_merges)
    assert list(zip(result.pairs, result.counts)) == expected
    assert result.tokens == sum(map(len, final))


def test_overlapping_runs_and_adjacent_matches() -> None:
    # aaaaa -> aa aa a and aaa -> aa a (the left match of an overlap); abab -> ab ab, whose
    # middle (b, a) becomes (ab, ab); xab / abx make (x, ab) on the left and (ab, x) on the right.
    freq = {"aaaaa": 2, "aaa": 1, "abab": 3, "ab": 1, "xab": 2, "abx": 2}
    for path in PATHS:
        assert run(freq, 8, *path) == literal(freq, 8)


def test_latin1_and_wider_characters_get_the_same_ids_order() -> None:
    # The alphabet is sorted by code point whichever layout (bytes or 32-bit) was used.
    narrow = FlatTrainer({"éa": 1, "ab": 1})
    wide = FlatTrainer({"éa": 1, "ab": 1, "日日": 1})
    assert narrow.tok == ["a", "b", "é"]
    assert wide.tok == ["a", "b", "é", "日"]
    assert np.array_equal(wide.v_sym[: len(narrow.v_sym)], narrow.v_sym)


def test_no_pairs_and_only_short_words() -> None:
    assert FlatTrainer({}).take_best() is None
    assert FlatTrainer({"a": 5, "": 2, "b": 1}).take_best() is None
    assert run({"ab": 0, "cd": 1}, 3, 0, 1) == ([(("c", "d"), 1, 0)], 1)


@settings(max_examples=examples(150), deadline=None)
@given(freq=frequencies, num_merges=st.integers(1, 30), path=st.sampled_from(PATHS))
def test_the_order_of_listed_positions_does_not_matter(freq: dict[str, int], num_merges: int,
                                                       path: tuple[int, int]) -> None:
    # The index happens to list positions in ascending order; a merge must not rely on it
    # (for a pair (s, s) the left match of an overlap wins): reverse every listing first.
    trainer = FlatTrainer(freq, vector_min=path[0], chunk_min=path[1])
    steps = []
    for _ in range(num_merges):
        for listed in trainer.index.values():
            listed.reverse()
        for key, chunks in trainer.chunks.items():
            trainer.chunks[key] = [chunk[::-1] for chunk in reversed(chunks)]
        best = trainer.take_best()
        if best is None:
            break
        trainer.merge(best[0])
        steps.append(best)
    assert (steps, trainer.merged_away) == literal(freq, num_merges)
