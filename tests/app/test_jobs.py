"""Background jobs end to end: the Flask test client submits, a real worker
process (`python -m webapp.worker` on the same SQLite queue and database) runs
them. Thresholds and budgets are set low so the inputs stay small.

Oracles: the literal algorithms (webapp/tokenizer/reference.py: training and
encoding), and the same request answered inline
by an app with the default thresholds (content-addressed ids must agree).
"""

from __future__ import annotations

import random
import re
import time
from html import unescape

import pytest
from hf_samples import SAMPLE_CORPUS, byte_level_tokenizer
from jobhelpers import JobWorker, wait_job

from tests.conftest import make_app
from webapp.opened import store as tokenizer_store
from webapp.tokenizer.reference import bpe_merges as literal_bpe_merges
from webapp.tokenizer.reference import encode as literal_encode
from webapp.jobs import tokens
from webapp.jobs.queue import get_queue
from webapp.infra.storage import get_storage

pytestmark = pytest.mark.server

LOW = {
    "JOB_TRAIN_MERGES": 5,
    "JOB_TRAIN_CHARS": 200,
    "JOB_ENCODE_CHARS": 100,
    "JOB_IMPORT_BYTES": 1000,
    "JOB_CHARS_TEXT": 100,
    "JOB_CHARS_RULES": 5,
    "JOB_TIME_SECONDS": 20,
    "JOB_MEMORY_MB": 512,
}


def _settings(tmp_path, **extra):
    return {
        "DATABASE_URL": f"sqlite:///{tmp_path / 'jobs.sqlite3'}",
        "QUEUE_URL": f"sqlite:///{tmp_path / 'queue.sqlite3'}",
        **LOW,
        **extra,
    }


@pytest.fixture
def setup(tmp_path):
    """(settings, app, client, start_worker): the worker shares the app's database and queue."""
    settings = _settings(tmp_path)
    app = make_app(tmp_path, **settings)
    started: list[JobWorker] = []

    def start_worker(**extra) -> JobWorker:
        worker = JobWorker({**settings, **extra}, tmp_path / f"worker-{len(started)}.log").start()
        started.append(worker)
        return worker

    yield settings, app, app.test_client(), start_worker
    for worker in started:
        worker.kill()
    get_storage(app).dispose()


def _job(client, url):
    response = client.get(url)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def test_train_answers_202_and_the_job_gives_the_literal_merges(setup):
    _settings_, _app, client, start_worker = setup
    worker = start_worker()
    words = ["low", "lower", "lowest", "newer", "wider", "new"] * 3
    response = client.post("/api/train", json={"words": words, "num_merges": 12})
    assert response.status_code == 202
    accepted = response.get_json()
    assert accepted["url"] == f"/api/jobs/{accepted['job']}" and response.headers["Location"] == accepted["url"]
    assert accepted["state"] in ("queued", "running")
    done = wait_job(lambda: _job(client, accepted["url"]), worker=worker)
    assert done["state"] == "done", done
    assert done["progress"]["fraction"] == 1.0
    assert done["result"]["merges"] == literal_bpe_merges(words, 12)
    full = client.get(done["result_url"])
    assert full.status_code == 200 and full.get_json() == done["result"]


def test_the_same_input_again_gives_the_same_job(setup):
    _settings_, app, client, _start = setup
    body = {"words": ["ab", "abc"] * 3, "num_merges": 7}
    first, again = (client.post("/api/train", json=body).get_json() for _ in range(2))
    assert first["job"] == again["job"]
    other = client.post("/api/train", json={**body, "num_merges": 6}).get_json()
    assert other["job"] != first["job"]
    client.post(f"/api/jobs/{first['job']}/cancel")  # a cancelled job is not reused
    assert client.post("/api/train", json=body).get_json()["job"] != first["job"]


def test_small_requests_stay_inline(setup):
    _settings_, _app, client, _start = setup
    response = client.post("/api/train", json={"words": ["low", "lower"], "num_merges": 2})
    assert response.status_code == 200 and response.get_json()["merges"] == literal_bpe_merges(["low", "lower"], 2)


