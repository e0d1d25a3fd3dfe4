"""Reading request values into engine input: limits stated in messages, cache, types."""

from __future__ import annotations

import pytest

from tests.conftest import make_app
from webapp.infra import inputs
from webapp.tokenizer import TokenizerError, TraceLimits


@pytest.fixture
def small(tmp_path):
    app = make_app(tmp_path, LIMIT_TEXT_CHARS=10, LIMIT_RULES=2, LIMIT_VOCAB=2, LIMIT_IDS=3, LIMIT_WORDS=3, LIMIT_NUM_MERGES=5)
    with app.app_context():
        yield inputs.current_limits()


@pytest.mark.parametrize(
    "read, value, field, limit_text",
    [
        (inputs.read_text, "x" * 11, "text", "limit of 10 characters"),
        (inputs.read_byte_merges, "1 2 256\n1 2 257\n1 2 258", "merges", "limit of 2 rules"),
        (inputs.read_byte_merges, [[1, 2, 256]] * 3, "merges", "limit of 2 rules"),
        (inputs.read_char_merges, "a b\nb c\nc d", "merges", "limit of 2 rules"),
        (inputs.read_byte_vocab, {"256": [1], "257": [2], "258": [3]}, "vocab", "limit of 2 entries"),
        (inputs.read_char_vocab, "a 0\nb 1\nc 2", "vocab", "limit of 2 entries"),
        (inputs.read_ids, "1 2 3 4", "ids", "limit of 3 ids"),
        (inputs.read_words, "a b c d", "words", "limit of 3 words"),
        (inputs.read_num_merges, "6", "num_merges", "limit of 5 merges"),
    ],
)
def test_going_over_a_limit_states_the_limit(small, read, value, field, limit_text):
    with pytest.raises(TokenizerError) as info:
        read(value, small)
    assert info.value.field == field
    assert limit_text in info.value.message
    assert "setting LIMIT_" in info.value.message


def test_at_the_limit_is_fine(small):
    assert inputs.read_text("x" * 10, small) == "x" * 10
    assert len(inputs.read_byte_merges("1 2 256\n1 2 257", small)) == 2
    assert inputs.read_ids("1 2 3", small) == (1, 2, 3)
    assert inputs.read_num_merges("5", small) == 5


def test_form_text_turns_crlf_into_the_newline_the_user_typed(small):
    assert inputs.read_text("a\r\nb", small, form=True) == "a\nb"
    assert inputs.read_text("a\r\nb", small) == "a\r\nb"  # the API takes text literally


def test_compiled_merges_are_reused_for_the_same_content(small):
    inputs.COMPILED_MERGES.clear()
    first = inputs.read_byte_merges("108 111 256", small)
    assert inputs.read_byte_merges("108 111 256", small) is first
    assert inputs.read_byte_merges("108 111 257", small) is not first


@pytest.mark.parametrize(
    "read, value, field, expected",
    [
        (inputs.read_text, 5, "text", "expected a string, got a number"),
        (inputs.read_byte_merges, {"a": 1}, "merges", "got an object"),
        (inputs.read_char_merges, 3, "merges", "got a number"),
        (inputs.read_byte_vocab, [1], "vocab", "got a list"),
        (inputs.read_char_vocab, "[1]", "vocab", "got a list"),
        (inputs.read_ids, {"1": 2}, "ids", "got an object"),
        (inputs.read_words, 7, "words", "got a number"),
    ],
)
def test_wrong_json_types_name_the_field(small, read, value, field, expected):
    with pytest.raises(TokenizerError) as info:
        read(value, small)
    assert info.value.field == field
    assert expected in info.value.message


def test_pretokenize_choices():
    assert inputs.read_pretokenize(None) == "none"
    assert inputs.read_pretokenize("gpt2") == "gpt2"
    with pytest.raises(TokenizerError) as info:
        inputs.read_pretokenize("bert")
    assert info.value.field == "pretokenize" and "none, gpt2, cl100k" in info.value.message


def test_collect_reports_every_field_at_once(small):
    values, errors = inputs.collect(
        {
            "text": lambda: inputs.read_text("ok", small),
            "merges": lambda: inputs.read_byte_merges("1 x 3", small),
            "ids": lambda: inputs.read_ids("1 y", small),
        }
    )
    assert values == {"text": "ok"}
    assert set(errors) == {"merges", "ids"}


def test_rule_errors_in_the_plain_form_also_name_the_line(small):
    with pytest.raises(TokenizerError) as info:
        inputs.read_byte_merges("# comment\n1 2 256\n\n1 -2 257", small)
    assert info.value.location["rule"] == 2 and info.value.location["line"] == 4
    assert info.value.message.endswith("(line 4)")
    with pytest.raises(TokenizerError) as info:
        inputs.read_char_merges("l o\n\nlo ", small)  # a one-token line is a syntax error with its line
    assert info.value.location["line"] == 3
    with pytest.raises(TokenizerError) as info:
        inputs.read_byte_merges("[[1, 2, 256], [1, -2, 257]]", small)
    assert info.value.location == {"rule": 2}  # JSON: the rule number says it


def test_a_pages_trace_limits_record_steps_only_when_the_trace_view_asks():
    limits = inputs.Limits(trace_max_steps=7, trace_max_sequence=9)
    assert limits.trace(30, with_steps=True) == TraceLimits(max_steps=7, max_tokens=30, max_sequence=9)
    assert limits.trace(30, with_steps=False) == TraceLimits(max_steps=0, max_tokens=30, max_sequence=9)
    # (the tree budget is the package's default: the pages never set one)
    assert limits.trace(30, with_steps=True).max_tree_nodes == TraceLimits().max_tree_nodes
