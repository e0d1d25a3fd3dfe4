"""The "import" job kind: opening a tokenizer file larger than `JOB_IMPORT_BYTES` in the background.

What it does not do: read the request (webapp.web.files.reading) or keep
opened tokenizers (webapp.opened.store).

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import zlib
from typing import Any

from flask import url_for

from webapp import tokenizer as tk
from webapp.tokenizer.stages import needs_compiled
from webapp.infra import compound_inputs, inputs
from webapp.infra.storage import content_id
from webapp.jobs import queue
from webapp.jobs.registry import Cancelled, JobOutput, Progress, done_view, job_kind, pack_bytes, unpack_bytes
from webapp.jobs.store import Job
from webapp.web.common.htmx import status
from webapp.tokenizer import dumps_stored, import_tokenizer


def import_job(content: str | bytes, fmt: str, merges_txt: str | bytes | None, filename: Any,
               config: str | bytes | None = None) -> Job | None:
    """A job for opening a tokenizer file larger than `JOB_IMPORT_BYTES`."""
    size = len(content) + (len(merges_txt) if merges_txt is not None else 0)
    if size <= queue.threshold("JOB_IMPORT_BYTES"):
        return None
    return queue.submit("import", {
        "content": pack_bytes(content), "format": fmt, "merges_txt": pack_bytes(merges_txt),
        "filename": filename if isinstance(filename, str) else None, "limits": inputs.limits_as_params(),
        **({"config": pack_bytes(config)} if config is not None else {}),  # (absent: the same job id as before)
    })


@job_kind("import", label="Opening the tokenizer file")
def run_import(params: dict[str, Any], progress: Progress, cancelled: Cancelled) -> JobOutput:
    """Open a tokenizer file: parse, check the limits, compile; the stored form is the blob."""
    limits = inputs.limits_of(params)
    progress(0.05, "parsing the tokenizer file")
    tok = import_tokenizer(
        unpack_bytes(params["content"]) or "",
        fmt=params.get("format") or "auto",
        merges_txt=unpack_bytes(params.get("merges_txt")),
        filename=params.get("filename"),
        limits=limits.sizes,
        config=unpack_bytes(params.get("config")),
        chat_limits=limits.chat,
    )
    progress(0.6, f"checking {len(tok.merges):,} rules against the limits")
    compound_inputs.check_loaded_limits(len(tok.merges), len(tok.vocab), limits)
    if needs_compiled(tok):  # (only byte-level rules in list order run on a compiled list)
        progress(0.75, f"compiling {len(tok.merges):,} rules")
        tk.compile_byte_merges(list(tok.merges))  # the same check the page's first encode makes
    progress(0.9, "storing the tokenizer")
    data = zlib.compress(dumps_stored(tok), 6)
    tokenizer_id = content_id("tokenizer", data)
    summary = tok.summary()
    return JobOutput({"tokenizer": tokenizer_id, **summary, "special_tokens": tok.special_tokens},
                     blobs={"tokenizer": data})


def _show_opened(tool: str, result: Any) -> str:
    """The page's Open status for the finished import (or why it belongs on the other page)."""
    if result.get("level") != tool and not (tool == "bytes" and result.get("merge_order") == "library"):
        other = "Characters" if tool == "bytes" else "Bytes"
        kind = "character-level" if tool == "bytes" else "byte-level"
        there = url_for("pages.chars_page" if tool == "bytes" else "pages.bytes_page", tokenizer=result["tokenizer"])
        return status(tool, "", f"file: this is a {kind} tokenizer; open it on the {other} page", reset_inputs=False,
                      elsewhere=there)
    return status(tool, result["tokenizer"], None, reset_inputs=True, refresh=True)


@done_view("open-bytes", kinds=("import",), back=("pages.bytes_page", "Bytes"))
def _opened_on_bytes(job: Job, result: Any, params: dict[str, Any]) -> str:
    return _show_opened("bytes", result)


@done_view("open-chars", kinds=("import",), back=("pages.chars_page", "Characters"))
def _opened_on_chars(job: Job, result: Any, params: dict[str, Any]) -> str:
    return _show_opened("chars", result)
