"""Issue 17: safe to leave running when one client misbehaves.

Each test is one row of the issue's table (the row number is in its name),
run against the Flask test client unless the row is about processes
(tests/hostile/test_clients_processes.py has those).
"""

from __future__ import annotations

import html as htmllib
import io
import time

import pytest

from tests.conftest import make_app
from webapp.infra.storage import get_storage
from webapp.jobs.queue import get_queue
from webapp.jobs.registry import DONE_VIEWS
from webapp.jobs.store import RESULT_KIND, pack_json


@pytest.fixture
def app(tmp_path):
    application = make_app(tmp_path, QUEUE_URL=f"sqlite:///{tmp_path / 'queue.sqlite3'}")
    yield application
    get_storage(application).dispose()


def _done_job(app, kind: str, result: dict, params: dict | None = None) -> str:
    """A finished job row of `kind` with `result`, without running anything."""
    with app.app_context():
        store = get_queue(app).store
        job, _created = store.create(kind, params or {"n": kind})
        result_id = get_storage(app).put_blob(RESULT_KIND, pack_json(result))
        store.claim(job.id)
        store.finish(job.id, "done", result_id=result_id)
        return job.id


# --- row 7: a view of another kind is a 404, not a 500 -------------------------------------

#: The kinds some page shows when done (each registers its views when webapp.web is imported).
VIEW_KINDS = ["corpus", "ids", "import", "page", "train"]
_SHOWN_BY = {"corpus": ("corpus",), "ids": ("ids-bytes", "ids-chars"), "import": ("open-bytes", "open-chars"),
             "page": ("page-bytes", "page-chars"), "train": ("train",)}


@pytest.mark.parametrize("kind", VIEW_KINDS)
def test_row7_a_view_of_another_kind_is_the_usual_404(app, kind):
    client = app.test_client()
    job_id = _done_job(app, kind, {"unrelated": True})
    others = [name for name in DONE_VIEWS if name not in _SHOWN_BY[kind]]
    assert len(others) >= 5
    for view in others:
        for path in (f"/jobs/{job_id}?view={view}", f"/jobs/{job_id}/panel?view={view}"):
            response = client.get(path)
            assert response.status_code == 404, (path, response.get_data(as_text=True)[:300])
            html = htmllib.unescape(response.get_data(as_text=True))
            assert "error" in html and f"does not show {kind!r} jobs" in html
        response = client.post(f"/jobs/{job_id}/cancel?view={view}")
        assert response.status_code in (403, 404)


# --- row 1: a cancelled, failed or expired corpus job leaves no upload folder ------------

def _corpus_app(tmp_path, **extra):
    settings = {"QUEUE_URL": f"sqlite:///{tmp_path / 'queue.sqlite3'}", "CORPUS_DIR": str(tmp_path / "corpora"),
                **extra}
    return make_app(tmp_path, **settings)


def _upload(client, text: str = "some words to train on " * 50):
    response = client.post("/api/corpus", data={"files": [(io.BytesIO(text.encode()), "a.txt")], "num_merges": "5"},
                           content_type="multipart/form-data")
    assert response.status_code == 202, response.get_json()
    return response.get_json()


def test_row1_cancelling_a_queued_corpus_job_removes_its_uploads_at_once(tmp_path):
    app = _corpus_app(tmp_path)
    client = app.test_client()
    corpora = tmp_path / "corpora"
    jobs = [_upload(client, f"text number {i} " * 100) for i in range(3)]  # no worker: they stay queued
    assert len(list(corpora.iterdir())) == 3
    for job in jobs:
        response = client.post(f"/api/jobs/{job['job']}/cancel", json={"cancel_token": job.get("cancel_token")})
        assert response.status_code == 200 and response.get_json()["state"] == "cancelled"
    assert list(corpora.iterdir()) == []
    get_storage(app).dispose()


