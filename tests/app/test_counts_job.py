"""Issue 28, row 6: big counts go to a job, as long texts do on the Bytes page.

Characters x tokenizers over JOB_COUNTS_WORK (set low here) makes
`POST /api/counts` answer 202 with the job and the Counts page show the job
panel; below it, the inline answers are unchanged. A real worker process
(`python -m webapp.worker` on the same database and queue) runs the jobs.

Oracle: the same text and tokenizers counted inline by an app with the
default threshold; the job's result must be byte-equal to that answer, and
its table on the page equal to the inline page's table.
"""

from __future__ import annotations

import json
import random

import pytest
from jobhelpers import JobWorker, wait_job

from tests.conftest import make_app
from webapp.infra.storage import get_storage

pytestmark = pytest.mark.server

TWO = ["r50k_base", "cl100k_base"]
WORK = 1_000  # characters x tokenizers a request may count inline here


def _settings(tmp_path, **extra):
    return {"DATABASE_URL": f"sqlite:///{tmp_path / 'jobs.sqlite3'}",
            "QUEUE_URL": f"sqlite:///{tmp_path / 'queue.sqlite3'}",
            "JOB_COUNTS_WORK": WORK, "JOB_TIME_SECONDS": 60, "RATE_LIMIT_WORK": "", **extra}


@pytest.fixture
def setup(tmp_path):
    settings = _settings(tmp_path)
    app = make_app(tmp_path, **settings)
    started: list[JobWorker] = []

    def start_worker(**extra) -> JobWorker:
        worker = JobWorker({**settings, **extra}, tmp_path / f"worker-{len(started)}.log").start()
        started.append(worker)
        return worker

    yield app, app.test_client(), start_worker
    for worker in started:
        worker.kill()
    get_storage(app).dispose()


def _text(n: int, seed: int = 5) -> str:
    rnd = random.Random(seed)
    words = ["the", "tokenizer", "counts", "Straße", "日本語", "  ", "\n", "def", "x=1;", "ünïcödé", "42"]
    out = ""
    while len(out) < n:
        out += rnd.choice(words) + rnd.choice(" .,")
    return out[:n]


def _job(client, url):
    response = client.get(url)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def test_over_the_threshold_the_api_answers_202_and_the_job_equals_the_inline_answer(setup, tmp_path):
    _app, client, start_worker = setup
    worker = start_worker()
    text = _text(600)  # 1,200 over two tokenizers
    body = {"text": text, "tokenizers": TWO + ["no_such_preset"]}
    response = client.post("/api/counts", json=body)
    assert response.status_code == 202, response.get_json()
    accepted = response.get_json()
    assert accepted["kind"] == "counts" and accepted["url"] == f"/api/jobs/{accepted['job']}"
    assert response.headers["Location"] == accepted["url"] and accepted["cancel_token"]
    done = wait_job(lambda: _job(client, accepted["url"]), worker=worker)
    assert done["state"] == "done", done
    from_job = client.get(done["result_url"])
    inline = make_app(tmp_path / "inline", RATE_LIMIT_WORK="").test_client().post("/api/counts", json=body)
    assert inline.status_code == 200
    assert json.loads(from_job.get_data()) == inline.get_json()
    # byte-equal counts: the same canonical JSON (an int stays an int, a ratio the same float)
    canonical = [json.dumps(json.loads(r.get_data()), sort_keys=True) for r in (from_job, inline)]
    assert canonical[0] == canonical[1]
    assert [row["tokens"] for row in inline.get_json()["counts"][:2]] == [
        row["tokens"] for row in done["result"]["counts"][:2]]
    assert done["result"]["counts"][2]["error"]  # an unknown name is a row with its reason, both ways


