"""encode_trace: what it records, and that every record is bounded."""

from __future__ import annotations

import time

import pytest

from webapp.tokenizer import TraceLimits, encode, encode_trace
from webapp.tokenizer.traces import EncodeTrace, MergeNode, Token, TraceStep

LOW = [[108, 111, 256], [256, 119, 257], [120, 121, 258]]


def test_seed_trace():
    trace = encode_trace("low", LOW)
    assert isinstance(trace, EncodeTrace)
    assert trace.ids == [257]
    assert trace.initial == (108, 111, 119)
    assert trace.steps == [
        TraceStep(rule=0, left=108, right=111, new=256, matches=1, sequence=(256, 119), changed=(0,)),
        TraceStep(rule=1, left=256, right=119, new=257, matches=1, sequence=(257,), changed=(0,)),
    ]
    assert (trace.rules_fired, trace.rules_idle) == (2, 1)
    assert not trace.steps_truncated and not trace.tokens_truncated
    lo = MergeNode(256, 0, 2, 0, (MergeNode(108, 0, 1), MergeNode(111, 1, 2)))
    assert trace.tokens == [Token(257, b"low", 0, 3, MergeNode(257, 0, 3, 1, (lo, MergeNode(119, 2, 3))))]


def test_steps_count_matches_over_the_whole_text():
    # "low" occurs three times in separate pieces: each rule matched 3 times.
    trace = encode_trace("low low, low", LOW)
    assert [(s.rule, s.matches) for s in trace.steps] == [(0, 3), (1, 3)]
    assert trace.steps[-1].sequence == tuple(encode("low low, low", LOW))
    assert [t.start for t in trace.tokens] == [0, 3, 4, 7, 8, 9]


def test_token_value_is_the_covered_input_bytes():
    trace = encode_trace("é", [[0xC3, 0xA9, 256]])
    assert trace.tokens[0].value == "é".encode()
    # Odd rule: id 97 may stand for "ab"; the value says what it covered.
    trace = encode_trace("ab a", [[97, 98, 97]])
    assert [t.value for t in trace.tokens] == [b"ab", b" ", b"a"]


def test_caps_and_truncation_flags():
    text = "low " * 50
    trace = encode_trace(text, LOW, limits=TraceLimits(max_steps=1, max_tokens=5, max_sequence=10))
    assert trace.ids == encode(text, LOW)
    assert len(trace.steps) == 1 and trace.steps_truncated
    assert trace.steps[0].sequence is None  # 150 symbols > 10
    assert trace.initial is None
    assert len(trace.tokens) == 5 and trace.tokens_truncated


def test_sequences_recorded_once_short_enough():
    text = "aaaaaaaa"
    merges = [[97, 97, 256], [256, 256, 257], [257, 257, 258]]
    trace = encode_trace(text, merges, limits=TraceLimits(max_sequence=2))
    assert [s.sequence for s in trace.steps] == [None, (257, 257), (258,)]


def test_tree_budget_drops_trees_not_tokens():
    merges = [[97, 97, 256], [256, 256, 257], [257, 257, 258]]
    trace = encode_trace("aaaaaaaa" * 3, merges, limits=TraceLimits(max_tree_nodes=20))
    assert [t.id for t in trace.tokens] == [258, 258, 258]
    assert [t.tree is not None for t in trace.tokens] == [True, False, False]


def test_empty_text():
    trace = encode_trace("", LOW)
    assert trace.ids == [] and trace.tokens == [] and trace.steps == []
    assert trace.initial == () and trace.rules_idle == 3


@pytest.mark.alone
def test_large_rule_list_on_long_text_stays_bounded():
    # 50,000 rules: 17 double a run of "a" (100,000 "a" allow 16 doublings), the rest never fire.
    merges = [[97, 97, 256]] + [[256 + i, 256 + i, 257 + i] for i in range(16)]
    merges += [[1000 + i, 1001 + i, 60_000 + i] for i in range(50_000 - len(merges))]
    text = "a" * 100_000 + " " + "ab" * 20_000
    start = time.perf_counter()
    trace = encode_trace(text, merges, limits=TraceLimits(max_steps=10, max_tokens=50, max_sequence=100))
    elapsed = time.perf_counter() - start
    assert trace.ids == encode(text, merges)
    assert trace.rules_fired == 16 and trace.rules_idle == 50_000 - 16
    assert len(trace.steps) == 10 and trace.steps_truncated
    assert all(step.sequence is None for step in trace.steps)  # never 100 or fewer symbols
    assert len(trace.tokens) == 50 and trace.tokens_truncated
    assert trace.tokens[0].tree is None  # a token of 65,536 bytes is past the tree budget
    assert trace.initial is None
    assert elapsed < 30
