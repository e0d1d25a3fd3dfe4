"""The first symbols of many segments in a row, read with numpy: what `LibraryModel.symbols` gives each.

A character with a single-character token is that token (the model's `char_table`); one with
none but a complete set of fallback bytes is those bytes' tokens, spliced in (prose's newlines
and rarer letters), so that its segment still merges in the batch; a segment with any other
character (the unknown token, a token past the table, an id no rule can name) is left out.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import accumulate

import numpy as np

from webapp.tokenizer.core.library_order.score_order import sorted_distinct

#: The most fallback bytes of one character (UTF-8).
MAX_BYTES = 4


def row_symbols(
    codes: np.ndarray, lengths: list[int], table: np.ndarray, shift: int,
    fallback_of: Callable[[int], list[int] | None],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(the segments' symbols in a row, int64, each below `shift`; each kept segment's count of them;
    which segments are left out, bool) for segments in a row (`codes`: their code points, `lengths`:
    each one's, every one non-empty). `table`: `char_table()`; `fallback_of(code)`: the fallback
    bytes' ids of a character with no single-character token, None when it has none or is a token."""
    starts = [0, *accumulate(lengths[:-1])]
    ids = table[np.minimum(codes, len(table) - 1)]
    missing = ids < 0
    bad = ids >= shift
    if not missing.any():
        odd = np.logical_or.reduceat(bad, starts)
        return ids[(~odd).repeat(lengths)], np.asarray(lengths, dtype=np.int64)[~odd], odd
    distinct = sorted_distinct(codes[missing])
    spelt, width_of = _spellings(distinct.tolist(), shift, fallback_of)
    at = missing.nonzero()[0]
    which = distinct.searchsorted(codes[at])
    widths = width_of[which]
    bad[at[widths == 0]] = True  # (no usable fallback: that segment goes one by one)
    counts = np.ones(len(ids), dtype=np.int64)
    counts[at] = widths
    odd = np.logical_or.reduceat(bad, starts)
    sizes = np.add.reduceat(counts, starts)
    if odd.any():  # (the odd segments' characters taken out first)
        keep = (~odd).repeat(lengths)
        kept = keep[at]
        ids, counts, sizes = ids[keep], counts[keep], sizes[~odd]
        at, which, widths = missing[keep].nonzero()[0], which[kept], widths[kept]
    row = ids.repeat(counts)
    # (each spelt character's bytes written over its place in the row, all at once)
    within = np.arange(int(widths.sum()), dtype=np.int64) - (widths.cumsum() - widths).repeat(widths)
    row[(counts.cumsum() - counts)[at].repeat(widths) + within] = spelt.ravel()[
        (which * MAX_BYTES).repeat(widths) + within]
    return row, sizes, odd


def _spellings(
    codes: list[int], shift: int, fallback_of: Callable[[int], list[int] | None],
) -> tuple[np.ndarray, np.ndarray]:
    """(each code point's fallback ids, padded to MAX_BYTES; their count, 0 when it cannot be spelt so)."""
    ids = np.zeros((len(codes), MAX_BYTES), dtype=np.int64)
    widths = np.zeros(len(codes), dtype=np.int64)
    for k, code in enumerate(codes):
        spelt = fallback_of(code)
        if spelt is not None and 0 < len(spelt) <= MAX_BYTES and max(spelt) < shift:
            ids[k, :len(spelt)] = spelt
            widths[k] = len(spelt)
    return ids, widths


__all__ = ["row_symbols"]
