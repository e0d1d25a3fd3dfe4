"""The "corpus" job kind: train a tokenizer on uploaded files, inside a job process.

What it does not do: read requests or render anything. The progress fraction
is split 0-40 % counting (by bytes read), 40-97 % training (by merges done).

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import re
import shutil
from dataclasses import asdict, replace
import time
import zlib
from pathlib import Path
from typing import Any, Callable, Mapping

from webapp.infra import compound_inputs, inputs
from webapp.infra.storage import content_id
from webapp.jobs import queue
from webapp.jobs.store import Job, with_eta
from webapp.jobs.registry import Cancelled, JobOutput, Progress, job_kind
from webapp.tokenizer import LoadedTokenizer, TokenizerError, dumps_stored, train_counts
from webapp.tokenizer.training.corpus import CorpusTraining, TrainingCancelled
from webapp.tokenizer.training.shards import count_files
from webapp.tokenizer.training.trained import count_tokens, trained_tokenizer

COUNT_SHARE = 0.40
# Bytes per token on the held-out text is measured on at most this many characters of it
# (held_out_sample), so the summary costs a fraction of the training.
HELD_OUT_SAMPLE_CHARS = 64_000
HELD_OUT_WINDOWS = 8
_WHITESPACE = re.compile(r"\s")
_LAST_WHITESPACE = re.compile(r".*\s", re.S)
SOURCE = "tokenizer trained on a corpus"
TRAIN_SHARE = 0.57


def _eta(started: float, done: float, total: float) -> int | None:
    """Seconds left in this phase from its rate so far (None until there is a rate, or at its end)."""
    if done <= 0 or total <= done:
        return None
    return max(1, int((time.monotonic() - started) * (total - done) / done + 0.999))


def _phase(progress: Progress, start: float, share: float, estimate: bool) -> Callable[[int, int, str], None]:
    """A phase's progress; `estimate`: its own rate tells the time left (the job's last long phase).

    A job shows ONE estimate: the worker appends its own (from the whole
    job's fraction) unless the text carries one. Counting leaves it to the
    worker; training knows better (the counting share says nothing about how
    long the merges take), so it carries its own.
    """
    began = time.monotonic()

    def report(done: int, total: int, message: str) -> None:
        fraction = done / total if total else 1.0
        progress(start + share * fraction, with_eta(message, _eta(began, done, total)) if estimate else message)

    return report


def build_tokenizer(result: CorpusTraining, scheme: str) -> LoadedTokenizer:
    """The trained merges as an opened tokenizer the pages and exports understand."""
    return replace(trained_tokenizer(result, scheme), source=SOURCE)  # how the pages name it: "Using a tokenizer trained on a corpus"


def held_out_sample(text: str, limit: int = HELD_OUT_SAMPLE_CHARS, windows: int = HELD_OUT_WINDOWS) -> str:
    """`text` itself when it has at most `limit` characters, else `windows` evenly spaced stretches of it.

    Each stretch starts after and ends before a whitespace character (so no
    word is cut in two), and the stretches are joined with a newline; their
    bytes per token estimate the whole text's.
    """
    if len(text) <= limit:
        return text
    size = limit // windows
    stride = len(text) // windows
    parts: list[str] = []
    for k in range(windows):
        start, end = k * stride, k * stride + size
        if start:
            space = _WHITESPACE.search(text, start, end)
            start = space.end() if space else start
        space = _LAST_WHITESPACE.match(text, start, end)
        parts.append(text[start:space.end() - 1] if space and space.end() - 1 > start else text[start:end])
    return "\n".join(parts)


def held_out_tokens(text: str, result: CorpusTraining, scheme: str) -> int:
    """Tokens of the held-out text, encoded as the Bytes / Characters page would."""
    return count_tokens(result, text, scheme)


def _display(token: str | bytes) -> str:
    """A step's token for the JSON result: text, or hex when its bytes are not UTF-8 alone."""
    if isinstance(token, str):
        return token
    try:
        return token.decode("utf-8")
    except UnicodeDecodeError:
        return "0x" + token.hex()


def run_corpus(params: dict[str, Any], progress: Progress, cancelled: Cancelled) -> JobOutput:
    """Count, train, store; see the module docstring."""
    folder = Path(params["folder"])
    # (the folder is the job's until the job ends: the `after` hook removes it, never this run)
    options, limits = params["options"], params["limits"]
    scheme, level = options["pretokenize"], options["level"]
    paths = [(item["name"], folder / item["file"]) for item in params["files"]]
    missing = [name for name, path in paths if not path.is_file()]
    if missing:
        raise TokenizerError(
            f"corpus: the uploaded file {missing[0][:120]!r} of this job is no longer on the server "
            f"({len(missing):,} of {len(paths):,} files missing from {corpus_label(folder)}); upload the "
            f"files again", field="corpus", location={"file": missing[0][:200]})
    started = time.monotonic()
    try:
        # On every core the job process may use (forked counting processes, each under its memory limit).
        counts = count_files(
            paths, scheme, max_distinct=limits["corpus_distinct"],
            progress=_phase(progress, 0.0, COUNT_SHARE, estimate=False), should_stop=cancelled,
        )
    except TrainingCancelled:
        raise TokenizerError("job: cancelled while counting the corpus (no merges yet)", field="job") from None
    count_seconds = time.monotonic() - started
    progress(COUNT_SHARE, f"counted {counts.pretokens:,} pre-tokens ({len(counts.counts):,} distinct); training")
    result = train_counts(counts.counts, level, options["num_merges"],
                          progress=_phase(progress, COUNT_SHARE, TRAIN_SHARE, estimate=True), should_stop=cancelled)
    progress(COUNT_SHARE + TRAIN_SHARE, "storing the tokenizer")
    stored = time.monotonic()
    tok = build_tokenizer(result, scheme)
    data = zlib.compress(dumps_stored(tok), 6)
    summarised = time.monotonic()
    held_out = options.get("held_out") or ""
    sample = held_out_sample(held_out)
    held_tokens = held_out_tokens(sample, result, scheme)
    held_bytes = len(sample.encode("utf-8"))
    corpus_bytes = _pretoken_bytes(counts.counts)
    finished = time.monotonic()
    return JobOutput({
        "tokenizer": content_id("tokenizer", data),
        "level": level,
        "pretokenize": scheme,
        "num_merges": options["num_merges"],
        "learned": len(result.pairs),
        "stopped": result.stopped,
        "vocab_size": tok.summary()["vocab"],
        # "pieces": the pre-tokens counted, under the key stored results already use
        "corpus": {"documents": counts.documents, "bytes": counts.bytes, "chars": counts.chars,
                   "pieces": counts.pretokens, "distinct": len(counts.counts),
                   "files": [name for name, _ in paths]},
        "symbols": result.symbols,
        "tokens": result.tokens,
        "bytes_per_token": {
            "corpus": round(corpus_bytes / result.tokens, 4) if result.tokens else None,
            "held_out": round(held_bytes / held_tokens, 4) if held_tokens else None,
        },
        # bytes and tokens of the sample measured: the whole held-out text up to HELD_OUT_SAMPLE_CHARS
        "held_out": {"bytes": held_bytes, "tokens": held_tokens, "chars": len(held_out),
                     "sampled_chars": len(sample)},
        "seconds": {"count": round(count_seconds, 3), "train": round(result.seconds, 3),
                    "store": round(summarised - stored, 3), "summary": round(finished - summarised, 3)},
        "steps": {
            "left": [_display(a) for a, _ in result.pairs],
            "right": [_display(b) for _, b in result.pairs],
            "count": result.counts,
            "runner_up": result.runner_up,
        },
    }, blobs={"tokenizer": data})


def corpus_label(folder: Path) -> str:
    """How a message names an upload folder: the job's own sub-folder, never the server's paths."""
    return f"upload folder {folder.name[:40]!r}"


def _pretoken_bytes(counts: dict[str, int]) -> int:
    """UTF-8 bytes in all pre-tokens, repeats included (whitespace between words is in no pre-token for "none")."""
    return sum(n * len(pretoken.encode("utf-8")) for pretoken, n in counts.items())


def submit_corpus(folder: Path, files: list[dict[str, str]], options: compound_inputs.CorpusOptions,
                  limits: inputs.Limits) -> Job:
    """Queue the training of the uploads saved in `folder` (the folder then belongs to the job;
    when the queue refuses it, a 429 over a cap, the folder is removed first)."""
    size = sum((folder / item["file"]).stat().st_size for item in files)
    try:
        return queue.submit("corpus", {
            "folder": str(folder), "files": files, "options": asdict(options), "limits": asdict(limits),
        }, upload_bytes=size)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def corpus_dir(config: Mapping[str, Any], instance_path: str) -> Path:
    """Where uploads wait for their job: CORPUS_DIR, else instance/corpora (one sub-folder per job)."""
    return Path(config.get("CORPUS_DIR") or Path(instance_path) / "corpora")


def remove_uploads(params: dict[str, Any]) -> None:
    """Delete the job's upload folder (the worker calls this after the job's process ends, killed or not)."""
    shutil.rmtree(Path(params["folder"]), ignore_errors=True)


# Graceful: a cancelled corpus job stops at the next merge and keeps the merges so far.
# Its uploads: removed once the job ends (after), swept when no live job owns them (spool).
job_kind("corpus", label="Training on the corpus", graceful=True, after=remove_uploads, spool=corpus_dir)(run_corpus)

__all__ = ["build_tokenizer", "corpus_dir", "held_out_tokens", "remove_uploads", "run_corpus", "submit_corpus"]
