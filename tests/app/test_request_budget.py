"""Issue 28, row 7: one time budget per request, shared by all its tokenizers.

32 opened tokenizer.json files whose Split pattern `(?=(.*))(?:i)?` looks
ahead over the rest of the text at every position (quadratic: about 0.2 s
each on 20,000 characters here). Counting over all 32 used to take each
its own 2 s regex budget in turn. Now the request's budget
(LIMIT_REQUEST_SECONDS, 1 s in this test) is shared: the answer comes
soon after it and names the tokenizer that ran out.
"""

from __future__ import annotations

import json
import time

import pytest

from tests.conftest import make_app
from webapp.infra.storage import get_storage

PATTERN = "(?=(.*))(?:i)?"


def _tokenizer_json(salt: int) -> str:
    vocab = {chr(c): c - 97 for c in range(97, 123)}
    vocab[f"z{salt}"] = 26 + salt  # a different file (and id) for each
    return json.dumps({
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": {"type": "Split", "pattern": {"Regex": PATTERN}, "behavior": "Isolated",
                          "invert": False},
        "post_processor": None, "decoder": None,
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "vocab": vocab, "merges": []},
    })


@pytest.mark.alone
def test_row7_the_request_budget_is_shared_and_names_the_tokenizer(tmp_path):
    # (inline: 32 x 20,000 characters is over JOB_COUNTS_WORK, which would make it a job)
    app = make_app(tmp_path, LIMIT_REQUEST_SECONDS=1, JOB_IMPORT_BYTES=1 << 30, JOB_COUNTS_WORK=1 << 30)
    client = app.test_client()
    ids = []
    for salt in range(32):
        opened = client.post("/api/import", json={"content": _tokenizer_json(salt), "format": "hf"})
        assert opened.status_code == 200, opened.get_json()
        ids.append(opened.get_json()["tokenizer"])
    started = time.monotonic()
    answer = client.post("/api/counts", json={"text": "a" * 20_000, "tokenizers": ids})
    seconds = time.monotonic() - started
    assert answer.status_code == 503, (answer.status_code, seconds)
    error = answer.get_json()["error"]
    assert error["field"] == "tokenizers"
    ran_out = error["location"]["tokenizer"]
    assert ran_out in ids and ran_out in error["message"]
    assert "LIMIT_REQUEST_SECONDS" in error["message"]
    assert seconds < 3, seconds  # the budget (1 s) plus the one regex call that overran it
    get_storage(app).dispose()


def _random_words(n: int) -> str:
    """`n` characters of random lowercase words (about 0.75 us per character per preset to count)."""
    import random

    rnd = random.Random()
    out: list[str] = []
    size = 0
    while size < n:
        word = "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randrange(2, 12)))
        out.append(word)
        size += len(word) + 1
    return " ".join(out)[:n]


@pytest.mark.alone
def test_row7_the_whole_encode_is_charged_not_only_file_regexes(tmp_path):
    """The built-in engine's patterns and merge loops count against the budget too: an inline count
    over the four OpenAI presets (rank files: no tokenizer-file pipeline, so nothing of theirs was
    charged before, and this answered 200 however long it took) that takes longer than
    LIMIT_REQUEST_SECONDS stops before the next tokenizer, naming the one that spent it."""
    app = make_app(tmp_path, LIMIT_REQUEST_SECONDS=0.02, JOB_COUNTS_WORK=1 << 30, RATE_LIMIT_WORK="")
    client = app.test_client()
    client.post("/api/counts", json={"text": "open every preset first"})  # (opening is not charged)
    text = _random_words(80_000)  # new words each run: no cached piece makes it quick
    started = time.monotonic()
    openai = ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"]
    answer = client.post("/api/counts", json={"text": text, "tokenizers": openai})
    seconds = time.monotonic() - started
    assert answer.status_code == 503, (answer.status_code, seconds)
    error = answer.get_json()["error"]
    assert error["field"] == "tokenizers" and "LIMIT_REQUEST_SECONDS" in error["message"]
    # named: the tokenizer whose encode spent it, refused before the next one (never after the last)
    assert error["location"]["index"] < len(openai) - 1
    assert error["location"]["tokenizer"] == openai[error["location"]["index"]]
    assert error["location"]["tokenizer"] in error["message"]
    # a small text still fits the same budget
    assert client.post("/api/counts", json={"text": "a short text", "tokenizers": openai}).status_code == 200
    get_storage(app).dispose()


def test_row7_a_comparison_is_refused_before_its_second_side_once_the_first_spent_the_budget(tmp_path):
    app = make_app(tmp_path, LIMIT_REQUEST_SECONDS=0.02, RATE_LIMIT_WORK="")
    client = app.test_client()
    spec = {"a": {"tokenizer": "o200k_base"}, "b": {"tokenizer": "cl100k_base"}}
    client.post("/api/compare", json={"text": "open both first", **spec})
    text = _random_words(90_000)
    answer = client.post("/api/compare", json={"text": text, **spec})
    assert answer.status_code == 503, answer.status_code
    error = answer.get_json()["error"]
    assert error["field"] == "tokenizers" and "LIMIT_REQUEST_SECONDS" in error["message"]
    assert error["location"] == {"tokenizer": "o200k_base", "index": 0} and "o200k_base" in error["message"]
    assert client.post("/api/compare", json={"text": "a short text", **spec}).status_code == 200
    get_storage(app).dispose()