def test_encode_job_matches_the_literal_encoder_and_the_inline_answer(setup, tmp_path):
    _settings_, _app, client, start_worker = setup
    worker = start_worker()
    rnd = random.Random(7)
    text = "".join(rnd.choice("ab ") for _ in range(300))
    merges = [[97, 98, 256], [256, 32, 257], [98, 97, 258], [257, 256, 259]]
    response = client.post("/api/encode", json={"text": text, "merges": merges})
    assert response.status_code == 202
    url = response.get_json()["url"]
    done = wait_job(lambda: _job(client, url), worker=worker)
    assert done["state"] == "done", done
    result = client.get(done["result_url"]).get_json()
    assert result["ids"] == literal_encode(text, merges)
    inline = make_app(tmp_path / "inline").test_client().post("/api/encode", json={"text": text, "merges": merges})
    assert inline.status_code == 200 and inline.get_json() == result


def test_over_limit_input_is_still_a_400_not_a_job(setup):
    _settings_, app, client, _start = setup
    app.config["LIMIT_NUM_MERGES"] = 10
    response = client.post("/api/train", json={"words": ["ab"] * 5, "num_merges": 11})
    assert response.status_code == 400 and "LIMIT_NUM_MERGES" in response.get_json()["error"]["message"]


def test_import_job_stores_the_same_tokenizer_as_an_inline_import(setup, tmp_path):
    _settings_, _app, client, start_worker = setup
    worker = start_worker()
    content = byte_level_tokenizer(SAMPLE_CORPUS).to_str()
    assert len(content) > LOW["JOB_IMPORT_BYTES"]
    response = client.post("/api/import", json={"content": content})
    assert response.status_code == 202
    done = wait_job(lambda: _job(client, response.get_json()["url"]), worker=worker)
    assert done["state"] == "done", done
    tokenizer_store.LOADED.clear()
    inline = make_app(tmp_path / "inline").test_client().post("/api/import", json={"content": content})
    assert inline.status_code == 200
    assert done["result"]["tokenizer"] == inline.get_json()["tokenizer"]
    assert done["result"]["rules"] == inline.get_json()["rules"]
    # The web side reads it back from the database (not from the job process).
    tokenizer_store.LOADED.clear()
    stored = client.get(f"/api/tokenizers/{done['result']['tokenizer']}?include=summary")
    assert stored.status_code == 200 and stored.get_json()["rules"] == done["result"]["rules"]


def test_import_job_reports_a_bad_file_with_its_field(setup):
    _settings_, _app, client, start_worker = setup
    worker = start_worker()
    response = client.post("/api/import", json={"content": '{"model": {"type": "WordPiece"}}' + " " * 2000})
    assert response.status_code == 202
    done = wait_job(lambda: _job(client, response.get_json()["url"]), worker=worker)
    assert done["state"] == "failed"
    assert done["error"]["message"].split(":")[0] == done["error"]["field"]
    assert "WordPiece" in done["error"]["message"]


#: job id -> the cancel token its submission was given (webapp.jobs.tokens)
TOKENS: dict[str, str] = {}


def _submit(app, kind, params):
    with app.test_request_context("/"):
        job = get_queue(app).submit(kind, params)
        TOKENS[job.id] = tokens.issued(job.id)
        return job.id


def _mine(job_id):
    """The headers that show this test submitted the job (it may cancel it)."""
    return {"X-Cancel-Token": TOKENS[job_id]}


@pytest.mark.alone
def test_cancel_a_running_job_and_a_queued_job(setup):
    _settings_, app, client, start_worker = setup
    running = _submit(app, "sleep", {"seconds": 30, "n": 1})
    worker = start_worker(JOB_WORKERS=1)
    queued = _submit(app, "sleep", {"seconds": 30, "n": 2})  # one worker thread: waits behind the first
    wait_job(lambda: _job(client, f"/api/jobs/{running}"), until=("running",), worker=worker)
    # progress reaches the API while it runs
    deadline = time.monotonic() + 10
    while _job(client, f"/api/jobs/{running}")["progress"]["fraction"] == 0 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert 0 < _job(client, f"/api/jobs/{running}")["progress"]["fraction"] < 1
    response = client.delete(f"/api/jobs/{queued}", headers=_mine(queued))
    assert response.status_code == 200 and response.get_json()["state"] == "cancelled"
    started = time.monotonic()
    response = client.post(f"/api/jobs/{running}/cancel", headers=_mine(running))
    assert response.status_code == 202
    done = wait_job(lambda: _job(client, f"/api/jobs/{running}"), timeout=10, worker=worker)
    assert done["state"] == "cancelled" and time.monotonic() - started < 5
    assert client.get(f"/api/jobs/{running}/result").status_code == 409
    shown = client.get(f"/jobs/{running}/panel?view=sleep").get_data(as_text=True)
    assert "job: cancelled" in shown and "hx-trigger" not in shown and "job-cancel" not in shown
    # The page's Cancel button (a queued job here) answers with the panel, cancelled.
    third = _submit(app, "sleep", {"seconds": 30, "n": 3})
    shown = client.post(f"/jobs/{third}/cancel?view=sleep", data={"cancel_token": TOKENS[third]}).get_data(as_text=True)
    assert 'data-job-state="cancelled"' in shown
    assert client.get("/api/jobs/aaaaaaaaaaaaaaaa").status_code == 404


