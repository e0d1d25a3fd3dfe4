"""The engine's job kinds ("encode", "encode-text", "train"), each with the threshold that submits it.

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

from typing import Any, Mapping

from webapp import tokenizer as tk
from webapp.infra import inputs
from webapp.jobs import queue
from webapp.jobs.registry import Cancelled, JobOutput, Progress, job_kind
from webapp.jobs.store import Job
from webapp.jobs.thresholds import entry_count, merge_count, rule_count, text_chars, word_chars
from webapp.web.api.answers import byte_tokens
from webapp.tokenizer import TrainingTrace, pretokenized_encode
from webapp.tokenizer.traces import PairCount, TrainingStep

# --- encode -------------------------------------------------------------------------


def encode_is_heavy(text: Any, merges: Any) -> bool:
    return (text_chars(text) > queue.threshold("JOB_ENCODE_CHARS")
            or rule_count(merges) > queue.threshold("JOB_ENCODE_RULES"))


def encode_job(data: Mapping[str, Any]) -> Job | None:
    """A job for `/api/encode` when the text or the merge list is over its threshold."""
    if not encode_is_heavy(data.get("text"), data.get("merges")):
        return None
    limits = inputs.current_limits()
    inputs.read_text(data.get("text"), limits)  # cheap checks first: over LIMIT_TEXT_CHARS stays a 400
    if isinstance(data.get("merges"), list) and len(data["merges"]) > limits.rules:
        inputs.read_byte_merges(data["merges"], limits)  # raises the limit's message
    return queue.submit("encode", {
        "text": data.get("text"), "merges": data.get("merges"), "pretokenize": data.get("pretokenize", "none"),
        "limits": inputs.limits_as_params(),
    })


@job_kind("encode", label="Encoding")
def run_encode(params: dict[str, Any], progress: Progress, cancelled: Cancelled) -> JobOutput:
    """Byte-level encode with every token's bytes and span (the /api/encode answer)."""
    limits = inputs.limits_of(params)
    progress(0.05, "reading the merges")
    text = inputs.read_text(params["text"], limits)
    merges = inputs.read_byte_merges(params["merges"], limits)
    scheme = inputs.read_pretokenize(params.get("pretokenize", "none"))
    progress(0.3, f"encoding {len(text):,} characters")
    ids = pretokenized_encode(text, merges, scheme)
    progress(0.7, f"describing {len(ids):,} tokens")
    return JobOutput({"ids": ids, "tokens": byte_tokens(text, ids, merges)})


# --- encode-text ----------------------------------------------------------------------


def chars_are_heavy(text: Any, merges: Any, vocab: Any) -> bool:
    """Over the character-level thresholds (the Characters page uses them too)."""
    rules = queue.threshold("JOB_CHARS_RULES")
    return (text_chars(text) > queue.threshold("JOB_CHARS_TEXT")
            or rule_count(merges) > rules or entry_count(vocab) > rules)


def encode_text_job(data: Mapping[str, Any]) -> Job | None:
    """A job for `/api/encode-text` when the text, the merges or the vocab is over its threshold."""
    if not chars_are_heavy(data.get("text"), data.get("merges"), data.get("vocab")):
        return None
    limits = inputs.current_limits()
    inputs.read_text(data.get("text"), limits)  # cheap checks first: over a LIMIT_* stays a 400
    if isinstance(data.get("merges"), list) and len(data["merges"]) > limits.rules:
        inputs.read_char_merges(data["merges"], limits)  # raises the limit's message
    if isinstance(data.get("vocab"), (dict, list)) and len(data["vocab"]) > limits.vocab:
        inputs.read_char_vocab(data["vocab"], limits)
    return queue.submit("encode-text", {
        "text": data.get("text"), "merges": data.get("merges"), "vocab": data.get("vocab"),
        "limits": inputs.limits_as_params(),
    })


@job_kind("encode-text", label="Encoding")
def run_encode_text(params: dict[str, Any], progress: Progress, cancelled: Cancelled) -> JobOutput:
    """Character-level encode with every token (the /api/encode-text answer)."""
    limits = inputs.limits_of(params)
    progress(0.05, "reading the vocab and the merges")
    text = inputs.read_text(params["text"], limits)
    vocab = inputs.read_char_vocab(params["vocab"], limits)
    merges = inputs.read_char_merges(params["merges"], limits)
    progress(0.3, f"encoding {len(text):,} characters")
    ids = tk.bpe_encode_text(text, vocab, merges)
    progress(0.7, f"listing {len(ids):,} tokens")
    return JobOutput({"ids": ids, "tokens": tk.char_tokens(text, merges)})


# --- train ----------------------------------------------------------------------------


def train_job(words: Any, num_merges: Any, *, form: bool = False, steps: int = 0) -> Job | None:
    """A job for training when the words or the number of merges is over its threshold."""
    if (word_chars(words) <= queue.threshold("JOB_TRAIN_CHARS")
            and merge_count(num_merges) <= queue.threshold("JOB_TRAIN_MERGES")):
        return None
    # Every cheap check runs before queueing (linear in the words), so an input
    # over a LIMIT_* is a 400 at once, never a job that fails later.
    limits = inputs.current_limits()
    inputs.read_num_merges(num_merges, limits)
    inputs.read_words(words, limits, form=form)
    return queue.submit("train", {
        "words": words, "num_merges": num_merges, "form": form, "steps": steps, "limits": inputs.limits_as_params(),
    })


@job_kind("train", label="Training")
def run_train(params: dict[str, Any], progress: Progress, cancelled: Cancelled) -> JobOutput:
    """Learn merges from words; `steps` (default 0) records that many explained steps for the page."""
    limits = inputs.limits_of(params)
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


def training_trace_of(result: dict[str, Any]) -> TrainingTrace:
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