def test_row1_an_expired_queued_corpus_job_fails_and_removes_its_uploads(tmp_path):
    app = _corpus_app(tmp_path, JOB_EXPIRE_SECONDS=1)
    job = _upload(app.test_client())
    time.sleep(1.2)
    with app.app_context():
        assert get_queue(app).upkeep.expired_jobs() == [job["job"]]
        failed = get_queue(app).store.get(job["job"])
    assert failed.state == "failed" and "JOB_EXPIRE_SECONDS" in failed.error
    assert list((tmp_path / "corpora").iterdir()) == []
    get_storage(app).dispose()


# --- row 8: only the submitter can cancel; the result stays shareable ----------------------

def test_row8_a_second_client_with_the_same_input_cannot_cancel_the_first_clients_job(app):
    first, second = app.test_client(), app.test_client()
    body = {"words": ["low", "lower", "newest"] * 200, "num_merges": 5000}
    mine = first.post("/api/train", json=body)
    assert mine.status_code == 202 and mine.get_json()["cancel_token"]
    theirs = second.post("/api/train", json=body)
    assert theirs.status_code == 202 and theirs.get_json()["job"] == mine.get_json()["job"]  # shared work
    assert "cancel_token" not in theirs.get_json()
    job_id = mine.get_json()["job"]
    for attempt in (second.post(f"/api/jobs/{job_id}/cancel"), second.delete(f"/api/jobs/{job_id}"),
                    second.post(f"/api/jobs/{job_id}/cancel", headers={"X-Cancel-Token": "guess"}),
                    second.post(f"/jobs/{job_id}/cancel", data={"cancel_token": "guess"})):
        assert attempt.status_code == 403, attempt.get_data(as_text=True)[:300]
    assert "cancel_token" in second.post(f"/api/jobs/{job_id}/cancel").get_json()["error"]["message"]
    # the second client still follows it, and its panel offers no Cancel
    assert second.get(f"/api/jobs/{job_id}").get_json()["state"] == "queued"
    panel = second.get(f"/jobs/{job_id}/panel?view=train").get_data(as_text=True)
    assert "job-cancel" not in panel and "only it can cancel" in panel
    assert "job-cancel" in first.get(f"/jobs/{job_id}/panel?view=train").get_data(as_text=True)
    # the submitter cancels with the token, from a fresh client too (an API client keeps only the token)
    token = mine.get_json()["cancel_token"]
    response = app.test_client().post(f"/api/jobs/{job_id}/cancel", headers={"X-Cancel-Token": token})
    assert response.status_code == 200 and response.get_json()["state"] == "cancelled"


def test_row8_the_browser_that_started_a_job_cancels_it_from_its_page(app):
    browser = app.test_client()
    html = browser.post("/train", data={"words": "low lower newest " * 300, "num_merges": "3000"}).get_data(as_text=True)
    job_id = html.split('data-job="', 1)[1].split('"', 1)[0]
    assert "job-cancel" in html
    response = browser.post(f"/jobs/{job_id}/cancel?view=train&page=1")
    assert response.status_code == 303
    assert browser.get(f"/api/jobs/{job_id}").get_json()["state"] == "cancelled"


# --- row 9: cross-site form posts are refused; share links use PUBLIC_URL; TRUSTED_HOSTS ------

CROSS_SITE = [{"Origin": "https://evil.example"}, {"Sec-Fetch-Site": "cross-site"}, {"Origin": "null"},
              {"Sec-Fetch-Site": "same-site", "Origin": "http://localhost"}]


@pytest.mark.parametrize("headers", CROSS_SITE)
def test_row9_state_changing_requests_from_another_site_are_refused(app, headers):
    client = app.test_client()
    job = client.post("/api/train", json={"words": ["low", "lower"] * 300, "num_merges": 5000}).get_json()
    posts = [
        ("/share", {"data": {"tool": "bytes", "text": "hi"}}),
        ("/api/share", {"json": {"tool": "bytes", "text": "hi"}}),
        ("/corpus", {"data": {"text": "some words", "num_merges": "5"}}),
        ("/api/corpus", {"json": {"text": "some words", "num_merges": 5}}),
        (f"/jobs/{job['job']}/cancel", {"data": {}}),
        (f"/api/jobs/{job['job']}/cancel", {"json": {}}),
        ("/api/import", {"json": {"content": "{}"}}),
    ]
    for path, body in posts:
        response = client.post(path, headers=headers, **body)
        assert response.status_code == 403, (path, response.status_code)
        assert "another site" in response.get_data(as_text=True)
    assert client.get(f"/api/jobs/{job['job']}").get_json()["state"] == "queued"  # nothing was cancelled
    # the same requests from the playground's own pages, or from a script, pass
    for headers_ok in ({"Origin": "http://localhost", "Sec-Fetch-Site": "same-origin"}, {}):
        assert client.post("/api/share", json={"tool": "bytes", "text": "hi"}, headers=headers_ok).status_code in (200, 201)
    # reading is never refused (a link from another site opens the page)
    assert client.get("/bytes", headers={"Sec-Fetch-Site": "cross-site"}).status_code == 200


