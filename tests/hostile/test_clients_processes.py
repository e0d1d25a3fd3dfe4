"""Issue 17, the rows about processes: real job workers (`python -m webapp.worker`)
killed with SIGKILL and restarted, orphaned upload folders swept, and the
production command stopped as a supervisor stops it."""

from __future__ import annotations

import os
import time

import pytest
from jobhelpers import JobWorker, wait_job

from tests.conftest import make_app
from webapp.infra.storage import get_storage
from webapp.jobs.queue import get_queue


@pytest.fixture
def setup(tmp_path):
    """(settings, app, client, start_worker) sharing one database, queue and corpus folder."""
    settings = {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'jobs.sqlite3'}",
        "QUEUE_URL": f"sqlite:///{tmp_path / 'queue.sqlite3'}",
        "CORPUS_DIR": str(tmp_path / "corpora"),
        "JOB_STALE_SECONDS": 2,
        "JOB_UPKEEP_SECONDS": 0.5,
    }
    app = make_app(tmp_path, **settings)
    started: list[JobWorker] = []

    def start_worker(**extra) -> JobWorker:
        worker = JobWorker({**settings, **extra}, tmp_path / f"worker-{len(started)}.log", workers=1).start()
        started.append(worker)
        return worker

    yield settings, app, app.test_client(), start_worker
    for worker in started:
        worker.kill()
    get_storage(app).dispose()


def _job(client, job_id):
    return client.get(f"/api/jobs/{job_id}").get_json()


def _submit(app, kind, params):
    with app.test_request_context("/"):
        return get_queue(app).submit(kind, params).id


# --- row 3: a job whose worker died is queued again (or ended) in bounded time -----------

@pytest.mark.alone
def test_row3_a_worker_killed_and_restarted_at_once_gets_its_job_back(setup):
    _settings, app, client, start_worker = setup
    first = start_worker()
    job_id = _submit(app, "sleep", {"seconds": 3, "row": 3})
    wait_job(lambda: _job(client, job_id), until=("running",), worker=first)
    first.kill()
    second = start_worker()  # restarted within the stale time: its start-up check finds nothing stale yet
    # re-sending the same input while the job is dead never hands out the dead job
    time.sleep(2.5)
    with app.test_request_context("/"):
        again = get_queue(app).submit("sleep", {"seconds": 3, "row": 3})
    # a new job, or the same one queued again or running again under a new claim: never the dead run
    assert again.id != job_id or again.state == "queued" or again.attempts > 1, again
    started = time.monotonic()
    done = wait_job(lambda: _job(client, job_id), timeout=30, worker=second)
    assert done["state"] == "done", done
    assert time.monotonic() - started < 15


def test_row3_cancel_while_the_worker_is_dead_ends_cancelled(setup):
    _settings, app, client, start_worker = setup
    first = start_worker()
    job_id = _submit(app, "sleep", {"seconds": 30, "row": "3b"})
    wait_job(lambda: _job(client, job_id), until=("running",), worker=first)
    first.kill()
    with app.test_request_context("/"):
        assert get_queue(app).cancel(job_id).progress_text == "cancelling"
    second = start_worker()
    done = wait_job(lambda: _job(client, job_id), timeout=15, worker=second)
    assert done["state"] == "cancelled", done


def test_row3_a_job_whose_workers_keep_dying_fails_naming_the_setting(setup):
    _settings, app, client, start_worker = setup
    job_id = _submit(app, "sleep", {"seconds": 30, "row": "3c"})
    for attempt in range(2):
        worker = start_worker(JOB_MAX_ATTEMPTS=2)
        wait_job(lambda: _job(client, job_id) if _job(client, job_id)["state"] != "running"
                 or app.extensions["playground_jobs"].store.get(job_id).attempts > attempt
                 else {"state": "queued"}, until=("running",), timeout=20, worker=worker)
        worker.kill()
    last = start_worker(JOB_MAX_ATTEMPTS=2)
    done = wait_job(lambda: _job(client, job_id), timeout=20, worker=last)
    assert done["state"] == "failed" and "JOB_MAX_ATTEMPTS" in done["error"]["message"], done


# --- row 6: folders that no live job owns are swept at worker start and on a timer ---------

def _folder(path, age: float = 0):
    path.mkdir(parents=True)
    (path / "000.txt").write_bytes(b"partial upload " * 1000)
    if age:
        old = time.time() - age
        for item in (path / "000.txt", path):
            os.utime(item, (old, old))
    return path


def test_row6_orphaned_upload_folders_are_swept_at_start_and_on_a_timer(setup, tmp_path):
    _settings, app, client, start_worker = setup
    corpora = tmp_path / "corpora"
    orphan = _folder(corpora / "a1b2c3d4e5f6a1b2c3d4e5f6", age=600)  # a web worker died while copying
    response = client.post("/api/corpus", data={"text": "words to train on " * 30, "num_merges": "5"},
                           content_type="multipart/form-data")
    assert response.status_code == 202
    owned = [p for p in corpora.iterdir() if p != orphan]
    assert len(owned) == 1
    for item in (*owned[0].iterdir(), owned[0]):
        os.utime(item, (time.time() - 600, time.time() - 600))  # old, but its job is still queued
    worker = start_worker(JOB_SPOOL_GRACE_SECONDS=5, JOB_WORKERS=1)
    deadline = time.monotonic() + 20
    while orphan.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not orphan.exists(), worker.log()
    # and one made later, while the worker runs, goes on the timer once the grace time passed
    late = _folder(corpora / "f6e5d4c3b2a1f6e5d4c3b2a1", age=4)
    fresh = _folder(corpora / "0000aaaa1111bbbb2222cccc")  # being written right now: kept
    deadline = time.monotonic() + 20
    while late.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not late.exists() and fresh.exists(), worker.log()


# --- row 2: a worker takes a second client's job before the first client's backlog -------

def test_row2_a_second_clients_job_runs_before_the_first_clients_backlog(setup):
    _settings, app, client, start_worker = setup
    first = []
    for i in range(5):  # client A's backlog: five jobs of a second each
        with app.test_request_context("/", environ_base={"REMOTE_ADDR": "10.1.1.1"}):
            first.append(get_queue(app).submit("sleep", {"seconds": 1, "a": i}).id)
    with app.test_request_context("/", environ_base={"REMOTE_ADDR": "10.2.2.2"}):
        second = get_queue(app).submit("sleep", {"seconds": 0.1, "b": 1}).id
    worker = start_worker()  # one slot
    done = wait_job(lambda: _job(client, second), timeout=30, worker=worker)
    assert done["state"] == "done"
    finished = [job_id for job_id in first if _job(client, job_id)["state"] == "done"]
    assert len(finished) <= 2, finished  # first come first served would have run all five before it
