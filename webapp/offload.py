"""Which requests become background jobs, and how their results show on the pages.

A request whose input is over a threshold is not computed inline: its raw
input is submitted as a job (webapp.jobs) and the answer is a 202 with the job
URL (JSON API) or a job panel that polls (pages). The thresholds are settings,
chosen from measurements so that everything below them answers well under a
second on a 2-core machine (docs/limits.md):

- `JOB_IMPORT_BYTES`: opening a tokenizer file larger than this;
- `JOB_TRAIN_CHARS` / `JOB_TRAIN_MERGES`: training on more word characters or
  more merges than this;
- `JOB_ENCODE_CHARS` / `JOB_ENCODE_RULES`: `/api/encode` (every token with its
  bytes) of a longer text or a longer merge list;
- `JOB_CHARS_TEXT` / `JOB_CHARS_RULES`: character-level encoding (the
  Characters page, `/api/encode-text`) of a longer text, or more merge rules
  or vocab entries (string rules cost more per character than byte rules).

Only sizes are measured here (lengths, counts of lines), in O(input) time and
before any parsing that could be costly; limits that are cheap to check
(`LIMIT_*`) are checked first, so an over-limit input is still a 400 at once.
What it does not do: compute anything (webapp.jobkinds does, in the job).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Mapping

from flask import current_app, g, render_template

from webapp import inputs, jobs, page_compute, page_controls, page_fields
from webapp.job_store import Job
from webapp.jobkinds import pack_bytes, training_trace_of


def _setting(name: str) -> int:
    return int(current_app.config[name])


def _rule_count(value: Any) -> int:
    """How many rules a merges value holds, without parsing it (an upper bound for text)."""
    if isinstance(value, (list, tuple)):
        return len(value)
    if isinstance(value, str):
        return max(value.count("\n") + 1, value.count("]"))
    return 0


def _count(value: Any) -> int:
    """A number of merges as given (int or digits), 0 for anything else: the inline
    path then reports what is wrong with it (a float, 1e999, a boolean...)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 18:
        return int(value.strip())
    return 0


def _word_chars(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, (list, tuple)):
        return sum(len(w) for w in value if isinstance(w, str)) + len(value)
    return 0


def _limits_dict() -> dict[str, int]:
    return asdict(inputs.current_limits())


# --- the JSON API -------------------------------------------------------------


def encode_job(data: Mapping[str, Any]) -> Job | None:
    """A job for `/api/encode` when the text or the merge list is over its threshold."""
    limits = inputs.current_limits()
    text = data.get("text")
    heavy = (isinstance(text, str) and len(text) > _setting("JOB_ENCODE_CHARS")) or (
        _rule_count(data.get("merges")) > _setting("JOB_ENCODE_RULES"))
    if not heavy:
        return None
    inputs.read_text(text, limits)  # cheap checks first: over LIMIT_TEXT_CHARS stays a 400
    if isinstance(data.get("merges"), list) and len(data["merges"]) > limits.rules:
        inputs.read_byte_merges(data["merges"], limits)  # raises the limit's message
    return jobs.submit("encode", {
        "text": text, "merges": data.get("merges"), "pretokenize": data.get("pretokenize", "none"),
        "limits": _limits_dict(),
    })


def _entry_count(value: Any) -> int:
    """How many entries a vocab value holds, without parsing it (an upper bound for text)."""
    if isinstance(value, (dict, list, tuple)):
        return len(value)
    if isinstance(value, str):
        return max(value.count("\n") + 1, value.count(","))
    return 0


def _chars_heavy(text: Any, merges: Any, vocab: Any) -> bool:
    rules = _setting("JOB_CHARS_RULES")
    return ((isinstance(text, str) and len(text) > _setting("JOB_CHARS_TEXT"))
            or _rule_count(merges) > rules or _entry_count(vocab) > rules)


def encode_text_job(data: Mapping[str, Any]) -> Job | None:
    """A job for `/api/encode-text` when the text, the merges or the vocab is over its threshold."""
    if not _chars_heavy(data.get("text"), data.get("merges"), data.get("vocab")):
        return None
    limits = inputs.current_limits()
    inputs.read_text(data.get("text"), limits)  # cheap checks first: over a LIMIT_* stays a 400
    if isinstance(data.get("merges"), list) and len(data["merges"]) > limits.rules:
        inputs.read_char_merges(data["merges"], limits)  # raises the limit's message
    if isinstance(data.get("vocab"), (dict, list)) and len(data["vocab"]) > limits.vocab:
        inputs.read_char_vocab(data["vocab"], limits)
    return jobs.submit("encode-text", {
        "text": data.get("text"), "merges": data.get("merges"), "vocab": data.get("vocab"),
        "limits": _limits_dict(),
    })