def test_row9_share_links_use_public_url_whatever_the_host_header(tmp_path):
    app = make_app(tmp_path, PUBLIC_URL="https://bpe.example.org/")
    made = app.test_client().post("/api/share", json={"tool": "bytes", "text": "hi"},
                                  headers={"Host": "evil.example"})
    assert made.get_json()["url"] == "https://bpe.example.org" + made.get_json()["path"]
    form = app.test_client().post("/share", data={"tool": "bytes", "text": "hi"},
                                  headers={"Host": "evil.example", "HX-Request": "true"})
    assert "evil.example" not in form.get_data(as_text=True) and "https://bpe.example.org/s/" in form.get_data(as_text=True)
    # the origin check allows the public address (a proxy that rewrites Host)
    assert app.test_client().post("/api/share", json={"tool": "bytes", "text": "hi"},
                                  headers={"Origin": "https://bpe.example.org"}).status_code == 200
    get_storage(app).dispose()


def test_row9_trusted_hosts_refuses_other_host_headers(tmp_path, monkeypatch):
    monkeypatch.setenv("PLAYGROUND_TRUSTED_HOSTS", "bpe.example.org, localhost")
    app = make_app(tmp_path)
    assert app.config["TRUSTED_HOSTS"] == ["bpe.example.org", "localhost"]
    client = app.test_client()
    assert client.get("/healthz").status_code == 200
    forged = client.post("/api/share", json={"tool": "bytes", "text": "hi"}, headers={"Host": "evil.example"})
    assert forged.status_code == 400 and b"evil.example/s/" not in forged.data
    assert client.get("/bytes", headers={"Host": "evil.example"}).status_code == 400
    good = client.post("/api/share", json={"tool": "bytes", "text": "hi"}, headers={"Host": "bpe.example.org"})
    assert good.get_json()["url"].startswith("http://bpe.example.org/s/")
    get_storage(app).dispose()


# --- row 11: upload errors name their real cause --------------------------------------------

def _multipart(parts: list[tuple[str, bytes | None, bytes]], boundary: str = "----row11") -> tuple[bytes, str]:
    """A multipart body written by hand: (field name, raw file name or None, content) per part."""
    body = b""
    for name, filename, content in parts:
        disposition = f'Content-Disposition: form-data; name="{name}"'.encode()
        if filename is not None:
            disposition += b'; filename="' + filename + b'"'
        body += f"--{boundary}\r\n".encode() + disposition + b"\r\n\r\n" + content + b"\r\n"
    return body + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def test_row11_a_file_name_that_is_not_utf8_is_named_as_the_problem(tmp_path):
    app = _corpus_app(tmp_path)
    body, content_type = _multipart([("num_merges", None, b"5"), ("files", b"caf\xe9.txt", b"some words")])
    response = app.test_client().post("/api/corpus", data=body, content_type=content_type)
    assert response.status_code == 400
    error = response.get_json()["error"]
    assert error["field"] == "files" and "file name is not UTF-8" in error["message"] and "0xe9" in error["message"]
    page = app.test_client().post("/corpus", data=body, content_type=content_type).get_data(as_text=True)
    assert "file name is not UTF-8" in page and "whole number" not in page
    get_storage(app).dispose()


