"""Counting one text with many tokenizers: tokens, characters per token, bytes per token.

`count_all(text, refs)` encodes the text with each preset (or opened
tokenizer) by the fastest path there is (ids only: no trace, no spans), the
text as plain text (special tokens are not recognised, as tiktoken's
`encode_ordinary`), each with its own pre-tokenization. A preset this
installation lacks gives a row with the reason instead of a count.
`sorted_rows` orders the rows for the page. What it does not do: routes or
templates (webapp.web.counts.routes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from webapp.infra import timebudget
from webapp.opened import active as act
from webapp.tokenizer import PRESET_NAMES, OutOfTime, TokenizerError, is_installed, is_preset
from webapp.tokenizer.hf.text import charged, check_request_budget

#: The columns the page sorts by (a leading "-" sorts in descending order).
SORT_KEYS = ("name", "tokens", "chars_per_token", "bytes_per_token")


@dataclass(frozen=True)
class CountRow:
    """One tokenizer's count of the text (or why it has none)."""

    tokenizer: str
    tokens: int | None
    chars_per_token: float | None
    bytes_per_token: float | None
    error: str | None = None

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"tokenizer": self.tokenizer, "tokens": self.tokens,
                                  "chars_per_token": self.chars_per_token, "bytes_per_token": self.bytes_per_token}
        if self.error:
            out["error"] = self.error
        return out


def default_refs() -> list[str]:
    """Every preset the app ships, in the registry's order (open models appear when they are added)."""
    return list(PRESET_NAMES)


def _ratio(n: int, tokens: int) -> float | None:
    return round(n / tokens, 3) if tokens else None


def count_one(ref: str, text: str, n_bytes: int) -> CountRow:
    if is_preset(ref) and not is_installed(ref):
        return CountRow(ref, None, None, None, error=f"{ref} is not installed on this server")
    active = act.of_ref(ref)
    try:
        entry = active.loaded()  # (opening is not charged: a cold process's presets are not the text's work)
        with charged():  # the whole encode counts against the request's budget, not only file regexes
            ids = act.byte_ids(active, text, None, entry.tok.pretokenize)
    except OutOfTime:
        raise
    except TokenizerError as exc:
        return CountRow(ref, None, None, None, error=exc.message)
    return CountRow(ref, len(ids), _ratio(len(text), len(ids)), _ratio(n_bytes, len(ids)))


def count_all(text: str, refs: Iterable[str],
              on_row: Callable[[int, int, str], None] | None = None) -> list[CountRow]:
    """Each tokenizer's count of `text`, in the order given; each whole encode is charged to the
    request's time budget (webapp.infra.timebudget), which is checked before each tokenizer, and
    running out names the tokenizer.
    `on_row(done, total, name)` is told before each tokenizer starts (a job's progress)."""
    n_bytes = len(text.encode("utf-8"))
    refs = list(refs)
    rows = []
    for index, ref in enumerate(refs):
        if on_row is not None:
            on_row(index, len(refs), ref)
        try:
            check_request_budget()
            rows.append(count_one(ref, text, n_bytes))
            if index + 1 < len(refs):
                check_request_budget()  # spent by this one's encode: it is the one named, not the next
        except OutOfTime as exc:
            raise timebudget.out_of_time(exc, ref, index, len(refs)) from None
    return rows


def counts_json(text: str, rows: list[CountRow]) -> dict[str, Any]:
    """The `POST /api/counts` answer (and a counts job's result: the same dict)."""
    return {"chars": len(text), "bytes": len(text.encode("utf-8")), "counts": [r.to_dict() for r in rows]}


def rows_of(result: Mapping[str, Any]) -> list[CountRow]:
    """The rows back from a `counts_json` answer (a finished job's result, for the page)."""
    return [CountRow(str(c["tokenizer"]), c.get("tokens"), c.get("chars_per_token"), c.get("bytes_per_token"),
                     error=c.get("error")) for c in result["counts"]]


def read_sort(value: object) -> str:
    """A sort key from the page (anything else: by name)."""
    if isinstance(value, str) and value.lstrip("-") in SORT_KEYS:
        return value
    return "name"


def sorted_rows(rows: list[CountRow], sort: str) -> list[CountRow]:
    """Rows by a column (rows without a count last), ties by name."""
    key = sort.lstrip("-")
    descending = sort.startswith("-")
    if key == "name":
        return sorted(rows, key=lambda r: r.tokenizer, reverse=descending)
    counted = [r for r in rows if getattr(r, key) is not None]
    rest = [r for r in rows if getattr(r, key) is None]
    counted.sort(key=lambda r: r.tokenizer)
    counted.sort(key=lambda r: getattr(r, key), reverse=descending)
    return counted + sorted(rest, key=lambda r: r.tokenizer)
