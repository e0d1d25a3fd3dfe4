"""What a tokenizer's pipeline holds once built, estimated from its description (for the caches' weights).

An opened file's cost is not only its rules: a SentencePiece charsmap is
decoded into a trie of Python ints, its file's regexes compile to their
written-out units, its added tokens go into a trie. `pipeline_bytes` adds
these up from the canonical description (hf/pipeline.py), with costs
measured by tracemalloc (docs/limits.md#caches). What it does not do: build
anything.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

import regex

from webapp.tokenizer.reading.regex_size import MAX_PATTERN_UNITS, pattern_units

#: Bytes held per byte of a charsmap: its blob twice (base64 in the description, decoded) and its
#: trie units as a list of ints (tracemalloc: a nmt_nfkc model holds 13 bytes per charsmap byte after an encode).
CHARSMAP_BYTE_COST = 14
#: Bytes a compiled regex holds per unit (reading/regex_size.py: about 270 measured while compiling).
PATTERN_UNIT_COST = 300
#: Bytes an added token holds beyond its characters (its tuple, the special-token tables).
ADDED_TOKEN_COST = 400
#: Bytes a character of an added token or a user-defined symbol holds: a trie node (tracemalloc: 185)
#: and its reversed automaton's node once walks run long (236), reading/longest_match.py.
ADDED_CHAR_COST = 450


def _nodes(node: Any) -> Iterator[dict[str, Any]]:
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _units(pattern: str) -> int:
    """A described pattern's units (one that does not parse weighs as much as a pattern may)."""
    try:
        return pattern_units(pattern)
    except (regex.error, RecursionError, OverflowError):
        return MAX_PATTERN_UNITS


def pipeline_bytes(pipeline: str) -> int:
    """Estimated bytes the pipeline `pipeline` (its JSON description; "" for none) holds once built."""
    if not pipeline:
        return 0
    desc = json.loads(pipeline)
    total = 2 * len(pipeline)  # (the description itself, kept as text)
    for node in _nodes({k: v for k, v in desc.items() if k != "added_tokens"}):
        charsmap = node.get("charsmap") if node.get("type") == "SentencePiece" else None
        if isinstance(charsmap, str):
            total += len(charsmap) * 3 // 4 * CHARSMAP_BYTE_COST
        pattern = node.get("Regex")
        if isinstance(pattern, str):
            total += _units(pattern) * PATTERN_UNIT_COST
        for symbol in node.get("user_defined") or () if node.get("type") == "SentencePiece" else ():
            total += ADDED_CHAR_COST * len(str(symbol).encode("utf-8", "surrogatepass"))
    for item in desc.get("added_tokens") or ():
        total += ADDED_TOKEN_COST + ADDED_CHAR_COST * len(str(item[0]))
    return total


__all__ = ["ADDED_CHAR_COST", "ADDED_TOKEN_COST", "CHARSMAP_BYTE_COST", "PATTERN_UNIT_COST", "pipeline_bytes"]
