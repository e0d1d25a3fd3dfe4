"""Issue 17: safe to leave running when one client misbehaves.

Each test is one row of the issue's table (the row number is in its name),
run against the Flask test client unless the row is about processes
(tests/hostile/test_clients_processes.py has those).
"""

from __future__ import annotations

import html as htmllib

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