def test_time_budget_stops_a_job_with_a_message_naming_it(setup):
    _settings_, app, client, start_worker = setup
    worker = start_worker(JOB_TIME_SECONDS=1)
    job_id = _submit(app, "sleep", {"seconds": 30})
    done = wait_job(lambda: _job(client, f"/api/jobs/{job_id}"), timeout=20, worker=worker)
    assert done["state"] == "failed"
    assert "time budget of 1 s" in done["error"]["message"] and "JOB_TIME_SECONDS" in done["error"]["message"]


def test_memory_budget_stops_a_job_with_a_message_naming_it(setup):
    _settings_, app, client, start_worker = setup
    worker = start_worker(JOB_MEMORY_MB=64)
    job_id = _submit(app, "sleep", {"allocate_mb": 512})
    done = wait_job(lambda: _job(client, f"/api/jobs/{job_id}"), timeout=30, worker=worker)
    assert done["state"] == "failed"
    assert "memory budget of 64 MiB" in done["error"]["message"] and "JOB_MEMORY_MB" in done["error"]["message"]
    # Within the budget the same job succeeds (the budget, not the job, failed it).
    ok = _submit(app, "sleep", {"allocate_mb": 16})
    assert wait_job(lambda: _job(client, f"/api/jobs/{ok}"), timeout=30, worker=worker)["state"] == "done"


@pytest.mark.alone
def test_jobs_survive_a_web_restart_and_a_killed_worker(setup, tmp_path):
    settings, app, client, start_worker = setup
    # Queued while no worker runs, then the web app goes away.
    words = ["hug", "pug", "pun", "bun", "hugs"] * 4
    job_url = client.post("/api/train", json={"words": words, "num_merges": 8}).get_json()["url"]
    slow = _submit(app, "sleep", {"seconds": 4})
    get_storage(app).dispose()
    del app, client
    # A worker takes the jobs and is SIGKILLed in the middle of the slow one.
    first = start_worker(JOB_WORKERS=1)
    fresh = make_app(tmp_path, **settings).test_client()  # the "restarted" web server
    wait_job(lambda: _job(fresh, f"/api/jobs/{slow}"), until=("running",), worker=first)
    first.kill()
    assert _job(fresh, f"/api/jobs/{slow}")["state"] == "running"
    time.sleep(1.2)
    # The next worker start puts the orphaned job back on the queue and runs both.
    second = start_worker(JOB_STALE_SECONDS=1)
    done = wait_job(lambda: _job(fresh, job_url), worker=second)
    assert done["state"] == "done" and done["result"]["merges"] == literal_bpe_merges(words, 8)
    assert wait_job(lambda: _job(fresh, f"/api/jobs/{slow}"), timeout=30, worker=second)["state"] == "done"


def _merge_list(html: str) -> list[str]:
    """The learned merges a page lists, in its order (each row's token chip), or [] without a list."""
    found = re.search(r'<ol class="merge-list" id="merge-list"[^>]*>(.*?)</ol>', html, re.S)
    if found is None:
        return []
    return [unescape(chip) for chip in re.findall(r'<span class="chip [^"]*"[^>]*>(.*?)</span>', found.group(1))]

def test_train_page_shows_a_job_panel_then_the_result(setup):
    _settings_, _app, client, start_worker = setup
    worker = start_worker()
    words = "low lower lowest newer wider new " * 3
    page = client.post("/fragments/train", data={"words": words, "num_merges": "9"}, headers={"HX-Request": "true"})
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and 'class="job-panel"' in html and "job-cancel" in html
    job_id = html.split('data-job="', 1)[1].split('"', 1)[0]
    assert f'hx-get="/jobs/{job_id}/panel?view=train"' in html and 'hx-trigger="every 500ms"' in html
    wait_job(lambda: _job(client, f"/api/jobs/{job_id}"), worker=worker)
    panel = client.get(f"/jobs/{job_id}/panel?view=train").get_data(as_text=True)
    assert "job-panel" not in panel
    assert _merge_list(panel) == literal_bpe_merges(words.split(), 9)


