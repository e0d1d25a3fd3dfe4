"""The Vocabulary's job kind ("vocab-unreachable") and the caches of its answers.

What it does not do: answer HTTP (routes.py) or build what the page shows (views.py).

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

from typing import Any

from webapp.jobs import queue
from webapp.jobs.registry import Cancelled, JobOutput, Progress, job_kind
from webapp.jobs.store import Job
from webapp.opened.store import Loaded, load_tokenizer
from webapp.tokenizer import VocabIndex
from webapp.tokenizer.caches import BoundedCache, estimated_bytes
from webapp.tokenizer.vocab.reach import Decider, unreachable

KIND = "vocab-unreachable"
INDEXES: BoundedCache[str, VocabIndex] = BoundedCache(4, 256 * 2**20, weigh=estimated_bytes, name="vocab.indexes")
REACH_IDS = 4_000_000
REACH: BoundedCache[str, dict[str, Any]] = BoundedCache(
    16, REACH_IDS, weigh=lambda _key, value: 1 + value["count"] + len(value["partial"]) + len(value["witnesses"])
    + len(value["undecided"]), name="vocab.unreachable")


def index_of(entry: Loaded) -> VocabIndex:
    hit = INDEXES.get(entry.id)
    if hit is None:
        hit = VocabIndex.build(entry.tok, entry.file_vocab)
        INDEXES.put(entry.id, hit)
    return hit


#: Each tokenizer's Decider (its encode and its rule facts, for the cards), made once per process.
DECIDERS: BoundedCache[str, Decider] = BoundedCache(4, 4, weigh=lambda _key, _value: 1, name="vocab.deciders")


def decider_of(entry: Loaded) -> Decider:
    hit = DECIDERS.get(entry.id)
    if hit is None:
        hit = Decider(index_of(entry), entry.tok, entry.compiled)
        DECIDERS.put(entry.id, hit)
    return hit


def compute(entry: Loaded, progress: Progress | None = None) -> dict[str, Any]:
    """The unreachable tokens, computed here and now (the job and the inline path)."""
    def step(done: int, total: int) -> None:
        if progress is not None:
            progress(0.05 + 0.9 * done / max(total, 1), f"{done:,} of {total:,} tokens decided")

    return unreachable(index_of(entry), entry.tok, entry.compiled, progress=step).as_json()


def unreachable_of(entry: Loaded) -> dict[str, Any] | Job:
    """The answer when it is ready (computed inline for a small vocabulary), else the job computing it."""
    hit = REACH.get(entry.id)
    if hit is not None:
        return hit
    if len(index_of(entry)) <= queue.threshold("JOB_VOCAB_TOKENS"):
        result = compute(entry)
    else:
        # a read: finding the job is free, starting it is one write per tokenizer (issue 44, row 8)
        job = queue.submit(KIND, {"tokenizer": entry.id}, found_is_write=False)
        if job.state != "done":
            return job
        result = queue.get_queue().store.result(job)
    REACH.put(entry.id, result)
    return result


@job_kind(KIND, label="Deciding which tokens no text gives")
def run_unreachable(params: dict[str, Any], progress: Progress, cancelled: Cancelled) -> JobOutput:
    """Every token of the tokenizer decided: a witness, a reason, or undecided (webapp.tokenizer.vocab.reach)."""
    progress(0.01, "opening the tokenizer")
    with queue.worker_app().app_context():  # (an opened file comes from the app's storage)
        entry = load_tokenizer(params["tokenizer"])
        return JobOutput(compute(entry, progress))
