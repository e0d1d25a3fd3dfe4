"""Issue 44, rows 5 and 9 in the tokenizer package: decode sizes added up before joining,
vocab entries bounded at open, true messages from export and from a broken .model."""

from __future__ import annotations

import json

import pytest

from webapp.tokenizer import TokenizerError, decode, import_tokenizer
from webapp.tokenizer.core.token_sizes import SizeLimits
from webapp.tokenizer.loaded import UNITS
from webapp.tokenizer.formats.playground import parse_playground_json


# --- row 5 -----------------------------------------------------------------------------------


def test_row5_decode_refuses_past_max_bytes_before_joining() -> None:
    vocab = {256: [97] * 1000}
    with pytest.raises(TokenizerError) as refused:
        decode([256] * 3000, vocab, max_bytes=100_000)
    assert refused.value.field == "ids" and refused.value.location == {"bytes": 3_000_000, "limit": 100_000}
    assert "decoding these 3,000 ids gives 3,000,000 bytes, over the limit of 100,000 bytes" in refused.value.message
    assert decode([256] * 100, vocab, max_bytes=100_000) == "a" * 100_000  # at the cap exactly
    assert decode([256] * 3000, vocab) == "a" * 3_000_000  # the library API: no cap


def test_row5_a_character_level_join_adds_up_utf8_bytes() -> None:
    tok = parse_playground_json({"level": "chars", "merges": [["é", "é"]], "vocab": {"é": 0, "éé": 1}})
    with pytest.raises(TokenizerError, match="gives 4,000 bytes, over the limit of 3,999 bytes"):
        UNITS["chars"].join_ids(tok, [1] * 1000, {}, max_bytes=3999)
    assert UNITS["chars"].join_ids(tok, [1] * 1000, {}, max_bytes=4000) == "é" * 2000


def _hf(vocab: dict[str, int]) -> str:
    return json.dumps({"version": "1.0", "added_tokens": [], "normalizer": None, "pre_tokenizer": None,
                       "post_processor": None, "decoder": None,
                       "model": {"type": "BPE", "vocab": vocab, "merges": []}})


def test_row5_a_tokenizer_json_vocab_entry_is_bounded_at_open() -> None:
    letters = {chr(c): c - 97 for c in range(97, 123)}
    with pytest.raises(TokenizerError) as refused:
        import_tokenizer(_hf({**letters, "é" * 40_000: 26}), fmt="hf")  # 80,000 bytes of UTF-8
    assert refused.value.field == "vocab" and refused.value.location == {"id": 26, "limit": 65_536}
    assert "the entry with id 26" in refused.value.message and "80,000 bytes" in refused.value.message
    opened = import_tokenizer(_hf({**letters, "é" * 40_000: 26}), fmt="hf", limits=SizeLimits(token_bytes=80_000))
    assert len(opened.vocab) == 27
    vocab_json = json.dumps({**letters, "a" * 70_000: 26})
    with pytest.raises(TokenizerError, match="70,000 bytes"):
        import_tokenizer(vocab_json, fmt="vocab-merges", merges_txt="#version: 0.2\n")