def train_job(words: Any, num_merges: Any, *, form: bool = False, steps: int = 0) -> Job | None:
    """A job for training when the words or the number of merges is over its threshold."""
    limits = inputs.current_limits()
    merges_asked = _count(num_merges)
    if _word_chars(words) <= _setting("JOB_TRAIN_CHARS") and merges_asked <= _setting("JOB_TRAIN_MERGES"):
        return None
    # Every cheap check runs before queueing (linear in the words), so an input
    # over a LIMIT_* is a 400 at once, never a job that fails later.
    inputs.read_num_merges(num_merges, limits)
    inputs.read_words(words, limits, form=form)
    return jobs.submit("train", {
        "words": words, "num_merges": num_merges, "form": form, "steps": steps, "limits": _limits_dict(),
    })


def import_job(content: str | bytes, fmt: str, merges_txt: str | bytes | None, filename: Any) -> Job | None:
    """A job for opening a tokenizer file larger than `JOB_IMPORT_BYTES`."""
    size = len(content) + (len(merges_txt) if merges_txt is not None else 0)
    if size <= _setting("JOB_IMPORT_BYTES"):
        return None
    return jobs.submit("import", {
        "content": pack_bytes(content), "format": fmt, "merges_txt": pack_bytes(merges_txt),
        "filename": filename if isinstance(filename, str) else None, "limits": _limits_dict(),
    })


# --- the pages ------------------------------------------------------------------


def bytes_page_job(state: Mapping[str, str]) -> Job | None:
    """A job that renders the Bytes page's result when the text is over JOB_ENCODE_CHARS."""
    text = state.get("text", "")
    if g.get("playground_inline_only") or not isinstance(text, str) or len(text) <= _setting("JOB_ENCODE_CHARS"):
        return None
    inputs.read_text(text, inputs.current_limits(), form=True)  # over LIMIT_TEXT_CHARS stays an inline error
    return jobs.submit("page", {"tool": "bytes", "state": dict(state)})


def chars_page_job(state: Mapping[str, str]) -> Job | None:
    """A job that renders the Characters page's result when the text, the merges or
    the vocab is over its threshold (JOB_CHARS_TEXT / JOB_CHARS_RULES)."""
    if g.get("playground_inline_only") or not _chars_heavy(state.get("text", ""), state.get("merges", ""),
                                                          state.get("vocab", "")):
        return None
    inputs.read_text(state.get("text", ""), inputs.current_limits(), form=True)  # over the limit: inline error
    return jobs.submit("page", {"tool": "chars", "state": dict(state)})


def ids_job(tool: str, state: Mapping[str, str]) -> Job | None:
    """A job for the ids download of a page state over the page's own thresholds
    (the same ones that send the page's result to a job)."""
    text = state.get("text", "")
    if tool == "bytes":
        heavy = (isinstance(text, str) and len(text) > _setting("JOB_ENCODE_CHARS")) or (
            _rule_count(state.get("merges", "")) > _setting("JOB_ENCODE_RULES"))
    else:
        heavy = _chars_heavy(text, state.get("merges", ""), state.get("vocab", ""))
    if not heavy:
        return None
    inputs.read_text(text, inputs.current_limits(), form=True)  # over LIMIT_TEXT_CHARS stays a 400
    return jobs.submit("ids", {"tool": tool, "state": dict(state)})


def panel(job: Job, view: str) -> str:
    """The job panel a page shows in place of a result while the job runs."""
    return jobs.render_panel(job, view)


def _open_view(tool: str) -> Any:
    def show(job: Job, result: Any, params: dict[str, Any]) -> str:
        tokenizer_id = result["tokenizer"]
        if result.get("level") != tool:
            other = "Characters" if tool == "bytes" else "Bytes"
            kind = "character-level" if tool == "bytes" else "byte-level"
            return page_controls.status(tool, "", f"file: this is a {kind} tokenizer; open it on the {other} page",
                                 reset_inputs=False)
        return page_controls.status(tool, tokenizer_id, None, reset_inputs=True, refresh=True)

    return show


jobs.done_view("open-bytes")(_open_view("bytes"))
jobs.done_view("page-bytes")(lambda job, result, params: str(result["html"]))
jobs.done_view("open-chars")(_open_view("chars"))
jobs.done_view("page-chars")(lambda job, result, params: str(result["html"]))


def _ids_view(job: Job, result: Any, params: dict[str, Any]) -> str:
    """A link to the finished ids file."""
    return render_template("partials/ids_job_done.html", job=job, count=result["count"], tool=params["tool"])


jobs.done_view("ids-bytes")(_ids_view)
jobs.done_view("ids-chars")(_ids_view)


@jobs.done_view("train")
def _train_view(job: Job, result: Any, params: dict[str, Any]) -> str:
    """The Train page's usual result, from the job's trace."""
    limits = inputs.current_limits()
    words = inputs.read_words(params["words"], limits, form=bool(params.get("form")))
    num_merges = inputs.read_num_merges(params["num_merges"], limits)
    state = {"words": "", "num_merges": str(num_merges), "view": "steps"}
    context = page_compute.train_result(words, num_merges, training_trace_of(result), limits)
    return render_template("partials/train_results.html", result=context, state=state,
                           views=page_fields.VIEWS["train"], tool="train")
