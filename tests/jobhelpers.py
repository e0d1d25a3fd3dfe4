"""Real job workers for the tests: `python -m webapp.worker` as a subprocess.

`JobWorker` starts the worker with the same settings an app under test uses
(database, queue, budgets as PLAYGROUND_* variables) and kills its whole
process group at the end. `wait_job` polls a job until it is finished.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from webapp import PROJECT_ROOT

FINISHED = ("done", "failed", "cancelled")


def settings_env(settings: dict[str, Any]) -> dict[str, str]:
    """App settings as the environment variables create_app() reads."""
    return {f"PLAYGROUND_{key}": str(value) for key, value in settings.items()}


@dataclass
class JobWorker:
    settings: dict[str, Any]
    log_path: Path
    workers: int | None = None  # None: JOB_WORKERS from the settings (default 2)
    process: subprocess.Popen | None = None
    extra_env: dict[str, str] = field(default_factory=dict)

    def start(self) -> "JobWorker":
        env = {**os.environ, **settings_env(self.settings), **self.extra_env}
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "webapp.worker"] + (["--workers", str(self.workers)] if self.workers else []),
            cwd=PROJECT_ROOT, env=env, stdout=log, stderr=log, start_new_session=True,
        )
        return self

    def kill(self) -> None:
        if self.process and self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.process.wait(timeout=30)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


def wait_job(get: Callable[[], dict[str, Any]], timeout: float = 60, until: tuple[str, ...] = FINISHED,
             worker: JobWorker | None = None) -> dict[str, Any]:
    """Poll `get()` (a job's JSON) until its state is in `until`."""
    deadline = time.monotonic() + timeout
    while True:
        body = get()
        if body["state"] in until:
            return body
        if time.monotonic() > deadline:
            raise AssertionError(f"job still {body['state']} after {timeout} s: {body}\n"
                                 + (worker.log()[-3000:] if worker else ""))
        time.sleep(0.1)
