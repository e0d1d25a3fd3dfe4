"""Training and corpus results -> what the templates show.

The Train page's step table (ties and close calls), its chart of the winning
count per step, each distinct word segmented by the learned merges, and the
Corpus results page (summary, paginated steps, the count line). Plain view
objects like `webapp.web.common.viewmodels` (whose hue classes and printable text it
uses): no escaping here (the templates escape on output), no Flask, no engine
calls beyond the `char_tokens` function a caller passes in.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from webapp.web.common.trace_views import Chip
from webapp.web.common.viewmodels import hue_class, printable, printable_bytes
from webapp.tokenizer import TrainingTrace


# --- training -----------------------------------------------------------------


@dataclass
class TrainRow:
    index: int
    left: str
    right: str
    merged: str
    count: int | None
    token_id: int | None
    hue: str
    runners_up: list[tuple[str, str, int]] = field(default_factory=list)
    tie: bool = False
    close: bool = False
    why: str = ""


def _pair_text(pair: tuple[str, str]) -> str:
    return "(" + ", ".join(json.dumps(printable(p), ensure_ascii=False) for p in pair) + ")"


def is_close(count: int, runner_up: int) -> bool:
    """A close call: the runner-up is within 1 or within 10% of the winner."""
    return count - runner_up <= max(1, count // 10)


def train_rows(trace: TrainingTrace, vocab: dict[str, int]) -> list[TrainRow]:
    """One row per learned merge, with the runner-ups shown only for ties and close calls."""
    steps = {s.index: s for s in trace.steps}
    rows = []
    for i, (pair, merged) in enumerate(zip(trace.pairs, trace.merges)):
        step = steps.get(i + 1)  # TrainingStep.index counts from 1
        token_id = vocab.get(merged)
        row = TrainRow(i + 1, printable(pair[0]), printable(pair[1]), printable(merged), None, token_id, hue_class(token_id))
        if step is not None and step.merged == merged:
            row.count = step.count
            close = [ru for ru in step.runners_up if is_close(step.count, ru.count)]
            row.tie = step.tie
            row.close = bool(close) and not step.tie
            if step.tie:
                tied = [ru for ru in step.runners_up if ru.count == step.count]
                others = ", ".join(_pair_text(ru.pair) for ru in tied)
                row.why = f"tie at {step.count}: {_pair_text(pair)} comes first in (first, second) order before {others}"
            elif close:
                best = close[0]
                row.why = f"won by {step.count - best.count} over {_pair_text(best.pair)}"
            if step.tie or close:
                row.runners_up = [(printable(ru.pair[0]), printable(ru.pair[1]), ru.count) for ru in step.runners_up]
        rows.append(row)
    return rows


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    step: int
    count: int
    label: str


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    bars: list[Bar]
    max_count: int
    ticks: list[tuple[float, int]]
    plot_left: int
    plot_bottom: int


def nice_ticks(max_count: int, target: int = 4) -> list[int]:
    """Integer axis ticks from 0: every integer up to `target`, else a 1-2-5 step
    giving about `target` intervals; the last tick is at or above max_count."""
    if max_count <= target:
        return list(range(0, max(max_count, 1) + 1))
    raw = max_count / target
    magnitude = 10 ** (len(str(int(raw))) - 1)
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    top = -(-max_count // step) * step
    return list(range(0, top + 1, step))


CHART_MAX_BAR = 36  # a bar is never wider than this (a two-step chart stays a chart)


def count_chart(rows: Sequence[TrainRow], width: int = 640, height: int = 180) -> Chart | None:
    """Bar chart geometry of the winning count per step (server-rendered SVG)."""
    counted = [(r, r.count) for r in rows if r.count is not None]
    if not counted:
        return None
    left, bottom, top, right = 40, height - 22, 10, 8
    plot_w, plot_h = width - left - right, bottom - top
    max_count = max(count for _, count in counted) or 1
    ticks = nice_ticks(max_count)
    scale_top = ticks[-1]
    slot = plot_w / len(counted)
    gap = min(4.0, slot * 0.2)
    bar_w = max(min(slot - gap, CHART_MAX_BAR), 0.5)
    bars = []
    for k, (r, count) in enumerate(counted):
        h = plot_h * count / scale_top
        bars.append(
            Bar(
                x=round(left + k * slot + (slot - bar_w) / 2, 2),
                y=round(bottom - h, 2),
                width=round(bar_w, 2),
                height=round(h, 2),
                step=r.index,
                count=count,
                label=f"step {r.index}: {r.left} + {r.right} → {r.merged}, count {count}",
            )
        )
    tick_pos = [(round(bottom - plot_h * t / scale_top, 2), t) for t in ticks]
    return Chart(width, height, bars, max_count, tick_pos, left, bottom)


@dataclass
class WordView:
    word: str
    count: int
    tokens: list[Chip]


def segmented_words(
    words: Iterable[str],
    pairs: Sequence[tuple[str, str]],
    vocab: dict[str, int],
    segment: Callable[[str, Sequence[tuple[str, str]]], list[str]],
    limit: int,
) -> tuple[list[WordView], int]:
    """Each distinct word (first-seen order, with its count) split by the learned merges."""
    counts: dict[str, int] = {}
    for w in words:
        counts[w] = counts.get(w, 0) + 1
    out = []
    for word, count in list(counts.items())[:limit]:
        chips = []
        for tok in segment(word, pairs):
            token_id = vocab.get(tok)
            chips.append(Chip(token_id, hue_class(token_id), printable(tok)))
        out.append(WordView(printable(word), count, chips))
    return out, len(counts)


# --- corpus training results (webapp.web.corpus.routes) ------------------------------------


@dataclass(frozen=True)
class CorpusRow:
    index: int
    left: str
    right: str
    merged: str
    count: int
    runner_up: int
    tie: bool  # the runner-up had the same count: the tie-break rule chose

    @property
    def margin(self) -> int:
        """How many more times the winner occurred than the runner-up (a corpus has margins
        of a few percent at nearly every step, so a "close" badge would mark almost every row)."""
        return self.count - self.runner_up


@dataclass(frozen=True)
class LineChart:
    width: int
    height: int
    points: str  # SVG polyline points
    ticks: list[tuple[float, str]]  # (y, label) on a log scale
    plot_left: int
    steps: int


@dataclass(frozen=True)
class CorpusView:
    job_id: str
    result: dict[str, Any]
    summary: list[tuple[str, str, str]]  # (key, label, value)
    rows: list[CorpusRow]
    page: int
    pages: int
    chart: LineChart | None
    downloads: list[tuple[str, str]]  # (label, url)
    open_url: str
    share_state: dict[str, str]


def _step_token(shown: str) -> str:
    """A step token from the job result: text, or "0x..." hex for bytes that are not UTF-8 alone."""
    if shown.startswith("0x") and len(shown) > 2:
        try:
            return printable_bytes(bytes.fromhex(shown[2:]))
        except ValueError:
            pass
    return printable(shown)


def _raw_token(shown: str) -> bytes:
    if shown.startswith("0x") and len(shown) > 2:
        try:
            return bytes.fromhex(shown[2:])
        except ValueError:
            pass
    return shown.encode("utf-8")


def _short_count(n: int) -> str:
    """1, 10, 100, 1k, 10k, 100k, 1M, ...: axis labels short enough for a phone."""
    for size, suffix in ((10**9, "G"), (10**6, "M"), (10**3, "k")):
        if n >= size:
            return f"{n // size:,}{suffix}"
    return str(n)


def count_line(counts: Sequence[int], width: int = 720, height: int = 200, buckets: int = 600) -> LineChart | None:
    """The winning count per step as a line on a log scale (at most `buckets` points: each the bucket's max)."""
    if not counts:
        return None
    # room for the longest tick label ("100k") at the phone's larger axis font (app.css)
    left, bottom, top, right = 64, height - 22, 10, 8
    plot_w, plot_h = width - left - right, bottom - top
    per = max(1, math.ceil(len(counts) / buckets))
    values = [max(counts[i : i + per]) for i in range(0, len(counts), per)]
    high = math.log10(max(max(values), 1)) or 1.0

    def y(count: int) -> float:
        return round(bottom - plot_h * math.log10(max(count, 1)) / high, 2)

    n = len(values)
    points = " ".join(f"{round(left + plot_w * (k / max(n - 1, 1)), 2)},{y(v)}" for k, v in enumerate(values))
    ticks = [(y(10 ** e), _short_count(10 ** e)) for e in range(0, int(high) + 1)]
    return LineChart(width, height, points, ticks, left, len(counts))


def _held_out_label(held_out: dict[str, Any]) -> str:
    """The held-out row's label: says when the figure comes from a sample of the text."""
    chars, sampled = held_out.get("chars"), held_out.get("sampled_chars")
    if chars and sampled and sampled < chars:
        return f"bytes per token, held-out text (sampled: {sampled:,} of {chars:,} characters)"
    return "bytes per token, held-out text"


def corpus_result(result: dict[str, Any], job_id: str, page: int, per_page: int, *,
                  url_for: Callable[..., str]) -> CorpusView:
    """What the corpus results page shows: summary, one page of the step table, the chart, downloads.

    `url_for` is Flask's, passed in by the view: this module stays free of Flask.
    """
    steps = result["steps"]
    total = len(steps["count"])
    pages = max(1, -(-total // per_page))
    page = min(max(page, 1), pages)
    rows = []
    byte_level = result["level"] == "bytes"
    for k in range((page - 1) * per_page, min(page * per_page, total)):
        left, right = steps["left"][k], steps["right"][k]
        merged = printable_bytes(_raw_token(left) + _raw_token(right)) if byte_level else printable(left + right)
        count, runner_up = steps["count"][k], steps["runner_up"][k]
        rows.append(CorpusRow(k + 1, _step_token(left), _step_token(right), merged, count, runner_up,
                              tie=count == runner_up))
    corpus = result["corpus"]
    bpt = result["bytes_per_token"]
    summary = [
        ("vocab", "vocab size", f"{result['vocab_size']:,}"),
        ("merges", "merges learned", f"{result['learned']:,} of {result['num_merges']:,}"),
        ("bpt-corpus", "bytes per token, corpus (from the counts)", f"{bpt['corpus']:.2f}" if bpt["corpus"] else "–"),
        ("bpt-held-out", _held_out_label(result.get("held_out") or {}),
         f"{bpt['held_out']:.2f}" if bpt["held_out"] else "–"),
        ("corpus-bytes", "corpus bytes", f"{corpus['bytes']:,}"),
        ("pieces", "pre-tokens (distinct)", f"{corpus['pieces']:,} ({corpus['distinct']:,})"),
        ("seconds", "counting + training", f"{result['seconds']['count']:.1f} s + {result['seconds']['train']:.1f} s"),
    ]
    tokenizer = result["tokenizer"]
    formats = [("tokenizer.json", "hf"), ("minbpe .model", "minbpe"), ("playground JSON", "playground")]
    if byte_level:
        formats.insert(1, ("tiktoken ranks", "tiktoken"))
    downloads = [(label, url_for("files.api_export", tokenizer=tokenizer, format=fmt)) for label, fmt in formats]
    tool = "bytes" if byte_level else "chars"
    state = {"tokenizer": tokenizer}
    if byte_level:
        state["pretokenize"] = result["pretokenize"] if result["pretokenize"] in ("none", "gpt2", "cl100k") else "none"
    open_url = url_for(f"pages.{tool}_page", **state)
    return CorpusView(job_id, result, summary, rows, page, pages, count_line(steps["count"]), downloads, open_url,
                      {"tool": tool, **state})