def test_row11_too_many_files_is_a_count_of_files_not_a_byte_limit(tmp_path):
    app = _corpus_app(tmp_path)
    client = app.test_client()
    files = [(io.BytesIO(b"tiny words"), f"f{i}.txt") for i in range(100)]
    response = client.post("/api/corpus", data={"files": files, "num_merges": "5"}, content_type="multipart/form-data")
    assert response.status_code == 400
    error = response.get_json()["error"]
    assert "100 files is over the limit of 20 files (setting LIMIT_CORPUS_FILES)" in error["message"]
    assert "268,435,456" not in error["message"]
    body, content_type = _multipart([("files", f"f{i}.txt".encode(), b"x") for i in range(1000)])
    response = client.post("/api/corpus", data=body, content_type=content_type)
    assert response.status_code == 400 and "LIMIT_CORPUS_FILES" in response.get_json()["error"]["message"]
    assert "268,435,456" not in response.get_json()["error"]["message"]
    assert not (tmp_path / "corpora").exists() or list((tmp_path / "corpora").iterdir()) == []
    get_storage(app).dispose()


# --- row 5: a rate limit per client on writes, with 429 and Retry-After -----------------------

def test_row5_writes_over_the_limit_are_a_429_with_retry_after_and_store_nothing(tmp_path):
    app = _corpus_app(tmp_path, RATE_LIMIT_WRITES="5/minute")
    client = app.test_client()
    made = [client.post("/api/share", json={"tool": "bytes", "text": f"share {i} " + "x" * 1000}) for i in range(5)]
    assert [r.status_code for r in made] == [201] * 5
    over = client.post("/api/share", json={"tool": "bytes", "text": "one too many"})
    assert over.status_code == 429
    assert 1 <= int(over.headers["Retry-After"]) <= 60
    error = over.get_json()["error"]
    assert error["field"] == "rate" and "RATE_LIMIT_WRITES" in error["message"] and "5 per minute" in error["message"]
    with app.app_context():
        assert len(get_storage(app).list_ids("state")) == 5
    # jobs, uploads and imports draw on the same budget; reading never does
    assert client.post("/api/train", json={"words": ["ab"] * 300, "num_merges": 5000}).status_code == 429
    assert client.post("/api/corpus", json={"text": "some words", "num_merges": 5}).status_code == 429
    assert client.post("/api/import", json={"content": "{}"}).status_code == 429
    page = client.post("/share", data={"tool": "bytes", "text": "form"})
    assert page.status_code == 429 and page.headers["Retry-After"]
    assert client.get(f"/api/share/{made[0].get_json()['id']}").status_code == 200
    assert client.post("/api/encode", json={"text": "ab", "merges": [[97, 98, 256]]}).status_code == 200
    # another client has its own budget
    other = app.test_client()
    answer = other.post("/api/share", json={"tool": "bytes", "text": "hi"}, environ_base={"REMOTE_ADDR": "10.9.8.7"})
    assert answer.status_code == 201
    get_storage(app).dispose()


def test_row5_the_limit_holds_across_gunicorn_workers(gunicorn_factory, tmp_path):
    """50 shares of 1 MB in a burst against 4 workers: 20 stored (the default 20/minute), 30 refused."""
    server = gunicorn_factory(workers=4, extra_env={"PLAYGROUND_RATE_LIMIT_WRITES": "20/minute;300/hour"}).start()
    statuses = []
    for i in range(50):
        status, body = server.post_json("/api/share", {"tool": "bytes", "text": f"{i} " + "y" * 1_000_000})
        statuses.append(status)
    assert statuses.count(201) == 20 and statuses.count(429) == 30, statuses


def test_row5_counts_live_in_redis_when_redis_is_configured(tmp_path):
    import os
    import uuid

    url = os.environ.get("PLAYGROUND_TEST_REDIS_URL")
    if not url:
        pytest.skip("PLAYGROUND_TEST_REDIS_URL is not set: no Redis server for the tests")
    settings = {"QUEUE_URL": url, "QUEUE_NAME": f"t-{uuid.uuid4().hex[:8]}", "RATE_LIMIT_WRITES": "3/minute"}
    first, second = make_app(tmp_path / "a", **settings), make_app(tmp_path / "b", **settings)
    address = {"REMOTE_ADDR": f"10.{uuid.uuid4().int % 250}.1.2"}
    codes = [app.test_client().post("/api/share", json={"tool": "bytes", "text": str(i)}, environ_base=address).status_code
             for i, app in enumerate([first, second, first, second])]
    assert codes == [201, 201, 201, 429]  # two processes, one count
    for app in (first, second):
        get_storage(app).dispose()


