"""The model half of the prompt-end proof: inside the last piece, which token boundaries can text cross?

A piece's tokens are a chain in which every neighbouring pair merges, alone, back into itself,
and every such chain is the encoding of its text (docs/explain.md, "Where a prompt ends"). So
appended text removes boundary b only if some q < end has a token that starts with the piece's
bytes from q, runs past the end, and pairs with the last token of the encoding up to q, where
that encoding lacks b (or q < b). `Crossing.decide` checks exactly that, within a budget, and
gives each boundary a verdict (final, crossed with the candidate text, or unknown).
"""

from __future__ import annotations

import codecs
from bisect import bisect_left
from itertools import islice, product
from dataclasses import dataclass, field
from typing import Callable, Iterator, Mapping, Sequence

import numpy as np

from webapp.tokenizer.core.alphabet import bytes_to_token
from webapp.tokenizer.loaded import Part
from webapp.tokenizer.stages.models import LibraryOrder, ListOrderBytes
from webapp.tokenizer.stages.tokenizer import Tokenizer
from webapp.tokenizer.vocab.pieces import kinds_between, match_prefix

#: The most pair checks (each a merge of two tokens' bytes, alone) one decision makes.
PAIR_BUDGET = 1_500
#: The most merges of joined tokens a tokenizer's `PieceModel` remembers.
KNOWN_KEPT = 200_000
#: The most prefixes of the piece re-encoded from a boundary before one is given up.
JUNCTIONS = 12

FINAL, CROSSED, UNKNOWN = "final", "crossed", "unknown"


@dataclass
class PieceModel:
    """How the proof merges bytes alone, for one tokenizer (None `alone`: no proof for its model)."""

    alone: Callable[[bytes], tuple[int, ...] | None] | None
    spelling: Mapping[int, bytes]
    # (tuples: a tuple of atoms drops out of the garbage collector's walks, a list is walked in every full one)
    sorted_spellings: tuple[bytes, ...] = ()
    sorted_ids: tuple[int, ...] = ()
    whole_pieces: bool = False  # a piece that is a vocab token is that token (ignore_merges)
    longest: int = 0  # the longest token's bytes
    apart: frozenset[int] = frozenset()  # byte fallback tokens no rule takes: nothing merges across them
    known: dict[tuple[int, ...], tuple[int, ...] | None] = field(default_factory=dict)  # (memo of `merged`)

    def merged(self, ids: tuple[int, ...]) -> tuple[int, ...] | None:
        """`alone` of these tokens' bytes joined (kept: typing a text asks the same pairs again)."""
        found = self.known.get(ids, ())
        if found == ():
            if len(self.known) > KNOWN_KEPT:
                self.known.clear()
            assert self.alone is not None
            found = self.known[ids] = self.alone(b"".join(self.spelling[i] for i in ids))
        return found

    def fitting(self, start: bytes, head: bytes, fits: "Fits | None") -> Iterator[int]:
        """`longer(start)`, skipping every run of tokens whose next byte no piece can take after `head`."""
        spellings, at = self.sorted_spellings, bisect_left(self.sorted_spellings, start)
        while at < len(spellings) and spellings[at].startswith(start):
            data = spellings[at]
            if len(data) == len(start):
                at += 1
                continue
            if fits is not None and not fits(head + data[:len(start) + 1]):
                at = bisect_left(spellings, _after(data[:len(start) + 1]), at)  # (the next byte's whole run)
                continue
            yield self.sorted_ids[at]
            at += 1

    def longer(self, start: bytes) -> Iterator[int]:
        """The ids of the tokens whose bytes start with `start` and go on, in byte order."""
        at = bisect_left(self.sorted_spellings, start)
        spellings = self.sorted_spellings
        while at < len(spellings) and spellings[at].startswith(start):
            if len(spellings[at]) > len(start):
                yield self.sorted_ids[at]
            at += 1

    def between(self, low: bytes, high: bytes) -> Iterator[int]:
        """The ids of the tokens whose bytes sort from `low` up to (not including) `high`, in byte order."""
        at, stop = bisect_left(self.sorted_spellings, low), bisect_left(self.sorted_spellings, high)
        yield from self.sorted_ids[at:stop]

    def any_longer(self, start: bytes) -> bool:
        return next(self.longer(start), None) is not None

    def has(self, data: bytes) -> bool:
        """Is `data` a token's bytes?"""
        return self.id_of(data) is not None

    def id_of(self, data: bytes) -> int | None:
        """The id of the token whose bytes are `data` (the first in byte order), if there is one."""
        at = bisect_left(self.sorted_spellings, data)
        return self.sorted_ids[at] if at < len(self.sorted_spellings) and self.sorted_spellings[at] == data else None

    def starting_with(self, start: bytes, most: int = 8) -> tuple[int, list[int]]:
        """(how many tokens' bytes start with `start`, the `most` of them with the smallest ids)."""
        lo = bisect_left(self.sorted_spellings, start)
        hi = bisect_left(self.sorted_spellings, _after(start)) if start.strip(b"\xff") else len(self.sorted_ids)
        ids = np.asarray(self.sorted_ids[lo:hi], dtype=np.int64)
        if len(ids) > most:
            ids = np.partition(ids, most)[:most]
        return hi - lo, sorted(ids.tolist())


