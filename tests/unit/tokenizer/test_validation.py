"""One test per validation message: field, location and wording a person can act on."""

from __future__ import annotations

import pytest

from webapp.tokenizer import TokenizerError, validate_byte_merges, validate_text
from webapp.tokenizer.validation import (
    validate_byte_vocab,
    validate_char_merges,
    validate_char_vocab,
    validate_ids,
    validate_num_merges,
    validate_words,
)

CASES = [
    # (function, value, field, location, exact message)
    (validate_byte_merges, "108 111 256", "merges", {},
     "merges: should be a list of rules [left, right, new], got a string"),
    (validate_byte_merges, [[108, 111, 256], [108, "o", 256]], "merges", {"rule": 2},
     'merges: rule 2 should be three non-negative integers [left, right, new], got [108, "o", 256]'),
    (validate_byte_merges, [[108, 111]], "merges", {"rule": 1},
     "merges: rule 1 should be three non-negative integers [left, right, new], got [108, 111]"),
    (validate_byte_merges, [[1, 2, 3], [1, 2, 3], [-1, 2, 300]], "merges", {"rule": 3},
     "merges: rule 3 should be three non-negative integers [left, right, new], got [-1, 2, 300]"),
    (validate_byte_merges, [[True, 2, 300]], "merges", {"rule": 1},
     "merges: rule 1 should be three non-negative integers [left, right, new], got [true, 2, 300]"),
    (validate_byte_merges, [256], "merges", {"rule": 1},
     "merges: rule 1 should be three non-negative integers [left, right, new], got 256"),
    (validate_byte_vocab, [[108, 111]], "vocab", {},
     "vocab: should be an object mapping token ids to lists of bytes, got a list"),
    (validate_byte_vocab, {"lo": [108, 111]}, "vocab", {"key": "lo"},
     'vocab: key "lo" should be a token id, a non-negative integer (or its decimal digits as a string, like "256")'),
    (validate_byte_vocab, {"-1": [108]}, "vocab", {"key": "-1"},
     'vocab: key "-1" should be a token id, a non-negative integer (or its decimal digits as a string, like "256")'),
    (validate_byte_vocab, {256: [108], "256": [111]}, "vocab", {"key": "256"},
     'vocab: id 256 is listed twice (key "256")'),
    (validate_byte_vocab, {"256": [108, 300]}, "vocab", {"key": "256"},
     "vocab: token 256 should be a list of byte values 0..255, got [108, 300]"),
    (validate_byte_vocab, {"256": "lo"}, "vocab", {"key": "256"},
     'vocab: token 256 should be a list of byte values 0..255, got "lo"'),
    (validate_ids, {"ids": [1]}, "ids", {},
     "ids: should be a list of token ids (non-negative integers), got an object"),
    (validate_ids, [104, "105"], "ids", {"index": 2},
     'ids: position 2 should be a token id (a non-negative integer), got "105"'),
    (validate_ids, [104, 1.5], "ids", {"index": 2},
     "ids: position 2 should be a token id (a non-negative integer), got 1.5"),
    (validate_ids, [False], "ids", {"index": 1},
     "ids: position 1 should be a token id (a non-negative integer), got false"),
    (validate_char_merges, {"l": "o"}, "merges", {},
     "merges: should be a list of rules [left, right] (two strings each), got an object"),
    (validate_char_merges, [["l", "o"], ["lo"]], "merges", {"rule": 2},
     'merges: rule 2 should be two non-empty strings [left, right], got ["lo"]'),
    (validate_char_merges, [["l", ""]], "merges", {"rule": 1},
     'merges: rule 1 should be two non-empty strings [left, right], got ["l", ""]'),
    (validate_char_merges, [["l", 1]], "merges", {"rule": 1},
     'merges: rule 1 should be two non-empty strings [left, right], got ["l", 1]'),
    (validate_char_merges, [["a", "b"], ["\ud800", "b"]], "merges", {"rule": 2, "position": 1, "offset": 0},
     "merges: rule 2 has a lone surrogate U+D800 at character 1 (byte offset 0), "
     "which is not valid text and cannot be encoded as UTF-8"),
    (validate_char_vocab, [["low", 1]], "vocab", {},
     "vocab: should be an object mapping tokens (strings) to ids, got a list"),
    (validate_char_vocab, {5: 1}, "vocab", {"key": "5"},
     "vocab: key 5 should be a token (a string), got an integer"),
    (validate_char_vocab, {"low": "7"}, "vocab", {"key": "low"},
     'vocab: token "low" should map to an id (a non-negative integer), got "7"'),
    (validate_char_vocab, {"low": True}, "vocab", {"key": "low"},
     'vocab: token "low" should map to an id (a non-negative integer), got true'),
    (validate_text, 42, "text", {}, "text: should be a string, got an integer"),
    (validate_text, "héllo\udc80", "text", {"position": 6, "offset": 6},
     "text: the text has a lone surrogate U+DC80 at character 6 (byte offset 6), "
     "which is not valid text and cannot be encoded as UTF-8"),
    (validate_words, "low lower", "words", {}, "words: should be a list of strings, got a string"),
    (validate_words, ["low", None], "words", {"index": 2}, "words: word 2 should be a string, got null"),
    (validate_words, ["low", "x\ud801"], "words", {"index": 2, "position": 2, "offset": 1},
     "words: word 2 has a lone surrogate U+D801 at character 2 (byte offset 1), "
     "which is not valid text and cannot be encoded as UTF-8"),
    (validate_num_merges, -1, "num_merges", {}, "num_merges: should be a non-negative integer, got -1"),
    (validate_num_merges, True, "num_merges", {}, "num_merges: should be a non-negative integer, got true"),
    (validate_num_merges, "10", "num_merges", {}, 'num_merges: should be a non-negative integer, got "10"'),
]


