"""The tool pages' background jobs: long inputs render as a job, and how finished jobs show.

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from flask import render_template

from webapp.infra import inputs
from webapp.infra.errors import ApiError
from webapp.jobs import queue, views
from webapp.jobs.registry import Cancelled, JobOutput, Progress, done_view, job_kind
from webapp.jobs.store import Job
from webapp.jobs.thresholds import rule_count, text_chars
from webapp.web.api.kinds import chars_are_heavy, train_job, training_trace_of
from webapp.web.playground import compute, fields
from webapp.tokenizer import TokenizerError
from webapp.tokenizer.textformats import format_ids

#: the done view that shows each page's job
PAGE_VIEWS = {"bytes": "page-bytes", "chars": "page-chars", "train": "train"}


def _bytes_heavy(state: Mapping[str, str], *, with_rules: bool) -> bool:
    text = state.get("text", "")
    return text_chars(text) > queue.threshold("JOB_ENCODE_CHARS") or (
        with_rules and rule_count(state.get("merges", "")) > queue.threshold("JOB_ENCODE_RULES"))


def _is_heavy(tool: str, state: Mapping[str, str], *, with_rules: bool) -> bool:
    if tool == "bytes":
        return _bytes_heavy(state, with_rules=with_rules)
    return chars_are_heavy(state.get("text", ""), state.get("merges", ""), state.get("vocab", ""))


def _submit_page(tool: str, state: Mapping[str, str]) -> Job | None:
    limits = inputs.current_limits()
    if tool == "train":
        return train_job(state.get("words", ""), state.get("num_merges", ""), form=True, steps=limits.trace_max_steps)
    if not _is_heavy(tool, state, with_rules=False):
        return None
    inputs.read_text(state.get("text", ""), limits, form=True)  # over LIMIT_TEXT_CHARS stays an inline error
    return queue.submit("page", {"tool": tool, "state": dict(state)})


def page_panel(tool: str, state: Mapping[str, str]) -> str | None:
    """The panel of a job that computes this page state, or None when it is computed inline.

    A job the queue refuses (the client's job cap or write rate: a 429) shows as a
    notice in the results area, in a normal answer: htmx swaps only 2xx answers, so
    a 429 would leave the page silently stale while the user goes on typing."""
    try:
        job = _submit_page(tool, state)
    except TokenizerError:
        return None  # the inline path reports the problem beside its field
    except ApiError as exc:
        if exc.status != 429:
            raise
        return render_template("partials/job_refused.html", message=exc.message, retry_after=exc.retry_after)
    return None if job is None else views.render_panel(job, PAGE_VIEWS[tool])


def ids_job(tool: str, state: Mapping[str, str]) -> Job | None:
    """A job for the ids download of a page state over the page's own thresholds."""
    if not _is_heavy(tool, state, with_rules=True):
        return None
    inputs.read_text(state.get("text", ""), inputs.current_limits(), form=True)  # over LIMIT_TEXT_CHARS stays a 400
    return queue.submit("ids", {"tool": tool, "state": dict(state)})


def register_page_kinds(render: Callable[[str, Mapping[str, str]], str],
                        ids_of: Callable[[str, Mapping[str, str]], list[int]]) -> None:
    """Register "page" and "ids" with the pages' own functions: `render(tool, state)`, the htmx
    fragment computed inline, and `ids_of(tool, state)`, every id of a state."""

    @job_kind("page", label="Encoding the text")
    def run_page(params: dict[str, Any], progress: Progress, cancelled: Cancelled) -> JobOutput:
        tool = params["tool"]
        progress(0.1, "encoding the text")
        with queue.worker_app().test_request_context(f"/fragments/{tool}", method="POST"):
            return JobOutput({"html": render(tool, params["state"])})

    @job_kind("ids", label="Encoding the text")
    def run_ids(params: dict[str, Any], progress: Progress, cancelled: Cancelled) -> JobOutput:
        tool = params["tool"]
        progress(0.1, "encoding the text")
        with queue.worker_app().test_request_context(f"/{tool}/ids.txt", method="POST"):
            ids = ids_of(tool, params["state"])
        return JobOutput({"count": len(ids), "text": format_ids(ids) + "\n"})


# --- how finished jobs show ---------------------------------------------------------------


def _fragment(job: Job, result: Any, params: dict[str, Any]) -> str:
    return str(result["html"])


done_view("page-bytes", kinds=("page",), back=("pages.bytes_page", "Bytes"))(_fragment)
done_view("page-chars", kinds=("page",), back=("pages.chars_page", "Characters"))(_fragment)


def _ids_file_link(job: Job, result: Any, params: dict[str, Any]) -> str:
    """A link to the finished ids file."""
    return render_template("partials/ids_job_done.html", job=job, count=result["count"], tool=params["tool"])


done_view("ids-bytes", kinds=("ids",), back=("pages.bytes_page", "Bytes"))(_ids_file_link)
done_view("ids-chars", kinds=("ids",), back=("pages.chars_page", "Characters"))(_ids_file_link)


@done_view("train", kinds=("train",), back=("pages.train_page", "Train"))
def _train_result(job: Job, result: Any, params: dict[str, Any]) -> str:
    """The Train page's usual result, from the job's trace."""
    limits = inputs.current_limits()
    words = inputs.read_words(params["words"], limits, form=bool(params.get("form")))
    num_merges = inputs.read_num_merges(params["num_merges"], limits)
    state = {"words": "", "num_merges": str(num_merges), "view": "steps"}
    context = compute.train_result(words, num_merges, training_trace_of(result), limits)
    return render_template("partials/train_results.html", result=context, state=state,
                           views=fields.VIEWS["train"], tool="train")
