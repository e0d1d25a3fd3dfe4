"""Many clients sharing at once through several gunicorn workers: every state
is stored once, every client gets the same link for the same state, exactly
one of them is told it was new (201), and nothing is lost."""

from __future__ import annotations

import threading
from collections import Counter

from webapp.infra.storage import Storage

CLIENTS = 8
STATES = 120


def _state(i: int) -> dict[str, str]:
    return {"tool": "chars", "text": f"shared state {i}", "merges": "s h\nsh a", "vocab": '{"s": 0}'}


def test_concurrent_share_writes_through_several_workers(db_url, gunicorn_factory):
    server = gunicorn_factory(db_url, workers=4).start()
    answers: list[tuple[int, int, str]] = []
    lock = threading.Lock()
    barrier = threading.Barrier(CLIENTS)

    def client(c: int) -> None:
        order = list(range(STATES)) if c % 2 else list(reversed(range(STATES)))
        barrier.wait()
        for i in order:
            status, body = server.post_json("/api/share", _state(i), timeout=60)
            with lock:
                answers.append((i, status, body["id"]))

    threads = [threading.Thread(target=client, args=(c,)) for c in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)

    assert len(answers) == CLIENTS * STATES
    ids_per_state: dict[int, set[str]] = {}
    created = Counter()
    for i, status, share_id in answers:
        assert status in (200, 201)
        ids_per_state.setdefault(i, set()).add(share_id)
        created[i] += status == 201
    assert all(len(ids) == 1 for ids in ids_per_state.values())  # one link per state
    assert set(created.values()) == {1}  # exactly one client created each
    store = Storage(db_url)
    stored = store.list_ids("state")
    assert sorted(stored) == sorted(next(iter(ids)) for ids in ids_per_state.values())
    store.dispose()
