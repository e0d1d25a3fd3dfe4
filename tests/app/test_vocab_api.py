"""The vocab routes over HTTP: answers, every bad query a 4xx naming its field, the unreachable
tokens inline for a small vocabulary and as a job (once, then read back at once) for a large one."""

from __future__ import annotations

import pytest
from jobhelpers import JobWorker, wait_job
from tests.conftest import make_app
from webapp.infra.storage import get_storage
from webapp.tokenizer import is_installed
from webapp.web.vocab import kinds

pytestmark = pytest.mark.skipif(not is_installed("r50k_base"), reason="the r50k_base preset is not installed")


@pytest.fixture
def inline(tmp_path):
    app = make_app(tmp_path, JOB_VOCAB_TOKENS=10**9)
    yield app.test_client()
    get_storage(app).dispose()


def error_of(response, status: int, field: str) -> str:
    assert response.status_code == status, response.get_data(as_text=True)
    body = response.get_json()["error"]
    assert body["field"] == field
    return body["message"]


def test_search_lists_the_tokens_containing_q_in_id_order(inline) -> None:
    body = inline.get("/api/tokenizers/r50k_base/vocab?q=%20the&limit=5&offset=1").get_json()
    assert body["total"] > 5 and len(body["tokens"]) == 5 and body["offset"] == 1
    ids = [t["id"] for t in body["tokens"]]
    assert ids == sorted(ids) and all(b" the" in bytes(t["bytes"]) for t in body["tokens"])
    first = inline.get("/api/tokenizers/r50k_base/vocab?q=%20the&limit=1").get_json()["tokens"][0]
    assert first == {"id": 262, "text": " the", "bytes": list(b" the"), "rank": 6}  # tiktoken rank 262 = 256 + 6
    everything = inline.get("/api/tokenizers/r50k_base/vocab?limit=200").get_json()
    assert everything["total"] == 50257 and everything["tokens"][0]["rank"] is None  # a byte: no rule


@pytest.mark.parametrize("query, field", [
    ("q=", "q"), ("q=" + "a" * 257, "q"), ("q=" + "é" * 129, "q"),
    ("offset=-1", "offset"), ("offset=x", "offset"), ("offset=10000001", "offset"),
    ("limit=0", "limit"), ("limit=201", "limit"), ("limit=1.5", "limit"),
])
def test_a_bad_query_is_a_400_naming_its_field(inline, query: str, field: str) -> None:
    message = error_of(inline.get(f"/api/tokenizers/r50k_base/vocab?{query}"), 400, field)
    assert message.startswith(f"{field}: ")


def test_the_api_doc_example_answers_as_shown(inline) -> None:
    from webapp import PROJECT_ROOT
    doc = (PROJECT_ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    shown = doc.split("curl -s 'localhost:5000/api/tokenizers/r50k_base/vocab?q=%20the&limit=1'\n# ", 1)[1].split("\n")[0]
    answer = inline.get("/api/tokenizers/r50k_base/vocab?q=%20the&limit=1").get_data(as_text=True).rstrip("\n")
    assert answer == shown


def test_q_of_256_bytes_is_accepted(inline) -> None:
    assert inline.get("/api/tokenizers/r50k_base/vocab?q=" + "é" * 128).get_json()["total"] == 0


def test_a_token_card(inline) -> None:
    card = inline.get("/api/tokenizers/r50k_base/vocab/25133").get_json()
    assert card["text"] == " refrain" and card["reachable"] is True and card["self_ids"] == [25133]
    assert [p["text"] for p in card["made_from"]] == [" ref", "rain"]
    assert card["used_by"]["count"] == len(card["used_by"]["rules"]) == 0
    base = inline.get("/api/tokenizers/r50k_base/vocab/220").get_json()  # " "
    assert base["made_from"] is None and base["tree"]["children"] == [] and base["used_by"]["count"] > 20
    assert base["used_by"]["first"] == base["used_by"]["rules"][0]
    special = inline.get("/api/tokenizers/r50k_base/vocab/50256").get_json()
    assert special["special"] is True and special["reachable"] is False and special["group"] == "special"
    assert special["status"] == "unreachable" and special["reason"].startswith("special")


@pytest.mark.parametrize("path, status, field", [
    ("/api/tokenizers/r50k_base/vocab/50257", 404, "token_id"),
    ("/api/tokenizers/r50k_base/vocab/-1", 404, "token_id"),
    ("/api/tokenizers/r50k_base/vocab/abc", 404, "token_id"),
    ("/api/tokenizers/no-such-thing/vocab", 404, "tokenizer"),
    ("/api/tokenizers/no-such-thing/unreachable", 404, "tokenizer"),
])
def test_unknown_ids_are_404s_naming_the_field(inline, path: str, status: int, field: str) -> None:
    error_of(inline.get(path), status, field)


@pytest.mark.slow
def test_the_page_keeps_a_bad_search_and_says_why(inline) -> None:
    page = inline.get("/vocab?tokenizer=r50k_base&q=" + "a" * 300 + "&token=99999999").get_data(as_text=True)
    assert 'value="' + "a" * 300 + '"' in page
    assert "q: 300 bytes is over the limit of 256 bytes" in page
    assert "no token with id 99,999,999" in page


def test_unreachable_inline(inline) -> None:
    body = inline.get("/api/tokenizers/r50k_base/unreachable").get_json()
    # the end-of-text token, and the 13 bytes no UTF-8 text holds (0xC0, 0xC1, 0xF5..0xFF)
    assert body["count"] == 14 and body["groups"]["special"] == [50256]
    assert body["ids"] == sorted(body["groups"]["not_utf8"] + [50256]) and body["undecided"] == []
    assert len(body["partial"]) == 344 and len(body["witnesses"]) == 344 - 13


@pytest.mark.server
def test_unreachable_is_a_job_once_then_read_back(tmp_path) -> None:
    settings = {"DATABASE_URL": f"sqlite:///{tmp_path / 'jobs.sqlite3'}",
                "QUEUE_URL": f"sqlite:///{tmp_path / 'queue.sqlite3'}", "JOB_VOCAB_TOKENS": 1000,
                "JOB_TIME_SECONDS": 120}
    app = make_app(tmp_path, **settings)
    client = app.test_client()
    kinds.REACH.clear()  # (an earlier test of this process cached r50k_base's answer in-process)
    worker = JobWorker(settings, tmp_path / "worker.log").start()
    try:
        first = client.get("/api/tokenizers/r50k_base/unreachable")
        assert first.status_code == 202
        job = first.get_json()
        again = client.get("/api/tokenizers/r50k_base/unreachable").get_json()
        assert again["job"] == job["job"]  # the same job, not a second one
        done = wait_job(lambda: client.get(job["url"]).get_json(), timeout=120, worker=worker)
        assert done["state"] == "done", done
        answer = client.get("/api/tokenizers/r50k_base/unreachable")
        assert answer.status_code == 200 and 50256 in answer.get_json()["ids"] and answer.get_json()["count"] == 14
        page = client.get("/vocab?tokenizer=r50k_base").get_data(as_text=True)
        assert 'id="reach-count"' in page
    finally:
        worker.kill()
        get_storage(app).dispose()
