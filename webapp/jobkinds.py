"""What a background job can do: a registry of job kinds, each a plain function.

A job kind is a function `(params, progress, cancelled) -> JobOutput`:

- `params` is the JSON-able dict the web request stored with the job (the
  raw, still unparsed input and the limits in force when it was submitted);
- `progress(fraction, text)` reports how far it is (0.0 .. 1.0, a short
  sentence for the page); calling it often is fine, the runner throttles;
- `cancelled()` is True once the user pressed Cancel. Kinds may poll it to
  stop early with a partial result; they need not, since the runner kills the
  job's process on cancel anyway.

It returns a `JobOutput`: a JSON-able `result` and optional `blobs` (blob kind
-> bytes) that the runner stores content-addressed before the job is marked
done, so a result can name a blob by `webapp.storage.content_id`. A problem
with the input is a `TokenizerError`, which the job reports with its field.

Adding a kind (issue 11's corpus training, say) is one decorated function here
(`@job_kind("corpus-train")`) plus the web hook that submits it. This module
needs no Flask app or request and touches no database: it runs inside the job
process that `webapp.jobs` forks, with the memory and time budgets applied.
What it does not do: queue, store, or report anything itself.
"""

from __future__ import annotations

import base64
import time
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable

from flask import g

from webapp import inputs
from webapp import tokenizer as tk
from webapp.inputs import Limits
from webapp.storage import content_id
from webapp.tokenizer import (
    PairCount,
    TokenizerError,
    TrainingStep,
    TrainingTrace,
    dumps_stored,
    format_ids,
    import_tokenizer,
    pretokenized_encode,
)

Progress = Callable[[float, str], None]
Cancelled = Callable[[], bool]


@dataclass
class JobOutput:
    """What a job kind hands back: a JSON-able result and blobs to store first."""
    result: dict[str, Any]
    blobs: dict[str, bytes] = field(default_factory=dict)


JobFunction = Callable[[dict[str, Any], Progress, Cancelled], JobOutput]

#: kind name -> function. Names are short lowercase words (they go in the jobs table).
KINDS: dict[str, JobFunction] = {}
#: Kinds that poll `cancelled()` and then return their partial result (the job ends
#: "done"); the runner waits a moment for it instead of killing the process at once.
GRACEFUL: set[str] = set()
#: kind name -> what the worker does once the job's process has ended, however it ended (done,
#: failed, cancelled, or killed at a budget, when the job's own `finally` never ran): e.g.
#: removing the files the job was given. Called with the job's params; must not raise.
AFTER: dict[str, Callable[[dict[str, Any]], None]] = {}


def job_kind(name: str) -> Callable[[JobFunction], JobFunction]:
    """Register a function as the job kind `name`."""
    def register(function: JobFunction) -> JobFunction:
        if name in KINDS:
            raise ValueError(f"job kind {name!r} is registered twice")
        KINDS[name] = function
        return function

    return register


def run_kind(kind: str, params: dict[str, Any], progress: Progress, cancelled: Cancelled) -> JobOutput:
    """Run one job kind (called inside the job process)."""
    if kind not in KINDS:
        raise TokenizerError(f"job: unknown job kind {kind!r}", field="job")
    return KINDS[kind](params, progress, cancelled)


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


def unpack_bytes(value: dict[str, str] | None) -> str | bytes | None:
    """The inverse of `pack_bytes`."""
    if value is None:
        return None
    if "text" in value:
        return value["text"]
    return base64.b64decode(value["base64"])


def _limits(params: dict[str, Any]) -> Any:

    return Limits(**params["limits"])


# --------------------------------------------------------------------------
# The kinds


@job_kind("import")
def import_job(params: dict[str, Any], progress: Progress, cancelled: Cancelled) -> JobOutput:
    """Open a tokenizer file: parse, check the limits, compile; the stored form is the blob."""
    limits = _limits(params)
    progress(0.05, "parsing the tokenizer file")
    tok = import_tokenizer(
        unpack_bytes(params["content"]) or "",
        fmt=params.get("format") or "auto",
        merges_txt=unpack_bytes(params.get("merges_txt")),
        filename=params.get("filename"),
        limits=limits.sizes,
    )
    progress(0.6, f"checking {len(tok.merges):,} rules against the limits")
    inputs.check_loaded_limits(len(tok.merges), len(tok.vocab), limits)
    if tok.level == "bytes":
        progress(0.75, f"compiling {len(tok.merges):,} rules")
        tk.compile_byte_merges(list(tok.merges))  # the same check the page's first encode makes
    progress(0.9, "storing the tokenizer")
    data = zlib.compress(dumps_stored(tok), 6)
    tokenizer_id = content_id("tokenizer", data)
    summary = tok.summary()
    return JobOutput({"tokenizer": tokenizer_id, **summary, "special_tokens": tok.special_tokens},
                     blobs={"tokenizer": data})


