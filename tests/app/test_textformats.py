"""What people type: JSON and the plain one-rule-per-line forms, with line/column errors."""

from __future__ import annotations

import pytest

from webapp.tokenizer import TokenizerError
from webapp.tokenizer import textformats


@pytest.mark.parametrize(
    "source, expected",
    [
        ("[[108,111,256],[256,119,257]]", [[108, 111, 256], [256, 119, 257]]),
        ("108 111 256\n256 119 257", [[108, 111, 256], [256, 119, 257]]),
        ("108,111,256\n\n  256, 119, 257  \n", [[108, 111, 256], [256, 119, 257]]),
        ("# a comment\n97 97 256", [[97, 97, 256]]),
        ("", []),
        ("  \n \n", []),
    ],
)
def test_byte_merges_json_and_plain(source, expected):
    assert textformats.parse_byte_merges(source) == expected


@pytest.mark.parametrize(
    "source, line, column, words",
    [
        ("108 111 256\n1 x 3", 2, 3, 'expected an integer, got "x"'),
        ("108 111 256\n\n1 2", 3, 1, "expected three numbers"),
        ("[[1,2,3],\n [1,x]]", 2, 5, "invalid JSON"),
        ("1 2 3 4", 1, 1, "got 4 items"),
        ("1 2 3.5", 1, 5, 'expected an integer, got "3.5"'),
    ],
)
def test_byte_merges_errors_point_at_line_and_column(source, line, column, words):
    with pytest.raises(TokenizerError) as info:
        textformats.parse_byte_merges(source)
    err = info.value
    assert err.field == "merges"
    assert err.location["line"] == line and err.location["column"] == column
    assert words in err.message
    assert f"line {line}" in err.message


def test_negative_numbers_reach_validation_not_syntax_errors():
    assert textformats.parse_byte_merges("-1 2 3") == [[-1, 2, 3]]


def test_char_merges_json_and_plain():
    assert textformats.parse_char_merges('[["l","o"],["e","r"]]') == [["l", "o"], ["e", "r"]]
    assert textformats.parse_char_merges("l o\ne r\n\nlo w") == [["l", "o"], ["e", "r"], ["lo", "w"]]
    with pytest.raises(TokenizerError) as info:
        textformats.parse_char_merges("l o\nlow")
    assert info.value.location == {"line": 2, "column": 1}
    assert "two tokens" in info.value.message


def test_vocabs_json_and_plain():
    assert textformats.parse_byte_vocab('{"256": [108, 111]}') == {"256": [108, 111]}
    assert textformats.parse_byte_vocab("256: 108 111\n257: 256 119") == {"256": [108, 111], "257": [256, 119]}
    assert textformats.parse_char_vocab('{"lower": 6}') == {"lower": 6}
    assert textformats.parse_char_vocab("l 0\nlower 6") == {"l": 0, "lower": 6}


@pytest.mark.parametrize(
    "parse, source, location, words",
    [
        (textformats.parse_byte_vocab, "256 108 111", {"line": 1, "column": 1}, "id: bytes"),
        (textformats.parse_byte_vocab, "256: 108 x", {"line": 1, "column": 10}, "expected a byte value"),
        (textformats.parse_byte_vocab, "256: 1\n256: 2", {"line": 2, "column": 1}, "listed twice"),
        (textformats.parse_char_vocab, "l 0\nlo", {"line": 2, "column": 1}, "a token and its id"),
        (textformats.parse_char_vocab, "l zero", {"line": 1, "column": 3}, "expected an id"),
        (textformats.parse_char_vocab, "l 0\nl 1", {"line": 2, "column": 1}, "listed twice"),
    ],
)
def test_vocab_errors(parse, source, location, words):
    with pytest.raises(TokenizerError) as info:
        parse(source)
    assert info.value.field == "vocab"
    assert info.value.location == location
    assert words in info.value.message


def test_ids_spaces_commas_newlines_and_json():
    assert textformats.parse_ids("257 97") == [257, 97]
    assert textformats.parse_ids("257,97\n 3") == [257, 97, 3]
    assert textformats.parse_ids("[257, 97]") == [257, 97]
    assert textformats.parse_ids("") == []
    with pytest.raises(TokenizerError) as info:
        textformats.parse_ids("1 2\n3 abc")
    assert info.value.location == {"line": 2, "column": 3}


def test_words_split_on_whitespace_or_json():
    assert textformats.parse_words("low lower\n\tlowest low") == ["low", "lower", "lowest", "low"]
    assert textformats.parse_words('["a b", "c"]') == ["a b", "c"]
    assert textformats.parse_words("") == []


def test_num_merges():
    assert textformats.parse_num_merges(" 10 ") == 10
    for bad in ("", "ten", "1.5"):
        with pytest.raises(TokenizerError) as info:
            textformats.parse_num_merges(bad)
        assert info.value.field == "num_merges"


@pytest.mark.parametrize("source", ["[NaN]", "[Infinity]", "[" + "1" * 5000 + "]"])
def test_json_that_python_would_accept_but_is_not_json(source):
    with pytest.raises(TokenizerError):
        textformats.parse_ids(source)


def test_deeply_nested_json_is_an_error_not_a_crash():
    with pytest.raises(TokenizerError) as info:
        textformats.parse_byte_merges("[" * 100_000 + "]" * 100_000)
    assert "nested" in info.value.message


def test_format_then_parse_gives_the_same_values():
    merges = [[108, 111, 256], [256, 119, 257]]
    assert textformats.parse_byte_merges(textformats.format_byte_merges(merges)) == merges
    char = [["l", "o"], ["lo", "w"]]
    assert textformats.parse_char_merges(textformats.format_char_merges(char)) == char
    odd = [[" ", "a"], ["#", "b"]]  # not writable in the plain form: JSON it is
    assert textformats.parse_char_merges(textformats.format_char_merges(odd)) == odd
    vocab = {"l": 0, " ": 1}
    assert textformats.parse_char_vocab(textformats.format_char_vocab(vocab)) == vocab
    assert textformats.parse_byte_vocab(textformats.format_byte_vocab({257: b"low"})) == {"257": [108, 111, 119]}
    assert textformats.parse_words(textformats.format_words(["a b", "c"])) == ["a b", "c"]
    assert textformats.parse_words(textformats.format_words(["low", "lower"])) == ["low", "lower"]
    assert textformats.parse_ids(textformats.format_ids([1, 2])) == [1, 2]
