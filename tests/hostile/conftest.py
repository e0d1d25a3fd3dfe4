"""Real production servers (gunicorn, several workers) on loopback for the
hostile-input and crash tests. Each server gets its own port and database;
every server started is killed at teardown."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from webapp import PROJECT_ROOT
from webapp.infra.storage import default_sqlite_url

def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Server:
    """One gunicorn process group serving the app."""

    database_url: str
    workers: int = 2
    port: int = 0
    log_path: Path | None = None
    extra_env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen | None = None

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 60) -> "Server":
        self.port = self.port or free_port()
        env = {
            **os.environ,
            "BIND": self.host,
            "WEB_CONCURRENCY": str(self.workers),
            "PLAYGROUND_DATABASE_URL": self.database_url,
            "ACCESS_LOG": "/dev/null",
            "PLAYGROUND_RATE_LIMIT_WRITES": "",  # the tests of the limit set it (tests/hostile/test_clients.py)
            # Opening every preset in the master (gunicorn.conf.py) costs seconds a start and changes
            # only what the workers hold: the tests that measure that memory set PRESETS_PRELOAD=1.
            "PRESETS_PRELOAD": "0",
            **self.extra_env,
        }
        log = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "wsgi:app"],
            cwd=PROJECT_ROOT,
            env=env,
            stdout=log,
            stderr=log,
            start_new_session=True,  # its own process group, so kill() reaches the workers
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {self.process.returncode}; see {self.log_path}")
            try:
                if request(self, "GET", "/healthz", timeout=2)[0] == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError("gunicorn did not become healthy in time")

    def kill(self) -> None:
        """SIGKILL the master and every worker at once: no graceful anything."""
        if self.process and self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.process.wait(timeout=30)

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None, timeout: float = 60) -> tuple[int, dict[str, str], bytes]:
        return request(self, method, path, body, headers, timeout)

    def post_json(self, path: str, payload: Any, timeout: float = 60) -> tuple[int, Any]:
        return post_json(self, path, payload, timeout)

    def stop(self) -> None:
        """Graceful stop (SIGTERM), then SIGKILL if it takes too long."""
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


def request(
    server: Server,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    timeout: float = 60,
) -> tuple[int, dict[str, str], bytes]:
    """One HTTP request on a fresh connection; a server that answers early and
    closes while we still send (e.g. 413 on a huge body) still counts."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=timeout)
    try:
        try:
            conn.request(method, path, body=body, headers=headers or {})
        except (BrokenPipeError, ConnectionResetError):
            pass  # the answer may already be waiting
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def post_json(server: Server, path: str, payload: Any, timeout: float = 60) -> tuple[int, Any]:
    status, _headers, body = request(
        server, "POST", path, json.dumps(payload).encode(), {"Content-Type": "application/json"}, timeout
    )
    try:
        return status, json.loads(body)
    except ValueError:
        return status, body


@pytest.fixture
def gunicorn_factory(tmp_path) -> Iterator[Callable[..., Server]]:
    started: list[Server] = []

    def make(database_url: str | None = None, **kwargs: Any) -> Server:
        server = Server(
            database_url or default_sqlite_url(tmp_path),
            log_path=tmp_path / f"gunicorn-{len(started)}.log",
            **kwargs,
        )
        started.append(server)
        return server

    yield make
    for server in started:
        server.kill()


@pytest.fixture(scope="module")
def live_server(tmp_path_factory) -> Iterator[Server]:
    """One server shared by a module's hostile-input tests."""
    folder = tmp_path_factory.mktemp("live")
    server = Server(default_sqlite_url(folder), workers=2, log_path=folder / "gunicorn.log").start()
    yield server
    server.kill()


#: MAX_CONTENT_LENGTH of `small_limit_server`: small, so over-limit bodies are cheap to send.
SMALL_BODY_LIMIT = 200_000


@pytest.fixture(scope="module")
def small_limit_server(tmp_path_factory) -> Iterator[Server]:
    """One worker with a MAX_CONTENT_LENGTH of SMALL_BODY_LIMIT bytes."""
    folder = tmp_path_factory.mktemp("limits")
    limit = str(SMALL_BODY_LIMIT)
    server = Server(
        default_sqlite_url(folder), workers=1, log_path=folder / "gunicorn.log",
        extra_env={"PLAYGROUND_MAX_CONTENT_LENGTH": limit, "PLAYGROUND_MAX_FORM_MEMORY_SIZE": limit},
    ).start()
    yield server
    server.kill()
