"""Training (`bpe_merges`, `train_trace`, `training_vocab`): the contract's examples and corners.

Hand-worked cases here; property tests against the literal oracle live in
test_training_properties.py.
"""

from __future__ import annotations

import copy

import pytest

from webapp.tokenizer import TokenizerError, bpe_merges, train_trace, training_vocab
from webapp.tokenizer.traces import PairCount


# --- the worked examples of docs/algorithms.md ----------------------------------


def test_seed_low_lower_lowest() -> None:
    assert bpe_merges(["low", "lower", "lowest"], 2) == ["lo", "low"]


def test_seed_aaa_stops_after_two_merges() -> None:
    # ("a","a") twice in "aaa" (overlapping), then ("aa","a"); then one symbol is left.
    assert bpe_merges(["aaa"], 3) == ["aa", "aaa"]


# --- counting -------------------------------------------------------------------


def test_overlapping_pairs_are_each_counted() -> None:
    # "aaaa" holds (a, a) three times: it beats (b, c) twice.
    trace = train_trace(["aaaa", "bc", "bc"], 1)
    assert trace.pairs == [("a", "a")]
    assert trace.steps[0].count == 3
    assert trace.steps[0].runners_up == (PairCount(("b", "c"), 2),)


def test_merge_replaces_left_to_right_without_overlap() -> None:
    # (a, a) is counted 4 times in "aaaaa" but merged only twice: aa aa a.
    # Then (aa, aa) and (aa, a) tie at 1 and ("aa", "a") is the smaller tuple.
    trace = train_trace(["aaaaa"], 3)
    assert trace.merges == ["aa", "aaa", "aaaaa"]
    assert [s.count for s in trace.steps] == [4, 1, 1]
    assert trace.steps[1].tie is True


def test_repeated_words_count_every_time() -> None:
    assert bpe_merges(["ab", "cd", "cd"], 1) == ["cd"]
    assert bpe_merges(["ab", "ab", "cd"], 1) == ["ab"]
    assert train_trace(["xy"] * 5, 1).steps[0].count == 5


def test_counts_add_up_across_words() -> None:
    # (b, c) is in three words once each; (a, a) twice in one word.
    trace = train_trace(["bc", "abc", "bcd", "aaa"], 1)
    assert trace.steps[0].pair == ("b", "c")
    assert trace.steps[0].count == 3


# --- tie-break: the smallest (first, second) tuple --------------------------------


def test_tie_goes_to_smallest_first() -> None:
    assert bpe_merges(["ba", "ab"], 1) == ["ab"]


def test_tie_on_first_goes_to_smallest_second() -> None:
    assert bpe_merges(["ac", "ab"], 1) == ["ab"]


def test_tie_compares_code_points_not_letters() -> None:
    # "A" (65) < "a" (97) < "z" (122) < "é" (233): plain string order.
    assert bpe_merges(["ab", "Ab"], 1) == ["Ab"]
    assert bpe_merges(["éa", "za"], 1) == ["za"]


def test_tie_compares_whole_symbols_as_strings() -> None:
    # A tie between a multi-character symbol and a prefix of it: "a" < "ab".
    words = ["abx", "abx", "ay", "ay", "ab"]
    # step 1: (a, b) = 3 wins; step 2: (ab, x) = 2 ties (a, y) = 2; ("a", "y") < ("ab", "x").
    trace = train_trace(words, 2)
    assert trace.pairs == [("a", "b"), ("a", "y")]
    assert trace.steps[1].tie is True
    assert trace.steps[1].runners_up[0] == PairCount(("ab", "x"), 2)


def test_higher_count_beats_smaller_pair() -> None:
    assert bpe_merges(["zz", "zz", "ab"], 1) == ["zz"]


# --- words of any strings --------------------------------------------------------


def test_unicode_spaces_digits_and_empty_words() -> None:
    words = ["", " a", " a", "12", "12", "12", "", "日本", "日本"]
    assert bpe_merges(words, 3) == ["12", " a", "日本"]


def test_code_points_not_graphemes() -> None:
    # "e" + combining acute accent are two code points, so they form a pair.
    assert bpe_merges(["e\u0301"], 1) == ["e\u0301"]
    assert bpe_merges(["👍🏽"], 1) == ["👍🏽"]