def _after(data: bytes) -> bytes:
    """The smallest byte string after every string that starts with `data` (data not all 0xFF)."""
    head = data.rstrip(b"\xff")
    return head[:-1] + bytes([head[-1] + 1])


_PIECE_MODEL: Part[PieceModel] = Part("prompt end: piece model")


def piece_model(tokenizer: Tokenizer) -> PieceModel:
    """The tokenizer's `PieceModel`, made once and kept with it."""
    return tokenizer.loaded.built.get(_PIECE_MODEL, lambda: _build(tokenizer))


def _build(tokenizer: Tokenizer) -> PieceModel:
    spelling = dict(tokenizer.ordinary_bytes())
    if isinstance(tokenizer.model, LibraryOrder):  # (a byte fallback token stands for its byte)
        for byte, token in enumerate(tokenizer.model.library.fallback or []):
            if token is not None:
                spelling[token] = bytes([byte])
    pairs = sorted((data, token) for token, data in spelling.items() if data)
    out = PieceModel(None, spelling, tuple(p[0] for p in pairs), tuple(p[1] for p in pairs),
                     longest=max((len(p[0]) for p in pairs), default=0))
    model, tok = tokenizer.model, tokenizer.loaded
    if isinstance(model, ListOrderBytes) and not tok.unknown_bytes:
        out.alone = lambda data: tuple(model.merge_bytes(data))
    elif isinstance(model, LibraryOrder):
        library = model.library
        byte_level = tokenizer.pipeline is not None and tokenizer.pipeline.byte_level
        out.whole_pieces = library.ignore_merges
        fallback = frozenset(t for t in library.fallback or [] if t is not None)
        rows = tokenizer.loaded.unit.file_rule_rows(tokenizer.loaded)
        if fallback and not (set(rows[:, :2].ravel().tolist()) & fallback if rows.size else set()):
            out.apart = fallback

        def alone(data: bytes) -> tuple[int, ...] | None:
            if byte_level:
                return library.merge_alone(bytes_to_token(data))
            try:
                return library.merge_alone(data.decode("utf-8"))
            except UnicodeDecodeError:
                return None
        out.alone = alone
    return out


