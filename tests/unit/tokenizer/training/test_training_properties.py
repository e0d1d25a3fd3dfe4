"""Property tests: the fast trainer gives exactly the literal oracle's answers.

The oracle is webapp/tokenizer/reference.py (a full recount per step). Small
alphabets make many ties, repeated words and overlapping runs ("aaaa");
free text covers any code points.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from webapp.tokenizer import bpe_merges, train_trace, training_vocab
from webapp.tokenizer import reference
from webapp.tokenizer.training import words as training


def literal_train(words: list[str], num_merges: int) -> list[tuple[tuple[str, str], int]]:
    """The literal algorithm's winning pair and its count, per step."""
    return [(pair, counts[pair]) for pair, counts in reference.train_steps(words, num_merges)]

SMALL_ALPHABETS = st.sampled_from(["a", "ab", "abc", "ab ", "aé日", "xyz01"])


@st.composite
def word_lists(draw: st.DrawFn) -> list[str]:
    """Words over one small alphabet (lots of ties and repeats) or over any characters."""
    if draw(st.booleans()):
        alphabet = draw(SMALL_ALPHABETS)
        word = st.text(alphabet=alphabet, max_size=10)
    else:
        word = st.text(max_size=8)
    return draw(st.lists(word, max_size=12))


@settings(max_examples=examples(300), deadline=None)
@given(words=word_lists(), num_merges=st.integers(min_value=0, max_value=25))
def test_bpe_merges_matches_the_literal_algorithm(words: list[str], num_merges: int) -> None:
    before = list(words)
    assert bpe_merges(words, num_merges) == reference.bpe_merges(words, num_merges)
    assert words == before


@settings(max_examples=examples(150), deadline=None)
@given(words=word_lists(), num_merges=st.integers(min_value=0, max_value=15), runners_up=st.integers(0, 4))
def test_trace_matches_the_literal_counts(words: list[str], num_merges: int, runners_up: int) -> None:
    trace = train_trace(words, num_merges, runners_up=runners_up)
    expected = literal_train(words, num_merges)
    assert trace.pairs == [pair for pair, _ in expected]
    assert trace.merges == [a + b for a, b in trace.pairs]
    assert trace.stopped_early == (len(expected) < num_merges)
    for step, (_, counts) in zip(trace.steps, reference.train_steps(words, num_merges), strict=True):
        assert step.count == counts[step.pair]
        others = sorted(
            ((pair, count) for pair, count in counts.items() if pair != step.pair),
            key=lambda item: (-item[1], item[0]),
        )
        assert [(r.pair, r.count) for r in step.runners_up] == others[:runners_up]
        assert step.tie == any(count == step.count for _, count in others)


@settings(max_examples=examples(100), deadline=None)
@given(words=word_lists(), num_merges=st.integers(min_value=0, max_value=10))
def test_training_vocab_is_dense_and_covers_every_symbol(words: list[str], num_merges: int) -> None:
    trace = train_trace(words, num_merges)
    vocab = training_vocab(words, trace.pairs)
    assert sorted(vocab.values()) == list(range(len(vocab)))
    chars = sorted({ch for word in words for ch in word})
    assert list(vocab)[: len(chars)] == chars
    assert set(vocab) == set(chars) | set(trace.merges)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=word_lists(), num_merges=st.integers(min_value=0, max_value=15))
def test_heap_rebuild_changes_nothing(monkeypatch: pytest.MonkeyPatch, words: list[str], num_merges: int) -> None:
    # With no slack the heap is rebuilt after nearly every merge.
    monkeypatch.setattr(training, "HEAP_REBUILD_SLACK", 0)
    assert train_trace(words, num_merges).pairs == [pair for pair, _ in literal_train(words, num_merges)]


@pytest.mark.parametrize("seed", range(6))
def test_long_words_match_the_literal_algorithm(seed: int) -> None:
    # Words past training.LONG_WORD take the position-index path, shorter
    # ones with many matches the rebuild path; a fixed seed keeps this a
    # plain, reproducible example.
    rng = random.Random(seed)
    alphabet = ["ab", "abc", "a b", "xyzé日"][seed % 4]
    sizes = [rng.randint(50, 400) for _ in range(rng.randint(1, 4))] + [training.LONG_WORD + rng.randint(0, 400)]
    words = ["".join(rng.choice(alphabet) for _ in range(size)) for size in sizes]
    words += rng.sample(words, k=len(words) // 2)  # some repeats
    assert bpe_merges(words, 60) == reference.bpe_merges(words, 60)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=word_lists(), num_merges=st.integers(min_value=0, max_value=20), threshold=st.sampled_from([0, 2, 3, 5]))
def test_position_index_path_matches_the_literal_algorithm(
    monkeypatch: pytest.MonkeyPatch, words: list[str], num_merges: int, threshold: int
) -> None:
    # Lower the long-word threshold so the small words of hypothesis take that path too.
    monkeypatch.setattr(training, "LONG_WORD", threshold)
    trace = train_trace(words, num_merges, max_steps=num_merges)
    expected = literal_train(words, num_merges)
    assert trace.pairs == [pair for pair, _ in expected]
    assert [step.count for step in trace.steps] == [count for _, count in expected]
