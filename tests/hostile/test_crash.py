"""A production server SIGKILLed in the middle of share writes loses nothing
it acknowledged (SQLite file and PostgreSQL), and serves it all after restart."""

from __future__ import annotations

import http.client
import json
import threading
import time

import pytest

from webapp.web.share.routes import encode_state, normalize_state
from webapp.infra.storage import Storage, content_id

pytestmark = pytest.mark.alone

WRITERS = 6


def _writer(server, writer: int, acked: list, stop: threading.Event) -> None:
    n = 0
    while not stop.is_set():
        state = {"tool": "bytes", "text": f"writer {writer} state {n} " + "x" * (n % 300), "merges": "[]"}
        n += 1
        try:
            status, body = server.post_json("/api/share", state, timeout=10)
        except (OSError, http.client.HTTPException):
            continue  # never acknowledged: the server died before answering
        if status in (200, 201):
            acked.append((body["id"], state))


def test_sigkill_during_writes_loses_no_acknowledged_share(db_url, gunicorn_factory):
    server = gunicorn_factory(db_url, workers=3).start()
    acked: list = []
    stop = threading.Event()
    threads = [threading.Thread(target=_writer, args=(server, w, acked, stop)) for w in range(WRITERS)]
    for t in threads:
        t.start()
    # Let writes flow, then kill master and workers mid-stream.
    deadline = time.monotonic() + 30
    while len(acked) < 150 and time.monotonic() < deadline:
        time.sleep(0.05)
    server.kill()
    stop.set()
    for t in threads:
        t.join(timeout=30)
    assert len(acked) >= 50, "too few writes were acknowledged before the kill to mean anything"

    # Straight from the database: every acknowledged id holds exactly its state.
    store = Storage(db_url)
    for share_id, state in acked:
        data = encode_state(normalize_state(state, strict=True))
        assert share_id == content_id("state", data)
        assert store.get_blob("state", share_id) == data
    store.dispose()

    # And through a restarted server, as a teammate opening the links would.
    restarted = gunicorn_factory(db_url, workers=2).start()
    for share_id, state in acked[:: max(1, len(acked) // 40)]:
        status, body = restarted.post_json("/api/share", state)
        assert (status, body["id"]) == (200, share_id)  # already there, same link
        status, _h, raw = restarted.request("GET", f"/api/share/{share_id}")
        assert status == 200
        assert json.loads(raw)["state"] == state
    restarted.stop()