@dataclass
class Crossing:
    """One piece: `x` (its bytes every longer text keeps), `tokens` (the encode's ids over it, which may run
    past `x`), `ends` (each token's end, in bytes of the piece)."""

    model: PieceModel
    x: bytes
    tokens: list[int]
    ends: list[int]
    fits: Fits | None = None  # can the piece begin with these bytes? (None: any)
    short: int | None = None  # the piece may also end here, short of x
    after: bytes = b""  # what follows x in every longer text (a piece that runs past x runs over it first)
    budget: int = PAIR_BUDGET
    candidates: dict[int, bytes] = field(default_factory=dict)  # boundary -> appended bytes that cross it
    next_bytes: dict[int, bytes] = field(default_factory=dict)  # token -> a next token's bytes completing its end

    def decide(self) -> list[str]:
        """A verdict per token boundary of the encode inside `x` or at its end (each end in `ends` up to
        len(x)), in order."""
        inside = [b for b in self.ends if 0 < b <= len(self.x)]
        if self.model.alone is None or not inside:
            return [UNKNOWN] * len(inside)
        own = self._encoding_of(len(self.x))
        if own is None:
            return [UNKNOWN] * len(inside)
        crossed: dict[int, bytes] = {}  # boundary -> appended bytes that remove it
        own_ends = set(_ends(self.model, own))
        for b in inside:
            if b not in own_ends or self.model.whole_pieces and b < len(self.x) and self.model.has(self.x):
                crossed.setdefault(b, b"")  # (the piece may end right after x, encoded without b)
        unknown_from = len(self.x) + 1  # (a boundary at or past this one is unknown)
        past_short: set[int] = set()  # (boundaries past `short` that the next piece's own proof leaves open)
        if self.short is not None:  # (or it ends at `short`: its encoding there must keep b; past it, see below)
            shorter = self._encoding_of(self.short)
            if shorter is None:
                return [UNKNOWN] * len(inside)
            short_ends = set(_ends(self.model, shorter))
            for b in inside:
                if b <= self.short and b not in short_ends:
                    crossed.setdefault(b, b"")
            past_short = {b for b in inside if b > self.short} - self._final_past_short()
        if self.model.whole_pieces:
            for token in islice(self._over_after(self.x, None), 1):  # (the piece may become one token)
                for b in inside:
                    crossed.setdefault(b, self.model.spelling[token][len(self.x):])
        for q in range(len(self.x) - 1, max(len(self.x) - self.model.longest, -1), -1):  # (a longer token fits)
            if not self.model.any_longer(self.x[q:]):
                continue
            longer = self._past_x(q)
            before = self._encoding_of(q) if q else ()
            if before is None:
                unknown_from = 0
                break
            before_ends = set(_ends(self.model, before))
            affected = [b for b in inside if (q < b or b not in before_ends) and b not in crossed]
            if not affected:
                continue
            found = self._live(q, before[-1] if before else None, longer)
            if found is None:
                unknown_from = min(unknown_from, min(affected))
            elif found is not False:  # (a token id, 0 included)
                data = self.model.spelling[found] + self.next_bytes.get(found, b"")
                extra = self.fits.complete(self.x[:q] + data) if self.fits is not None else b""
                for b in affected:
                    crossed[b] = data[len(self.x) - q:] + (extra or b"")
        self.candidates = crossed
        return [CROSSED if b in crossed else UNKNOWN if b >= unknown_from or b in past_short else FINAL
                for b in inside]

    def _final_past_short(self) -> set[int]:
        """The boundaries past `short` that stay when the piece ends there: x's one character after it then
        begins the next piece (a piece holds at least one character), whose tokens are those of the encode
        here when they are that character's own encoding; that piece's boundaries are proven as any kept
        piece's, its shape unknown."""
        assert self.short is not None
        rest = self.x[self.short:]
        own = self.model.alone(rest) if rest and self.model.alone is not None else None
        past = [t for t, e in zip(self.tokens, self.ends) if self.short < e <= len(self.x)]
        if own is None or len(rest.decode("utf-8", "replace")) != 1 or self.short not in self.ends \
                or tuple(past) != own:
            return set()
        sub = Crossing(self.model, rest, list(own), _ends(self.model, own), budget=self.budget)
        verdicts = sub.decide()
        self.budget = sub.budget
        return {self.short + e for e, v in zip(_ends(self.model, own), verdicts) if v == FINAL}

    def _past_x(self, q: int) -> Iterator[int]:
        """The tokens that start at q with x's bytes from there and run past x's end (see `_over_after`)."""
        return self._over_after(self.x[q:], self.x[:q])

    def _over_after(self, start: bytes, head: bytes | None) -> Iterator[int]:
        """The tokens that start with `start` (x's bytes from some q) and run past x's end, over `after` as
        far as they go: those ending inside it, then those running past it too (`fitting` after `head`,
        unless None)."""
        inside = [self.model.id_of(start + self.after[:k]) for k in range(1, len(self.after) + 1)]
        yield from (token for token in inside if token is not None)
        if head is None:
            yield from self.model.longer(start + self.after)
        else:
            yield from self.model.fitting(start + self.after, head, self.fits)

    def _live(self, q: int, last: int | None, longer: Iterator[int]) -> int | None | bool:
        """A token of `longer` that can start at q after `last` (an id), False when none can, None when the
        budget ran out."""
        for token in longer:
            if self.fits is not None and not self.fits(self.x[:q] + self.model.spelling[token]):
                continue  # (no piece of the split begins so)
            if self.budget <= 0:
                return None
            self.budget -= 1
            own = self.model.merged((token,))
            if own is None:
                return None  # (bytes the model cannot take alone: nothing is known)
            if own != (token,):
                continue  # (its own bytes do not merge into it: no text has it there)
            if last is not None and last not in self.model.apart:  # (nothing joins a byte fallback token)
                pair = self.model.merged((last, token))
                if pair is None:
                    return None
                if pair != (last, token):
                    continue
            completed = self._completed(self.x[:q] + self.model.spelling[token], token)
            if completed is None:
                return None
            if isinstance(completed, bytes):
                self.next_bytes[token] = completed
                return token
        return False

    def _completed(self, data: bytes, token: int) -> bytes | bool | None:
        """When `token` (the last of `data`) ends inside a character, the next tokens begin with that
        character's missing bytes and each must stand beside the one before it: the bytes of the first such
        tokens (b"": none is needed; False: none can; None: the budget ran out)."""
        decoder = codecs.getincrementaldecoder("utf-8")()
        try:
            decoder.decode(data, final=False)
        except UnicodeDecodeError:
            return False
        if not decoder.getstate()[0]:
            return b""
        for after in self.model.between(b"\x80", b"\xc0"):  # (the tokens that begin with a continuation byte)
            data_after = self.model.spelling[after]
            if self.fits is not None and not self.fits(data + data_after):
                continue
            if self.budget <= 0:
                return None
            self.budget -= 1
            own, pair = self.model.merged((after,)), self.model.merged((token, after))
            if own is None or pair is None:
                return None
            if own == (after,) and pair == (token, after):
                rest = self._completed(data + data_after, after)  # (it may end inside the character too)
                if rest is None or isinstance(rest, bytes):
                    return None if rest is None else data_after + rest
        return False

    def _encoding_of(self, q: int) -> tuple[int, ...] | None:
        """The encoding of the piece's first q bytes, from the nearest boundary of the encode that joins."""
        alone = self.model.alone
        assert alone is not None
        starts = [0] + [e for e in self.ends if e <= q]
        for k, start in enumerate(reversed(starts)):
            if k >= JUNCTIONS:
                return None
            head = tuple(self.tokens[:len(starts) - 1 - k])
            tail = alone(self.x[start:q]) if q > start else ()
            if tail is None or b"".join(self.model.spelling.get(t, b"\0" * 999) for t in tail) != self.x[start:q]:
                return None  # (not bytes the model spells back: an unknown token, say)
            if not head or not tail:
                return head + tail
            self.budget -= 1
            if head[-1] in self.model.apart:  # (nothing merges across a byte fallback token)
                return head + tail
            joined = self.model.merged((head[-1], tail[0]))
            if joined is None:
                continue  # (a junction the model cannot take alone: try an earlier one)
            if joined == (head[-1], tail[0]):
                return head + tail
        return None


