"""The "counts" job kind: one text counted by many tokenizers when that is too much work for a request.

What it does not do: answer HTTP or render the table (webapp.web.counts.routes).

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from webapp.infra import inputs, ratelimit
from webapp.jobs import queue
from webapp.jobs.registry import Cancelled, JobOutput, Progress, job_kind
from webapp.jobs.store import Job
from webapp.web.chat.chatting import work_of as chat_work
from webapp.web.counts.counting import Tools, count_all, counts_json, template_kind

KIND = "counts"


#: What one rendering of an opened template costs besides its characters: it runs in a forked child
#: (webapp/tokenizer/chat/process.py), measured at 85-135 ms for a process with every preset open on the
#: busy 2-core machine, where one character x tokenizer took about 0.9 microseconds: about 100,000 units
#: (docs/limits.md#counts-as-a-job). So one or two opened files with tools stay inline, three are a job.
FORK_UNITS = 100_000


@dataclass(frozen=True)
class CountsWork:
    """A count's work in RATE_LIMIT_WORK's unit: characters x tokenizers, plus with tools each
    template's renderings (characters x renderings, as the chat API charges one conversation) and,
    for an opened template, FORK_UNITS a rendering."""

    chars: int
    tokenizers: int
    rendered_chars: int = 0  # one rendering's input: the text as a user message and the tools' JSON
    renderings: int = 0  # per template: with the tools and without them
    templates: int = 0  # tokenizers that may render a chat template
    isolated: int = 0  # of those, opened files (each rendering in a child process)

    @property
    def units(self) -> int:
        return (self.chars * max(1, self.tokenizers) + self.rendered_chars * self.renderings * self.templates
                + FORK_UNITS * self.renderings * self.isolated)

    def described(self) -> str:
        """The units spelt out, for a 429's message."""
        plain = f"{self.chars:,} characters x {self.tokenizers:,} tokenizers"
        if not self.templates:
            return plain
        out = (f"{plain}, and {self.rendered_chars:,} characters of text and tools x {self.renderings} renderings "
               f"x {self.templates:,} chat templates for the tools' cost")
        if self.isolated:
            out += (f", and {FORK_UNITS:,} x {self.renderings} renderings x {self.isolated:,} opened templates "
                    "(each rendered in a process of its own)")
        return out


def work_of(text: str, refs: list[str], tools: Tools | None = None) -> CountsWork:
    """What counting `text` with `refs` (and the tools' cost, with `tools`) costs."""
    if tools is None:
        return CountsWork(len(text), len(refs))
    chars, renderings = chat_work([{"role": "user", "content": text}], tools)
    kinds = [template_kind(ref) for ref in refs]
    templates = sum(1 for kind in kinds if kind is not None)
    return CountsWork(len(text), len(refs), chars, renderings, templates, kinds.count("opened"))


def counts_job(text: str, refs: list[str], tools: Tools | None = None) -> Job | None:
    """Charge the client for counting `text` (already read and checked against LIMIT_TEXT_CHARS) with
    `refs` (already read: at most MAX_COUNT_TOKENIZERS) and `tools` (already read, or None), then the
    job for it when that is over `JOB_COUNTS_WORK`, else None: the caller counts inline.

    A 429 over RATE_LIMIT_WORK queues nothing; the same text, tokenizers and tools again give the same
    job (the store is content-addressed)."""
    work = work_of(text, refs, tools)
    ratelimit.charge_units(work.units, work.described())
    if work.units <= queue.threshold("JOB_COUNTS_WORK"):
        return None
    params: dict[str, Any] = {"text": text, "tokenizers": list(refs)}
    if tools is not None:  # (only then: a count without tools keeps the address it always had)
        params["tools"] = list(tools)
    return queue.submit(KIND, params)


@job_kind(KIND, label="Counting")
def run_counts(params: dict[str, Any], progress: Progress, cancelled: Cancelled) -> JobOutput:
    """`count_all` in the job process; opened tokenizers are read through the worker's app, and the
    tools are read again under its limits (the chat limits their renderings run under)."""
    text = str(params["text"])
    refs = [str(r) for r in params["tokenizers"]]

    def on_row(done: int, total: int, name: str) -> None:
        progress(done / max(total, 1), f"{done:,} of {total:,} tokenizers counted; now {name}")

    with queue.worker_app().test_request_context("/api/counts", method="POST"):
        tools = inputs.read_tools(params.get("tools"), inputs.current_limits())
        rows = count_all(text, refs, on_row=on_row, tools=tools)
    progress(1.0, f"{len(refs):,} tokenizers counted")
    return JobOutput(counts_json(text, rows))
