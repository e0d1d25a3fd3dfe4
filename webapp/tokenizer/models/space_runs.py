"""Segments led by a run of spaces ("▁▁▁▁▁▁▁▁else"): their ids put together from the run's and the word's.

Indented text makes every line's first word a new segment ("▁" * 8 + "else", "▁" * 12 + "else").
Where a file's rules join runs of "▁" only among themselves, and after every other rule
(`runs_last`: SentencePiece's Llama and Mistral files), such a segment merges as its run and, apart,
its last space with the word; the space goes back to the run when the word's merging left it alone
(`joined`). The cache then holds each run and each word once. The argument: docs/engine.md.

What it does not do: merge, or read the cache (library.py).
"""

from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np

SPACE = "\u2581"


def runs_last(vocab: Mapping[str, int], lefts: np.ndarray, rights: np.ndarray, news: np.ndarray,
              levels: np.ndarray) -> bool:
    """Whether the rules (operands, new ids and levels, int64, one per rule) let `joined` give every run-led
    segment's ids: "▁" is a token; a rule with a left operand of spaces only and a right one that starts
    with a space joins two runs (both all spaces) and makes a run; no run of two or more spaces joins a
    right operand that starts with anything else; and every rule joining two runs has a level above
    every other rule's."""
    space = vocab.get(SPACE)
    if space is None or not len(lefts):
        return False
    size = max(int(lefts.max()), int(rights.max()), int(news.max()), max(vocab.values())) + 1
    run = np.zeros(size, dtype=bool)  # (a token of spaces only)
    lead = np.zeros(size, dtype=bool)  # (a token that starts with a space)
    long_run = np.zeros(size, dtype=bool)  # (two spaces or more only)
    for token, i in vocab.items():
        if token[:1] == SPACE:
            lead[i] = True
            if not token.strip(SPACE):
                run[i], long_run[i] = True, len(token) > 1
    joins_runs = run[lefts] & run[rights]
    if not joins_runs.any():
        return False
    spaced = run[lefts] & ~joins_runs  # (a run on the left, anything else on the right)
    return not ((spaced & lead[rights]).any() or (long_run[lefts] & ~lead[rights]).any()
                or not run[news[joins_runs]].all()
                or (~joins_runs).any() and int(levels[joins_runs].min()) <= int(levels[~joins_runs].max()))


def led_segments(segments: Iterable[str]) -> dict[str, int]:
    """Of these segments, each that is a run of two or more spaces then a word with no space: {segment:
    the run's length}."""
    led = {}
    for segment in segments:
        if segment[:2] == SPACE * 2:
            word = segment.lstrip(SPACE)
            if word and SPACE not in word:
                led[segment] = len(segment) - len(word)
    return led


def parts_of(led: Mapping[str, int]) -> list[str]:
    """The distinct parts `joined` reads for these run-led segments ({segment: run length}): each one's
    last space and word, and its run without and with that space."""
    parts: dict[str, None] = {}
    for segment, run in led.items():
        parts[segment[run - 1:]] = parts[segment[:run - 1]] = parts[segment[:run]] = None
    return list(parts)


def joined(segment: str, run: int, ids_of: Mapping[str, tuple[int, ...]], space: int) -> tuple[int, ...]:
    """A run-led segment's ids (`run` spaces lead it), from its parts' ids."""
    word = ids_of[segment[run - 1:]]
    if word[0] == space:  # (no rule took the space into the word: the run merges it)
        return ids_of[segment[:run]] + word[1:]
    return ids_of[segment[:run - 1]] + word


__all__ = ["SPACE", "joined", "led_segments", "parts_of", "runs_last"]
