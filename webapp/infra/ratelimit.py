"""A rate limit per client on writes: shares, jobs, imports and uploads.

What it does not do: limit reads, or work that goes to a job (the job
queue's caps, webapp.jobs.queue, bound those).

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import math
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Mapping

from flask import Flask, current_app, g, request
from flask_limiter import Limiter
from limits import RateLimitItem, parse_many
from limits.storage import Storage

from webapp.infra.errors import ApiError
from webapp.infra.storage import StorageUnavailable

EXTENSION_KEY = "playground_ratelimit"


class SqliteStorage(Storage):
    """Fixed-window counters in a SQLite file, shared by the processes of one machine
    (`sqlite:///path`); enough for the fixed-window strategy."""

    STORAGE_SCHEME = ["sqlite"]

    def __init__(self, uri: str | None = None, wrap_exceptions: bool = False, **options: Any) -> None:
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)
        self.path = Path(str(uri or "")[len("sqlite:///"):])
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._calls = 0
        with self._connect() as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS hits (key TEXT PRIMARY KEY, count INTEGER NOT NULL, "
                         "expires REAL NOT NULL)")

    @property
    def base_exceptions(self) -> type[Exception] | tuple[type[Exception], ...]:
        return sqlite3.Error

    def _connect(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=10, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        conn = self._connect()
        now = time.time()
        conn.execute("BEGIN IMMEDIATE")
        try:
            row = conn.execute("SELECT count, expires FROM hits WHERE key = ?", (key,)).fetchone()
            if row is None or row[1] <= now:
                value = amount
                conn.execute("INSERT OR REPLACE INTO hits (key, count, expires) VALUES (?, ?, ?)",
                             (key, value, now + expiry))
            else:
                value = int(row[0]) + amount
                conn.execute("UPDATE hits SET count = ? WHERE key = ?", (value, key))
            self._calls += 1
            if self._calls % 500 == 0:  # forget finished windows now and then
                conn.execute("DELETE FROM hits WHERE expires < ?", (now,))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return value

    def get(self, key: str) -> int:
        row = self._connect().execute("SELECT count, expires FROM hits WHERE key = ?", (key,)).fetchone()
        return 0 if row is None or row[1] <= time.time() else int(row[0])

    def get_expiry(self, key: str) -> float:
        row = self._connect().execute("SELECT expires FROM hits WHERE key = ?", (key,)).fetchone()
        return float(row[0]) if row is not None else time.time()

    def check(self) -> bool:
        try:
            self._connect().execute("SELECT 1")
            return True
        except sqlite3.Error:
            return False

    def reset(self) -> int | None:
        conn = self._connect()
        count = conn.execute("SELECT COUNT(*) FROM hits").fetchone()[0]
        conn.execute("DELETE FROM hits")
        return int(count)

    def clear(self, key: str) -> None:
        self._connect().execute("DELETE FROM hits WHERE key = ?", (key,))


def storage_url(config: Mapping[str, Any], instance_path: str) -> str:
    """RATE_LIMIT_STORAGE_URL; else QUEUE_URL when it is Redis; else a SQLite file in the instance folder."""
    if config.get("RATE_LIMIT_STORAGE_URL"):
        return str(config["RATE_LIMIT_STORAGE_URL"])
    queue = str(config.get("QUEUE_URL") or "")
    if queue.startswith(("redis://", "rediss://", "unix://")):
        return queue
    database = str(config.get("DATABASE_URL") or "")
    for url in (queue, database):  # beside the queue file, else beside a SQLite database (as the queue)
        if url.startswith("sqlite:///") and ":memory:" not in url:
            return f"sqlite:///{Path(url[len('sqlite:///'):]).parent / 'ratelimits.sqlite3'}"
    return f"sqlite:///{Path(instance_path) / 'ratelimits.sqlite3'}"


def client_key() -> str:
    """Who a request comes from: its address (the proxy's X-Forwarded-For with TRUSTED_PROXIES)."""
    return request.remote_addr or "unknown"


def write_limits() -> list[RateLimitItem]:
    spec = str(current_app.config.get("RATE_LIMIT_WRITES") or "").strip()
    return parse_many(spec) if spec else []


def _hit(strategy: Any, item: RateLimitItem, scope: str, key: str, cost: int = 1) -> bool:
    """One hit of the fixed-window strategy; counters that cannot be written (a read-only
    instance folder, Redis down) are the storage being unavailable: a 503, never a 500."""
    try:
        return bool(strategy.hit(item, scope, key, cost=cost))
    except (sqlite3.Error, OSError) as exc:
        raise StorageUnavailable(f"the rate-limit counters: {exc}") from None
    except Exception as exc:
        if type(exc).__module__.split(".")[0] in ("redis", "limits"):
            raise StorageUnavailable(f"the rate-limit counters: {type(exc).__name__}") from None
        raise


def check_write() -> None:
    """Count this request as one write by its client; a 429 with Retry-After when over
    RATE_LIMIT_WRITES. Counted once per request, however many things it stores."""
    if g.get("write_counted"):
        return
    g.write_counted = True
    items = write_limits()
    limiter: Limiter | None = current_app.extensions.get(EXTENSION_KEY)
    if not items or limiter is None:
        return
    strategy = limiter.limiter
    key = client_key()
    for item in items:
        if not _hit(strategy, item, "writes", key):
            reset = strategy.get_window_stats(item, "writes", key).reset_time
            retry = max(1, math.ceil(reset - time.time()))
            spec = current_app.config["RATE_LIMIT_WRITES"]
            raise ApiError(f"rate: too many writes (shares, jobs, uploads, opened files) from your address: "
                           f"at most {item.amount} per {item.GRANULARITY.name} (setting RATE_LIMIT_WRITES = "
                           f"{spec!r}); try again in {retry:,} s", field="rate", status=429, retry_after=retry,
                           location={"retry_after": retry})


def work_limits() -> list[RateLimitItem]:
    spec = str(current_app.config.get("RATE_LIMIT_WORK") or "").strip()
    return parse_many(spec) if spec else []


def charge_work(chars: int, tokenizers: int = 1) -> None:
    """Charge this request's work (characters x tokenizers) to its client before it starts;
    a 429 with Retry-After when that would go over RATE_LIMIT_WORK (issue 28, row 6)."""
    charge_units(max(0, int(chars)) * max(1, int(tokenizers)), f"{chars:,} characters x {tokenizers:,} tokenizers")


def charge_units(units: int, what: str) -> None:
    """Charge `units` of work (in characters x tokenizers) that `what` spells out for the message
    (Counts with tools adds its renderings: webapp.web.counts.kinds)."""
    items = work_limits()
    limiter: Limiter | None = current_app.extensions.get(EXTENSION_KEY)
    if not items or limiter is None or units <= 0:
        return
    strategy = limiter.limiter
    key = client_key()
    for item in items:
        if not _hit(strategy, item, "work", key, cost=units):
            reset = strategy.get_window_stats(item, "work", key).reset_time
            retry = max(1, math.ceil(reset - time.time()))
            spec = current_app.config["RATE_LIMIT_WORK"]
            raise ApiError(f"rate: too much work from your address: this request is {units:,} units "
                           f"({what}), over the budget of "
                           f"{item.amount:,} per {item.GRANULARITY.name} (setting RATE_LIMIT_WORK = {spec!r}); "
                           f"try again in {retry:,} s", field="rate", status=429, retry_after=retry,
                           location={"retry_after": retry, "units": units})


def init_app(app: Flask) -> None:
    """The app's limiter: its storage opened once per process."""
    limiter = Limiter(client_key, app=app, storage_uri=storage_url(app.config, app.instance_path),
                      strategy="fixed-window", default_limits=[], headers_enabled=False)
    app.extensions[EXTENSION_KEY] = limiter