REDIS_ENV = "PLAYGROUND_TEST_REDIS_URL"


def test_the_same_jobs_run_on_a_redis_queue(tmp_path):
    """RedisHuey instead of the SQLite file: a real redis-server on loopback
    (`make test` starts one with scripts/ensure-redis.sh)."""
    import os
    import uuid

    url = os.environ.get(REDIS_ENV)
    if not url:
        pytest.skip(f"{REDIS_ENV} is not set: no Redis server for the tests "
                    "(`make test` starts one with scripts/ensure-redis.sh when redis-server is installable)")
    settings = _settings(tmp_path, QUEUE_URL=url, QUEUE_NAME=f"test-{uuid.uuid4().hex[:10]}")
    app = make_app(tmp_path, **settings)
    client = app.test_client()
    assert type(get_queue(app).huey).__name__ == "RedisHuey"
    worker = JobWorker(settings, tmp_path / "redis-worker.log").start()
    try:
        words = ["low", "lower", "lowest", "newer", "wider"] * 2
        response = client.post("/api/train", json={"words": words, "num_merges": 10})
        assert response.status_code == 202
        done = wait_job(lambda: _job(client, response.get_json()["url"]), worker=worker)
        assert done["state"] == "done" and done["result"]["merges"] == literal_bpe_merges(words, 10)
        cancel_me = _submit(app, "sleep", {"seconds": 30})
        wait_job(lambda: _job(client, f"/api/jobs/{cancel_me}"), until=("running",), worker=worker)
        client.post(f"/api/jobs/{cancel_me}/cancel", headers=_mine(cancel_me))
        assert wait_job(lambda: _job(client, f"/api/jobs/{cancel_me}"), timeout=10)["state"] == "cancelled"
    finally:
        worker.kill()
        get_storage(app).dispose()


def test_open_file_page_shows_a_job_panel_then_the_opened_tokenizer(setup):
    _settings_, _app, client, start_worker = setup
    worker = start_worker()
    content = byte_level_tokenizer(SAMPLE_CORPUS).to_str()
    response = client.post("/files/open/bytes", data={"text": "hello", "tokenizer_paste": content},
                           headers={"HX-Request": "true"})
    html = response.get_data(as_text=True)
    assert response.status_code == 200 and 'class="job-panel"' in html
    assert 'hx-target="#open-tokenizer-status"' in html
    job_id = html.split('data-job="', 1)[1].split('"', 1)[0]
    done = wait_job(lambda: _job(client, f"/api/jobs/{job_id}"), worker=worker)
    assert done["state"] == "done", done
    status = client.get(f"/jobs/{job_id}/panel?view=open-bytes").get_data(as_text=True)
    assert f'data-tokenizer-id="{done["result"]["tokenizer"]}"' in status and "data-refresh" in status
    assert "job-panel" not in status
    # The same job opened on the Characters page says where it belongs.
    wrong = client.get(f"/jobs/{job_id}/panel?view=open-chars").get_data(as_text=True)
    assert "byte-level tokenizer; open it on the Bytes page" in wrong


def test_bytes_page_with_a_long_text_renders_in_a_job_exactly_as_inline(setup, tmp_path):
    _settings_, _app, client, start_worker = setup
    worker = start_worker()
    rnd = random.Random(3)
    state = {"text": "".join(rnd.choice("abc \n") for _ in range(400)), "merges": "97 98 256\n256 99 257\n32 97 258",
             "pretokenize": "gpt2", "ids": "256 257", "vocab": "", "view": "tokens"}
    headers = {"HX-Request": "true"}
    page = client.post("/fragments/bytes", data=state, headers=headers).get_data(as_text=True)
    assert 'class="job-panel"' in page and 'hx-target="#results"' in page
    assert 'id="decode-result"' in page  # the decode panel still answers at once
    job_id = page.split('data-job="', 1)[1].split('"', 1)[0]
    assert wait_job(lambda: _job(client, f"/api/jobs/{job_id}"), worker=worker)["state"] == "done"
    from_job = client.get(f"/jobs/{job_id}/panel?view=page-bytes").get_data(as_text=True)
    inline = make_app(tmp_path / "inline").test_client().post("/fragments/bytes", data=state, headers=headers)
    assert inline.status_code == 200 and "job-panel" not in from_job
    assert from_job == inline.get_data(as_text=True)
    assert from_job.count("data-token-id=") > 50  # the tokens themselves, not an empty card


