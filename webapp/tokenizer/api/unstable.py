"""tiktoken's `encode_with_unstable` for a byte-level tokenizer: the ids further text cannot change, and the end's completions.

tiktoken's own heuristic, kept as its API gives it (the last pre-token and the whitespace
before it are unstable). What it does not do: prove anything; the prompt end's answer
(webapp/tokenizer/prompt/) is the proven one.
"""

from __future__ import annotations

from bisect import bisect_left

from webapp.tokenizer.api.decoding import TokenTables
from webapp.tokenizer.api.parts import last_char
from webapp.tokenizer.reading.text import WHITE_SPACE
from webapp.tokenizer.pretokenize.patterns import PATTERNS
from webapp.tokenizer.pretokenize.pretokenized import split_text
from webapp.tokenizer.stages.special import split_special
from webapp.tokenizer.stages.tokenizer import Tokenizer


def encode_with_unstable(tokenizer: Tokenizer, tables: TokenTables, sorted_bytes: list[bytes], text: str,
                         allowed: frozenset[str]) -> tuple[list[int], list[list[int]]]:
    """(the stable ids, the token sequences the unstable end may become) of checked `text`."""
    ids = tokenizer.encode(text, allowed)
    unstable_count = _last_piece_tokens(tokenizer, text, allowed)
    if unstable_count and _is_space_token(tables, ids[-unstable_count]):
        while unstable_count < len(ids) and _is_space_token(tables, ids[-unstable_count - 1]):
            unstable_count += 1  # whitespace before the last pre-token may merge with what follows
    if not unstable_count:
        return ids, []
    end = b"".join(tables.decoder[i] for i in ids[-unstable_count:])
    return ids[:-unstable_count], [list(seq) for seq in _completions(tokenizer, tables, sorted_bytes, end)]


def _is_space_token(tables: TokenTables, token_id: int) -> bool:
    """Is this an ordinary token made of spaces, newlines and tabs only?"""
    data = tables.decoder.get(token_id)
    return token_id not in tables.special_ids and data is not None and all(byte in b" \n\t" for byte in data)


def _last_piece_tokens(tokenizer: Tokenizer, text: str, allowed: frozenset[str]) -> int:
    """How many ids the last pre-token of the text took (0 if the text ends with a special token)."""
    parts = split_special(text, allowed)
    if not parts or parts[-1][1]:
        return 0
    scheme = tokenizer.loaded.pretokenize
    pieces = split_text(parts[-1][0], scheme) if scheme in PATTERNS else [parts[-1][0]]
    return len(tokenizer.model.merge_bytes(pieces[-1].encode("utf-8"))) if pieces else 0


def _completions(tokenizer: Tokenizer, tables: TokenTables, ordered: list[bytes], end: bytes) -> set[tuple[int, ...]]:
    decoder, encoder = tables.decoder, tables.encoder
    bpe = tokenizer.model.merge_bytes

    def starting_with(prefix: bytes) -> list[bytes]:
        found = []
        at = bisect_left(ordered, prefix)
        while at < len(ordered) and ordered[at].startswith(prefix):
            found.append(ordered[at])
            at += 1
        return found

    completions: set[tuple[int, ...]] = {(encoder[token],) for token in starting_with(end)}
    candidates = [end[:k] + token for k in range(1, len(end)) for token in starting_with(end[k:])]
    texts: list[str] = []
    raw: list[bytes] = []
    for data in candidates:
        try:
            texts.append(data.decode("utf-8"))
        except UnicodeDecodeError:
            raw.append(data)
    for ids in [*tokenizer.encode_batch(texts, frozenset()), *map(bpe, raw)]:
        taken: list[int] = []
        covered = 0
        for token_id in ids:
            taken.append(token_id)
            covered += len(decoder[token_id])
            if covered >= len(end):
                break
        completions.add(tuple(taken))
    if len(end) > 1:
        char, size = last_char(end)
        if char is not None and char in WHITE_SPACE and size < len(end):
            completions.add(tuple(bpe(end[:-size]) + bpe(end[-size:])))
    return completions


__all__ = ["encode_with_unstable"]
