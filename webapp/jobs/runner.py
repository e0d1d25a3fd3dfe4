"""Running one job: a child process forked for it, with its memory and time budgets.

`execute(store, job_id, budgets)` marks the job running, runs its kind
(webapp.jobs.registry) in a child process that applies `RLIMIT_AS`, a lower CPU
priority and dies with its parent, kills it at the time budget or on cancel,
and stores the outcome. What it does not do: queue jobs or answer HTTP
(webapp.jobs.queue), or define what a job computes (webapp.jobs.registry).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import resource
import signal
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from webapp.jobs import registry
from webapp.jobs.upkeep import clean_up
from webapp.jobs.store import (
    GRACE_SECONDS,
    HEARTBEAT_SECONDS,
    RESULT_KIND,
    Budgets,
    JobStore,
    eta_seconds,
    memory_budget_message,
    pack_json,
    split_eta,
    time_budget_message,
    with_eta,
)
from webapp.infra.storage import BlobTooLarge
from webapp.system.processes import die_with_parent, vm_size_bytes
from webapp.tokenizer import TokenizerError

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------
# Running one job in a child process


#: Set by the worker (webapp.worker) once it is shutting down: a job process that ends then
#: was stopped with it, and its job is left for another attempt ("stopped" below).
STOPPING = threading.Event()


@dataclass(frozen=True)
class Outcome:
    """How a job process ended."""

    state: str  # done, failed, cancelled; stopped: its worker is stopping, the job is not finished
    result: bytes | None = None  # compressed JSON
    blobs: dict[str, bytes] | None = None
    error: str | None = None
    field: str | None = None


def _child_main(conn: Any, kind: str, params: dict[str, Any], budgets: Budgets, stop: Any = None) -> None:
    """Inside the job process: lower priority, cap the address space, run, send the outcome."""
    die_with_parent()
    # The worker's own handlers (Huey's, which only set a flag) were inherited by the fork: a
    # SIGTERM (the worker's exit terminating its children) must end this process at once,
    # running no `finally` of the job, so nothing a later attempt needs is cleaned up here.
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, signal.SIG_DFL)
    try:
        os.nice(budgets.nice)
    except OSError:
        pass
    # RLIMIT_AS counts mappings the worker already had (libraries, thread
    # stacks), so the budget is what the job may add on top of them.
    limit = vm_size_bytes() + budgets.memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    last = [0.0]

    def progress(fraction: float, text: str) -> None:
        now = time.monotonic()
        if now - last[0] >= 0.1:
            last[0] = now
            conn.send(("progress", float(fraction), str(text)[:200]))

    try:
        output = registry.run_kind(kind, params, progress, stop.is_set if stop is not None else (lambda: False))
        payload = pack_json(output.result)
        conn.send(("done", payload, output.blobs))
    except TokenizerError as exc:
        conn.send(("error", exc.message, exc.field))
    except MemoryError:
        conn.send(("memory",))
    except RecursionError:
        conn.send(("error", "job: the input is nested too deeply", "job"))
    except Exception as exc:  # reported as a failed job, never lost
        conn.send(("error", f"job: unexpected error ({type(exc).__name__})", "job"))
    finally:
        conn.close()


def run_in_child(kind: str, params: dict[str, Any], budgets: Budgets,
                 on_progress: Callable[[float, str], None] = lambda f, t: None,
                 should_cancel: Callable[[], bool] = lambda: False,
                 poll_seconds: float = 0.2) -> Outcome:
    """Run a job kind in a forked process with the budgets; progress and cancel are polled."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    # Graceful kinds (registry.JobKind.graceful) see cancel through this event and may finish
    # with a partial result within GRACE_SECONDS; others are killed at once.
    stop = context.Event()
    graceful = kind in registry.KINDS and registry.KINDS[kind].graceful
    process = context.Process(target=_child_main, args=(sender, kind, params, budgets, stop), daemon=True)
    process.start()
    sender.close()
    deadline = time.monotonic() + budgets.seconds
    outcome: Outcome | None = None
    try:
        while outcome is None:
            left = deadline - time.monotonic()
            if left <= 0:
                outcome = (Outcome("cancelled", error="job: cancelled", field="job") if stop.is_set()
                           else Outcome("failed", error=time_budget_message(budgets), field="job"))
                break
            try:
                ready = receiver.poll(min(poll_seconds, left))
                message = receiver.recv() if ready else None
            except (EOFError, OSError):
                break  # the process is gone without a word: see its exit code below
            if message is not None:
                tag = message[0]
                if tag == "progress":
                    on_progress(message[1], message[2])
                elif tag == "done":
                    outcome = Outcome("done", result=message[1], blobs=message[2])
                elif tag == "error":
                    outcome = Outcome("cancelled" if stop.is_set() else "failed", error=message[1], field=message[2])
                elif tag == "memory":
                    outcome = Outcome("failed", error=memory_budget_message(budgets), field="job")
            if outcome is None and not stop.is_set() and should_cancel():
                if graceful:
                    stop.set()
                    deadline = min(deadline, time.monotonic() + GRACE_SECONDS)
                else:
                    outcome = Outcome("cancelled", error="job: cancelled", field="job")
    finally:
        if process.is_alive() and outcome is not None and outcome.state != "done":
            process.kill()
        process.join(5)
        if process.is_alive():
            process.kill()
            process.join()
        receiver.close()
    if outcome is None and (process.exitcode == -signal.SIGTERM or STOPPING.is_set()):
        # The worker is stopping (its exit terminates the job processes): not the job's
        # failure. Nothing is stored, so the job stays "running" until the upkeep of a worker
        # queues it again (JOB_STALE_SECONDS), and its files stay for that next attempt.
        outcome = Outcome("stopped", error="job: its worker stopped", field="job")
    if outcome is None:
        code = process.exitcode
        # Killed by a signal: the kernel's OOM killer, or a C allocation that
        # could not report MemoryError, are the usual reasons under a budget.
        outcome = Outcome("failed", field="job", error=(
            f"{memory_budget_message(budgets)}; the job process ended with code {code}"
        ))
    return outcome


