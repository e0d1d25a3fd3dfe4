"""Byte-level decode: concatenated bytes, strict UTF-8, helpful errors."""

from __future__ import annotations

import copy

import pytest

from webapp.tokenizer import reference
from webapp.tokenizer import TokenizerError, decode

LOW_VOCAB = {256: [108, 111], 257: [108, 111, 119]}


def test_seed():
    assert decode([257], LOW_VOCAB) == "low"


def test_json_string_keys():
    assert decode([257, 32, 256], {"256": [108, 111], "257": [108, 111, 119]}) == "low lo"


def test_bytes_values_are_accepted():
    assert decode([256], {256: b"hi"}) == "hi"


def test_ids_below_256_stand_for_their_byte():
    assert decode([104, 105], {}) == "hi"


def test_vocab_overrides_a_byte():
    assert decode([104], {104: [105]}) == "i"
    assert decode([104], {"104": [111, 107]}) == "ok"


def test_utf8_across_token_boundaries():
    data = "é日".encode()
    assert decode(list(data), {}) == "é日"
    assert decode([256, 257], {256: list(data[:1]), 257: list(data[1:])}) == "é日"
    assert decode([256, 257], {256: list(data[:3]), 257: list(data[3:])}) == "é日"


def test_empty():
    assert decode([], {}) == ""
    assert decode((), LOW_VOCAB) == ""


def test_empty_token_is_no_bytes():
    assert decode([300, 104], {300: []}) == "h"


def test_unknown_id_names_id_and_position():
    with pytest.raises(TokenizerError) as info:
        decode([104, 105, 999], LOW_VOCAB)
    error = info.value
    assert error.field == "ids" and error.location == {"index": 3}
    assert "999" in error.message and "position 3" in error.message


def test_invalid_utf8_names_offset_and_token():
    # "h" then a token holding "é"'s first byte and a stray continuation byte.
    with pytest.raises(TokenizerError) as info:
        decode([104, 300], {300: [0xC3, 0x41]})
    error = info.value
    assert error.field == "ids"
    assert error.location == {"index": 2, "offset": 1}
    assert "byte offset 1" in error.message and "position 2" in error.message and "id 300" in error.message


def test_unfinished_character_at_the_end():
    with pytest.raises(TokenizerError) as info:
        decode([104, 0xE6, 0x97], {})
    assert info.value.location == {"index": 2, "offset": 1}
    assert "unfinished" in info.value.message


def test_stray_byte_in_a_later_token():
    with pytest.raises(TokenizerError) as info:
        decode([256, 257], {256: [104, 105], 257: [33, 0xFF]})
    assert info.value.location == {"index": 2, "offset": 3}
    assert "0xff" in info.value.message


def test_arguments_are_not_modified():
    ids = [257, 256]
    vocab = {"256": [108, 111], "257": [108, 111, 119]}
    before = copy.deepcopy((ids, vocab))
    decode(ids, vocab)
    assert (ids, vocab) == before


def test_tuples_work():
    assert decode((257,), {256: (108, 111), 257: (108, 111, 119)}) == "low"


def test_booleans_are_not_ids():
    with pytest.raises(TokenizerError) as info:
        decode([True], {})
    assert info.value.location == {"index": 1}


@pytest.mark.parametrize(
    "ids,vocab",
    [([257, 32, 256], LOW_VOCAB), ([0xC3, 0xA9, 300], {300: [0xE6, 0x97, 0xA5]}), ([65], {65: [66]})],
)
def test_agrees_with_the_literal_decoder(ids, vocab):
    assert decode(ids, vocab) == reference.decode(ids, vocab)
