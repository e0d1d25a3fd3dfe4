"""The "counts" job kind: one text counted by many tokenizers when that is too much work for a request.

A count's cost is linear in the text and in the number of tokenizers
(about 0.75 microseconds per character per preset, new text, on this
2-core machine; docs/limits.md), so the threshold is one product:
characters x tokenizers over `JOB_COUNTS_WORK` goes to a job. That is the
same unit RATE_LIMIT_WORK charges, and the request is charged before the
job is queued, exactly as an inline count is. `POST /api/counts` then
answers 202 with the job (webapp.jobs.views.accepted) and the Counts page
shows the job panel; the job runs `count_all` on the same text and
tokenizers and stores the very dict the inline answer would have been.

What it does not do: answer HTTP or render the table (webapp.web.counts.routes).
"""

from __future__ import annotations

from typing import Any

from webapp.infra import ratelimit
from webapp.jobs import queue
from webapp.jobs.registry import Cancelled, JobOutput, Progress, job_kind
from webapp.jobs.store import Job
from webapp.jobs.thresholds import text_chars
from webapp.web.counts.counting import count_all, counts_json

KIND = "counts"


def work_of(text: Any, tokenizers: int) -> int:
    """A count's work: characters x tokenizers (what the threshold and RATE_LIMIT_WORK measure)."""
    return text_chars(text) * max(1, tokenizers)


def counts_are_heavy(text: Any, tokenizers: int) -> bool:
    return work_of(text, tokenizers) > queue.threshold("JOB_COUNTS_WORK")


def counts_job(text: str, refs: list[str]) -> Job | None:
    """The job for counting `text` (already read and checked against LIMIT_TEXT_CHARS) with `refs`
    (already read: at most MAX_COUNT_TOKENIZERS) when that is over `JOB_COUNTS_WORK`, else None.

    The client is charged for the work first (a 429 over RATE_LIMIT_WORK queues nothing);
    the same text and tokenizers again give the same job (the store is content-addressed)."""
    if not counts_are_heavy(text, len(refs)):
        return None
    ratelimit.charge_work(len(text), len(refs))
    return queue.submit(KIND, {"text": text, "tokenizers": list(refs)})


@job_kind(KIND, label="Counting")
def run_counts(params: dict[str, Any], progress: Progress, cancelled: Cancelled) -> JobOutput:
    """`count_all` in the job process; opened tokenizers are read through the worker's app."""
    text = str(params["text"])
    refs = [str(r) for r in params["tokenizers"]]

    def on_row(done: int, total: int, name: str) -> None:
        progress(done / max(total, 1), f"{done:,} of {total:,} tokenizers counted; now {name}")

    with queue.worker_app().test_request_context("/api/counts", method="POST"):
        rows = count_all(text, refs, on_row=on_row)
    progress(1.0, f"{len(refs):,} tokenizers counted")
    return JobOutput(counts_json(text, rows))
