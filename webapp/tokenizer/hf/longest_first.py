"""Special tokens cut out of a text as llama.cpp cuts them (its `tokenizer_st_partition`), for GGUF files.

llama.cpp takes its special tokens longest first (by UTF-8 length; equal lengths by id here) and cuts
every occurrence of each, left to right, out of the text the longer ones left: a token found in the
text is taken only when it lies wholly in text no earlier token took. So where two tokens overlap the
longer one wins even when the shorter starts first, where `tokenizers` takes the leftmost. A token
with lstrip (rstrip) also takes the ASCII whitespace (C's isspace) before (after) it, up to the
previous token. Control tokens left out of `allowed` are not looked for at all: their text is text.
What it does not do: normalize, or `single_word` (llama.cpp has no such attribute).
"""

from __future__ import annotations

from bisect import bisect_right, insort
from typing import Any, Protocol, Sequence

import regex

from webapp.tokenizer.reading.text import time_left

#: C's isspace in the "C" locale, which llama.cpp's lstrip / rstrip test byte by byte.
C_SPACE = " \t\n\v\f\r"
_END = ""  # (the trie key of a whole token: no character of a text is the empty string)


class Token(Protocol):
    @property
    def content(self) -> str: ...
    @property
    def id(self) -> int: ...
    @property
    def special(self) -> bool: ...
    @property
    def lstrip(self) -> bool: ...
    @property
    def rstrip(self) -> bool: ...


class LongestFirstSplitter:
    """`split(text, allowed)`: [(token or None, start, end), ...] covering the text, as llama.cpp cuts it."""

    def __init__(self, tokens: Sequence[Token]) -> None:
        self.trie: dict[str, Any] = {}  # (nested: a character -> its node; _END -> the token ending there)
        for token in tokens:
            if not token.content:
                continue
            node = self.trie
            for ch in token.content:
                node = node.setdefault(ch, {})
            node.setdefault(_END, token)  # (the first of equal contents, as a dict keeps the first id)
        firsts = [ch for ch in self.trie]
        self.starts = regex.compile("[" + "".join(regex.escape(ch) for ch in firsts) + "]") if firsts else None

    def _occurrences(self, text: str, allowed: frozenset[str] | None) -> list[tuple[int, int, Token]]:
        """Every (start, end, token) where a wanted token's text is found, overlapping ones too."""
        found: list[tuple[int, int, Token]] = []
        if self.starts is None:
            return found
        steps = 0
        for candidate in self.starts.finditer(text):
            start = candidate.start()
            node: dict[str, Any] | None = self.trie
            at = start
            while at < len(text) and node is not None:
                node = node.get(text[at])
                if node is None:
                    break
                at += 1
                token: Token | None = node.get(_END)
                if token is not None and (allowed is None or not token.special or token.content in allowed):
                    found.append((start, at, token))
            steps += at - start + 1
            if steps > 65_536:
                steps = 0
                time_left()  # (the encode's time budget bounds the search too)
        return found

    def split(self, text: str, allowed: frozenset[str] | None = None) -> list[tuple[Token | None, int, int]]:
        occurrences = self._occurrences(text, allowed) if text else []
        if not occurrences:
            return [(None, 0, len(text))]
        occurrences.sort(key=lambda o: (-len(o[2].content.encode("utf-8", "surrogatepass")), o[2].id, o[0]))
        starts: list[int] = []  # the taken stretches, sorted, never overlapping
        ends: list[int] = []
        taken: list[tuple[int, int, Token]] = []
        for start, end, token in occurrences:
            at = bisect_right(starts, start) - 1
            if (at >= 0 and ends[at] > start) or (at + 1 < len(starts) and starts[at + 1] < end):
                continue  # (not wholly in text still free)
            low = ends[at] if at >= 0 else 0
            high = starts[at + 1] if at + 1 < len(starts) else len(text)
            if token.lstrip:
                while start > low and text[start - 1] in C_SPACE:
                    start -= 1
            if token.rstrip:
                while end < high and text[end] in C_SPACE:
                    end += 1
            insort(starts, start)
            ends.insert(starts.index(start), end)
            taken.append((start, end, token))
        taken.sort(key=lambda t: t[0])
        out: list[tuple[Token | None, int, int]] = []
        done = 0
        for start, end, token in taken:
            if done < start:
                out.append((None, done, start))
            out.append((token, start, end))
            done = end
        if done < len(text):
            out.append((None, done, len(text)))
        return out


__all__ = ["C_SPACE", "LongestFirstSplitter"]
