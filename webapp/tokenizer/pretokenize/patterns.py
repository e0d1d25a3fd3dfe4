"""The pre-tokenization schemes: the published regex patterns, and checking a scheme's name.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from typing import Any

import regex

from webapp.tokenizer.errors import TokenizerError, short_repr

SCHEMES: tuple[str, ...] = ("none", "gpt2", "cl100k", "o200k")

# GPT-2's pattern as published with its encoder (also the `tokenizers`
# ByteLevel pre-tokenizer's regex), and cl100k_base's pattern.
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
CL100K_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"""
    r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
# o200k_base's (GPT-4o) pattern as tiktoken publishes it: letters split at
# case changes, contractions kept with their word, "/" after punctuation.
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
PATTERNS: dict[str, str] = {"gpt2": GPT2_PATTERN, "cl100k": CL100K_PATTERN, "o200k": O200K_PATTERN}
_COMPILED: dict[str, regex.Pattern[str]] = {name: regex.compile(p) for name, p in PATTERNS.items()}


def check_scheme(scheme: Any) -> str:
    """The scheme name if known, else a TokenizerError naming the choices."""
    if isinstance(scheme, str) and scheme in SCHEMES:
        return scheme
    raise TokenizerError(
        f"pretokenize: expected one of {', '.join(SCHEMES)}, got {short_repr(scheme)}",
        field="pretokenize",
    )


def scheme_for_pattern(pattern: str) -> str | None:
    """Which of our schemes a regex (from a tokenizer file) is, or None."""
    for name, ours in PATTERNS.items():
        if pattern == ours:
            return name
    # tiktoken and minbpe publish possessive / reordered variants of the same
    # patterns; recognise them by their distinctive parts.
    compact = pattern.replace("++", "+").replace("?+", "?").replace("{1,3}+", "{1,3}")
    if r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]" in compact and r"\p{N}{1,3}" in compact:
        return "o200k"  # checked first: it also holds cl100k's distinctive parts
    if r"\p{N}{1,3}" in compact and r"[^\r\n\p{L}\p{N}]?" in compact:
        return "cl100k"
    if r" ?\p{L}+" in compact and r" ?\p{N}+" in compact:
        return "gpt2"
    return None


__all__ = [
    "CL100K_PATTERN", "GPT2_PATTERN", "O200K_PATTERN", "PATTERNS", "SCHEMES", "check_scheme", "scheme_for_pattern",
]
