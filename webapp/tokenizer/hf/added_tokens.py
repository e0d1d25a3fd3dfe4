"""A tokenizer.json's added tokens, and how `tokenizers` cuts them out of a text: the leftmost match,
the longest one there, then the token's own rules (single_word, lstrip, rstrip).

What it does not do: read the file's entries (hf/pipeline.py), or cut llama.cpp's way (hf/longest_first.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import regex

from webapp.tokenizer.reading.longest_match import Keys
from webapp.tokenizer.reading.text import WHITE_SPACE, time_left

_WORD_CHAR = regex.compile(r"\w")
_WS = "".join(sorted(WHITE_SPACE))


@dataclass(frozen=True)
class AddedToken:
    content: str
    id: int
    special: bool = False
    normalized: bool = True
    lstrip: bool = False
    rstrip: bool = False
    single_word: bool = False



class AddedSplitter:
    """Cuts added tokens out of a text: leftmost match, longest first, then the token's rules."""

    def __init__(self, tokens: Sequence[AddedToken], normalize: Callable[[str], str] | None) -> None:
        self.keys = Keys((normalize(t.content) if normalize is not None else t.content, t) for t in tokens)
        firsts = self.keys.first_items()
        self.starts = regex.compile("[" + "".join(regex.escape(ch) for ch in firsts) + "]") if firsts else None

    def _matches(self, text: str) -> Iterator[tuple[int, int, AddedToken]]:
        position = 0
        checks = 0
        starts = self.starts
        if starts is None:
            return
        scanner = self.keys.scanner(text)
        while True:
            candidate = starts.search(text, position)
            if candidate is None:
                return
            start = candidate.start()
            found = scanner.longest(start)
            checks += 1
            if checks % 4096 == 0:
                time_left()  # (the regex budget bounds the whole search too)
            if found is None:
                position = start + 1
                continue
            yield start, start + found[0], found[1]
            position = start + found[0]

    def split(self, text: str, allowed: frozenset[str] | None = None) -> list[tuple[AddedToken | None, int, int]]:
        """`allowed`: the special tokens to split out (None: all); added tokens that are
        not special always are. A special token left as text still ends its match, as
        in the library (its `encode_special_tokens`), so nothing inside it matches."""
        if self.starts is None or not text or self.starts.search(text) is None:
            return [(None, 0, len(text))]  # (most texts: no added token's first character in them)
        out: list[tuple[AddedToken | None, int, int]] = []
        done = 0
        for start, stop, token in self._matches(text):
            if allowed is not None and token.special and token.content not in allowed:
                continue
            if token.single_word and (
                (start > 0 and _WORD_CHAR.match(text, start - 1)) or (stop < len(text) and _WORD_CHAR.match(text, stop))
            ):
                continue
            if token.lstrip:
                start = max(len(text[:start].rstrip(_WS)), done)
            if token.rstrip:
                stop += len(text[stop:]) - len(text[stop:].lstrip(_WS))
            if done < start:
                out.append((None, done, start))
            out.append((token, start, stop))
            done = stop
        if done != len(text):
            out.append((None, done, len(text)))
        return out
