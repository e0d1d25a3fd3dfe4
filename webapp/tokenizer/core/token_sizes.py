"""How many bytes the tokens of a byte-level merge list stand for, before building them.

What it does not do: validate rules (validation.py does) or encode anything.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from webapp.tokenizer.errors import TokenizerError

#: Lengths are capped here so a 300,000-rule doubling chain stays small integers.
_SATURATED = 1 << 62


@dataclass(frozen=True)
class SizeLimits:
    """Bounds on the bytes a merge list's tokens stand for (settings LIMIT_TOKEN_BYTES / LIMIT_VOCAB_BYTES)."""

    token_bytes: int = 65_536
    vocab_bytes: int = 8 * 1024 * 1024


DEFAULT_SIZE_LIMITS = SizeLimits()

#: "implied": ids 0..255 are their byte, a rule defines `new` only when it has no
#:   bytes yet and both operands have (implied_byte_vocab).
#: "first": every `new` above 255 is defined by its first rule; an operand with
#:   no bytes counts as empty (stored tokenizers, minbpe and playground JSON files).
#: "last": like "first" but a later rule redefines `new` (from_playground).
MODES = ("implied", "first", "last")


def check_sizes(
    rules: Iterable[Sequence[int]], limits: SizeLimits = DEFAULT_SIZE_LIMITS, mode: str = "implied"
) -> dict[int, int]:
    """{id >= 256: byte length} the rules define, or a TokenizerError at the first rule over a limit.

    O(rules): a token's length is its operands' lengths added, so nothing is built.
    """
    if mode not in MODES:
        raise ValueError(f"mode should be one of {MODES}, got {mode!r}")
    lengths: dict[int, int] = {}
    total = 0
    get = lengths.get
    for number, (left, right, new) in enumerate(rules, start=1):
        if new < 256:
            continue  # a byte id keeps its one byte in every mode
        if mode != "last" and new in lengths:
            continue
        a = 1 if left < 256 else get(left)
        b = 1 if right < 256 else get(right)
        if mode == "implied":
            if a is None or b is None:
                continue
        size = (a or 0) + (b or 0)
        if size > limits.token_bytes:
            raise TokenizerError(
                f"merges: rule {number} makes token {new} stand for {size:,} bytes, over the limit of "
                f"{limits.token_bytes:,} bytes per token (setting LIMIT_TOKEN_BYTES)",
                field="merges",
                location={"rule": number, "limit": limits.token_bytes},
            )
        total += size - lengths.get(new, 0)
        lengths[new] = size
        if total > limits.vocab_bytes:
            raise TokenizerError(
                f"merges: by rule {number} the tokens stand for {total:,} bytes in all, over the limit of "
                f"{limits.vocab_bytes:,} bytes (setting LIMIT_VOCAB_BYTES)",
                field="merges",
                location={"rule": number, "limit": limits.vocab_bytes},
            )
    return lengths


class ImpliedVocab:
    """The vocab a merge list implies, as lengths for every id and bytes on demand."""

    def __init__(self, rules: Iterable[Sequence[int]]) -> None:
        self.parts: dict[int, tuple[int, int]] = {}
        self.lengths: dict[int, int] = {}
        for left, right, new in rules:
            if new < 256 or new in self.parts:
                continue
            a = 1 if left < 256 else self.lengths.get(left)
            b = 1 if right < 256 else self.lengths.get(right)
            if a is None or b is None:
                continue
            self.parts[new] = (left, right)
            self.lengths[new] = min(a + b, _SATURATED)

    def length(self, token: int) -> int | None:
        """One id's byte length (None when the merges give it no bytes)."""
        return 1 if 0 <= token < 256 else self.lengths.get(token)

    def total(self, ids: Iterable[int]) -> int:
        """The bytes decoding `ids` would join (ids without bytes count 0)."""
        get = self.lengths.get
        return sum(1 if 0 <= i < 256 else get(i, 0) for i in ids)

    def expand(self, token: int) -> bytes:
        """A token's bytes, walking its definition tree with a stack (no intermediate
        tokens kept, so a chain costs its length, not its length squared).
        The caller checks the length first: the work is proportional to it."""
        out = bytearray()
        stack = [token]
        parts = self.parts
        while stack:
            t = stack.pop()
            if t < 256:
                out.append(t)
                continue
            left, right = parts[t]
            stack.append(right)
            stack.append(left)
        return bytes(out)

    def bytes_for(self, ids: Iterable[int], max_bytes: int) -> dict[int, bytes] | None:
        """{id: bytes} for the distinct `ids` that have bytes, or None when those
        would total more than `max_bytes` (nothing is built then)."""
        wanted = {i for i in ids if (0 <= i < 256) or i in self.lengths}
        if sum(self.length(i) or 0 for i in wanted) > max_bytes:
            return None
        return {i: (bytes((i,)) if i < 256 else self.expand(i)) for i in sorted(wanted)}
