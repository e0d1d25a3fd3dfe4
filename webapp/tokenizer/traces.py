"""Data shapes of the traces the engine records for the UI.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

Symbol = Union[int, str]  # a token id (byte level) or a token string (char level)


@dataclass(frozen=True)
class MergeNode:
    """How one token was built. A leaf is one byte (or one character) of the input.

    `symbol` is the token id (byte level) or token string (char level);
    `rule` is the 0-based index of the rule that made it (None for a leaf);
    `children` is () for a leaf, (left, right) otherwise.
    """

    symbol: Symbol
    start: int
    end: int
    rule: int | None = None
    children: tuple["MergeNode", ...] = ()


@dataclass(frozen=True)
class Token:
    """One output token with its place in the input.

    `id` is the output id; `value` is the token's bytes (byte level) or string
    (char level); `tree` is how the merges built it (None when the trace
    stopped recording trees for being too large).
    """

    id: int
    value: bytes | str
    start: int
    end: int
    tree: MergeNode | None = None


@dataclass(frozen=True)
class TraceStep:
    """One rule that changed something: rule index, its pair, what it made, how often."""

    rule: int
    left: Symbol
    right: Symbol
    new: Symbol
    matches: int
    # The whole sequence right after this rule; None when the sequence is longer
    # than the recording cap (then `window` shows a part of it).
    sequence: tuple[Symbol, ...] | None = None
    # Indices into `sequence` (or `window`) of the symbols this rule made.
    changed: tuple[int, ...] = ()
    # When the sequence is too long to record: the symbols around this rule's
    # first match, starting at text offset `window_start` (bytes or characters),
    # with whether more of the sequence lies before / after it.
    window: tuple[Symbol, ...] | None = None
    window_start: int | None = None
    window_more: tuple[bool, bool] = (False, False)
    # A library-order step: the text offset where its piece starts (its window may start later).
    piece_start: int | None = None


@dataclass(frozen=True)
class TraceLimits:
    """How much of one encoding a trace records; the ids are always complete.

    >>> from webapp.tokenizer import TraceLimits, encode_trace
    >>> TraceLimits.tokens_only(10)
    TraceLimits(max_steps=0, max_tokens=10, max_sequence=0, max_tree_nodes=100000)
    >>> trace = encode_trace("lower lower", [[108, 111, 256]], limits=TraceLimits(max_steps=0, max_tokens=2))
    >>> len(trace.ids), len(trace.tokens), trace.tokens_truncated, trace.steps
    (9, 2, True, [])
    """

    max_steps: int = 200
    max_tokens: int = 3000
    max_sequence: int = 2000
    max_tree_nodes: int = 100_000

    @classmethod
    def tokens_only(cls, max_tokens: int) -> "TraceLimits":
        """Tokens with spans only: no steps and no sequences (when only the tokens are shown)."""
        return cls(max_steps=0, max_tokens=max_tokens, max_sequence=0)


#: The defaults of every trace function.
DEFAULT_TRACE_LIMITS = TraceLimits()


@dataclass(frozen=True)
class EncodeTrace:
    """Everything the Bytes / Characters pages show about one encoding."""

    ids: list[int]
    tokens: list[Token]
    tokens_truncated: bool
    initial: tuple[Symbol, ...] | None
    steps: list[TraceStep]
    steps_truncated: bool
    rules_fired: int  # rules that matched at least once
    rules_idle: int  # rules that matched nothing
    pretokens: list[tuple[int, int]] = field(default_factory=list)  # pre-token byte spans, if any
    # The text the offsets index when it is not the input (a tokenizer file's
    # normalizer or pre-tokenizer changed it); None means the input itself.
    text: str | None = None


@dataclass(frozen=True)
class PairCount:
    """A candidate pair and its count at one training step."""

    pair: tuple[str, str]
    count: int


@dataclass(frozen=True)
class TrainingStep:
    """One training step: the winner, its count, and the pairs that came close.

    `runners_up` lists the next best pairs (highest count first, ties in
    tie-break order); `tie` is True when one of them had the winner's count,
    i.e. the smallest-(first, second) rule decided.
    """

    index: int
    pair: tuple[str, str]
    merged: str
    count: int
    runners_up: tuple[PairCount, ...]
    tie: bool


@dataclass(frozen=True)
class TrainingTrace:
    """The learned merges (complete) and a bounded per-step record."""

    merges: list[str]
    pairs: list[tuple[str, str]]  # the pair behind each merge, complete
    steps: list[TrainingStep]
    steps_truncated: bool
    stopped_early: bool  # ran out of pairs before num_merges