def test_control_characters_are_ordinary_symbols() -> None:
    # NUL and friends are characters like any other (the engine joins words with
    # a separator internally; it must pick one that no word contains).
    words = ["\x00a", "\x00a", "a\x00", "\x01\x00", "\x00\x01\x02"]
    assert bpe_merges(words, 3) == ["\x00a", "\x00\x01", "\x00\x01\x02"]


def test_case_and_punctuation_are_literal() -> None:
    assert bpe_merges(["Ab", "ab", "ab", "a-"], 2) == ["ab", "Ab"]


# --- stopping ---------------------------------------------------------------------


def test_stops_when_no_word_has_two_symbols() -> None:
    trace = train_trace(["ab", "c", ""], 5)
    assert trace.merges == ["ab"]
    assert trace.stopped_early is True
    assert bpe_merges(["a", "b", ""], 3) == []
    assert bpe_merges([], 3) == []


def test_not_stopped_early_when_num_merges_reached() -> None:
    trace = train_trace(["abc"], 2)
    assert trace.merges == ["ab", "abc"]
    assert trace.stopped_early is False


def test_zero_merges() -> None:
    assert bpe_merges(["low", "lower"], 0) == []
    trace = train_trace(["low"], 0)
    assert (trace.merges, trace.steps, trace.stopped_early, trace.steps_truncated) == ([], [], False, False)


# --- arguments ----------------------------------------------------------------------


def test_arguments_are_not_modified() -> None:
    words = ["low", "lower", "lowest", "low"]
    before = copy.deepcopy(words)
    bpe_merges(words, 5)
    train_trace(words, 5)
    pairs = [["l", "o"], ["lo", "w"]]
    pairs_before = copy.deepcopy(pairs)
    training_vocab(words, pairs)
    assert words == before
    assert pairs == pairs_before


def test_tuples_work_like_lists() -> None:
    assert bpe_merges(("low", "lower", "lowest"), 2) == ["lo", "low"]
    assert training_vocab(("ab",), (("a", "b"),)) == training_vocab(["ab"], [["a", "b"]])


def test_repeated_calls_give_the_same_answer() -> None:
    words = ["hello", "world", "hello", "help"]
    assert bpe_merges(words, 6) == bpe_merges(words, 6) == train_trace(words, 6).merges


# --- train_trace ---------------------------------------------------------------------


def test_trace_steps_describe_each_merge() -> None:
    trace = train_trace(["low", "lower", "lowest"], 2)
    first, second = trace.steps
    assert (first.index, first.pair, first.merged, first.count) == (1, ("l", "o"), "lo", 3)
    # (o, w) also occurs three times: a tie that ("l", "o") < ("o", "w") decided.
    assert first.tie is True
    assert first.runners_up[0] == PairCount(("o", "w"), 3)
    assert (second.index, second.pair, second.merged, second.count) == (2, ("lo", "w"), "low", 3)
    assert trace.pairs == [("l", "o"), ("lo", "w")]


def test_trace_runners_up_are_ordered_and_capped() -> None:
    words = ["ab"] * 5 + ["cd"] * 4 + ["ef"] * 4 + ["gh"] * 2 + ["ij"]
    step = train_trace(words, 1, runners_up=3).steps[0]
    assert step.pair == ("a", "b")
    assert step.tie is False
    # Highest count first; equal counts in tie-break order.
    assert step.runners_up == (PairCount(("c", "d"), 4), PairCount(("e", "f"), 4), PairCount(("g", "h"), 2))
    assert len(train_trace(words, 1, runners_up=1).steps[0].runners_up) == 1


def test_trace_tie_flag_without_runners_up() -> None:
    step = train_trace(["ab", "cd"], 1, runners_up=0).steps[0]
    assert step.runners_up == ()
    assert step.tie is True
    assert train_trace(["ab", "ab", "cd"], 1, runners_up=0).steps[0].tie is False


def test_trace_is_bounded_but_merges_are_complete() -> None:
    words = ["abcdefghij"]
    trace = train_trace(words, 9, max_steps=3)
    assert len(trace.merges) == len(trace.pairs) == 9
    assert [s.index for s in trace.steps] == [1, 2, 3]
    assert trace.steps_truncated is True
    assert train_trace(words, 9, max_steps=9).steps_truncated is False
    assert train_trace(words, 9, max_steps=0).steps == []


