"""The literal algorithms of the GUIDE, kept as the test oracle.

Written for clarity, not speed: every rule is a full left-to-right pass over
the whole sequence, exactly as the contract reads. The engine in
`webapp.tokenizer` must give the same answers; nothing here is used by the app.
It does no validation: callers pass well-typed values.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence


def apply_rule(sequence: list, left: Hashable, right: Hashable, new: Hashable) -> list:
    """One visit of one rule: replace non-overlapping (left, right), scanning left to right.

    What the visit produces is not rescanned by this visit.
    """
    out = []
    i = 0
    while i < len(sequence):
        if i + 1 < len(sequence) and sequence[i] == left and sequence[i + 1] == right:
            out.append(new)
            i += 2
        else:
            out.append(sequence[i])
            i += 1
    return out


def encode(text: str, merges: Sequence[Sequence[int]]) -> list[int]:
    """Byte-level encode: UTF-8 bytes, then each rule [left, right, new] once, in order."""
    sequence = list(text.encode("utf-8"))
    for left, right, new in merges:
        sequence = apply_rule(sequence, left, right, new)
    return sequence


def decode(ids: Sequence[int], vocab: dict) -> str:
    """Byte-level decode: concatenate every id's bytes, then strict UTF-8.

    Keys may be ints or strings of digits; an id 0..255 not in the vocab is that byte.
    """
    table = {int(key): bytes(value) for key, value in vocab.items()}
    data = b""
    for token_id in ids:
        if token_id in table:
            data += table[token_id]
        elif 0 <= token_id <= 255:
            data += bytes([token_id])
        else:
            raise KeyError(token_id)
    return data.decode("utf-8")


def char_tokens(text: str, merges: Sequence[Sequence[str]]) -> list[str]:
    """Character-level tokens after the last rule [left, right] (the new token is left + right)."""
    sequence = list(text)
    for left, right in merges:
        sequence = apply_rule(sequence, left, right, left + right)
    return sequence


def bpe_encode_text(text: str, vocab: dict, merges: Sequence[Sequence[str]]) -> list[int]:
    """Character-level encode: merge, then look every token up in vocab (token -> id)."""
    return [vocab[token] for token in char_tokens(text, merges)]



def steps(initial: list, rules: Sequence[Sequence]) -> list[tuple[int, int, tuple]]:
    """Every rule that changed something: (rule index from 0, matches, sequence after it).

    `rules` are (left, right, new) triples of any symbols; the literal trace oracle.
    """
    out = []
    sequence = list(initial)
    for index, (left, right, new) in enumerate(rules):
        after = apply_rule(sequence, left, right, new)
        matches = len(sequence) - len(after)
        if matches:
            out.append((index, matches, tuple(after)))
        sequence = after
    return out