# --- row 2: caps on queued and running jobs, and on waiting uploads; a fair order ------------

A, B = {"REMOTE_ADDR": "10.0.0.1"}, {"REMOTE_ADDR": "10.0.0.2"}


def _corpus_post(client, address, text="words to train on " * 20):
    return client.post("/api/corpus", data={"files": [(io.BytesIO(text.encode()), "a.txt")], "num_merges": "5"},
                       content_type="multipart/form-data", environ_base=address)


def test_row2_a_client_over_its_cap_gets_429_before_its_upload_is_stored(tmp_path):
    app = _corpus_app(tmp_path, JOB_CLIENT_LIMIT=3, JOB_QUEUE_LIMIT=5)
    client = app.test_client()
    corpora = tmp_path / "corpora"
    assert [_corpus_post(client, A, f"text {i} " * 30).status_code for i in range(3)] == [202] * 3
    over = _corpus_post(client, A, "one more " * 30)
    assert over.status_code == 429 and over.headers["Retry-After"] == "30"
    error = over.get_json()["error"]
    assert "JOB_CLIENT_LIMIT" in error["message"] and "3 jobs queued or running" in error["message"]
    assert len(list(corpora.iterdir())) == 3  # refused before anything was stored
    # another client still gets in, until everyone's cap
    assert [_corpus_post(client, B, f"b {i} " * 30).status_code for i in range(2)] == [202, 202]
    full = _corpus_post(client, B, "b again " * 30)
    assert full.status_code == 429 and "JOB_QUEUE_LIMIT" in full.get_json()["error"]["message"]
    # jobs of every kind count (a train job here)
    words = {"words": ["ab"] * 300, "num_merges": 5000}
    assert client.post("/api/train", json=words, environ_base=A).status_code == 429
    assert len(list(corpora.iterdir())) == 5
    get_storage(app).dispose()


def test_row2_the_bytes_of_waiting_uploads_are_capped(tmp_path):
    app = _corpus_app(tmp_path, JOB_CLIENT_UPLOAD_BYTES=30_000, JOB_UPLOAD_BYTES=45_000)
    client = app.test_client()
    assert _corpus_post(client, A, "x" * 20_000).status_code == 202
    over = _corpus_post(client, A, "y" * 20_000)
    assert over.status_code == 429 and "JOB_CLIENT_UPLOAD_BYTES" in over.get_json()["error"]["message"]
    assert _corpus_post(client, B, "z" * 15_000).status_code == 202
    over = _corpus_post(client, B, "w" * 12_000)
    assert over.status_code == 429 and "JOB_UPLOAD_BYTES" in over.get_json()["error"]["message"]
    assert len(list((tmp_path / "corpora").iterdir())) == 2
    get_storage(app).dispose()


def test_row2_workers_take_jobs_in_a_fair_order_between_clients(app):
    queue = get_queue(app)
    ids = {}
    for name, address, count in (("a", A, 6), ("b", B, 2)):
        for i in range(count):
            with app.test_request_context("/", environ_base=address):
                ids[f"{name}{i}"] = queue.submit("sleep", {"seconds": 0, "n": f"{name}{i}"}).id
    order = queue.store.fair_order()
    assert order[0] == ids["a0"]  # nothing runs: the oldest first
    queue.store.claim(ids["a0"])  # a0 runs: b's jobs come before a's others
    order = queue.store.fair_order()
    assert order[:1] == [ids["b0"]] and order.index(ids["b1"]) < order.index(ids["a2"])
    queue.store.claim(ids["b0"])  # one each running: the oldest again
    assert queue.store.fair_order()[0] == ids["a1"]
