"""Issue 28, row 8: a job's upload stays until the job reaches a final state.

A corpus job is training when its worker gets SIGTERM (what
scripts/with-worker.sh sends on a stop). The upload folder must still be
there afterwards; a new worker takes the job back (the upkeep), reads the
same upload (it reaches training again) and, once the job has ended, the
folder goes. A job whose upload is gone anyway fails with a message saying
so, not an unexpected error.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time

import pytest
from jobhelpers import JobWorker, wait_job

from webapp import create_app
from webapp.infra.storage import get_storage

pytestmark = pytest.mark.server


@pytest.fixture
def setup(tmp_path):
    settings = {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'corpus.sqlite3'}",
        "QUEUE_URL": f"sqlite:///{tmp_path / 'queue.sqlite3'}",
        "JOB_TIME_SECONDS": 120, "JOB_STALE_SECONDS": 6, "JOB_UPKEEP_SECONDS": 1,
        "CORPUS_DIR": str(tmp_path / "corpora"),
    }
    app = create_app({"TESTING": True, "RATE_LIMIT_WRITES": "", **settings})
    workers: list[JobWorker] = []
    yield app, settings, workers
    for worker in workers:
        worker.kill()
    get_storage(app).dispose()


def _training(client, url, worker):
    """Wait until the job is training (its counting read the whole upload)."""
    return wait_job(lambda: {**(j := client.get(url).get_json()),
                             "state": "training" if j["progress"]["text"].startswith("merge") else j["state"]},
                    until=("training", "done", "failed", "cancelled"), worker=worker, timeout=90)


def test_row8_sigterm_to_the_worker_keeps_the_upload_and_the_job_runs_again(setup, tmp_path):
    app, settings, workers = setup
    client = app.test_client()
    rnd = random.Random(5)
    text = " ".join("".join(rnd.choice("abcdefghijklmnop") for _ in range(rnd.randint(3, 40))) for _ in range(40_000))
    answer = client.post("/api/corpus", json={"text": text, "pretokenize": "gpt2", "level": "bytes",
                                              "num_merges": 50_000})
    assert answer.status_code == 202, answer.get_json()
    url = answer.get_json()["url"]
    [folder] = list((tmp_path / "corpora").iterdir())
    first = JobWorker(settings, tmp_path / "worker-1.log").start()
    workers.append(first)
    assert _training(client, url, first)["state"] == "training"

    assert first.process is not None
    os.kill(first.process.pid, signal.SIGTERM)  # the worker's own pid, as with-worker.sh stops it
    try:
        first.process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        first.kill()  # as with-worker.sh does after STOP_SECONDS
    time.sleep(1)
    assert folder.is_dir() and any(folder.iterdir()), "the stop removed the upload of an unfinished job"
    assert client.get(url).get_json()["state"] in ("running", "queued")

    second = JobWorker(settings, tmp_path / "worker-2.log").start()
    workers.append(second)
    # the upkeep gives the stale job back to the queue (its progress starts over), then it runs again
    wait_job(lambda: {**(j := client.get(url).get_json()),
                      "state": "requeued" if not j["progress"]["text"].startswith("merge") else j["state"]},
             until=("requeued", "done", "failed", "cancelled"), worker=second, timeout=60)
    again = _training(client, url, second)
    assert again["state"] == "training", again  # attempt 2 read the same upload
    assert client.post(f"{url}/cancel").status_code in (200, 202)
    job = wait_job(lambda: client.get(url).get_json(), worker=second)
    assert job["state"] == "done", job  # cancelled while training: a partial result
    deadline = time.monotonic() + 10
    while folder.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not folder.exists(), "a finished job's upload stays"


def test_row8_a_missing_upload_is_a_clear_failure(setup, tmp_path):
    import shutil

    app, settings, workers = setup
    client = app.test_client()
    answer = client.post("/api/corpus", json={"text": "low lower lowest " * 50, "num_merges": 5})
    assert answer.status_code == 202
    url = answer.get_json()["url"]
    [folder] = list((tmp_path / "corpora").iterdir())
    shutil.rmtree(folder)
    worker = JobWorker(settings, tmp_path / "worker.log").start()
    workers.append(worker)
    job = wait_job(lambda: client.get(url).get_json(), worker=worker)
    assert job["state"] == "failed"
    assert job["error"]["field"] == "corpus", job
    assert "upload" in job["error"]["message"] and "unexpected" not in job["error"]["message"]
