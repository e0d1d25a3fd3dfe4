"""A tokenizer.json's pre-tokenizer over many runs at once: the stretches of text between added tokens.

What it does not do: the steps themselves (pre_tokenizers.py), added tokens or
normalization (hf/pipeline.py).

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from itertools import repeat
from typing import Any, Callable

from webapp.tokenizer.reading import text as ht
from webapp.tokenizer.pretokenize.pre_tokenizers import Piece, PreTokenizer, build_pre_tokenizer, isolated_split_regex, known_run
from webapp.tokenizer.pretokenize.class_split import ClassSplit, known_split

Run = list[Piece]
RunsPreTokenizer = Callable[[list[Run]], list[Run]]


def build_pre_tokenizer_runs(desc: Any) -> RunsPreTokenizer:
    """The described pre-tokenizer applied to each of many runs (see the module docstring)."""
    parts = desc["pretokenizers"] if desc["type"] == "Sequence" else [desc]
    fused, count = known_run(parts) if desc["type"] == "Sequence" else (None, 0)
    steps: list[RunsPreTokenizer] = [_known_runs(fused)] if fused is not None else []
    for i in range(count, len(parts)):
        pattern = isolated_split_regex(parts[i])
        known = known_split((pattern,)) if pattern is not None else None
        if known is not None:
            steps.append(_known_runs(known))
        elif _only_drops_empty(parts[i], final=i == len(parts) - 1):
            steps.append(lambda runs: [[piece for piece in run if piece[0]] for run in runs])
        else:
            steps.append(_each_run(build_pre_tokenizer(parts[i], final=i == len(parts) - 1)))

    def apply(runs: list[Run]) -> list[Run]:
        for step in steps:
            runs = step(runs)
        return runs

    return apply


def _only_drops_empty(desc: Any, final: bool) -> bool:
    """A ByteLevel step that changes no piece: last (the caller spells the bytes), with neither
    its regex nor a prefix space (Qwen's, Llama 3's): it only leaves out empty pieces."""
    return (final and desc["type"] == "ByteLevel" and not desc["add_prefix_space"]
            and not desc["use_regex"])


def _each_run(step: PreTokenizer) -> RunsPreTokenizer:
    return lambda runs: [step(run) for run in runs]


def _known_runs(split: ClassSplit) -> RunsPreTokenizer:
    """An Isolated known split over every piece of every run in one `pieces_of` call."""

    def apply(runs: list[Run]) -> list[Run]:
        ht.time_left()  # (the fixed known patterns match in linear time; the budget is only checked)
        found = iter(split.pieces_of([text for run in runs for text, _origin in run]))
        out: list[Run] = []
        for run in runs:
            pieces: Run = []
            for (_text, origin), parts in zip(run, found):
                if parts:  # (in Isolated the first non-empty piece always starts at 0)
                    pieces.append((parts[0], origin))
                    pieces.extend(zip(parts[1:], repeat(False)))
            out.append(pieces)
        return out

    return apply


__all__ = ["RunsPreTokenizer", "build_pre_tokenizer_runs"]
