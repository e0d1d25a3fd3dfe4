"""webapp.infra.storage against real databases (SQLite file and PostgreSQL): ids,
idempotence, limits, migrations from an older schema, and concurrency."""

from __future__ import annotations

import multiprocessing

import pytest
from sqlalchemy import func, select, text

from webapp.infra import schema
from webapp.infra import storage as st
from webapp.infra.storage import (
    LATEST_VERSION,
    BlobTooLarge,
    Storage,
    StorageError,
    content_id,
    is_valid_id,
    normalize_url,
)

FORK = multiprocessing.get_context("fork")


# ---------------------------------------------------------------- pure parts


def test_content_id_is_deterministic_short_and_kind_specific():
    a = content_id("state", b"hello")
    assert a == content_id("state", b"hello")
    assert len(a) == st.ID_LENGTH and is_valid_id(a)
    assert a != content_id("state", b"hello!")
    assert a != content_id("tokenizer", b"hello")


@pytest.mark.parametrize(
    "candidate",
    ["", "ABCDEFGHIJKLMNOP", "abcdefghijklmno1", "abcdefghijklmnop0", "x" * 10_000, None, 12, "../etc/passwd"],
)
def test_is_valid_id_refuses_other_shapes(candidate):
    assert not is_valid_id(candidate)


@pytest.mark.parametrize("kind", ["", "State", "a b", "x" * 40, "1abc", "é"])
def test_bad_kinds_are_refused(kind):
    with pytest.raises(ValueError, match="blob kind"):
        content_id(kind, b"")


@pytest.mark.parametrize(
    "url, expected",
    [
        ("postgres://u@h/db", "postgresql+psycopg://u@h/db"),
        ("postgresql://u@h:5/db", "postgresql+psycopg://u@h:5/db"),
        ("postgresql+psycopg://u@h/db", "postgresql+psycopg://u@h/db"),
        ("sqlite:////tmp/x.db", "sqlite:////tmp/x.db"),
    ],
)
def test_normalize_url_uses_psycopg3(url, expected):
    assert normalize_url(url) == expected


# ---------------------------------------------------------------- a database


@pytest.fixture
def store(db_url):
    s = Storage(db_url)
    s.migrate()
    yield s
    s.dispose()


def test_fresh_database_is_migrated_to_latest(store):
    assert store.schema_version() == LATEST_VERSION
    assert store.migrate() == LATEST_VERSION  # a second start-up is a no-op
    with store.engine.connect() as conn:
        rows = conn.execute(select(func.count()).select_from(schema.schema_version)).scalar()
    assert rows == 1


def test_put_get_round_trip_is_idempotent(store):
    data = b"\x00binary\xff and text \xe2\x82\xac"
    first = store.save_blob("state", data)
    again = store.save_blob("state", data)
    assert first == (content_id("state", data), True)
    assert again == (first[0], False)
    assert store.get_blob("state", first[0]) == data
    assert store.list_ids("state") == [first[0]]
    assert store.has_blob("state", first[0])


def test_kinds_are_separate(store):
    blob_id = store.put_blob("state", b"same bytes")
    assert store.get_blob("tokenizer", blob_id) is None
    other = store.put_blob("tokenizer", b"same bytes")
    assert other != blob_id
    assert store.get_blob("tokenizer", other) == b"same bytes"


def test_empty_blob_and_unknown_or_malformed_ids(store):
    empty = store.put_blob("state", b"")
    assert store.get_blob("state", empty) == b""
    assert store.get_blob("state", "a" * st.ID_LENGTH) is None
    assert store.get_blob("state", "x" * 100_000) is None
    assert store.get_blob("state", "'; DROP TABLE playground_blobs; --") is None
    assert not store.has_blob("state", "nope")


def test_size_limit_states_the_limit(db_url):
    s = Storage(db_url, max_blob_bytes=10)
    s.migrate()
    assert s.put_blob("state", b"x" * 10)
    with pytest.raises(BlobTooLarge, match=r"11 bytes is over the storage limit of 10 bytes"):
        s.put_blob("state", b"x" * 11)
    s.dispose()


def test_usage_counts_and_sizes(store):
    store.put_blob("state", b"abc")
    store.put_blob("state", b"defgh")
    store.put_blob("tokenizer", b"1234567")
    assert [(u.kind, u.count, u.total_bytes) for u in store.usage()] == [
        ("state", 2, 8),
        ("tokenizer", 1, 7),
    ]


