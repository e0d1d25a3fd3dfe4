"""Heavy work against the production server (gunicorn + a job worker on loopback).

Issue 8, findings 3 and 4: parallel heavy imports used to occupy (and get
killed in) every web worker while /healthz waited; a big encode left the web
worker holding its peak memory. Now heavy requests are answered 202 at once,
run in job processes that exit, and big inline requests give their heap back
(malloc_trim).

Only the /healthz timing runs `alone`; the two memory tests measure their own processes' RSS, which
a busy neighbour slows but does not change, so they run beside the rest (docs/testing.md).
"""

from __future__ import annotations

import json
import random
import threading
import time
from functools import lru_cache
from pathlib import Path

import pytest

from hf_samples import SAMPLE_CORPUS, byte_level_tokenizer
from jobhelpers import JobWorker, wait_job

from webapp.infra.storage import default_sqlite_url


def _rss_mb(pid: int, key: str = "VmRSS") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) // 1024
    raise AssertionError(f"no {key} for {pid}")


def _web_worker_pid(server) -> int:
    master = server.process.pid
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    assert len(children) == 1, children
    return int(children[0])


def _settings(tmp_path, **extra):
    return {"DATABASE_URL": default_sqlite_url(tmp_path), "QUEUE_URL": f"sqlite:///{tmp_path / 'queue.sqlite3'}",
            **extra}


def _env(settings):
    # (the workers' memory is measured here: with the presets the master opens, as in production)
    return {f"PLAYGROUND_{k}": str(v) for k, v in settings.items() if k != "DATABASE_URL"} | {"PRESETS_PRELOAD": "1"}


def _get_json(server, path):
    status, _headers, body = server.request("GET", path, timeout=10)
    assert status == 200, (status, body[:300])
    return json.loads(body)


@pytest.mark.alone  # (it times /healthz)
def test_eight_parallel_heavy_imports_become_jobs_and_healthz_stays_fast(gunicorn_factory, tmp_path):
    settings = _settings(tmp_path, JOB_IMPORT_BYTES=1000, JOB_WORKERS=2)
    server = gunicorn_factory(settings["DATABASE_URL"], workers=2, extra_env=_env(settings)).start()
    worker = JobWorker(settings, tmp_path / "worker.log").start()
    try:
        content = byte_level_tokenizer(SAMPLE_CORPUS, vocab_size=400 + 1).to_str()
        answers: list[tuple[int, dict, float]] = []

        def post(i: int) -> None:
            started = time.monotonic()
            # each file differs (a trailing space) so each is its own job
            status, body = server.post_json("/api/import", {"content": content + " " * i}, timeout=60)
            answers.append((status, body, time.monotonic() - started))

        threads = [threading.Thread(target=post, args=(i,)) for i in range(8)]
        for thread in threads:
            thread.start()
        probes = []
        while any(t.is_alive() for t in threads) or len(probes) < 10:
            started = time.monotonic()
            status, _h, _b = server.request("GET", "/healthz", timeout=10)
            probes.append(time.monotonic() - started)
            assert status == 200
            time.sleep(0.05)
        for thread in threads:
            thread.join()
        assert [a[0] for a in answers] == [202] * 8, answers
        assert max(a[2] for a in answers) < 10, answers
        assert max(probes) < 1.0, probes
        finals = [wait_job(lambda u=a[1]["url"]: _get_json(server, u), timeout=120, worker=worker) for a in answers]
        assert [f["state"] for f in finals] == ["done"] * 8, finals
        assert len({f["result"]["tokenizer"] for f in finals}) == 1  # the same tokenizer, content-addressed
        assert "WORKER TIMEOUT" not in (tmp_path / "gunicorn-0.log").read_text()
    finally:
        worker.kill()


@lru_cache(maxsize=1)  # (the same 5.7 MB body for both tests: drawing it took 1.6 s)
def _big_encode_body() -> bytes:
    rnd = random.Random(5)
    rules = [[97 + (i % 26), 97 + ((i * 7) % 26), 256 + i] for i in range(600)]
    n = 256 + len(rules)
    while len(rules) < 200_000:
        rules.append([rnd.randrange(n), rnd.randrange(n), n])
        n += 1
    text = "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz ") for _ in range(1_000_000))
    return json.dumps({"text": text, "merges": rules}).encode()


@pytest.mark.slow
def test_rss_goes_back_down_after_a_big_inline_encode(gunicorn_factory, tmp_path):
    """Forced inline (thresholds raised): the worker peaks, then trims its heap."""
    settings = _settings(tmp_path, JOB_ENCODE_CHARS=10_000_000, JOB_ENCODE_RULES=10_000_000)
    server = gunicorn_factory(settings["DATABASE_URL"], workers=1, extra_env=_env(settings)).start()
    pid = _web_worker_pid(server)
    before = _rss_mb(pid)
    status, _h, body = server.request("POST", "/api/encode", _big_encode_body(),
                                      {"Content-Type": "application/json"}, timeout=120)
    assert status == 200, body[:300]
    after, peak = _rss_mb(pid), _rss_mb(pid, "VmHWM")
    assert peak - before > 250, (before, peak)  # the request really was big
    # What stays is the bounded compiled-list cache, not the request's heap.
    assert after - before < 200 and after < peak - 150, (before, after, peak)


@pytest.mark.slow
def test_the_same_encode_as_a_job_leaves_the_web_worker_small(gunicorn_factory, tmp_path):
    settings = _settings(tmp_path, JOB_MEMORY_MB=4096)
    server = gunicorn_factory(settings["DATABASE_URL"], workers=1, extra_env=_env(settings)).start()
    worker = JobWorker(settings, tmp_path / "worker.log").start()
    try:
        pid = _web_worker_pid(server)
        before = _rss_mb(pid)
        status, _h, body = server.request("POST", "/api/encode", _big_encode_body(),
                                          {"Content-Type": "application/json"}, timeout=60)
        assert status == 202, body[:300]
        url = json.loads(body)["url"]
        done = wait_job(lambda: _get_json(server, url), timeout=120, worker=worker)
        assert done["state"] == "done", done
        assert _rss_mb(pid, "VmHWM") - before < 200  # parsing the body, not encoding it
        assert _rss_mb(worker.process.pid) < 300  # the job process took the peak and exited
    finally:
        worker.kill()