class Fits:
    """Can a piece begin with these bytes? They must be UTF-8, as every text's are, and when a `shape` (a
    pattern whose classes `pattern`'s refine) is given, begin some match of it. An incomplete last
    character counts when a character that completes it fits: one of each kind `pattern` tells apart
    among the characters those bytes begin is tried."""

    def __init__(self, shape: str | None, pattern: str | None,
                 outer: Sequence[tuple[Callable[[bytes], bool], bytes]] = ()) -> None:
        self.prefixes = match_prefix(shape) if shape is not None else None
        self.pattern = pattern
        self.outer = outer  # (an earlier split's piece holds this one after these bytes: it must fit that too)

    def __call__(self, data: bytes) -> bool:
        return self.complete(data) is not None and all(fits(before + data) for fits, before in self.outer)

    def complete(self, data: bytes) -> bytes | None:
        """The bytes that complete `data`'s last character so that it fits (b"" when it is whole), or None."""
        decoder = codecs.getincrementaldecoder("utf-8")()
        try:
            text = decoder.decode(data, final=False)
        except UnicodeDecodeError:
            return None
        waiting = decoder.getstate()[0]
        states = self.prefixes.after(text) if self.prefixes is not None else None
        if states is not None and not states:
            return None
        if not waiting:
            return b""
        for ch in self._completions(waiting):
            if self.prefixes is None or states is None or self.prefixes.step(states, ch):
                return ch.encode("utf-8")[len(waiting):]
        return None

    def _completions(self, waiting: bytes) -> list[str]:
        """Characters whose UTF-8 begins with `waiting` (one per kind when a pattern tells kinds apart)."""
        size = _SIZE.get(waiting[0] >> 4, 1)
        missing = size - len(waiting)
        if missing <= 0:
            return []
        low = max(_code_point(waiting + b"\x80" * missing), _SMALLEST[size])  # (no overlong spelling)
        high = _code_point(waiting + b"\xbf" * missing)
        if self.pattern is None or self.prefixes is None:
            for extra in product(range(0x80, 0xC0), repeat=missing):
                try:
                    return [(waiting + bytes(extra)).decode("utf-8")]
                except UnicodeDecodeError:
                    continue
            return []
        return [ch for ch in kinds_between(self.pattern, low, high) if ch.encode("utf-8").startswith(waiting)]


def _code_point(data: bytes) -> int:
    """The code point these bytes would spell, by their bits (valid or not)."""
    size = len(data)
    value = data[0] & (0xFF >> (size + 1))
    for byte in data[1:]:
        value = (value << 6) | (byte & 0x3F)
    return value


#: A UTF-8 character's size by its first byte's high four bits, and the smallest code point of each size.
_SIZE = {0xC: 2, 0xD: 2, 0xE: 3, 0xF: 4}
_SMALLEST = {1: 0, 2: 0x80, 3: 0x800, 4: 0x10000}


def _ends(model: PieceModel, ids: tuple[int, ...]) -> list[int]:
    out, total = [], 0
    for token in ids:
        total += len(model.spelling[token])
        out.append(total)
    return out


__all__ = ["CROSSED", "FINAL", "UNKNOWN", "Crossing", "Fits", "PieceModel", "piece_model"]
