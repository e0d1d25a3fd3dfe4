"""The "sleep" job kind: a job that only waits or allocates, for the tests and the load benchmark.

It exercises the job budgets (time, memory) and cancel without any engine
work. Not reachable from the HTTP API: only code can submit it. Its done
view "sleep" (`/jobs/<id>?view=sleep`) says how long it slept.
"""

from __future__ import annotations

import time
from typing import Any

from markupsafe import Markup

from webapp.jobs.registry import Cancelled, JobOutput, Progress, done_view, job_kind


@job_kind("sleep", label="Waiting")
def run_sleep(params: dict[str, Any], progress: Progress, cancelled: Cancelled) -> JobOutput:
    """`seconds` to wait in small steps reporting progress, `allocate_mb` to allocate and touch first."""
    seconds = float(params.get("seconds", 0))
    hoard = bytearray(int(params.get("allocate_mb", 0)) * 1024 * 1024)
    for i in range(0, len(hoard), 4096):
        hoard[i] = 1
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        progress(1 - left / seconds if seconds else 1.0, f"{left:.1f} s left")
        time.sleep(min(0.05, left))
    return JobOutput({"slept": seconds, "allocated_mb": len(hoard) // (1024 * 1024)})


@done_view("sleep", kinds=("sleep",))
def _slept(job: Any, result: Any, params: dict[str, Any]) -> str:
    return str(Markup('<p class="card">Slept {0:g} s.</p>').format(float(result.get("slept", 0))))
