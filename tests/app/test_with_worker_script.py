"""scripts/with-worker.sh (what `make run` and `make serve-prod` run): Ctrl-C is a normal stop.

Ctrl-C sends SIGINT to the whole foreground process group. The script must
stop the server (which, started with `&`, ignores SIGINT itself) and the
worker, and exit 0, so make prints no "make: *** [run] Error 130/143" and
leaves no server behind (issue #20).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from webapp import PROJECT_ROOT

pytestmark = pytest.mark.server

SCRIPT = PROJECT_ROOT / "scripts" / "with-worker.sh"


def _start(tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    marker = tmp_path / "server.pid"
    server = f"import os, time; open({str(marker)!r}, 'w').write(str(os.getpid())); time.sleep(60)"

    def as_in_a_terminal() -> None:  # SIGINT not ignored, own process group (like a terminal's job)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.setpgrp()

    proc = subprocess.Popen(["bash", str(SCRIPT), sys.executable, sys.executable, "-c", server],
                            env={**os.environ, "PLAYGROUND_START_WORKER": "0"}, preexec_fn=as_in_a_terminal,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists(), proc.stderr.read() if proc.poll() is not None else "server did not start"
    time.sleep(0.2)
    return proc, marker


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_signal_ends_server_and_script_with_status_0(tmp_path: Path, sig: signal.Signals) -> None:
    proc, marker = _start(tmp_path)
    server_pid = int(marker.read_text())
    if sig == signal.SIGINT:
        os.killpg(proc.pid, sig)  # Ctrl-C: the whole group
    else:
        proc.send_signal(sig)  # a service manager: the script
    try:
        _, err = proc.communicate(timeout=20)
    finally:
        if _alive(server_pid):
            os.kill(server_pid, signal.SIGKILL)
    assert proc.returncode == 0, err
    assert not _alive(server_pid)
    assert "Stopped." in err
