"""Corpus training through the page and the JSON API, with a real job worker.

Oracles: the pattern over each whole document (`regex.findall`) for the piece
counts, the literal byte-level trainer (webapp/tokenizer/reference.py) for the
merges, and Hugging Face `tokenizers` loading the exported tokenizer.json.
"""

from __future__ import annotations

import io
import random

import pytest
import regex
from jobhelpers import JobWorker, wait_job

from webapp import create_app
from webapp.infra.storage import get_storage
from webapp.tokenizer import encode, reference
from webapp.tokenizer.training.corpus import count_text, train_counts
from webapp.tokenizer.pretokenize.patterns import PATTERNS

pytestmark = pytest.mark.server

literal_byte_train = reference.train_byte_steps
literal_byte_rules = reference.byte_training_rules


def literal_train(words: list[str], num_merges: int) -> list[tuple[tuple[str, str], int]]:
    return [(pair, counts[pair]) for pair, counts in reference.train_steps(words, num_merges)]


TEXTS = ["the lower the newest, the wider the widest: lowering lowers the lowest newer widths. " * 3,
         "Zürich, Köln und München: schöne Städte. 東京と大阪。 Don't they'll we're 12345 6789.\n" * 2]


@pytest.fixture
def setup(tmp_path):
    settings = {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'corpus.sqlite3'}",
        "QUEUE_URL": f"sqlite:///{tmp_path / 'queue.sqlite3'}",
        "JOB_TIME_SECONDS": 60,
        "CORPUS_DIR": str(tmp_path / "corpora"),
    }
    app = create_app({"TESTING": True, **settings})
    worker = JobWorker(settings, tmp_path / "worker.log").start()
    yield app, app.test_client(), worker
    worker.kill()
    get_storage(app).dispose()


def _done(client, response, worker):
    assert response.status_code == 202, response.get_json()
    url = response.get_json()["url"]
    job = wait_job(lambda: client.get(url).get_json(), worker=worker)
    result = client.get(f"{url}/result").get_json() if job["state"] == "done" else None
    return job, result


def _pieces(texts: list[str], scheme: str) -> list[bytes]:
    return [p.encode() for t in texts for p in regex.findall(PATTERNS[scheme], t)]


def test_api_files_and_paste_train_the_literal_byte_merges(setup, tmp_path):
    app, client, worker = setup
    data = {"files": [(io.BytesIO(TEXTS[0].encode()), "a.txt"), (io.BytesIO(TEXTS[1].encode()), "b.txt")],
            "text": "lowest newest", "pretokenize": "gpt2", "level": "bytes", "num_merges": "40",
            "held_out": "the newest lower widths"}
    job, result = _done(client, client.post("/api/corpus", data=data, content_type="multipart/form-data"), worker)
    assert job["state"] == "done", job
    texts = TEXTS + ["lowest newest"]
    steps, _ = literal_byte_train(_pieces(texts, "gpt2"), 40)
    assert result["corpus"]["documents"] == 3 and result["corpus"]["files"] == ["a.txt", "b.txt", "pasted text"]
    assert result["corpus"]["pieces"] == len(_pieces(texts, "gpt2"))
    assert result["steps"]["count"] == [count for _, count in steps]
    rules = literal_byte_rules([pair for pair, _ in steps])
    stored = client.get(f"/api/tokenizers/{result['tokenizer']}").get_json()
    assert stored["merges"] == rules and stored["level"] == "bytes" and stored["pretokenize"] == "gpt2"
    assert result["vocab_size"] == 256 + 40
    assert list((tmp_path / "corpora").iterdir()) == []  # the job deleted the uploads
    held = "the newest lower widths"
    ids = [i for p in regex.findall(PATTERNS["gpt2"], held) for i in encode(p, rules)]
    assert result["held_out"] == {"bytes": len(held.encode()), "tokens": len(ids), "chars": len(held),
                                  "sampled_chars": len(held)}
    # The exported tokenizer.json gives the same ids in Hugging Face tokenizers.
    tokenizers = pytest.importorskip("tokenizers")
    exported = client.get(f"/api/export?tokenizer={result['tokenizer']}&format=hf")
    assert exported.status_code == 200
    hf = tokenizers.Tokenizer.from_str(exported.get_data(as_text=True))
    assert hf.encode(held).ids == ids


def test_api_json_chars_level_is_the_literal_algorithm(setup):
    app, client, worker = setup
    text = "low lower lowest newer wider new " * 5
    job, result = _done(client, client.post("/api/corpus", json={
        "text": text, "pretokenize": "none", "level": "chars", "num_merges": 12}), worker)
    assert job["state"] == "done", job
    expected = literal_train(text.split(), 12)
    assert list(zip(result["steps"]["left"], result["steps"]["right"])) == [p for p, _ in expected]
    assert result["steps"]["count"] == [c for _, c in expected]
    stored = client.get(f"/api/tokenizers/{result['tokenizer']}").get_json()
    assert stored["level"] == "chars" and [tuple(m) for m in stored["merges"]] == [p for p, _ in expected]
    encoded = client.post(f"/api/tokenizers/{result['tokenizer']}/encode", json={"text": "lowest"})
    assert encoded.status_code == 200, encoded.get_json()