@pytest.mark.parametrize("function,value,field,location,message", CASES)
def test_message(function, value, field, location, message):
    with pytest.raises(TokenizerError) as info:
        function(value)
    error = info.value
    assert isinstance(error, ValueError)
    assert (error.message, error.field, error.location) == (message, field, location)
    assert str(error) == message
    assert error.to_dict()["message"] == message


def test_valid_values_are_normalised():
    assert validate_byte_merges([[108, 111, 256], (256, 119, 257)]) == ((108, 111, 256), (256, 119, 257))
    assert validate_byte_vocab({"256": [108, 111], 257: b"low"}) == {256: b"lo", 257: b"low"}
    assert validate_ids([1, 2]) == (1, 2)
    assert validate_char_merges([["l", "o"]]) == (("l", "o"),)
    assert validate_char_vocab({"lo": 3}) == {"lo": 3}
    assert validate_text("") == ""
    assert validate_words(["", "a"]) == ("", "a")
    assert validate_num_merges(0) == 0


def test_long_bad_values_are_shortened_in_messages():
    with pytest.raises(TokenizerError) as info:
        validate_byte_merges([list(range(100))])
    assert info.value.message.endswith("got [0, 1, 2, 3, 4, 5, 6, 7, ...]")
    with pytest.raises(TokenizerError) as info:
        validate_char_merges([["x" * 500, ""]])
    assert len(info.value.message) < 160 and info.value.message.endswith("...")


def test_huge_integers_never_break_a_message():
    # repr() refuses ints of over 4300 digits; messages show their size instead.
    huge = 10**5000
    for function, value in [
        (validate_ids, [-huge]),
        (validate_byte_merges, [[-huge, 1, 2]]),
        (validate_byte_vocab, {huge: "x"}),
        (validate_char_vocab, {huge: 1}),
        (validate_num_merges, -huge),
    ]:
        with pytest.raises(TokenizerError) as info:
            function(value)
        assert "an integer of 16610 bits" in info.value.message
