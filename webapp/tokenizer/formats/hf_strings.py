"""Hugging Face token strings: the {token: id} vocab, merge lines, and both levels built from them.

Shared by tokenizer.json and vocab.json + merges.txt: checking the vocab,
reading "left right" merge lines (including tokens that hold spaces), telling
a byte-level vocab from a character-level one, and building the
`LoadedTokenizer`. What it does not do: read either file's outer structure.

Details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any, Mapping, Sequence

from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.formats.building import order_notes, build_byte_level
from webapp.tokenizer.formats.common import is_int, shown_value
from webapp.tokenizer.core.alphabet import ALPHABET_BYTE, BYTE_ALPHABET, token_to_bytes, tokens_to_bytes
from webapp.tokenizer.loaded import LoadedTokenizer


def looks_byte_level(vocab: Mapping[str, Any]) -> bool:
    """For a bare vocab.json: every token in the byte alphabet, and 'Ġ' in use."""
    if not vocab:
        return False
    alphabet = ALPHABET_BYTE
    saw_space = False
    for token in vocab:
        for ch in token:
            if ch not in alphabet:
                return False
        saw_space = saw_space or "Ġ" in token
    return saw_space or all(ch in vocab for ch in BYTE_ALPHABET)


def check_vocab(vocab: Any, what: str) -> dict[str, int]:
    if not isinstance(vocab, dict):
        raise TokenizerError(
            f"vocab: {what} should be an object {{token: id}}, got {type(vocab).__name__}",
            field="vocab",
        )
    ids = vocab.values()
    if {*map(type, ids)} <= {int} and (not ids or min(ids) >= 0) and len(set(ids)) == len(vocab):
        return vocab  # (every id a distinct non-negative int, checked by C-level loops; else found below)
    seen: dict[int, str] = {}
    for token, tid in vocab.items():
        if not is_int(tid) or tid < 0:
            raise TokenizerError(
                f"vocab: token {shown_value(token)} should have a non-negative integer id, got {shown_value(tid)}",
                field="vocab",
                location={"key": token},
            )
        if tid in seen:
            raise TokenizerError(
                f"vocab: tokens {shown_value(seen[tid])} and {shown_value(token)} both have id {tid}",
                field="vocab",
                location={"key": token},
            )
        seen[tid] = token
    return vocab


def check_token_sizes(vocab: Mapping[str, int], max_bytes: int, *, byte_level: bool) -> None:
    """Refuse a vocab entry that stands for over `max_bytes` bytes (LIMIT_TOKEN_BYTES), naming it.

    A byte-level token is one byte a character (the GPT-2 alphabet), any other its UTF-8."""
    for token, tid in vocab.items():
        if len(token) * (1 if byte_level else 4) <= max_bytes:
            continue  # (too short to be over: nothing encoded)
        size = len(token) if byte_level else len(token.encode("utf-8", "surrogatepass"))
        if size > max_bytes:
            raise TokenizerError(
                f"vocab: the entry with id {tid} ({shown_value(token)}) stands for {size:,} bytes, over the limit of "
                f"{max_bytes:,} bytes per token (setting LIMIT_TOKEN_BYTES)",
                field="vocab",
                location={"id": tid, "limit": max_bytes},
            )


def split_merge_line(
    line: str, vocab: Mapping[str, int], made: set[str] | None = None
) -> tuple[str, str] | None:
    """"left right" -> (left, right)."""
    first = line.find(" ")
    if first > 0 and line.find(" ", first + 1) < 0 and first < len(line) - 1:
        return line[:first], line[first + 1 :]
    # Several spaces: each reading costs slices of the whole line, so only the
    # spaces where both sides have the length of some vocab token are tried, and
    # a line longer than the longest token (plus its space) has no reading at all.
    # (A vocab of D distinct lengths holds at least D^2/2 characters, so D stays small.)
    lengths, longest = _token_lengths(vocab)
    end = len(line) - 1
    if end > longest or first < 0:
        return None
    found = [
        (line[:i], line[i + 1 :])
        for i in _spaces_at(line, lengths)
        if 0 < i < end and (end - i) in lengths
        and line[:i] in vocab and line[i + 1 :] in vocab and line[:i] + line[i + 1 :] in vocab
    ]
    if len(found) > 1 and made is not None:
        found = [(a, b) for a, b in found if (len(a) == 1 or a in made) and (len(b) == 1 or b in made)]
    if len(found) > 1:
        readings = " or ".join(f"{shown_value(a)} + {shown_value(b)}" for a, b in found[:3])
        raise TokenizerError(
            f"merges: {shown_value(line)} can be read as {readings}; tokens that hold spaces make this "
            "line ambiguous (tokenizer.json's [left, right] form is not)",
            field="merges",
        )
    return found[0] if found else None


_LENGTHS_OF: list[Any] = [None, frozenset(), 0]  # [vocab, its token lengths, longest]: the last vocab asked


def _token_lengths(vocab: Mapping[str, int]) -> tuple[frozenset[int], int]:
    """The distinct token lengths of a vocab and the longest (computed once per vocab)."""
    cached = _LENGTHS_OF
    if cached[0] is vocab:
        return cached[1], cached[2]
    lengths = frozenset(map(len, vocab))
    longest = max(lengths, default=0)
    _LENGTHS_OF[:] = [vocab, lengths, longest]
    return lengths, longest


def _spaces_at(line: str, lengths: frozenset[int]) -> list[int]:
    """Offsets of the spaces in `line` that could end a vocab token (str.find steps)."""
    out = []
    i = line.find(" ")
    while i >= 0:
        if i in lengths:
            out.append(i)
        i = line.find(" ", i + 1)
    return out


def _check_pairs_in_vocab(pairs: Sequence[tuple[str, str]], vocab: Mapping[str, int]) -> None:
    for number, (left, right) in enumerate(pairs, start=1):
        for side in (left, right):
            if side not in vocab:
                raise TokenizerError(
                    f"merges: rule {number} uses {shown_value(side)}, which is not in the vocab",
                    field="merges",
                    location={"rule": number},
                )
        if left + right not in vocab:
            raise TokenizerError(
                f"merges: rule {number} joins {shown_value(left)} and {shown_value(right)} into "
                f"{shown_value(left + right)}, which is not in the vocab",
                field="merges",
                location={"rule": number},
            )


def char_level_from_strings(
    vocab: dict[str, int], pairs: list[tuple[str, str]], *, source: str, notes: list[str],
    special: Mapping[str, int] | None = None,
) -> LoadedTokenizer:
    _check_pairs_in_vocab(pairs, vocab)
    notes = notes + order_notes(((a, b, a + b) for a, b in pairs), lambda s: len(s) == 1)
    return LoadedTokenizer(
        level="chars",
        merges=tuple(pairs),
        vocab=dict(vocab),
        source=source,
        pretokenize="none",
        special_tokens=dict(special or {}),
        notes=tuple(notes),
    )


def byte_level_from_strings(
    vocab: dict[str, int],
    pairs: list[tuple[str, str]],
    *,
    source: str,
    pretokenize: str,
    notes: list[str],
    special: Mapping[str, int] | None = None,
    unk_token: Any = None,
    all_tokens: bool = False,
) -> LoadedTokenizer:
    """GPT-2 alphabet strings -> ids and bytes, then the shared byte-level builder."""
    special = dict(special or {})
    get = vocab.__getitem__
    try:  # (the rules in ids by C-level loops, which checks every pair; a KeyError is named rule by rule)
        rules = list(zip(map(get, map(itemgetter(0), pairs)), map(get, map(itemgetter(1), pairs)),
                         map(get, map("".join, pairs))))
    except KeyError:
        _check_pairs_in_vocab(pairs, vocab)
        raise
    spelled = tokens_to_bytes(vocab.keys())  # (all at once when every token is a byte-level one)
    file_bytes: dict[int, bytes] = {} if spelled is None else dict(zip(vocab.values(), spelled))
    for token, tid in vocab.items() if spelled is None else ():
        data = token_to_bytes(token)
        if data is None:
            if token in special or token == unk_token:
                continue  # special tokens are written as themselves, not in the byte alphabet
            bad = next(ch for ch in token if ch not in ALPHABET_BYTE)
            raise TokenizerError(
                f"vocab: token {shown_value(token)} (id {tid}) has the character {shown_value(bad)}, which is not in "
                "the byte-level alphabet, so this is not a byte-level vocab",
                field="vocab",
                location={"key": token},
            )
        file_bytes[tid] = data
    unk_id = vocab.get(unk_token) if isinstance(unk_token, str) else None
    return build_byte_level(
        file_bytes, rules, source=source, pretokenize=pretokenize, notes=notes,
        special=special, unk_id=unk_id, all_tokens=all_tokens,
    )