def test_with_tools_the_job_counts_their_cost_as_the_inline_answer(setup, tmp_path):
    from tests.unit.tokenizer.chat.test_chat_tools import TOOLS
    from webapp.tokenizer import is_installed
    if not is_installed("qwen3"):
        pytest.skip("the qwen3 preset is not prepared here")
    _app, client, start_worker = setup
    worker = start_worker()
    # 100 x 2 tokenizers is inline without tools; qwen3 renders the text and the tools twice: a job
    body = json.dumps({"text": _text(100), "tokenizers": ["cl100k_base", "qwen3"], "tools": TOOLS})
    response = client.post("/api/counts", data=body, content_type="application/json")  # (raw: keys in order)
    assert response.status_code == 202, response.get_json()
    done = wait_job(lambda: _job(client, response.get_json()["url"]), worker=worker)
    assert done["state"] == "done", done
    inline = make_app(tmp_path / "inline", RATE_LIMIT_WORK="").test_client().post(
        "/api/counts", data=body, content_type="application/json")
    assert inline.status_code == 200
    assert json.loads(client.get(done["result_url"]).get_data()) == inline.get_json()
    assert inline.get_json()["counts"][0]["tools_note"] == "no chat template"
    assert inline.get_json()["counts"][1]["tools_tokens"] > 300


def test_at_or_under_the_threshold_the_answer_is_inline_and_unchanged(setup):
    _app, client, _start = setup
    response = client.post("/api/counts", json={"text": "a" * 500, "tokenizers": TWO})  # exactly 1,000
    assert response.status_code == 200
    answer = response.get_json()
    assert answer["chars"] == 500 and [r["tokenizer"] for r in answer["counts"]] == TWO
    assert all(isinstance(r["tokens"], int) and r["tokens"] > 0 for r in answer["counts"])


def test_bad_input_over_the_threshold_is_still_a_400_naming_the_field(setup):
    app, client, _start = setup
    app.config["LIMIT_TEXT_CHARS"] = 2_000
    too_long = client.post("/api/counts", json={"text": "a" * 2_001, "tokenizers": TWO})
    assert too_long.status_code == 400 and too_long.get_json()["error"]["field"] == "text"
    assert "LIMIT_TEXT_CHARS" in too_long.get_json()["error"]["message"]
    not_a_list = client.post("/api/counts", json={"text": "a" * 1_500, "tokenizers": "cl100k_base"})
    assert not_a_list.status_code == 400 and not_a_list.get_json()["error"]["field"] == "tokenizers"
    too_many = client.post("/api/counts", json={"text": "a" * 1_500, "tokenizers": [f"t{i}" for i in range(33)]})
    assert too_many.status_code == 400 and too_many.get_json()["error"]["field"] == "tokenizers"
    not_text = client.post("/api/counts", json={"text": ["a" * 1_500], "tokenizers": TWO})
    assert not_text.status_code == 400 and not_text.get_json()["error"]["field"] == "text"
    # nothing was queued for any of them
    from webapp.jobs.queue import get_queue
    assert get_queue(app).store.live("counts") == []


def test_the_work_is_charged_before_the_job_is_queued(tmp_path):
    app = make_app(tmp_path, **_settings(tmp_path, RATE_LIMIT_WORK="3000/minute"))
    client = app.test_client()
    first = client.post("/api/counts", json={"text": "b" * 1_400, "tokenizers": TWO})  # 2,800: a job
    assert first.status_code == 202
    second = client.post("/api/counts", json={"text": "c" * 1_400, "tokenizers": TWO})  # +2,800 > 3,000
    assert second.status_code == 429 and "RATE_LIMIT_WORK" in second.get_json()["error"]["message"]
    assert int(second.headers["Retry-After"]) >= 1
    from webapp.jobs.queue import get_queue
    assert [job.id for job in get_queue(app).store.live("counts")] == [first.get_json()["job"]]  # none queued for it
    get_storage(app).dispose()


