"""Character-level encode: the worked example of docs/algorithms.md, corners, traces, and the literal oracle."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from webapp.tokenizer import reference
from webapp.tokenizer import TokenizerError, TraceLimits, bpe_encode_text, char_tokens, encode_text_trace
from webapp.tokenizer.core.list_order import engine
from webapp.tokenizer.traces import MergeNode, Token, TraceStep

LOWER = [["l", "o"], ["e", "r"], ["lo", "w"], ["low", "er"]]
LOWER_VOCAB = {"l": 0, "o": 1, "w": 2, "e": 3, "r": 4, "lo": 5, "er": 6, "low": 7, "lower": 8}


def test_seed_lower():
    assert bpe_encode_text("lower", LOWER_VOCAB, LOWER) == [8]


def test_ids_are_labels_not_positions():
    assert bpe_encode_text("lower", {"lower": 41}, LOWER) == [41]


def test_code_points_not_graphemes():
    # "é" as e + combining acute is two code points; a flag is two regional indicators.
    assert char_tokens("e\u0301", []) == ["e", "\u0301"]
    assert char_tokens("🇫🇷", []) == ["🇫", "🇷"]
    assert char_tokens("e\u0301x", [["e", "\u0301"]]) == ["e\u0301", "x"]


def test_spaces_and_case_are_literal():
    merges = [["l", "o"], [" ", "lo"]]
    assert char_tokens("Lo lo", merges) == ["L", "o", " lo"]


def test_same_visit_semantics_as_bytes():
    assert char_tokens("aaa", [["a", "a"]]) == ["aa", "a"]
    assert char_tokens("aaaa", [["a", "a"], ["a", "a"]]) == ["aa", "aa"]
    assert char_tokens("aaaa", [["a", "a"], ["aa", "aa"]]) == ["aaaa"]
    # forward reference: "ab" is only made by rule 2, so rule 1 never fires
    assert char_tokens("abc", [["ab", "c"], ["a", "b"]]) == ["ab", "c"]
    # one string made by two different pairs is one token
    assert char_tokens("abc abc", [["a", "b"], ["ab", "c"], ["b", "c"], ["a", "bc"]]) == ["abc", " ", "abc"]


def test_missing_token_names_token_and_position():
    with pytest.raises(TokenizerError) as info:
        bpe_encode_text("lowxer", LOWER_VOCAB, LOWER)
    error = info.value
    assert error.field == "vocab"
    assert error.location == {"position": 2, "token": "x"}
    assert '"x"' in error.message and "output token 2" in error.message and "character 4" in error.message


def test_empty_inputs():
    assert bpe_encode_text("", {}, []) == []
    assert bpe_encode_text("", LOWER_VOCAB, LOWER) == []
    assert char_tokens("ab", []) == ["a", "b"]


def test_arguments_are_not_modified_and_tuples_work():
    merges = [["l", "o"], ["lo", "w"]]
    vocab = {"low": 1}
    before = copy.deepcopy((merges, vocab))
    assert bpe_encode_text("low", vocab, merges) == [1]
    assert (merges, vocab) == before
    assert bpe_encode_text("low", vocab, (("l", "o"), ("lo", "w"))) == [1]


def test_lone_surrogate_is_an_error():
    with pytest.raises(TokenizerError) as info:
        char_tokens("a\udfffb", [])
    assert info.value.field == "text" and info.value.location["position"] == 2


def test_trace():
    trace = encode_text_trace("low", {"low": 7}, [["l", "o"], ["lo", "w"], ["x", "y"]])
    assert trace.ids == [7]
    assert trace.initial == ("l", "o", "w")
    assert trace.steps == [
        TraceStep(0, "l", "o", "lo", 1, ("lo", "w"), changed=(0,)),  # changed: what the rule made
        TraceStep(1, "lo", "w", "low", 1, ("low",), changed=(0,)),
    ]
    assert (trace.rules_fired, trace.rules_idle) == (2, 1)
    lo = MergeNode("lo", 0, 2, 0, (MergeNode("l", 0, 1), MergeNode("o", 1, 2)))
    assert trace.tokens == [Token(7, "low", 0, 3, MergeNode("low", 0, 3, 1, (lo, MergeNode("w", 2, 3))))]


ALPHABET = "ab é日"
TOKENS = list(ALPHABET) + ["ab", "aa", "a ", "bé", "aab", "日日"]
texts = st.one_of(st.text(ALPHABET, max_size=12), st.text(ALPHABET, min_size=40, max_size=150))
rules = st.lists(st.tuples(st.sampled_from(TOKENS), st.sampled_from(TOKENS)), max_size=25)


@settings(max_examples=examples(300), deadline=None)
@given(text=texts, merges=rules)
def test_char_tokens_match_the_literal_algorithm(text, merges):
    assert char_tokens(text, merges) == reference.char_tokens(text, merges)


@settings(max_examples=examples(100), deadline=None)
@given(text=texts, merges=rules, max_steps=st.integers(0, 6), max_sequence=st.integers(0, 50))
def test_trace_matches_the_literal_steps(text, merges, max_steps, max_sequence):
    tokens = reference.char_tokens(text, merges)
    vocab = {token: i for i, token in enumerate(sorted(set(tokens)))}
    trace = encode_text_trace(text, vocab, merges, limits=TraceLimits(max_steps=max_steps, max_sequence=max_sequence))
    literal = reference.steps(list(text), [(left, right, left + right) for left, right in merges])
    assert trace.ids == reference.bpe_encode_text(text, vocab, merges)
    assert trace.rules_fired == len(literal)
    for step, (rule, matches, sequence) in zip(trace.steps, literal[:max_steps], strict=True):
        assert (step.rule, step.matches, step.new) == (rule, matches, merges[rule][0] + merges[rule][1])
        assert step.sequence == (sequence if len(sequence) <= max_sequence else None)
    assert [t.value for t in trace.tokens] == tokens
    assert all(t.tree is not None and t.tree.symbol == t.value for t in trace.tokens)


@pytest.mark.parametrize("small", [0, 1000])
def test_both_engine_paths(monkeypatch, small):
    monkeypatch.setattr(engine, "SMALL_SEGMENT", small)
    merges = [["a", "a"], ["aa", "a"], ["a", "a"], ["aaa", "aa"], ["aa", "aa"]]
    for n in range(0, 70, 9):
        text = "a" * n + " " + "a" * (n // 3)
        assert char_tokens(text, list(merges) + [["x", str(n)]]) == reference.char_tokens(text, merges)


def test_compiled_char_merges_are_reusable():
    from webapp.tokenizer import compile_char_merges

    compiled = compile_char_merges(LOWER)
    assert compile_char_merges([list(rule) for rule in LOWER]) is compiled
    assert bpe_encode_text("lower lower", {**LOWER_VOCAB, " ": 9}, compiled) == [8, 9, 8]
    assert char_tokens("low", compiled) == ["low"]