def test_bad_inputs_are_clear_4xx(setup, tmp_path):
    app, client, _worker = setup
    cases = [
        ({"pretokenize": "gpt2", "num_merges": 5}, 400, "corpus", "upload at least one"),
        ({"text": "ab", "level": "words", "num_merges": 5}, 400, "level", "level: expected one of chars, bytes"),
        ({"text": "ab", "pretokenize": "gpt9", "num_merges": 5}, 400, "pretokenize", "expected one of none, gpt2"),
        ({"text": "ab", "num_merges": 10**9}, 400, "num_merges", "LIMIT_NUM_MERGES"),
        ({"text": "ab", "num_merges": 5, "held_out": 5}, 400, "held_out", "held_out: expected a string"),
        ({"text": "ab", "num_merges": 5, "held_out": "a\ud800"}, 400, "held_out", "held_out: the text has a lone surrogate"),
        ({"text": 7, "num_merges": 5}, 400, "text", "text: expected a string"),
    ]
    for body, status, field, words in cases:
        response = client.post("/api/corpus", json=body)
        assert response.status_code == status, (body, response.get_json())
        error = response.get_json()["error"]
        assert error["field"] == field and words in error["message"], (body, error)

    small = create_app({"TESTING": True, "DATABASE_URL": f"sqlite:///{tmp_path / 'small.sqlite3'}",
                        "QUEUE_URL": f"sqlite:///{tmp_path / 'small-queue.sqlite3'}",
                        "CORPUS_DIR": str(tmp_path / "small-corpora"),
                        "LIMIT_CORPUS_FILES": 2, "LIMIT_CORPUS_BYTES": 2000}).test_client()
    three = {"files": [(io.BytesIO(b"abc"), f"{i}.txt") for i in range(3)], "num_merges": "5"}
    response = small.post("/api/corpus", data=three, content_type="multipart/form-data")
    assert response.status_code == 400 and "LIMIT_CORPUS_FILES" in response.get_json()["error"]["message"]
    big = {"files": [(io.BytesIO(b"word " * 1000), "big.txt")], "num_merges": "5"}
    response = small.post("/api/corpus", data=big, content_type="multipart/form-data")
    assert response.status_code == 413, response.get_data(as_text=True)
    error = response.get_json()["error"]
    assert error["field"] == "corpus" and "LIMIT_CORPUS_BYTES" in error["message"]
    leftover = tmp_path / "small-corpora"
    assert not leftover.exists() or list(leftover.iterdir()) == []  # refused uploads leave nothing behind


def test_a_file_that_is_not_utf8_fails_the_job_naming_file_and_offset(setup):
    app, client, worker = setup
    data = {"files": [(io.BytesIO("ok déjà vu ".encode() + b"\xff rest"), "latin.txt")], "num_merges": "5"}
    job, _ = _done(client, client.post("/api/corpus", data=data, content_type="multipart/form-data"), worker)
    assert job["state"] == "failed"
    assert job["error"]["field"] == "corpus"
    assert job["error"]["message"] == "corpus: latin.txt is not UTF-8: byte offset 13 starts an invalid sequence"


def test_cancel_keeps_the_merges_learned_so_far(setup):
    app, client, worker = setup
    rnd = random.Random(11)
    text = " ".join("".join(rnd.choice("abcdefghijklmnop") for _ in range(rnd.randint(3, 40))) for _ in range(40_000))
    response = client.post("/api/corpus", json={"text": text, "pretokenize": "gpt2", "level": "bytes",
                                                "num_merges": 50_000})
    assert response.status_code == 202
    url = response.get_json()["url"]
    wait_job(lambda: client.get(url).get_json(), until=("running",), worker=worker)
    # Wait for training to start (counting reports under 40 %), then cancel.
    wait_job(lambda: {**(j := client.get(url).get_json()),
                      "state": "training" if j["progress"]["text"].startswith("merge") else j["state"]},
             until=("training", "done", "failed"), worker=worker)
    assert client.post(f"{url}/cancel").status_code in (200, 202)
    job = wait_job(lambda: client.get(url).get_json(), worker=worker)
    assert job["state"] == "done", job
    result = client.get(f"{url}/result").get_json()
    assert result["stopped"] == "cancelled" and 0 < result["learned"] < 50_000
    full = train_counts(count_text([text], "gpt2").counts, "bytes", result["learned"])
    assert result["steps"]["count"] == full.counts
    page = client.get(f"/corpus/jobs/{job['job']}")
    assert b"cancelled: a partial result" in page.data