def test_a_counts_job_can_be_cancelled_queued_or_running(setup):
    app, client, start_worker = setup
    response = client.post("/api/counts", json={"text": _text(900), "tokenizers": TWO})  # no worker yet: queued
    assert response.status_code == 202
    accepted = response.get_json()
    stranger = app.test_client()  # another browser: no session, no token
    assert stranger.post(f"{accepted['url']}/cancel").status_code == 403
    cancelled = stranger.post(f"{accepted['url']}/cancel", headers={"X-Cancel-Token": accepted["cancel_token"]})
    assert cancelled.status_code == 200 and cancelled.get_json()["state"] == "cancelled"
    assert client.get(f"{accepted['url']}/result").status_code == 409
    # running: every preset over a long text (seconds of work), cancelled while it runs
    worker = start_worker()
    running = client.post("/api/counts", json={"text": _text(300_000, seed=9)}).get_json()
    wait_job(lambda: _job(client, running["url"]), until=("running",), worker=worker)
    assert client.post(f"{running['url']}/cancel", headers={"X-Cancel-Token": running["cancel_token"]}).status_code == 202
    done = wait_job(lambda: _job(client, running["url"]), timeout=10, worker=worker)
    assert done["state"] == "cancelled", done


def test_the_counts_page_shows_the_job_panel_then_the_inline_table(setup, tmp_path):
    _app, client, start_worker = setup
    worker = start_worker()
    text = _text(300)  # 300 x 13 presets: a job
    headers = {"HX-Request": "true"}
    fragment = client.post("/fragments/counts", data={"text": text, "sort": "-tokens"}, headers=headers)
    page = fragment.get_data(as_text=True)
    assert fragment.status_code == 200 and 'class="job-panel"' in page and 'hx-target="#results"' in page
    assert "counts-table" not in page
    job_id = page.split('data-job="', 1)[1].split('"', 1)[0]
    assert wait_job(lambda: _job(client, f"/api/jobs/{job_id}"), worker=worker)["state"] == "done"
    # the panel's poll, from the page whose URL says sort=-tokens
    shown = client.get(f"/jobs/{job_id}/panel?view=counts",
                       headers={**headers, "HX-Current-URL": "http://localhost/counts?sort=-tokens"})
    inline = make_app(tmp_path / "inline", RATE_LIMIT_WORK="").test_client().post(
        "/fragments/counts", data={"text": text, "sort": "-tokens"}, headers=headers)
    assert inline.status_code == 200 and "job-panel" not in shown.get_data(as_text=True)
    assert shown.get_data(as_text=True) == inline.get_data(as_text=True)
    assert shown.get_data(as_text=True).count("data-tokenizer=") == 13
    # a sort click re-sends the text: the same job, done, shown at once in the new order
    again = client.post("/fragments/counts", data={"text": text, "sort_by": "name"}, headers=headers)
    again_inline = make_app(tmp_path / "inline2", RATE_LIMIT_WORK="").test_client().post(
        "/fragments/counts", data={"text": text, "sort_by": "name"}, headers=headers)
    assert again.get_data(as_text=True) == again_inline.get_data(as_text=True)
    # the full page (no JavaScript) keeps the text in its field and shows the panel's link to the job page
    full = client.post("/counts", data={"text": text + "!"}).get_data(as_text=True)
    assert 'class="job-panel"' in full and "/jobs/" in full and (text + "!") in full.replace("&#39;", "'")


def test_a_refused_count_says_why_in_the_live_update(tmp_path):
    # htmx swaps only the results section: a 429 there must say so, and the text stays in the form
    app = make_app(tmp_path, **_settings(tmp_path, RATE_LIMIT_WORK="3000/minute"))
    client = app.test_client()
    headers = {"HX-Request": "true"}
    first = client.post("/fragments/counts", data={"text": "d" * 200}, headers=headers)  # 2,600: a job
    assert first.status_code == 200 and 'class="job-panel"' in first.get_data(as_text=True)
    second = client.post("/fragments/counts", data={"text": "e" * 200}, headers=headers)
    page = second.get_data(as_text=True)
    assert second.status_code == 200 and 'id="counts-error"' in page and "RATE_LIMIT_WORK" in page
    full = client.post("/counts", data={"text": "f" * 200}).get_data(as_text=True)
    assert "f" * 200 in full and "RATE_LIMIT_WORK" in full and 'id="counts-error"' not in full
    get_storage(app).dispose()