@job_kind("train")
def train_job(params: dict[str, Any], progress: Progress, cancelled: Cancelled) -> JobOutput:
    """Learn merges from words; `steps` (default 0) records that many explained steps for the page."""
    limits = _limits(params)
    progress(0.02, "reading the words")
    words = inputs.read_words(params["words"], limits, form=bool(params.get("form")))
    num_merges = inputs.read_num_merges(params["num_merges"], limits)
    steps = int(params.get("steps", 0))
    progress(0.05, f"counting pairs in {len(words):,} words")

    def on_step(done: int) -> None:
        if done % 25 == 0 or done == num_merges:
            progress(0.05 + 0.95 * done / max(num_merges, 1), f"{done:,} of {num_merges:,} merges done")

    trace = tk.train_trace(words, num_merges, runners_up=3 if steps else 0, max_steps=steps,
                          max_token_chars=limits.vocab_bytes, on_step=on_step)
    return JobOutput({
        "merges": trace.merges,
        "pairs": [list(p) for p in trace.pairs],
        "stopped_early": trace.stopped_early,
        "steps_truncated": trace.steps_truncated,
        "steps": [
            {
                "index": s.index, "pair": list(s.pair), "merged": s.merged, "count": s.count, "tie": s.tie,
                "runners_up": [[list(r.pair), r.count] for r in s.runners_up],
            }
            for s in trace.steps
        ],
    })


def training_trace_of(result: dict[str, Any]) -> Any:
    """A `TrainingTrace` back from a train job's result (for the Train page)."""
    steps = [
        TrainingStep(
            index=s["index"], pair=tuple(s["pair"]), merged=s["merged"], count=s["count"], tie=s["tie"],
            runners_up=tuple(PairCount(pair=tuple(p), count=c) for p, c in s["runners_up"]),
        )
        for s in result["steps"]
    ]
    return TrainingTrace(
        merges=list(result["merges"]),
        pairs=[tuple(p) for p in result["pairs"]],
        steps=steps,
        steps_truncated=result["steps_truncated"],
        stopped_early=result["stopped_early"],
    )


@job_kind("encode")
def encode_job(params: dict[str, Any], progress: Progress, cancelled: Cancelled) -> JobOutput:
    """Byte-level encode with every token's bytes and span (the /api/encode answer)."""
    from webapp.api import byte_tokens  # late: api submits jobs (webapp.jobs imports this module)

    limits = _limits(params)
    progress(0.05, "reading the merges")
    text = inputs.read_text(params["text"], limits)
    merges = inputs.read_byte_merges(params["merges"], limits)
    scheme = inputs.read_pretokenize(params.get("pretokenize", "none"))
    progress(0.3, f"encoding {len(text):,} characters")
    ids = pretokenized_encode(text, merges, scheme)
    progress(0.7, f"describing {len(ids):,} tokens")
    return JobOutput({"ids": ids, "tokens": byte_tokens(text, ids, merges)})


@job_kind("encode-text")
def encode_text_job(params: dict[str, Any], progress: Progress, cancelled: Cancelled) -> JobOutput:
    """Character-level encode with every token (the /api/encode-text answer)."""
    limits = _limits(params)
    progress(0.05, "reading the vocab and the merges")
    text = inputs.read_text(params["text"], limits)
    vocab = inputs.read_char_vocab(params["vocab"], limits)
    merges = inputs.read_char_merges(params["merges"], limits)
    progress(0.3, f"encoding {len(text):,} characters")
    ids = tk.bpe_encode_text(text, vocab, merges)
    progress(0.7, f"listing {len(ids):,} tokens")
    return JobOutput({"ids": ids, "tokens": tk.char_tokens(text, merges)})


@job_kind("page")
def page_job(params: dict[str, Any], progress: Progress, cancelled: Cancelled) -> JobOutput:
    """A tool page's htmx fragment for a state too big to compute inline (the Bytes
    page with a long text): the worker's app renders exactly what the request would have."""
    from webapp import pages  # late: pages and jobs import this module through webapp.offload / webapp.jobs
    from webapp.jobs import worker_app

    tool = params["tool"]
    progress(0.1, "encoding the text")
    with worker_app().test_request_context(f"/fragments/{tool}", method="POST"):
        g.playground_inline_only = True  # compute here, do not submit another job
        html = pages.render_fragment(tool, params["state"])
    return JobOutput({"html": html})


@job_kind("ids")
def ids_job(params: dict[str, Any], progress: Progress, cancelled: Cancelled) -> JobOutput:
    """Every id of a Bytes or Characters page state (the ids download of a long text)."""
    from webapp import pages  # late: pages and jobs import this module through webapp.offload / webapp.jobs
    from webapp.jobs import worker_app

    tool = params["tool"]
    progress(0.1, "encoding the text")
    with worker_app().test_request_context(f"/{tool}/ids.txt", method="POST"):
        ids = pages.ids_of_state(tool, params["state"])
    return JobOutput({"count": len(ids), "text": format_ids(ids) + "\n"})


@job_kind("sleep")
def sleep_job(params: dict[str, Any], progress: Progress, cancelled: Cancelled) -> JobOutput:
    """A job that only waits or allocates (tests and the load benchmark use it for budgets).

    `seconds` to wait in small steps reporting progress, `allocate_mb` to
    allocate and touch before waiting. Not reachable from the HTTP API.
    """

    seconds = float(params.get("seconds", 0))
    hoard = bytearray(int(params.get("allocate_mb", 0)) * 1024 * 1024)
    for i in range(0, len(hoard), 4096):
        hoard[i] = 1
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        progress(1 - left / seconds if seconds else 1.0, f"{left:.1f} s left")
        time.sleep(min(0.05, left))
    return JobOutput({"slept": seconds, "allocated_mb": len(hoard) // (1024 * 1024)})
