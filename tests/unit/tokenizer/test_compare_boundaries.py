"""Boundary comparison of two tokenizations (webapp/tokenizer/compare.py).

The oracle is a literal restatement: draw each tokenization as a list of
token lengths, mark every offset where a token starts or ends in a list of
flags as long as the text, and read the answers off those flags.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from webapp.tokenizer.compare import boundaries, compare_spans, spans_from_lengths

# A tokenization of a text of some length: positive token lengths.
lengths = st.lists(st.integers(1, 6), max_size=40)


@st.composite
def two_tokenizations(draw):
    """Two tokenizations of one text: B re-cuts A's concatenation somewhere else."""
    a = draw(lengths)
    total = sum(a)
    cuts = sorted(set(draw(st.lists(st.integers(1, max(1, total - 1)), max_size=30)))) if total > 1 else []
    edges = [0] + [c for c in cuts if 0 < c < total] + [total]
    b = [hi - lo for lo, hi in zip(edges, edges[1:]) if hi > lo]
    return spans_from_lengths(a), spans_from_lengths(b), total


def literal_cuts(spans, length):
    flags = [False] * (length + 1)
    for start, end in spans:
        flags[start] = True
        flags[end] = True
    return {i for i in range(1, length) if flags[i]}


@settings(max_examples=examples(300), deadline=None)
@given(lengths)
def test_a_tokenization_compared_with_itself_has_no_differences(a):
    spans = spans_from_lengths(a)
    result = compare_spans(spans, spans, sum(a))
    assert result.identical
    assert not result.only_a and not result.only_b
    assert result.shared == frozenset(literal_cuts(spans, sum(a)))
    assert result.shared_ratio == 1.0
    assert not any(result.a_differs) and not any(result.b_differs)
    assert len(result.a_differs) == len(a)


@settings(max_examples=examples(300), deadline=None)
@given(two_tokenizations())
def test_boundaries_are_inside_the_text_and_match_the_literal_marking(pair):
    a, b, total = pair
    for spans in (a, b):
        cuts = boundaries(spans, total)
        assert all(0 < c < total for c in cuts)
        assert cuts == literal_cuts(spans, total)


@settings(max_examples=examples(300), deadline=None)
@given(two_tokenizations())
def test_shared_and_one_sided_cuts_partition_each_side(pair):
    a, b, total = pair
    result = compare_spans(a, b, total)
    cuts_a, cuts_b = literal_cuts(a, total), literal_cuts(b, total)
    assert result.shared == cuts_a & cuts_b
    assert result.only_a == cuts_a - cuts_b
    assert result.only_b == cuts_b - cuts_a
    assert result.union == len(cuts_a | cuts_b)
    expected = len(cuts_a & cuts_b) / len(cuts_a | cuts_b) if cuts_a | cuts_b else 1.0
    assert result.shared_ratio == expected
    # Swapping the sides swaps the answers.
    swapped = compare_spans(b, a, total)
    assert (swapped.only_a, swapped.only_b, swapped.shared) == (result.only_b, result.only_a, result.shared)
    assert (swapped.a_differs, swapped.b_differs) == (result.b_differs, result.a_differs)


@settings(max_examples=examples(300), deadline=None)
@given(two_tokenizations())
def test_a_token_differs_exactly_when_it_touches_a_cut_the_other_side_lacks(pair):
    a, b, total = pair
    result = compare_spans(a, b, total)
    only_a, cuts_b = literal_cuts(a, total) - literal_cuts(b, total), literal_cuts(b, total)
    for (start, end), differs in zip(a, result.a_differs):
        assert differs == (start in only_a or end in only_a)
        if (start, end) in set(b):
            assert not differs  # the same token on both sides never differs
    # Every cut only A made is an edge of some differing A token.
    edges_of_differing = {e for (s, t), d in zip(a, result.a_differs) if d for e in (s, t)}
    assert only_a <= edges_of_differing
    assert result.a_differing == sum(1 for (s, t) in a if s in only_a or t in only_a)
    assert all(c in cuts_b for c in literal_cuts(a, total) - only_a)


def test_worked_example_lower_against_low_er():
    # "lower" (5 bytes): A = lo|wer, B = low|er.
    a = spans_from_lengths([2, 3])
    b = spans_from_lengths([3, 2])
    result = compare_spans(a, b, 5)
    assert result.shared == frozenset()
    assert result.only_a == {2} and result.only_b == {3}
    assert result.a_differs == (True, True) and result.b_differs == (True, True)
    assert result.shared_ratio == 0.0
    # A finer B that keeps A's cut: A's tokens keep their edges, B's second token does not.
    finer = spans_from_lengths([2, 1, 2])
    result = compare_spans(a, finer, 5)
    assert result.shared == {2} and result.only_b == {3} and not result.only_a
    # "wer" keeps both its edges (2 and 5) in B, though B cuts inside it: the difference shows on B's side.
    assert result.a_differs == (False, False)
    assert result.b_differs == (False, True, True)
    assert result.shared_ratio == 0.5


def test_gaps_from_dropped_bytes_are_taken_as_they_are():
    # A drops byte 2 (no token for it): tokens 0-2 and 3-5; B covers everything.
    a = [(0, 2), (3, 5)]
    b = [(0, 2), (2, 3), (3, 5)]
    result = compare_spans(a, b, 5)
    assert result.shared == {2, 3} and result.identical
    assert result.b_differs == (False, False, False)
