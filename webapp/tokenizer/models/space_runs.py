"""Segments led by a run of spaces ("▁▁▁▁else"): their ids put together from the run's and the word's.

Indented text makes every line's first word a new segment ("▁" * 8 + "else", "▁" * 12 + "else").
Where a SentencePiece model's rules join runs of "▁" only among themselves, and after every other
rule (`runs_last`: the Mistral .model files), such a segment merges as its run and, apart, its
last space with the word; the space goes back to the run when the word's merging left it alone
(`joined`). The cache then holds each run and each word once. The argument: docs/engine.md.

What it does not do: merge, or read the cache (library.py).
"""

from __future__ import annotations

from itertools import compress, repeat
from typing import Mapping, Sequence

import numpy as np

from webapp.tokenizer.core.library_order.score_order import ScoreMerges

SPACE = "\u2581"


def runs_last(vocab: Mapping[str, int], merges: ScoreMerges) -> bool:
    """Whether a SentencePiece model's rules let `joined` give every run-led segment's ids: "▁" is a token;
    a rule with a left operand of spaces only and a right one that starts with a space joins two runs
    (both all spaces) and makes a run; no run of two or more spaces joins a right operand that starts
    with anything else; and every rule joining two runs comes after every other rule (a level above all
    theirs). Only the rules whose left operand is a run are read one by one."""
    if vocab.get(SPACE) is None or not len(merges):
        return False
    longest = max(map(len, vocab))
    runs = {i: n for n in range(1, longest + 1) if (i := vocab.get(SPACE * n)) is not None}
    keys = merges.pair_keys()
    on_run = np.isin(keys // merges.shift, list(runs))
    if not on_run.any():
        return False
    spaced = set(compress(vocab.values(), map(str.startswith, vocab, repeat(SPACE))))  # (tokens led by a space)
    joins_runs: list[int] = []  # (the ranks of the rules joining two runs)
    for key in keys[on_run].tolist():
        left, right = divmod(key, merges.shift)
        rank = merges.ranks[key]
        if right in runs:
            if merges.news[rank] not in runs:
                return False
            joins_runs.append(rank)
        elif right in spaced or runs[left] > 1:
            return False  # (a run joined to a piece that starts with a space, or a long run to any other piece)
    if not joins_runs:
        return False
    last_other = len(merges) - 1  # (levels never go down by rank: the last rule not joining runs has the top level)
    joining = set(joins_runs)
    while last_other in joining:
        last_other -= 1
    return last_other < 0 or min(merges.levels[rank] for rank in joins_runs) > merges.levels[last_other]


def led_segments(segments: Sequence[str]) -> dict[str, int]:
    """Of these segments, each that is a run of two or more spaces then a word with no space:
    {segment: the run's length}."""
    led = {}
    # (the few that start with two spaces picked out at C speed: a batch of new words has none)
    for segment in compress(segments, map(str.startswith, segments, repeat(SPACE * 2))):
        word = segment.lstrip(SPACE)
        if word and SPACE not in word:
            led[segment] = len(segment) - len(word)
    return led


def parts_of(led: Mapping[str, int]) -> list[str]:
    """The distinct parts `joined` reads for these run-led segments: each one's last space and word,
    and its run without and with that space."""
    parts = dict.fromkeys([segment[run - 1:] for segment, run in led.items()])
    for run in set(led.values()):  # (a few lengths of indentation)
        parts[SPACE * (run - 1)] = parts[SPACE * run] = None
    return list(parts)


def joined(segment: str, run: int, ids_of: Mapping[str, tuple[int, ...]], space: int) -> tuple[int, ...]:
    """A run-led segment's ids (`run` spaces lead it), from its parts' ids."""
    word = ids_of[segment[run - 1:]]
    if word[0] == space:  # (no rule took the space into the word: the run merges it)
        return ids_of[segment[:run]] + word[1:]
    return ids_of[segment[:run - 1]] + word


__all__ = ["SPACE", "joined", "led_segments", "parts_of", "runs_last"]
