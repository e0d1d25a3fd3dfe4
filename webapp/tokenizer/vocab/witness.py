"""Witnesses: a text whose encode holds a token that its own text does not give.

`find_witness(encode_batch, token_id, data)` tries texts made of the token's bytes - completed to
whole characters when they are half of one (`completions`) - between a few characters
before and after (`AROUND`: a space, letters, digits, punctuation, line breaks, the
characters the split patterns treat apart), and returns the first whose encode holds the
token: checked by the same encode as everything else, so a witness is never a guess. None
when no tried text gives it (the caller then says "undecided" unless a proof says more).
"""

from __future__ import annotations

import random
import unicodedata
from functools import lru_cache
from itertools import accumulate, islice, product
from typing import Callable, Iterator, Sequence

import regex

EncodeBatch = Callable[[list[str]], list[list[int]]]

#: The characters tried before and after a token's text, the likelier first.
AROUND: tuple[str, ...] = (
    "", " ", "a", "M", "1", ".", "<", "(", "\n", "'", "s", "-", "/", "\t", "\r\n", "é", "中", "\u3000",
    "\u00a0", "#", "\"", ")",
)
#: The most texts tried for one token (about a millisecond each at worst).
BUDGET = 3_000
#: The most texts one encode call gets while many tokens are searched together (memory stays bounded).
CALL_TEXTS = 4_096
#: Cores (a half character's completions) tried in light contexts, and how many of them in all contexts.
CORES = 2_000
LIGHT_CORES = 64
FULL_CORES = 2
LIGHT: tuple[tuple[str, str], ...] = (("", ""), (" ", ""), ("", " "), ("a", ""), ("", "a"), ("1", ""), ("\n", ""))
_CONT = bytes(range(0x80, 0xC0))
_LEADS = {2: range(0xC2, 0xE0), 3: range(0xE0, 0xF0), 4: range(0xF0, 0xF5)}


def _needs(data: bytes) -> tuple[int, int]:
    """(continuation bytes at the start, continuation bytes missing at the end) of `data`."""
    start = len(data) - len(data.lstrip(_CONT))
    tail = 0
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte >= 0xC0:
            size = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            tail = max(0, size - back)
            break
        if byte < 0x80:
            break
    return start, tail


def _char(rng: random.Random, size: int, lead: int | None = None) -> bytes:
    """A random character's UTF-8 of `size` bytes (possibly invalid: the caller decodes)."""
    first = lead if lead is not None else rng.choice(_LEADS[size])
    return bytes([first, *(rng.choice(_CONT) for _ in range(size - 1))])


def completions(data: bytes, seed: int = 0) -> Iterator[str]:
    """Texts of whole characters whose UTF-8 holds `data`: itself when it is whole, else (half a
    character at either end, or inside one) the missing bytes drawn at random, each character size
    in turn; from the `CORES // 2`-th on, one more random character of the last one's size follows."""
    start, tail = _needs(data)
    if not start and not tail:
        yield data.decode("utf-8")  # (whole characters, or bytes no text holds: the decode raises)
        return
    if start == len(data):  # only continuation bytes: inside one character, `before` of them ahead
        heads = [(size, before, size - 1 - before - start) for size in (2, 3, 4) for before in range(size - start)]
    elif start:
        heads = [(size, size - 1 - start, tail) for size in (2, 3, 4) if size - 1 >= start]
    else:
        heads = [(0, 0, tail)]
    if not heads:
        return  # (more continuation bytes than a character holds)
    rng = random.Random(seed or int.from_bytes(data[:8], "big"))
    seen: set[str] = set()
    for n in range(CORES):
        size, before, after = heads[n % len(heads)]
        front = _char(rng, size)[:1 + before] if size else b""
        back = bytes(rng.choice(_CONT) for _ in range(after))
        try:
            text = (front + data + back).decode("utf-8")
            if n >= CORES // 2:  # (the next character may take the last one's bytes before they merge)
                size = len(text[-1].encode("utf-8"))
                text += _char(rng, size).decode("utf-8") if size > 1 else rng.choice("aeinost")
        except UnicodeDecodeError:
            continue
        if text not in seen:
            seen.add(text)
            yield text


def cores(data: bytes, metaspace: bool) -> Iterator[str]:
    """The texts to put in context: the token's text (or its completions), and for a file that writes
    spaces as "\u2581" the text without its first space (the file's normalizer puts one back)."""
    seen: set[str] = set()
    for text in completions(data):
        for core in (text, text[1:] if metaspace and text.startswith(" ") else text):
            if core and core not in seen:
                seen.add(core)
                yield core