def test_pages_form_errors_keep_the_input_and_results_paginate(setup):
    app, client, worker = setup
    response = client.post("/corpus", data={"text": "typed text stays", "num_merges": "many"})
    assert response.status_code == 200
    assert b"typed text stays" in response.data and b"num_merges: expected a whole number" in response.data
    response = client.post("/corpus", data={"text": "", "num_merges": "3"}, headers={"HX-Request": "true"})
    assert b"corpus: upload at least one" in response.data and b'hx-swap-oob="true"' in response.data

    text = "".join(chr(0x4E00 + i) + chr(0x4E00 + i + 1) + " " for i in range(0, 900, 2)) * 2
    response = client.post("/corpus", data={"text": text, "pretokenize": "none", "level": "chars",
                                            "num_merges": "450"})
    assert response.status_code == 200 and b"job-panel" in response.data
    job_id = response.data.split(b'data-job="')[1].split(b'"')[0].decode()
    job = wait_job(lambda: client.get(f"/api/jobs/{job_id}").get_json(), worker=worker)
    assert job["state"] == "done", job
    panel = client.get(f"/jobs/{job_id}/panel?view=corpus")
    assert b"Training done" in panel.data and f"/corpus/jobs/{job_id}".encode() in panel.data
    first = client.get(f"/corpus/jobs/{job_id}").get_data(as_text=True)
    assert "page 1 of 5" in first and 'data-stat="vocab"' in first and "tokenizer.json" in first
    last = client.get(f"/corpus/jobs/{job_id}?page=5").get_data(as_text=True)
    assert "page 5 of 5" in last and "<td class=\"num\">450</td>" in last
    assert client.get("/corpus/jobs/aaaaaaaaaaaaaaaa").status_code == 404


def test_without_javascript_the_page_links_to_the_results(setup):
    app, client, worker = setup
    response = client.post("/corpus", data={"text": "low lower lowest", "num_merges": "3"})
    page = response.get_data(as_text=True)
    job_id = page.split('data-job="')[1].split('"')[0]
    assert f'href="/corpus/jobs/{job_id}"' in page
    job = wait_job(lambda: client.get(f"/api/jobs/{job_id}").get_json(), worker=worker)
    assert job["state"] == "done"
    result = client.get(f"/corpus/jobs/{job_id}").get_data(as_text=True)
    assert 'id="corpus-steps"' in result and "3 of 3" in result
    tokenizer = result.split('id="corpus-tokenizer">')[1].split("<")[0]
    assert f'id="corpus-languages" href="/languages?tokenizer={tokenizer}"' in result  # across languages


@pytest.mark.alone
def test_a_corpus_job_killed_at_its_time_budget_leaves_no_upload_folder(tmp_path, monkeypatch):
    # The job's process is really killed: the kind is replaced (before the fork) by one that
    # ignores the stop signal, so the runner kills it after the grace period and the job's own
    # `finally` never runs. The worker's after-job hook must remove the folder anyway.
    import dataclasses
    import time as time_module

    from webapp.jobs import runner as job_runner
    from webapp.jobs import registry as jobkinds
    from webapp.jobs.queue import get_queue

    corpora = tmp_path / "corpora"
    app = create_app({"TESTING": True, "DATABASE_URL": f"sqlite:///{tmp_path / 'c.sqlite3'}",
                      "QUEUE_URL": f"sqlite:///{tmp_path / 'q.sqlite3'}", "CORPUS_DIR": str(corpora),
                      "JOB_TIME_SECONDS": 1})
    client = app.test_client()
    response = client.post("/api/corpus", json={"text": "low lower lowest " * 50, "num_merges": 5})
    assert response.status_code == 202
    job_id = response.get_json()["job"]
    [folder] = list(corpora.iterdir())
    assert any(folder.iterdir())

    def hangs(params, progress, cancelled):
        time_module.sleep(60)

    monkeypatch.setitem(jobkinds.KINDS, "corpus", dataclasses.replace(jobkinds.KINDS["corpus"], run=hangs))
    monkeypatch.setattr(job_runner, "GRACE_SECONDS", 0.5)
    with app.app_context():
        queue = get_queue(app)
        started = time_module.monotonic()
        assert job_runner.execute(queue.store, job_id, queue.budgets) == "failed"
        assert time_module.monotonic() - started < 30
        job = queue.store.get(job_id)
    assert "time budget of 1 s" in job.error
    assert not folder.exists()
    get_storage(app).dispose()


def test_held_out_sample_keeps_short_texts_and_samples_long_ones() -> None:
    from webapp.web.corpus.kinds import held_out_sample

    assert held_out_sample("short text", limit=100) == "short text"
    text = " ".join(f"word{i:05d}" for i in range(20_000))  # 199,999 characters
    sample = held_out_sample(text, limit=10_000, windows=8)
    parts = sample.split("\n")
    assert len(parts) == 8 and len(sample) <= 10_000
    for part in parts:
        assert part and part in text  # whole stretches of the text ...
        assert all(len(word) == 9 for word in part.split(" "))  # ... that cut no word in two
    assert parts[0].startswith("word00000") and parts[-1] != parts[0]
