"""Digits other than 0-9 ("¹", "٣") where a number is read: Python's str.isdigit says yes to them and
int() refuses some ("¹"), so each reader checks for ASCII digits first. Found by tests/fuzz/test_form_fuzz.py
(POST /train with num_merges=¹ answered 500)."""

from __future__ import annotations

import pytest

from webapp.tokenizer import TokenizerError
from webapp.tokenizer.formats.tiktoken_ranks import parse_tiktoken


@pytest.mark.parametrize("digits", ["\u00b9", "\u0663", "1\u00b2"])
def test_the_train_page_answers_a_non_ascii_merge_count_without_a_server_error(client, digits: str) -> None:
    answer = client.post("/train", data={"words": "low lower", "num_merges": digits})
    assert answer.status_code < 500
    assert "low lower" in answer.get_data(as_text=True)  # (what was typed is kept)


@pytest.mark.parametrize("digits", ["\u00b9", "\u0663"])
def test_a_rank_file_with_a_non_ascii_rank_names_its_line(digits: str) -> None:
    with pytest.raises(TokenizerError) as caught:
        parse_tiktoken(f"YQ== 0\nYg== {digits}\n")
    assert "line 2" in caught.value.message, caught.value.message
