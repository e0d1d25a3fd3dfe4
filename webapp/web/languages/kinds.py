"""The "languages" job kind: count every language under a tokenizer that has no stored counts.

What it does not do: answer HTTP or render pages (webapp.web.languages.routes).

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flask import current_app

from webapp.infra import inputs
from webapp.jobs import queue
from webapp.jobs.registry import Cancelled, JobOutput, Progress, job_kind
from webapp.jobs.store import Job
from webapp.opened import active as act
from webapp.tokenizer import TokenizerError, count_languages, get_preset, is_preset, pretokenized_encode
from webapp.tokenizer.languages.counting import RESULT_VERSION as LANGUAGES_VERSION
from webapp.tokenizer.languages.declarations import Declaration, UDHR_VERSION
from webapp.tokenizer.languages.stored import (
    load_data as load_languages,
    read_stored as read_languages_stored,
    result_of as languages_result,
)

KIND = "languages"
TYPED = "typed merges"


def stored_dir() -> Path:
    """Where the set-up step stores the presets' counts: LANGUAGES_DIR, else instance/languages."""
    return Path(current_app.config.get("LANGUAGES_DIR") or Path(current_app.instance_path) / "languages")


_LOCK = threading.Lock()
_DATA: dict[Path, tuple[list[Declaration], list[dict[str, Any]]]] = {}


def languages_data(where: Path | None = None) -> tuple[list[Declaration], list[dict[str, Any]]]:
    """(declarations, catalog), read once per process (what the set-up step stored, else the package)."""
    where = where or stored_dir()
    with _LOCK:
        found = _DATA.get(where)
        if found is None:
            found = _DATA[where] = load_languages(where)
        return found


@dataclass(frozen=True)
class Found:
    """The counts of one tokenizer: the result at once, or the job computing it."""

    ref: str
    result: dict[str, Any] | None = None
    job: Job | None = None


def _job_result(job: Job) -> dict[str, Any] | None:
    if job.state != "done":
        return None
    result = queue.get_queue().store.result(job)
    return result if isinstance(result, dict) else None


def find_counts(ref: str) -> Found:
    """A preset's stored counts, or the (maybe already finished) job for `ref` (a preset or an opened id).

    An unknown preset or id is a TokenizerError naming the field `tokenizer`, before any job."""
    if is_preset(ref):
        ref = get_preset(ref).name
        stored = read_languages_stored(stored_dir(), ref)
        if stored is not None:
            return Found(ref, result=stored)
    active = act.of_ref(ref)
    active.loaded()  # raises the reason: no such id, a damaged file, a preset not installed
    job = queue.submit(KIND, {"tokenizer": ref, "version": LANGUAGES_VERSION, "udhr": UDHR_VERSION,
                              "where": str(stored_dir())})
    return Found(ref, result=_job_result(job), job=job)


def typed_counts(merges: Any, scheme: str) -> Found:
    """The job for typed byte merges (already validated by the caller), `scheme` their pre-tokenization."""
    job = queue.submit(KIND, {"merges": merges, "pretokenize": scheme, "limits": inputs.limits_as_params(),
                              "version": LANGUAGES_VERSION, "udhr": UDHR_VERSION, "where": str(stored_dir())})
    return Found(TYPED, result=_job_result(job), job=job)


@job_kind(KIND, label="Counting the languages")
def run_languages(params: dict[str, Any], progress: Progress, cancelled: Cancelled) -> JobOutput:
    """Every language counted with the tokenizer's own encode (as the Counts page counts: plain text)."""
    progress(0.01, "reading the declarations")
    declarations = languages_data(Path(params["where"]))[0]
    started = time.perf_counter()
    try:
        if "merges" in params:
            merges = inputs.read_byte_merges(params["merges"], inputs.limits_of(params))
            scheme = inputs.read_pretokenize(params["pretokenize"])
            rows = count_languages(declarations, lambda texts: [len(pretokenized_encode(t, merges, scheme))
                                                                for t in texts],
                                   progress=progress, cancelled=cancelled)
            name = TYPED
        else:
            name = params["tokenizer"]
            with queue.worker_app().test_request_context("/api/languages/counts", method="POST"):
                active = act.of_ref(name)
                scheme = active.loaded().tok.pretokenize
                rows = count_languages(declarations, lambda texts: [len(act.byte_ids(active, t, scheme))
                                                                    for t in texts],
                                       progress=progress, cancelled=cancelled)
    except InterruptedError:
        raise TokenizerError("job: cancelled", field="job") from None
    return JobOutput(languages_result(name, rows, declarations, time.perf_counter() - started))