def _texts(data: bytes, metaspace: bool) -> Iterator[str]:
    """The texts tried: every core alone (up to `CORES`), the first `LIGHT_CORES` in a few light
    contexts, the first `FULL_CORES` between every pair of `AROUND`, then (half a character at the
    end) each core followed by one more character of the same block."""
    some: list[str] = []
    for core in islice(cores(data, metaspace), CORES):
        if len(some) < LIGHT_CORES:
            some.append(core)
        yield core
    for core in some[:LIGHT_CORES]:
        for before, after in LIGHT:
            yield before + core + after
    for core in some[:FULL_CORES]:
        for before, after in product(AROUND, AROUND):
            yield before + core + after


def find_witness(encode_batch: EncodeBatch, token_id: int, data: bytes, metaspace: bool = False,
                 budget: int = BUDGET, hints: Sequence[str] = ()) -> str | None:
    """The first text tried whose encode holds the token (see the module docstring), or None."""
    return find_witnesses(encode_batch, [(token_id, data, hints)], metaspace, budget)[token_id]


def find_witnesses(encode_batch: EncodeBatch, tokens: Sequence[tuple[int, bytes, Sequence[str]]],
                   metaspace: bool = False, budget: int = BUDGET) -> dict[int, str | None]:
    """`find_witness` of many tokens ((id, bytes, hints) each; `hints`: texts a proof left open, tried
    after the first few): each token's texts are encoded in batches growing from one (most tokens
    take the first text or two), and one round's batches of every token still searching go to the
    encode together (one call, not one per token: the answer per token is the same)."""
    texts = {token_id: islice(_unique(_with_hints(_texts(data, metaspace), hints)), budget)
             for token_id, data, hints in tokens}
    found: dict[int, str | None] = dict.fromkeys(texts)
    size = 1
    while texts:
        batches = {token_id: batch for token_id, each in texts.items() if (batch := list(islice(each, size)))}
        for group in _groups(list(batches.items())):
            got = iter(_encoded(encode_batch, [text for _, batch in group for text in batch],
                                [len(batch) for _, batch in group]))
            for token_id, batch in group:
                encoded = list(islice(got, len(batch)))  # (all of the batch's: the next token's come after)
                found[token_id] = next((text for text, ids in zip(batch, encoded) if token_id in ids), None)
        texts = {token_id: texts[token_id] for token_id, batch in batches.items() if found[token_id] is None}
        size = min(size * 8, 512)
    return found


def _groups(batches: list[tuple[int, list[str]]]) -> Iterator[list[tuple[int, list[str]]]]:
    """The tokens' batches in groups of at most `CALL_TEXTS` texts (a batch larger than that alone)."""
    group: list[tuple[int, list[str]]] = []
    count = 0
    for token_id, batch in batches:
        if group and count + len(batch) > CALL_TEXTS:
            yield group
            group, count = [], 0
        group.append((token_id, batch))
        count += len(batch)
    if group:
        yield group


def _encoded(encode_batch: EncodeBatch, texts: list[str], sizes: list[int]) -> list[list[int]]:
    """The ids of each text, in one call; where that fails (a character-level vocab that lacks a symbol of
    some text), each batch of `sizes` again alone, and where that fails, each text alone ([] if it fails)."""
    try:
        return encode_batch(texts)
    except ValueError:
        out: list[list[int]] = []
        bounds = [0, *accumulate(sizes)]
        for a, b in zip(bounds, bounds[1:]):
            try:
                out.extend(encode_batch(texts[a:b]))
            except ValueError:
                out.extend(_or_none(encode_batch, text) for text in texts[a:b])
        return out


def _with_hints(texts: Iterator[str], hints: Sequence[str]) -> Iterator[str]:
    yield from islice(texts, 8)
    yield from hints
    yield from texts


def _unique(texts: Iterator[str]) -> Iterator[str]:
    """Each text once, and only texts of settled characters (`settled`)."""
    seen: set[str] = set()
    for text in texts:
        if text not in seen and all(map(settled, text)):
            seen.add(text)
            yield text


@lru_cache(maxsize=65_536)
def settled(ch: str) -> bool:
    """Has the character the same general category in Python's Unicode data as in `regex`'s (often
    newer) data (unassigned in both counts)? One assigned in between might split differently in a
    library built on another Unicode version, so no witness holds one."""
    return regex.fullmatch(r"\p{" + unicodedata.category(ch) + "}", ch) is not None


def _or_none(encode_batch: EncodeBatch, text: str) -> list[int]:
    try:
        return encode_batch([text])[0]
    except ValueError:
        return []
