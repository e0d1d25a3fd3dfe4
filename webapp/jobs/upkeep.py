"""Keeping the job system tidy: cleanup after every job, dead workers' jobs, expired and orphaned files.

What it does not do: run jobs (webapp.jobs.runner) or know any feature (the
kinds register their hooks and spools).

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import logging
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from webapp.jobs import registry
from webapp.jobs.store import Job, JobStore
from webapp.tokenizer import TokenizerError

log = logging.getLogger(__name__)


def clean_up(kind: str, params: Mapping[str, Any]) -> None:
    """Run the kind's `after` hook for a job that has ended (an error is logged, never raised)."""
    registered = registry.KINDS.get(kind)
    if registered is None or registered.after is None:
        return
    try:
        registered.after(dict(params))
    except Exception:  # a cleanup that fails must not fail the job's ending
        log.exception("cleanup after a %s job failed", kind)


def clean_up_job(store: JobStore, job: Job) -> None:
    """`clean_up` with the job's stored params (nothing when they are gone)."""
    try:
        params = store.params(job)
    except TokenizerError:
        return
    clean_up(job.kind, params)


def _newest_write(folder: Path) -> float:
    """The latest modification time of a folder and of anything directly in it."""
    newest = folder.stat().st_mtime
    for entry in folder.iterdir():
        try:
            newest = max(newest, entry.stat().st_mtime)
        except OSError:
            continue
    return newest


@dataclass
class Upkeep:
    """One worker's periodic upkeep of a store (settings from the app config)."""

    store: JobStore
    config: Mapping[str, Any]
    instance_path: str
    requeue: Callable[[str], None]  # put a job id back on the task queue

    @property
    def max_attempts(self) -> int:
        return max(1, int(self.config.get("JOB_MAX_ATTEMPTS", 3)))

    def dead_jobs(self) -> list[str]:
        """Requeue, cancel or fail the running jobs whose worker died; the ids handled."""
        handled = []
        for job in self.store.stale_running():
            if job.cancel_requested:
                ended = self.store.finish(job.id, "cancelled", error="job: cancelled", error_field="job",
                                          attempt=job.attempts, where_state=("running",))
            elif job.attempts >= self.max_attempts:
                ended = self.store.finish(
                    job.id, "failed", attempt=job.attempts, where_state=("running",), error_field="job",
                    error=f"job: its worker stopped {job.attempts} times while running it "
                          f"(setting JOB_MAX_ATTEMPTS = {self.max_attempts})")
            else:
                if self.store.requeue(job.id, attempt=job.attempts):
                    self.requeue(job.id)
                    handled.append(job.id)
                continue
            if ended:
                clean_up_job(self.store, job)
                handled.append(job.id)
        return handled

    def expired_jobs(self) -> list[str]:
        """Fail the jobs queued for longer than JOB_EXPIRE_SECONDS (0: never)."""
        seconds = float(self.config.get("JOB_EXPIRE_SECONDS", 0) or 0)
        if seconds <= 0:
            return []
        expired = []
        for job in self.store.queued_before(seconds):
            if self.store.finish(job.id, "failed", where_state=("queued",), error_field="job",
                                 error=f"job: waited over {seconds:,g} s for a worker "
                                       "(setting JOB_EXPIRE_SECONDS); send it again"):
                clean_up_job(self.store, job)
                expired.append(job.id)
        return expired

    def sweep_spools(self) -> list[Path]:
        """Remove the spool sub-folders that no queued or running job owns (after a grace time)."""
        grace = float(self.config.get("JOB_SPOOL_GRACE_SECONDS", 300))
        removed = []
        for kind in registry.KINDS.values():
            if kind.spool is None:
                continue
            spool = kind.spool(self.config, self.instance_path)
            if not spool.is_dir():
                continue
            owned = set()
            for job in self.store.live(kind.name):
                try:
                    owned.add(Path(str(self.store.params(job).get("folder", ""))).name)
                except TokenizerError:
                    continue
            for folder in spool.iterdir():
                try:
                    if folder.name in owned or not folder.is_dir() or time.time() - _newest_write(folder) < grace:
                        continue
                except OSError:
                    continue  # removed meanwhile
                shutil.rmtree(folder, ignore_errors=True)
                removed.append(folder)
        return removed

    def run_once(self) -> dict[str, int]:
        """One round of upkeep; how many jobs and folders each step handled."""
        return {"dead": len(self.dead_jobs()), "expired": len(self.expired_jobs()),
                "swept": len(self.sweep_spools())}
