"""The job registry: every job kind and every way a finished job shows, each registered once by its feature.

What it does not do: import any feature (features import it), queue or store
jobs (webapp.jobs.queue / webapp.jobs.store), or run them (webapp.jobs.runner).
It needs no Flask app: it runs inside the forked job process too.

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping
from webapp.tokenizer import TokenizerError


Progress = Callable[[float, str], None]
Cancelled = Callable[[], bool]


@dataclass
class JobOutput:
    """What a job kind hands back: a JSON-able result and blobs to store first."""
    result: dict[str, Any]
    blobs: dict[str, bytes] = field(default_factory=dict)


JobFunction = Callable[[dict[str, Any], Progress, Cancelled], JobOutput]
#: (app config, instance folder) -> the folder of a kind's per-job sub-folders.
Spool = Callable[[Mapping[str, Any], str], Path]


@dataclass(frozen=True)
class JobKind:
    """One registered kind: what it runs and how the job layer treats it."""

    name: str
    run: JobFunction
    label: str  # what the job panel calls the work ("Training")
    graceful: bool = False  # polls cancelled() and ends "done" with a partial result
    after: Callable[[dict[str, Any]], None] | None = None  # cleanup once the job ended; must not raise
    spool: Spool | None = None  # where its jobs' folders live (params["folder"]), swept of orphans


#: kind name -> kind. Names are short lowercase words (they go in the jobs table).
KINDS: dict[str, JobKind] = {}


def job_kind(name: str, *, label: str, graceful: bool = False,
             after: Callable[[dict[str, Any]], None] | None = None,
             spool: Spool | None = None) -> Callable[[JobFunction], JobFunction]:
    """Register a function as the job kind `name` (a kind is registered once)."""
    def register(function: JobFunction) -> JobFunction:
        if name in KINDS:
            raise ValueError(f"job kind {name!r} is registered twice")
        KINDS[name] = JobKind(name, function, label, graceful, after, spool)
        return function

    return register


def run_kind(kind: str, params: dict[str, Any], progress: Progress, cancelled: Cancelled) -> JobOutput:
    """Run one job kind (called inside the job process)."""
    if kind not in KINDS:
        raise TokenizerError(f"job: unknown job kind {kind!r}", field="job")
    return KINDS[kind].run(params, progress, cancelled)


def kind_label(kind: str) -> str:
    """The panel's name for a kind's work ("Working" for a kind no longer registered)."""
    registered = KINDS.get(kind)
    return registered.label if registered is not None else "Working"


# --------------------------------------------------------------------------
# How a finished job shows on a page

ShowDone = Callable[[Any, Any, dict[str, Any]], str]  # (job, result, params) -> HTML


@dataclass(frozen=True)
class DoneView:
    """A page's way of showing a finished job, and the page the job page links back to."""

    name: str
    show: ShowDone
    kinds: tuple[str, ...]  # the job kinds whose results it can show
    back: tuple[str, str] | None = None  # (endpoint, label), e.g. ("pages.bytes_page", "Bytes")

    def fits(self, kind: str) -> bool:
        """Whether a job of this kind can be shown by this view (another kind's result is a 404)."""
        return kind in self.kinds


#: view name -> view ("open-bytes", "train", ...).
DONE_VIEWS: dict[str, DoneView] = {}


def done_view(name: str, *, kinds: tuple[str, ...],
              back: tuple[str, str] | None = None) -> Callable[[ShowDone], ShowDone]:
    """Register how a finished job of one of `kinds` shows on a page (each view name once)."""

    def register(function: ShowDone) -> ShowDone:
        if name in DONE_VIEWS:
            raise ValueError(f"done view {name!r} is registered twice")
        DONE_VIEWS[name] = DoneView(name, function, tuple(kinds), back)
        return function

    return register


# --------------------------------------------------------------------------
# Carrying bytes in JSON params


def pack_bytes(value: str | bytes | None) -> dict[str, str] | None:
    """A file's content as JSON: text stays text, other bytes go as base64."""
    if value is None:
        return None
    if isinstance(value, str):
        return {"text": value}
    try:
        return {"text": value.decode("utf-8")}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(value).decode("ascii")}


def unpack_bytes(value: Mapping[str, str] | None) -> str | bytes | None:
    """The inverse of `pack_bytes`."""
    if value is None:
        return None
    if "text" in value:
        return value["text"]
    return base64.b64decode(value["base64"])
