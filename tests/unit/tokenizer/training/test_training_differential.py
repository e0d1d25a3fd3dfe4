"""Training against a second, independent implementation: Hugging Face's BpeTrainer.

Where the semantics coincide the answers must be the same. BpeTrainer counts
pairs the same way (overlapping, every occurrence of a word) and merges left
to right, but breaks ties by its internal token ids (characters in code point
order, then merged tokens in creation order) instead of by the strings. So the
two agree on every step before the first tie that involves a merged token,
and that prefix is compared.
Each word is fed as its own sequence, with no normaliser or pre-tokenizer.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from webapp.tokenizer import train_trace

tokenizers = pytest.importorskip("tokenizers")


def hf_merges(words: list[str], num_merges: int) -> list[str]:
    """The merged tokens BpeTrainer learns for an alphabet plus `num_merges` tokens."""
    from tokenizers import Tokenizer, models, trainers

    alphabet = {ch for word in words for ch in word}
    tokenizer = Tokenizer(models.BPE())
    trainer = trainers.BpeTrainer(
        vocab_size=len(alphabet) + num_merges, min_frequency=0, show_progress=False, special_tokens=[]
    )
    tokenizer.train_from_iterator(words, trainer=trainer)
    merges = json.loads(tokenizer.to_str())["model"]["merges"]
    # Older versions store "a b" strings, newer ones [a, b] pairs.
    return [m.replace(" ", "", 1) if isinstance(m, str) else m[0] + m[1] for m in merges]


def agreed_prefix(words: list[str], num_merges: int) -> list[str]:
    """Our merges up to (not including) the first step where the two tie-breaks can differ.

    For pairs of single characters BpeTrainer's id order is code point order,
    the same as string order, so a tie among such pairs only is decided alike.
    """
    trace = train_trace(words, num_merges, max_steps=num_merges, runners_up=10_000)
    prefix: list[str] = []
    for step in trace.steps:
        tied = [step.pair] + [r.pair for r in step.runners_up if r.count == step.count]
        if step.tie and any(len(a) > 1 or len(b) > 1 for a, b in tied):
            break
        prefix.append(step.merged)
    return prefix


def test_no_ties_means_the_same_merges() -> None:
    # The textbook corpus: hug 10, pug 5, pun 12, bun 4, hugs 5.
    words = ["hug"] * 10 + ["pug"] * 5 + ["pun"] * 12 + ["bun"] * 4 + ["hugs"] * 5
    trace = train_trace(words, 4)
    assert [step.tie for step in trace.steps] == [False] * 4
    assert trace.merges == ["ug", "un", "hug", "pun"]
    assert hf_merges(words, 4) == trace.merges


@st.composite
def weighted_words(draw: st.DrawFn) -> list[str]:
    """Words with varied repeat counts, so that many steps have a unique winner."""
    distinct = draw(st.lists(st.text(alphabet="abcde xy", min_size=1, max_size=9), min_size=1, max_size=10))
    return [word for word in distinct for _ in range(draw(st.integers(min_value=1, max_value=7)))]


@settings(max_examples=examples(80), deadline=None)
@given(words=weighted_words(), num_merges=st.integers(min_value=1, max_value=12))
def test_agrees_with_bpetrainer_until_the_first_tie(words: list[str], num_merges: int) -> None:
    prefix = agreed_prefix(words, num_merges)
    assert hf_merges(words, num_merges)[: len(prefix)] == prefix
