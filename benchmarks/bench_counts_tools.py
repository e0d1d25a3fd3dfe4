"""Counts with tools at the inline bound: wall time of `POST /api/counts` with `tools` just under JOB_COUNTS_WORK.

With tools, the work a count is charged (webapp.web.counts.kinds.CountsWork) adds, for every tokenizer
that may have a chat template, two renderings of the text and the tools' JSON; the text of each request
here is sized so that the whole is exactly JOB_COUNTS_WORK (the largest count still answered inline):

1. the 13 presets and the Chat view's example tools (two specs), the same text without tools beside it;
2. the 13 presets and 128 specs of about 410 characters (OpenAI's limit on functions; 52,000 characters);
3. qwen3 alone (its template writes the tools) and tools of about 240,000 characters;
4. opened tokenizer.json files, each with a template that writes the tools, a short text and the
   example tools: every rendering of an opened template forks a child (webapp/tokenizer/chat/process.py),
   a cost the characters do not show (FORK_UNITS a rendering): 2 files are inline, 3 a job.

Flask test client, one process (every preset open: about 1 GB to fork), LIMIT_REQUEST_SECONDS off (0)
so the figures are the work's own cost, RATE_LIMIT_WORK off; best of 2 after a warm-up request, a new
slice of text each time (a text seen before is cheaper: its pieces are cached).

    .venv/bin/python benchmarks/bench_counts_tools.py

What it does not do: measure through gunicorn, or a hostile template (LIMIT_CHAT_SECONDS bounds each
rendering and the request's time budget the whole: docs/limits.md#counts-as-a-job).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, ".")
sys.path.insert(0, "benchmarks")

from corpus import english_text  # noqa: E402
from tests.conftest import make_app  # noqa: E402
from webapp.tokenizer.chat.tools import json_chars  # noqa: E402
from webapp.web.chat.chatting import EXAMPLE_TOOLS  # noqa: E402
from webapp.web.counts.counting import default_refs  # noqa: E402
from webapp.web.counts.kinds import work_of  # noqa: E402

WORK = 500_000  # JOB_COUNTS_WORK's default

app = make_app(tempfile.mkdtemp(), RATE_LIMIT_WORK="", LIMIT_REQUEST_SECONDS=0, JOB_COUNTS_WORK=WORK)
client = app.test_client()


def chars_at_the_bound(refs: list[str], tools: list[dict[str, Any]] | None) -> int:
    """How long a text the count with `tools` may have while it stays inline."""
    with app.test_request_context():
        fixed = work_of("", refs, tools)  # the tools' renderings and forks: the same for any text
    per_char = len(refs) + fixed.renderings * fixed.templates  # each character: one encode, two renderings
    return (WORK - fixed.units) // per_char


_USED = [0]  # characters of the source text used so far: every text is new


def texts(chars: int, reps: int = 2) -> list[str]:
    """`reps` texts of `chars` characters never sent before."""
    start = _USED[0]
    _USED[0] += chars * reps
    source = english_text(1, _USED[0])
    return [source[start + i * chars:start + (i + 1) * chars] for i in range(reps)]


def timed(label: str, bodies: list[dict[str, Any]], status: int = 200) -> None:
    """The best time over the bodies (each one request)."""
    best = 1e9
    for body in bodies:
        raw = json.dumps(body)  # (raw JSON: a tool's keys stay in their order)
        began = time.perf_counter()
        answer = client.post("/api/counts", data=raw, content_type="application/json")
        best = min(best, time.perf_counter() - began)
        assert answer.status_code == status, (answer.status_code, answer.get_json())
    print(f"{label:74s} {best:6.2f} s", flush=True)


def big_tools(count: int, chars: int) -> list[dict[str, Any]]:
    """`count` specs of about `chars` characters each (a long description, never sent before, and a
    few parameters)."""
    descriptions = texts(chars - 300, count)
    return [{"type": "function", "function": {
        "name": f"tool_{i}", "description": descriptions[i],
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string", "description": "What to look for"},
            "limit": {"type": "integer", "minimum": 1}}, "required": ["query"]}}} for i in range(count)]


def opened_with_template(index: int) -> str:
    vocab = {"a": 0, "b": 1, "ab": 2, "<s>": 3, f"t{index}": 4}
    content = json.dumps({"model": {"type": "BPE", "vocab": vocab, "merges": ["a b"]}, "added_tokens": [
        {"id": 3, "content": "<s>", "special": True, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False}]})
    template = "{{ bos_token }}{% for t in tools or [] %}{{ t | tojson }}{% endfor %}{% for m in messages %}" \
               "{{ m.content }}{% endfor %}"
    answer = client.post("/api/import?include=summary", json={
        "content": content, "config": json.dumps({"chat_template": template, "bos_token": "<s>"})})
    assert answer.status_code == 200, answer.get_json()
    return str(answer.get_json()["tokenizer"])


def main() -> None:
    print(f"load average {os.getloadavg()[0]:.1f}; JOB_COUNTS_WORK {WORK:,}", flush=True)
    presets = default_refs()
    client.post("/api/counts", data=json.dumps({"text": "warm", "tools": EXAMPLE_TOOLS}),
                content_type="application/json")
    chars = chars_at_the_bound(presets, EXAMPLE_TOOLS)
    timed(f"13 presets, example tools, {chars:,} chars", [{"text": t, "tools": EXAMPLE_TOOLS} for t in texts(chars)])
    timed(f"13 presets, no tools, {chars:,} chars", [{"text": t} for t in texts(chars)])
    many = [big_tools(128, 470) for _ in range(2)]
    chars = chars_at_the_bound(presets, many[0])
    timed(f"13 presets, 128 tools ({json_chars(many[0]):,} chars), {chars:,} chars",
          [{"text": t, "tools": tools} for t, tools in zip(texts(chars), many)])
    huge = [big_tools(120, 2_000) for _ in range(2)]
    chars = chars_at_the_bound(["qwen3"], huge[0])
    timed(f"qwen3, 120 tools ({json_chars(huge[0]):,} chars), {chars:,} chars",
          [{"text": t, "tokenizers": ["qwen3"], "tools": tools} for t, tools in zip(texts(chars), huge)])
    opened = [opened_with_template(i) for i in range(3)]
    timed("2 opened files with templates, example tools, 'ab'",
          [{"text": t, "tokenizers": opened[:2], "tools": EXAMPLE_TOOLS} for t in ("ab", "ba")])
    timed("3 opened files: a job (202)", [{"text": "ab", "tokenizers": opened, "tools": EXAMPLE_TOOLS}], status=202)


if __name__ == "__main__":
    main()