def test_trace_options_must_be_non_negative_integers() -> None:
    with pytest.raises(ValueError, match="runners_up"):
        train_trace(["ab"], 1, runners_up=-1)
    with pytest.raises(ValueError, match="max_steps"):
        train_trace(["ab"], 1, max_steps=True)


# --- training_vocab ---------------------------------------------------------------------


def test_training_vocab_numbers_characters_then_merges() -> None:
    words = ["low", "lower", "lowest"]
    trace = train_trace(words, 2)
    assert training_vocab(words, trace.pairs) == {
        "e": 0, "l": 1, "o": 2, "r": 3, "s": 4, "t": 5, "w": 6, "lo": 7, "low": 8,
    }


def test_training_vocab_of_no_words() -> None:
    assert training_vocab([], []) == {}
    assert training_vocab(["", "a"], []) == {"a": 0}


def test_training_vocab_keeps_first_id_of_a_repeated_token() -> None:
    # Two different pairs can spell the same token; ids stay dense and unique.
    vocab = training_vocab(["abc"], [("a", "b"), ("ab", "c"), ("b", "c"), ("a", "bc")])
    assert vocab == {"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4, "bc": 5}


def test_training_vocab_accepts_json_lists() -> None:
    assert training_vocab(["ab"], [["a", "b"]]) == {"a": 0, "b": 1, "ab": 2}


@pytest.mark.parametrize(
    ("pairs", "message", "location"),
    [
        ("ab", "merges: should be a list", {}),
        ([["a", "b"], ["a"]], "merges: rule 2 should be two non-empty strings", {"rule": 2}),
        ([["a", ""]], "merges: rule 1 should be two non-empty strings", {"rule": 1}),
        ([["a", 1]], "merges: rule 1 should be two non-empty strings", {"rule": 1}),
    ],
)
def test_training_vocab_rejects_bad_pairs(pairs: object, message: str, location: dict) -> None:
    with pytest.raises(TokenizerError) as info:
        training_vocab(["ab"], pairs)  # type: ignore[arg-type]
    assert info.value.field == "merges"
    assert info.value.message.startswith(message)
    assert info.value.location == location


# --- validation through the shared validators -------------------------------------------------


@pytest.mark.parametrize(
    ("words", "message", "location"),
    [
        ("low lower", "words: should be a list of strings, got a string", {}),
        ({"low": 1}, "words: should be a list of strings, got an object", {}),
        (None, "words: should be a list of strings, got null", {}),
        (["low", 5], "words: word 2 should be a string, got 5", {"index": 2}),
        (["low", None, "x"], "words: word 2 should be a string, got null", {"index": 2}),
        ([["l", "o"]], 'words: word 1 should be a string, got ["l", "o"]', {"index": 1}),
        (["ok", "a\ud800b"], "words: word 2 has a lone surrogate U+D800 at character 2 (byte offset 1)",
         {"index": 2, "position": 2, "offset": 1}),
    ],
)
def test_bad_words_are_reported(words: object, message: str, location: dict) -> None:
    for call in (lambda: bpe_merges(words, 1), lambda: train_trace(words, 1), lambda: training_vocab(words, [])):  # type: ignore[arg-type]
        with pytest.raises(TokenizerError) as info:
            call()
        assert info.value.field == "words"
        assert info.value.message.startswith(message)
        assert info.value.location == location


@pytest.mark.parametrize(
    ("num_merges", "shown"),
    [(-1, "-1"), (True, "true"), (1.5, "1.5"), ("3", '"3"'), (None, "null")],
)
def test_bad_num_merges_are_reported(num_merges: object, shown: str) -> None:
    for call in (lambda: bpe_merges(["ab"], num_merges), lambda: train_trace(["ab"], num_merges)):  # type: ignore[arg-type]
        with pytest.raises(TokenizerError) as info:
            call()
        assert info.value.field == "num_merges"
        assert info.value.message == f"num_merges: should be a non-negative integer, got {shown}"


def test_errors_are_value_errors() -> None:
    with pytest.raises(ValueError):
        bpe_merges("abc", 1)  # type: ignore[arg-type]
