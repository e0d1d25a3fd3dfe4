"""Issue 28, row 6 (the budget part): compute routes are charged per client by their work.

A request's work is its characters times the tokenizers it runs (Counts:
every tokenizer asked for; compare: 2; encode and chat: 1), counted per
client address against RATE_LIMIT_WORK before the work starts; past it, a
429 with Retry-After and a message naming the setting. The write rate limit
(RATE_LIMIT_WRITES) is unchanged.
"""

from __future__ import annotations

from tests.conftest import make_app
from webapp.infra.storage import get_storage

TWO = ["r50k_base", "cl100k_base"]


def test_row6_counts_are_charged_characters_times_tokenizers(tmp_path):
    app = make_app(tmp_path, RATE_LIMIT_WORK="1000/minute")
    client = app.test_client()
    text = "a" * 300  # 600 units over two tokenizers
    first = client.post("/api/counts", json={"text": text, "tokenizers": TWO})
    assert first.status_code == 200, first.get_json()
    second = client.post("/api/counts", json={"text": text, "tokenizers": TWO})
    assert second.status_code == 429
    error = second.get_json()["error"]
    assert error["field"] == "rate" and "RATE_LIMIT_WORK" in error["message"]
    assert int(second.headers["Retry-After"]) >= 1
    # another client still has its whole budget
    other = client.post("/api/counts", json={"text": text, "tokenizers": TWO},
                        environ_base={"REMOTE_ADDR": "198.51.100.9"})
    assert other.status_code == 200
    get_storage(app).dispose()


def test_row6_encode_and_compare_are_charged_too(tmp_path):
    app = make_app(tmp_path, RATE_LIMIT_WORK="1000/minute")
    client = app.test_client()
    encode = {"text": "a" * 400, "merges": [[97, 97, 256]]}
    assert client.post("/api/encode", json=encode).status_code == 200  # 400
    compare = {"text": "a" * 250, "a": {"tokenizer": "r50k_base"}, "b": {"tokenizer": "cl100k_base"}}
    assert client.post("/api/compare", json=compare).status_code == 200  # +500 = 900
    assert client.post("/api/encode", json=encode).status_code == 429  # +400 > 1000
    get_storage(app).dispose()


def test_row6_without_a_budget_nothing_is_refused(tmp_path):
    app = make_app(tmp_path, RATE_LIMIT_WORK="")
    client = app.test_client()
    for _ in range(5):
        assert client.post("/api/counts", json={"text": "a" * 3000, "tokenizers": TWO}).status_code == 200
    get_storage(app).dispose()