def test_a_page_job_the_queue_refuses_shows_a_notice_not_a_silent_429(tmp_path):
    # One job per client: typing on into a long text would otherwise get 429s, which htmx
    # does not swap, so the page would stop updating without a word.
    app = make_app(tmp_path, **_settings(tmp_path, JOB_CLIENT_LIMIT=1))
    client = app.test_client()
    headers = {"HX-Request": "true"}
    first = client.post("/fragments/bytes", data={"text": "a" * 150, "merges": "97 97 256"}, headers=headers)
    assert first.status_code == 200 and 'class="job-panel"' in first.get_data(as_text=True)
    second = client.post("/fragments/bytes", data={"text": "a" * 151, "merges": "97 97 256"}, headers=headers)
    page = second.get_data(as_text=True)
    assert second.status_code == 200
    assert 'role="alert"' in page and "JOB_CLIENT_LIMIT" in page and "job-panel" not in page
    get_storage(app).dispose()


# --- issue 8 follow-up: the job page without JavaScript, and the time left ----


def test_eta_is_elapsed_over_fraction_and_reads_back_from_the_text():
    from webapp.jobs.store import eta_seconds, split_eta, with_eta

    # a quarter done in 3 s: 9 s more at the same pace
    assert eta_seconds(3.0, 0.25) == 9
    assert eta_seconds(10.0, 0.5) == 10
    # too little to go on, or nothing left to estimate
    assert eta_seconds(0.2, 0.5) is None and eta_seconds(5.0, 0.0) is None and eta_seconds(5.0, 1.0) is None
    shown = with_eta("120 of 400 merges done", eta_seconds(3.0, 0.25))
    assert shown.startswith("120 of 400 merges done") and split_eta(shown) == ("120 of 400 merges done", 9)
    assert split_eta(with_eta(shown, 4)) == ("120 of 400 merges done", 4)  # replaced, not stacked
    assert split_eta("counting pairs in 1,000 words") == ("counting pairs in 1,000 words", None)


def test_a_running_job_reports_the_time_left_in_the_api_and_the_panel(setup):
    _settings_, app, client, start_worker = setup
    job_id = _submit(app, "sleep", {"seconds": 8, "eta": 1})
    worker = start_worker(JOB_WORKERS=1)
    deadline = time.monotonic() + 20
    job = _job(client, f"/api/jobs/{job_id}")
    while job["eta_seconds"] is None and time.monotonic() < deadline:
        assert job["state"] in ("queued", "running"), job
        time.sleep(0.2)
        job = _job(client, f"/api/jobs/{job_id}")
    assert job["state"] == "running" and job["eta_seconds"] is not None, worker.log()
    # the sleep job advances evenly over 8 s, so the estimate is the remaining time, give or take
    fraction = job["progress"]["fraction"]
    assert 0 < fraction < 1 and job["progress"]["eta_seconds"] == job["eta_seconds"]
    assert abs(job["eta_seconds"] - 8 * (1 - fraction)) <= 2.5, job
    panel = client.get(f"/jobs/{job_id}/panel?view=sleep").get_data(as_text=True)
    assert " s left" in panel and "about " in panel
    done = wait_job(lambda: _job(client, f"/api/jobs/{job_id}"), timeout=30, worker=worker)
    assert done["state"] == "done" and done["eta_seconds"] is None


def test_the_job_page_reloads_while_running_and_cancels_without_javascript(setup):
    _settings_, app, client, start_worker = setup
    job_id = _submit(app, "sleep", {"seconds": 30, "page": 1})
    with client.session_transaction() as session:  # this browser started it: its session has the token
        session[tokens.SESSION_KEY] = {job_id: TOKENS[job_id]}
    page = client.get(f"/jobs/{job_id}?view=sleep")
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and '<meta http-equiv="refresh" content="1">' in html
    assert "hx-get" not in html and "hx-post" not in html  # nothing polls: the page reloads itself
    assert page.headers["Content-Security-Policy"].startswith("default-src 'self'")
    action = f'action="/jobs/{job_id}/cancel?view=sleep&amp;page=1"'
    assert action in html and 'method="post"' in html
    # the page's panel (JavaScript on) links to the job page for when JavaScript is off
    fragment = client.get(f"/jobs/{job_id}/panel?view=sleep").get_data(as_text=True)
    assert f'href="/jobs/{job_id}?view=sleep"' in fragment and "hx-post" in fragment and action in fragment
    # The plain form post cancels and goes on to the job page (303), which stops reloading.
    response = client.post(f"/jobs/{job_id}/cancel?view=sleep&page=1")
    assert response.status_code == 303 and response.headers["Location"] == f"/jobs/{job_id}?view=sleep"
    html = client.get(response.headers["Location"]).get_data(as_text=True)
    assert 'http-equiv="refresh"' not in html and "job: cancelled" in html
    assert client.get("/jobs/aaaaaaaaaaaaaaaa?view=sleep").status_code == 404