def test_ping(store, tmp_path):
    assert store.ping()
    broken = Storage("postgresql://nobody@127.0.0.1:1/none")
    assert broken.ping() is False


# ---------------------------------------------------------------- migrations


def test_version_1_database_keeps_working_after_upgrade(db_url):
    """A database written by the first release (no size column) is upgraded in
    place at start-up, its data intact and usable."""
    old = Storage(db_url)
    assert old.migrate(target=1) == 1
    created = st.datetime.now(st.timezone.utc)
    with old.engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO playground_blobs (kind, id, data, created_at) "
                "VALUES (:k, :i, :d, :c)"
            ),
            {"k": "state", "i": content_id("state", b"old state"), "d": b"old state", "c": created},
        )
    old.dispose()

    new = Storage(db_url)
    assert new.schema_version() == 1
    assert new.migrate() == LATEST_VERSION
    old_id = content_id("state", b"old state")
    assert new.get_blob("state", old_id) == b"old state"
    assert new.save_blob("state", b"old state") == (old_id, False)
    assert new.put_blob("state", b"new state") != old_id
    assert {(u.kind, u.count, u.total_bytes) for u in new.usage()} == {("state", 2, 18)}
    new.dispose()


def test_database_newer_than_the_code_is_refused(store):
    with store.engine.begin() as conn:
        conn.execute(schema.schema_version.update().values(version=LATEST_VERSION + 1))
    with pytest.raises(StorageError, match=r"newer than this app"):
        store.migrate()


def _migrate_in_child(url: str, barrier, results) -> None:
    s = Storage(url)
    barrier.wait(timeout=60)
    results.put(s.migrate())
    s.dispose()


def test_many_processes_starting_at_once_migrate_exactly_once(db_url):
    workers = 4
    barrier = FORK.Barrier(workers)
    results = FORK.Queue()
    procs = [FORK.Process(target=_migrate_in_child, args=(db_url, barrier, results)) for _ in range(workers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    assert sorted(results.get(timeout=5) for _ in range(workers)) == [LATEST_VERSION] * workers
    s = Storage(db_url)
    with s.engine.connect() as conn:
        assert conn.execute(select(schema.schema_version.c.version)).scalars().all() == [LATEST_VERSION]
    s.dispose()


# ---------------------------------------------------------------- concurrency


def _blob(i: int) -> bytes:
    return f'{{"tool":"bytes","text":"state number {i}","pad":"{"x" * (i % 97)}"}}'.encode()


def _write_in_child(url: str, worker: int, items: list[int], barrier, out) -> None:
    s = Storage(url)
    barrier.wait(timeout=60)
    written = {}
    for i in items:
        written[i] = s.save_blob("state", _blob(i))
    out.put((worker, written))
    s.dispose()


def test_concurrent_writes_from_processes_lose_and_duplicate_nothing(db_url):
    """Several processes write overlapping sets of states at the same moment:
    every state is stored exactly once, under its content id, readable intact,
    and exactly one writer was told it created each one."""
    Storage(db_url).migrate()
    workers, per_worker, shared = 4, 60, 40
    plans = {
        w: list(range(shared)) + list(range(1000 + w * per_worker, 1000 + (w + 1) * per_worker))
        for w in range(workers)
    }
    for w in range(1, workers, 2):
        plans[w].reverse()  # half the writers meet the shared states in the other order
    barrier = FORK.Barrier(workers)
    out = FORK.Queue()
    procs = [FORK.Process(target=_write_in_child, args=(db_url, w, plans[w], barrier, out)) for w in range(workers)]
    for p in procs:
        p.start()
    reports = dict(out.get(timeout=300) for _ in procs)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0

    expected = {i for items in plans.values() for i in items}
    s = Storage(db_url)
    ids = s.list_ids("state")
    assert len(ids) == len(set(ids)) == len(expected)
    assert set(ids) == {content_id("state", _blob(i)) for i in expected}
    for i in expected:
        assert s.get_blob("state", content_id("state", _blob(i))) == _blob(i)
    # Each worker got the content id back; each state was "created" exactly once.
    created_count = {i: 0 for i in expected}
    for w, written in reports.items():
        assert set(written) == set(plans[w])
        for i, (blob_id, created) in written.items():
            assert blob_id == content_id("state", _blob(i))
            created_count[i] += created
    assert set(created_count.values()) == {1}
    s.dispose()
