"""Property tests: the fast byte-level engine against the literal oracle (webapp/tokenizer/reference.py).

Merge lists are drawn odd on purpose (forward references, repeated pairs,
`new` below 256 or equal to an operand) over a small alphabet, so rules fire
often and runs like "aaaa" are common; texts are short (list-rebuild path) or
long (heap path).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from webapp.tokenizer import reference
from webapp.tokenizer import TraceLimits, compile_byte_merges, decode, encode, encode_trace, implied_byte_vocab
from webapp.tokenizer.traces import MergeNode

ALPHABET = "ab é日"
BYTES = sorted(set(ALPHABET.encode()))
IDS = BYTES + [256, 257, 258, 259, 260]

texts = st.one_of(st.text(ALPHABET, max_size=12), st.text(ALPHABET, min_size=40, max_size=200))
odd_rules = st.lists(st.tuples(st.sampled_from(IDS), st.sampled_from(IDS), st.sampled_from(IDS)), max_size=30)


@st.composite
def well_formed_merges(draw, max_rules: int = 40):
    """Rules whose operands exist before them and whose new ids are fresh (>= 256)."""
    known = list(range(256))
    hot = BYTES[:]
    rules = []
    for new in range(256, 256 + draw(st.integers(0, max_rules))):
        left = draw(st.sampled_from(hot))
        right = draw(st.sampled_from(hot))
        rules.append([left, right, new])
        hot.append(new)
        known.append(new)
    return rules


@settings(max_examples=examples(300), deadline=None)
@given(text=texts, merges=odd_rules)
def test_encode_matches_the_literal_algorithm(text, merges):
    assert encode(text, merges) == reference.encode(text, merges)


@st.composite
def well_formed_with_repeats(draw, max_rules: int = 40):
    """Well-formed lists where a pair may come back with a fresh id (applied twice)."""
    rules = draw(well_formed_merges(max_rules))
    for index in range(1, len(rules)):
        if draw(st.integers(0, 5)) == 0:
            left, right, _ = draw(st.sampled_from(rules[:index]))
            rules[index] = [left, right, rules[index][2]]
    return rules


@settings(max_examples=examples(400), deadline=None)
@given(
    text=st.one_of(texts, st.text("aab", min_size=3, max_size=40), st.text(max_size=50)),
    merges=well_formed_with_repeats(),
    repeat=st.booleans(),
)
@pytest.mark.slow
def test_well_formed_lists_match_the_literal_algorithm(text, merges, repeat):
    # Well-formed lists take the engine's batched numpy path; repeating the
    # text behind spaces mixes pieces already cached with new ones.
    assert compile_byte_merges(merges).well_formed or not merges
    assert encode(text, merges) == reference.encode(text, merges)
    if repeat:
        longer = (text + " ") * 3
        assert encode(longer, merges) == reference.encode(longer, merges)


@settings(max_examples=examples(150), deadline=None)
@given(text=st.text(max_size=60), merges=well_formed_merges())
def test_round_trip_with_the_implied_vocab(text, merges):
    assert decode(encode(text, merges), implied_byte_vocab(merges)) == text


@settings(max_examples=examples(150), deadline=None)
@given(text=st.text(ALPHABET, max_size=30), merges=well_formed_merges())
def test_round_trip_on_hot_alphabet(text, merges):
    assert decode(encode(text, merges), implied_byte_vocab(merges)) == text


def _check_tree(node: MergeNode, data: bytes, rules) -> None:
    if node.rule is None:
        assert node.end == node.start + 1 and node.symbol == data[node.start]
        return
    left, right = node.children
    assert (left.start, left.end, right.start, right.end) == (node.start, left.end, left.end, node.end)
    assert (left.symbol, right.symbol, node.symbol) == tuple(rules[node.rule])
    for child in (left, right):
        assert child.rule is None or child.rule < node.rule
        _check_tree(child, data, rules)


@settings(max_examples=examples(200), deadline=None)
@given(text=texts, merges=odd_rules, max_steps=st.integers(0, 8), max_sequence=st.integers(0, 60))
def test_trace_matches_the_literal_steps(text, merges, max_steps, max_sequence):
    data = text.encode()
    trace = encode_trace(text, merges, limits=TraceLimits(max_steps=max_steps, max_sequence=max_sequence))
    literal = reference.steps(list(data), merges)
    assert trace.ids == reference.encode(text, merges)
    assert trace.rules_fired == len(literal)
    assert trace.rules_idle == len(merges) - len(literal)
    assert trace.steps_truncated == (len(literal) > max_steps)
    assert trace.initial == (tuple(data) if len(data) <= max_sequence else None)
    for step, (rule, matches, sequence) in zip(trace.steps, literal[:max_steps], strict=True):
        assert (step.rule, step.matches) == (rule, matches)
        assert (step.left, step.right, step.new) == tuple(merges[rule])
        assert step.sequence == (sequence if len(sequence) <= max_sequence else None)
    # Tokens tile the input and their trees explain them.
    position = 0
    for token, token_id in zip(trace.tokens, trace.ids, strict=True):
        assert token.id == token_id and token.start == position
        assert token.value == data[token.start : token.end]
        assert token.tree is not None and token.tree.symbol == token_id
        assert (token.tree.start, token.tree.end) == (token.start, token.end)
        _check_tree(token.tree, data, merges)
        position = token.end
    assert position == len(data)


@settings(max_examples=examples(100), deadline=None)
@given(merges=well_formed_merges())
def test_numpy_split_table_equals_the_fixpoint(merges):
    import numpy as np

    from webapp.tokenizer.core.list_order import byte_splits

    rules = tuple(map(tuple, merges))
    fast = byte_splits.split_table_well_formed(rules) if rules else None
    first, last, _ = byte_splits.edge_bytes(rules)
    joinable = np.zeros((256, 256), dtype=bool)
    for left, right, _new in rules:
        for x in byte_splits._bits(last.get(left, 0)):
            for y in byte_splits._bits(first.get(right, 0)):
                joinable[x, y] = True
    if rules:
        assert fast is not None
        assert (fast == ~joinable).all()