def test_the_job_page_shows_the_result_or_the_budget_error_when_done(setup):
    _settings_, _app, client, start_worker = setup
    worker = start_worker(JOB_TIME_SECONDS=2)
    words = "low lower lowest newer wider new " * 3
    html = client.post("/train", data={"words": words, "num_merges": "9"}).get_data(as_text=True)
    job_id = html.split('data-job="', 1)[1].split('"', 1)[0]
    assert f'href="/jobs/{job_id}?view=train"' in html  # the no-JS page links on
    wait_job(lambda: _job(client, f"/api/jobs/{job_id}"), worker=worker)
    done = client.get(f"/jobs/{job_id}?view=train").get_data(as_text=True)
    assert 'http-equiv="refresh"' not in done
    assert _merge_list(done) == literal_bpe_merges(words.split(), 9)
    with _app.app_context():
        slow = get_queue(_app).submit("sleep", {"seconds": 30, "budget": 1}).id
    failed = wait_job(lambda: _job(client, f"/api/jobs/{slow}"), timeout=30, worker=worker)
    assert failed["state"] == "failed"
    html = client.get(f"/jobs/{slow}").get_data(as_text=True)
    assert "time budget of 2 s" in html and "JOB_TIME_SECONDS" in html and 'http-equiv="refresh"' not in html


# --- the Characters page and /api/encode-text as jobs ---------------------------


def _char_case(seed: int = 5):
    rnd = random.Random(seed)
    text = "".join(rnd.choice("abc \n") for _ in range(400))
    merges = [["a", "b"], ["ab", "c"], ["c", "a"], [" ", "a"], ["ab", "ab"], ["ca", "b"]]
    vocab = {ch: i for i, ch in enumerate("abc \n")}
    for left, right in merges:
        vocab.setdefault(left + right, len(vocab))
    return text, merges, vocab


def test_encode_text_job_matches_the_literal_encoder_and_the_inline_answer(setup, tmp_path):
    from webapp.tokenizer.reference import bpe_encode_text as literal_encode_text
    from webapp.tokenizer.reference import char_tokens as literal_char_tokens

    _settings_, _app, client, start_worker = setup
    worker = start_worker()
    text, merges, vocab = _char_case()
    body = {"text": text, "merges": merges, "vocab": vocab}
    response = client.post("/api/encode-text", json=body)
    assert response.status_code == 202, response.get_json()
    done = wait_job(lambda: _job(client, response.get_json()["url"]), worker=worker)
    assert done["state"] == "done" and done["kind"] == "encode-text", done
    rules = [tuple(m) for m in merges]
    assert done["result"]["ids"] == literal_encode_text(text, vocab, rules)
    assert done["result"]["tokens"] == literal_char_tokens(text, rules)
    inline = make_app(tmp_path / "inline").test_client().post("/api/encode-text", json=body)
    assert inline.status_code == 200 and inline.get_json() == done["result"]
    # short text but many rules, or a big vocab: a job too; an input over a limit stays a 400
    assert client.post("/api/encode-text", json={**body, "text": "abc"}).status_code == 202
    over = client.post("/api/encode-text", json={**body, "text": "a" * 1_000_001})
    assert over.status_code == 400 and "LIMIT_TEXT_CHARS" in over.get_json()["error"]["message"]
    small = client.post("/api/encode-text", json={"text": "abc", "merges": [["a", "b"]], "vocab": {"a": 0, "b": 1, "c": 2, "ab": 3}})
    assert small.status_code == 200 and small.get_json()["ids"] == [3, 2]


