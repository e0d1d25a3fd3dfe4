"""What the same text costs in every language: token counts, the premium over English, the summary.

What it does not do: choose or load a tokenizer, read files, or store results.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import statistics
from typing import Any, Callable, Sequence

from webapp.tokenizer.languages.declarations import ENGLISH, Declaration, texts_of
from webapp.tokenizer.languages.scripts import main_script

#: Raised when the extraction or the result's shape changes: stored results of another version are not read.
RESULT_VERSION = 1
WORST = 10
BATCH = 16  # texts per call of count_texts (progress and cancel are checked between batches)

CountTexts = Callable[[list[str]], list[int]]
Progress = Callable[[float, str], None]


def _english(declarations: Sequence[Declaration]) -> Declaration:
    for declaration in declarations:
        if declaration.info.code == ENGLISH:
            return declaration
    raise ValueError("languages: the English declaration (eng) is missing")


def catalog(declarations: Sequence[Declaration]) -> list[dict[str, Any]]:
    """Every declaration's record, its articles (the numbers it has and how many of English's it shares),
    its text's characters and bytes (over the articles shared with English) and its main script."""
    english = _english(declarations)
    out = []
    for declaration in declarations:
        info = declaration.info
        text, _, shared = texts_of(declaration, english)
        out.append({
            "code": info.code, "name": info.name, "bcp47": info.bcp47, "iso6393": info.iso6393,
            "direction": info.direction, "latitude": info.latitude, "longitude": info.longitude,
            "stage": info.stage, "articles": sorted(declaration.articles), "shared_articles": len(shared),
            "complete": set(english.articles) <= set(declaration.articles),
            "chars": len(text), "bytes": len(text.encode("utf-8")), "script": main_script(text),
        })
    return out


def _ratio(a: int, b: int, places: int) -> float | None:
    return round(a / b, places) if b else None


def count_languages(declarations: Sequence[Declaration], count_texts: CountTexts, *,
                    progress: Progress | None = None, cancelled: Callable[[], bool] | None = None
                    ) -> list[dict[str, Any]]:
    """One row per declaration (index order); see the module docstring."""
    english = _english(declarations)
    jobs = [texts_of(d, english) for d in declarations]
    english_texts = {tuple(numbers): english_text for _, english_text, numbers in jobs}
    english_counts = dict(zip(english_texts, count_texts(list(english_texts.values()))))
    counts: list[int] = []
    for start in range(0, len(jobs), BATCH):
        if cancelled is not None and cancelled():
            raise InterruptedError("languages: cancelled")
        counts.extend(count_texts([text for text, _, _ in jobs[start:start + BATCH]]))
        if progress is not None:
            done = min(start + BATCH, len(jobs))
            progress(done / len(jobs), f"{done:,} of {len(jobs):,} languages counted")
    rows = []
    for declaration, (text, _, numbers), tokens in zip(declarations, jobs, counts):
        english_tokens = english_counts[tuple(numbers)]
        n_bytes = len(text.encode("utf-8"))
        rows.append({
            "code": declaration.info.code, "tokens": tokens, "english_tokens": english_tokens,
            "premium": _ratio(tokens, english_tokens, 4), "chars_per_token": _ratio(len(text), tokens, 3),
            "bytes_per_token": _ratio(n_bytes, tokens, 3), "articles": len(numbers),
        })
    return rows


def summarize(rows: Sequence[dict[str, Any]], names: dict[str, str]) -> dict[str, Any]:
    """The median premium, the worst WORST languages, and how many cost over 2x and over 4x English."""
    counted = [r for r in rows if r["english_tokens"] and r["tokens"] is not None]
    ratios = [r["tokens"] / r["english_tokens"] for r in counted]
    worst = sorted(counted, key=lambda r: (-r["tokens"] / r["english_tokens"], r["code"]))[:WORST]
    return {
        "languages": len(counted),
        "median_premium": round(statistics.median(ratios), 4) if ratios else None,
        "worst": [{"code": r["code"], "name": names.get(r["code"], r["code"]), "premium": r["premium"]}
                  for r in worst],
        "over_2x": sum(1 for r in counted if r["tokens"] > 2 * r["english_tokens"]),
        "over_4x": sum(1 for r in counted if r["tokens"] > 4 * r["english_tokens"]),
    }
