"""Issue 17, rows 4 and 10: the production command itself (scripts/serve-prod.sh:
nginx in front of gunicorn, plus a job worker, under scripts/with-worker.sh),
started on loopback ports by each test and stopped the way a supervisor does.

The nginx cases need Debian's nginx (`make test` installs it with
scripts/ensure-nginx.sh when root); without it they skip and say why.
"""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.hostile.conftest import free_port
from webapp import PROJECT_ROOT

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
needs_nginx = pytest.mark.skipif(NGINX is None, reason="nginx is not installed (`make test` installs Debian's "
                                                        "nginx with scripts/ensure-nginx.sh when root)")


def _command_line(pid: int) -> bytes:
    """The process's command line; empty once it is gone (a short-lived child can end between
    the listing of a session's processes and this read)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _session_pids(sid: int) -> list[int]:
    """Every live process of a session (the production command and all it started)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[3]) == sid and fields[0] != "Z":
            pids.append(int(entry.name))
    return pids


class Production:
    """The production command on a loopback port, in a session of its own."""

    def __init__(self, tmp_path: Path, command: list[str], **env: str) -> None:
        self.port = free_port()
        self.log = tmp_path / "production.log"
        self.env = {**os.environ, "BIND": f"127.0.0.1:{self.port}", "WEB_CONCURRENCY": "4", "ACCESS_LOG": "/dev/null",
                    "PLAYGROUND_DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
                    "PLAYGROUND_QUEUE_URL": f"sqlite:///{tmp_path / 'queue.sqlite3'}",
                    "PLAYGROUND_CORPUS_DIR": str(tmp_path / "corpora"), "RUN_DIR": str(tmp_path / "run"),
                    # serve-prod.sh refuses the development key (issue 28, row 10)
                    "PLAYGROUND_SECRET_KEY": "test-secret-" + "0" * 40,
                    # (no test here is about what the master opens before forking: seconds a start saved)
                    "PRESETS_PRELOAD": "0", **env}
        self.process = subprocess.Popen(command, cwd=PROJECT_ROOT, env=self.env, stdout=open(self.log, "ab"),
                                        stderr=subprocess.STDOUT, start_new_session=True)

    def wait_healthy(self, timeout: float = 60) -> "Production":
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self.get("/healthz")[0] == 200:
                    return self
            except OSError:
                pass
            assert self.process.poll() is None, self.log.read_text()[-3000:]
            time.sleep(0.2)
        raise AssertionError("not healthy in time:\n" + self.log.read_text()[-3000:])

    def get(self, path: str, timeout: float = 10) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request("GET", path)
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()

    def pids(self) -> list[int]:
        return _session_pids(self.process.pid)

    def kill(self) -> None:
        """SIGTERM as a supervisor sends it (the script removes its folders), SIGKILL what is left."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.wait(timeout=10)


@pytest.fixture
def production(tmp_path):
    started: list[Production] = []

    def start(command: list[str], **env: str) -> Production:
        server = Production(tmp_path, command, **env)
        started.append(server)
        return server.wait_healthy()

    yield start
    for server in started:
        server.kill()


PY = sys.executable
SERVE_PROD = ["bash", "scripts/serve-prod.sh", PY]
GUNICORN_ONLY = ["bash", "scripts/with-worker.sh", PY, PY, "-m", "gunicorn", "-c", "gunicorn.conf.py", "wsgi:app"]


# --- row 10: SIGTERM, as a supervisor sends it, stops the server and the worker ------------

def _stops_entirely(server: Production, how: str) -> None:
    assert len(server.pids()) >= 4  # the script, gunicorn's master and workers, the job worker
    if how == "main":  # systemd KillMode=mixed / process, docker stop: the main process only
        os.kill(server.process.pid, signal.SIGTERM)
    else:  # systemd's default KillMode=control-group: every process at once
        for pid in server.pids():
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:  # (gone between the listing and the signal: one the others stopped)
                pass
    deadline = time.monotonic() + 30  # below systemd's TimeoutStopSec (90 s)
    while server.pids() and time.monotonic() < deadline:
        time.sleep(0.2)
    left = server.pids()
    assert left == [], [_command_line(pid) for pid in left]
    with pytest.raises(OSError):
        server.get("/healthz", timeout=2)
    assert server.process.wait(timeout=5) in (143, 0, -15)


@pytest.mark.parametrize("how", ["main", "group"])
def test_row10_sigterm_stops_the_server_and_the_worker(production, how):
    _stops_entirely(production(GUNICORN_ONLY, PLAYGROUND_PROXY="none"), how)


@needs_nginx
@pytest.mark.parametrize("how", ["main", "group"])
def test_row10_sigterm_stops_nginx_the_server_and_the_worker(production, how):
    server = production(SERVE_PROD)
    assert any(b"nginx" in _command_line(pid) for pid in server.pids())
    _stops_entirely(server, how)


@pytest.mark.alone
def test_row10_a_dead_worker_is_started_again(production):
    server = production(GUNICORN_ONLY, PLAYGROUND_PROXY="none")
    workers = [pid for pid in server.pids() if b"webapp.worker" in _command_line(pid)]
    assert len(workers) == 1
    os.kill(workers[0], signal.SIGKILL)
    deadline = time.monotonic() + 15
    again: list[int] = []
    while not again and time.monotonic() < deadline:
        time.sleep(0.2)
        again = [pid for pid in server.pids() if pid != workers[0] and b"webapp.worker" in _command_line(pid)]
    assert again, server.log.read_text()[-2000:]
    assert server.get("/healthz")[0] == 200


# --- row 4: slow uploads never starve other requests -------------------------------------

def _slow_upload(port: int, seconds: float, answers: list, index: int) -> None:
    """A corpus upload of 1.5 MB whose body trickles in over `seconds`."""
    boundary = "----slow" + str(index)
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"num_merges\"\r\n\r\n5\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"slow{index}.txt\"\r\n"
            "Content-Type: text/plain\r\n\r\n").encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    payload = (f"slow client {index} sends words " * 60_000).encode()[:1_500_000]  # over nginx's 1 MiB buffer: a temp file
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.putrequest("POST", "/api/corpus")
        conn.putheader("Content-Type", f"multipart/form-data; boundary={boundary}")
        conn.putheader("Content-Length", str(len(head) + len(payload) + len(tail)))
        conn.endheaders()
        conn.send(head)
        pieces = 20
        step = len(payload) // pieces + 1
        for start in range(0, len(payload), step):
            conn.send(payload[start:start + step])
            time.sleep(seconds / pieces)
        conn.send(tail)
        response = conn.getresponse()
        answers.append((response.status, response.read()[:300]))
    finally:
        conn.close()


@pytest.mark.alone
@needs_nginx
def test_row4_eight_slow_uploads_do_not_slow_healthz(production):
    server = production(SERVE_PROD, PLAYGROUND_RATE_LIMIT_WRITES="1000/minute", PLAYGROUND_JOB_CLIENT_LIMIT="20")
    answers: list = []
    uploads = [threading.Thread(target=_slow_upload, args=(server.port, 10.0, answers, i)) for i in range(8)]
    for thread in uploads:
        thread.start()
    time.sleep(1.0)  # every upload has started and holds a connection
    probes = []
    while any(thread.is_alive() for thread in uploads):
        started = time.monotonic()
        status, _body = server.get("/healthz", timeout=30)
        probes.append(time.monotonic() - started)
        assert status == 200
        time.sleep(0.1)
    for thread in uploads:
        thread.join()
    assert len(probes) > 30
    assert max(probes) < 1.0, sorted(probes)[-5:]
    assert [status for status, _ in answers] == [202] * 8, answers


@needs_nginx
def test_row2_and_5_refusals_before_the_body_is_read_reach_the_client_through_nginx(production):
    """The app answers 429 / 413 without reading a big body; it then reads the rest,
    so nginx (still sending it) passes the answer on instead of a 502."""
    server = production(SERVE_PROD, PLAYGROUND_JOB_CLIENT_LIMIT="1", PLAYGROUND_RATE_LIMIT_WRITES="",
                        PLAYGROUND_MAX_CONTENT_LENGTH="100000", PLAYGROUND_START_WORKER="0")
    big = ("words for the corpus " * 100_000).encode()[:2_000_000]
    statuses = []
    for i in range(8):
        boundary = f"----x{i}"
        body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"num_merges\"\r\n\r\n5\r\n"
                f"--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"a{i}.txt\"\r\n\r\n".encode()
                + big + f"\r\n--{boundary}--\r\n".encode())
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        conn.request("POST", "/api/corpus", body=body, headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
        response = conn.getresponse()
        statuses.append((response.status, response.getheader("Content-Type"), response.getheader("Retry-After")))
        conn.close()
    assert statuses[0][0] == 202
    assert all(status == (429, "application/json", "30") for status in statuses[1:]), statuses
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    conn.request("POST", "/api/encode", body=b"{" + b" " * 3_000_000 + b"}", headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    assert response.status == 413 and b"MAX_CONTENT_LENGTH" in response.read()
    conn.close()