def test_chars_page_with_a_long_text_renders_in_a_job_exactly_as_inline(setup, tmp_path):
    _settings_, _app, client, start_worker = setup
    worker = start_worker()
    text = _char_case(7)[0]
    # typed rules and vocab; spaces and newlines are left out of the vocab, so
    # the result is the page's "missing tokens" view, also rendered by the job
    state = {"text": text, "merges": "a b\nab c\nc a", "view": "tokens",
             "vocab": "\n".join(f"{t} {i}" for i, t in enumerate(["a", "b", "c", "ab", "abc", "ca"]))}
    headers = {"HX-Request": "true"}
    page = client.post("/fragments/chars", data=state, headers=headers).get_data(as_text=True)
    assert 'class="job-panel"' in page and 'hx-target="#results"' in page
    job_id = page.split('data-job="', 1)[1].split('"', 1)[0]
    assert f'hx-get="/jobs/{job_id}/panel?view=page-chars"' in page
    assert wait_job(lambda: _job(client, f"/api/jobs/{job_id}"), worker=worker)["state"] == "done"
    from_job = client.get(f"/jobs/{job_id}/panel?view=page-chars").get_data(as_text=True)
    inline = make_app(tmp_path / "inline").test_client().post("/fragments/chars", data=state, headers=headers)
    assert inline.status_code == 200 and "job-panel" not in from_job
    assert from_job == inline.get_data(as_text=True)
    assert from_job.count("data-token-id=") + from_job.count("token-missing") > 50  # tokens, not an empty card


@pytest.mark.parametrize("tool", ["bytes", "chars"])
def test_ids_download_of_a_long_text_is_a_job_whose_file_equals_the_inline_one(setup, tmp_path, tool):
    """Over the page's thresholds the download redirects to the job page, which
    offers the file once done; the file equals what the inline download gives."""
    _settings_, _app, client, start_worker = setup
    worker = start_worker()
    rnd = random.Random(11)
    text = "".join(rnd.choice("abc \n") for _ in range(400))
    if tool == "bytes":
        state = {"text": text, "merges": "97 98 256\n256 99 257\n32 97 258", "pretokenize": "gpt2"}
    else:
        state = {"text": text, "merges": "a b\nab c"}
        state["vocab"] = '{"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4, " ": 5, "\\n": 6}'
    response = client.post(f"/{tool}/ids.txt", data=state)
    assert response.status_code == 303
    location = response.headers["Location"]
    assert location.startswith("/jobs/") and f"view=ids-{tool}" in location
    job_id = location.split("/jobs/", 1)[1].split("?", 1)[0]
    assert client.get(f"/jobs/{job_id}/ids.txt").status_code in (409, 200)
    assert wait_job(lambda: _job(client, f"/api/jobs/{job_id}"), worker=worker)["state"] == "done"
    page = client.get(location).get_data(as_text=True)
    assert f'href="/jobs/{job_id}/ids.txt"' in page and "Download ids" in page
    from_job = client.get(f"/jobs/{job_id}/ids.txt")
    inline = make_app(tmp_path / "inline").test_client().post(f"/{tool}/ids.txt", data=state)
    assert inline.status_code == 200 and from_job.status_code == 200
    assert from_job.get_data(as_text=True) == inline.get_data(as_text=True)
    assert len(from_job.get_data(as_text=True).split()) > 100  # the ids themselves
    assert from_job.headers["Content-Disposition"] == f'attachment; filename="{tool}-ids.txt"'


def test_corpus_training_progress_carries_one_estimate(monkeypatch):
    """Issue #20, item 3: one estimate in the text, the one eta_seconds reads back."""
    from webapp.jobs.store import split_eta, with_eta
    from webapp.web.corpus import kinds

    clock = iter([100.0, 110.0, 110.0])
    monkeypatch.setattr(kinds.time, "monotonic", lambda: next(clock))
    seen: list[tuple[float, str]] = []
    kinds._phase(lambda f, t: seen.append((f, t)), 0.4, 0.57, estimate=True)(100, 1000, "merge 100 of 1,000")
    (_, text), = seen
    assert text.count("s left") == 1 and split_eta(text) == ("merge 100 of 1,000", 90)
    # the worker appends its own estimate only when the text carries none
    assert with_eta(text, 3).count("s left") == 1
    seen.clear()
    kinds._phase(lambda f, t: seen.append((f, t)), 0.0, 0.4, estimate=False)(5, 10, "counting")
    assert seen == [(0.2, "counting")]