class _Throttle:
    """Calls `action` at most every `seconds` (and always when `force`)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.last = 0.0

    def due(self, force: bool = False) -> bool:
        now = time.monotonic()
        if force or now - self.last >= self.seconds:
            self.last = now
            return True
        return False


def execute(store: JobStore, job_id: str, budgets: Budgets) -> str | None:
    """Run a queued job to its end (inside a worker); returns the final state, None if skipped.

    Each queued job put one task on the queue; a task runs whichever queued job
    is first in the fair order (webapp.jobs.store.JobStore.fair_order), so
    `job_id` only says that there is work.

    The worker holds the job by the attempt it claimed (the lease,
    webapp.jobs.store): once the row carries another attempt (the upkeep gave
    the job to another worker after this one went silent) this worker stops
    the process and writes nothing. The kind's cleanup runs whatever the outcome."""
    job, attempt = None, None
    for candidate in store.fair_order():  # not necessarily the task's own job: the fairest one waiting
        attempt = store.claim(candidate)
        if attempt is not None:
            job_id = candidate
            job = store.get(candidate)
            break
    if job is None or attempt is None:
        return None  # nothing queued: every job was taken, or cancelled before it started
    try:
        params = store.params(job)
    except TokenizerError as exc:
        store.finish(job_id, "failed", error=exc.message, error_field=exc.field, attempt=attempt)
        return "failed"
    progress_gate, cancel_gate, beat_gate = _Throttle(0.25), _Throttle(0.25), _Throttle(HEARTBEAT_SECONDS)
    last_progress: list[Any] = [0.0, "running"]
    started = time.monotonic()

    def shown(fraction: float, text: str) -> str:
        # The estimate is worked out here, where the start is known, and
        # carried in the text (split_eta reads it back for the JSON). A kind
        # that carries its own (it knows its phases' rates) keeps it: one estimate.
        if split_eta(text)[1] is not None:
            return text
        return with_eta(text, eta_seconds(time.monotonic() - started, fraction))

    def on_progress(fraction: float, text: str) -> None:
        last_progress[:] = [fraction, text]
        if progress_gate.due():
            store.set_progress(job_id, fraction, shown(fraction, text), attempt)

    def should_cancel() -> bool:
        if beat_gate.due():  # heartbeat; a stalled fraction makes the estimate grow, as it should
            store.set_progress(job_id, float(last_progress[0]), shown(float(last_progress[0]), str(last_progress[1])),
                               attempt)
        return cancel_gate.due() and store.cancel_requested(job_id, attempt)

    state: str | None = None
    try:
        outcome = run_in_child(job.kind, params, budgets, on_progress, should_cancel)
        if outcome.state == "done":
            try:
                for blob_kind, data in (outcome.blobs or {}).items():
                    store.storage.put_blob(blob_kind, data)
                result_id = store.storage.put_blob(RESULT_KIND, outcome.result or pack_json(None))
            except BlobTooLarge as exc:
                store.finish(job_id, "failed", error=f"job: the result is too large to store: {exc}",
                             error_field="job", attempt=attempt)
                state = "failed"
                return state
            store.finish(job_id, "done", result_id=result_id, attempt=attempt)
            state = "done"
            return state
        if outcome.state == "stopped":
            return None  # left "running": the upkeep queues it again, with its files
        store.finish(job_id, outcome.state, error=outcome.error, error_field=outcome.field, attempt=attempt)
        state = outcome.state
        return state
    finally:
        log.info("job %s (%s, attempt %d): %s", job_id, job.kind, attempt, state or "stopped")
        # e.g. the corpus job's uploads, also when its process was killed; a job
        # taken back (lease lost, queued again) keeps them for its next run.
        current = store.get(job_id)
        if current is None or (current.finished and current.attempts == attempt):
            clean_up(job.kind, params)
