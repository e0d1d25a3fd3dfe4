"""Character classes and the splitting primitive that Hugging Face `tokenizers` uses.

What it does not do: read tokenizer.json (hf/pipeline.py does) or encode.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import sys
import time
import unicodedata
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable, Iterator, Iterable, Sequence

import regex

from webapp.tokenizer.errors import TokenizerError

#: The Unicode White_Space property (what Rust's `char::is_whitespace` tests).
#: Python's `str.isspace` differs (it also takes U+001C..U+001F), so it is spelt out.
WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000"
)
BEHAVIORS = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")

Match = tuple[int, int, bool]  # (start, end, is_match) in code points
Finder = Callable[[str], list[Match]]


# --------------------------------------------------------------------------
# Bounds: a tokenizer file brings its own regular expressions and normalizers,
# so one encode gets a time budget for the file's regexes and a cap on how long
# normalizing may make the text (see docs/limits.md).

REGEX_BUDGET_SECONDS = 2.0
MIN_GROWTH_CAP = 65_536
GROWTH_FACTOR = 4
_DEADLINE: ContextVar[float | None] = ContextVar("hf_regex_deadline", default=None)
_GROWTH_CAP: ContextVar[int | None] = ContextVar("hf_growth_cap", default=None)
#: The request's budget for tokenizer-file regexes: [seconds left, seconds in all] (the web layer
#: sets it; jobs have their own). Only time inside `bounded` counts: opening a tokenizer or a
#: preset's first encode is not charged, the patterns a file brings are.
_REQUEST: ContextVar[list[float] | None] = ContextVar("request_budget", default=None)


class OutOfTime(TokenizerError):
    """The request's time budget ran out (the caller names the tokenizer that was running)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"time: this request's time budget of {seconds:g} s ran out", field="text")
        self.seconds = seconds


def start_request_budget(seconds: float) -> object:
    """From now on, in this context, every tokenizer file's regexes share `seconds` in all
    (each encode also keeps its own REGEX_BUDGET_SECONDS); a token for `end_request_budget`."""
    return _REQUEST.set([float(seconds), float(seconds)])


def end_request_budget(token: object) -> None:
    _REQUEST.reset(token)  # type: ignore[arg-type]


def check_request_budget() -> None:
    """Raise OutOfTime when the request's budget is spent (before the next tokenizer)."""
    budget = _REQUEST.get()
    if budget is not None and budget[0] <= 0:
        raise OutOfTime(budget[1])


@contextmanager
def charged() -> Iterator[None]:
    """Within: all the time taken is charged to the request's budget, not only the file regexes'
    time inside `bounded` (which it then counts once). For a whole encode, so the model's own
    loops count too; its caller checks the budget before the next tokenizer. No budget: nothing."""
    budget = _REQUEST.get()
    if budget is None:
        yield
        return
    before = budget[0]
    began = time.monotonic()
    try:
        yield
    finally:
        # (min: a regex that ran out inside has already set it to 0)
        budget[0] = min(budget[0], before - (time.monotonic() - began))


class bounded:
    """`with bounded(text_length):` the file's regexes share REGEX_BUDGET_SECONDS (and what is left of
    the request's budget, when less), normalized text may reach max(GROWTH_FACTOR x `text_length`,
    MIN_GROWTH_CAP) characters. (A class, not a generator: every encode of a file enters one, and a
    batch one per text; timeit on an idle machine: 1.8 to 2.0 us each, the generator form 3.2 to 3.5.)"""

    __slots__ = ("text_length", "budget", "began", "own", "deadline", "cap")

    def __init__(self, text_length: int) -> None:
        self.text_length = text_length

    def __enter__(self) -> None:
        budget = _REQUEST.get()
        if budget is not None and budget[0] <= 0:
            raise OutOfTime(budget[1])
        self.budget = budget
        self.began = began = time.monotonic()
        self.own = own = REGEX_BUDGET_SECONDS if budget is None else min(REGEX_BUDGET_SECONDS, budget[0])
        self.deadline = _DEADLINE.set(began + own)
        self.cap = _GROWTH_CAP.set(max(GROWTH_FACTOR * self.text_length, MIN_GROWTH_CAP))

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, trace: object) -> None:
        budget, seconds = self.budget, REGEX_BUDGET_SECONDS
        error: TokenizerError | None = None
        if kind is not None and issubclass(kind, TimeoutError):
            if budget is not None and self.own < seconds:
                budget[0] = 0.0
                error = OutOfTime(budget[1])
            else:
                error = TokenizerError(
                    f"text: the tokenizer file's patterns took over {seconds:g} s on this text, the limit for one "
                    "encode", field="text")
        if budget is not None:
            budget[0] -= time.monotonic() - self.began
        _DEADLINE.reset(self.deadline)
        _GROWTH_CAP.reset(self.cap)
        if error is not None:
            raise error from None


def time_left() -> float | None:
    """Seconds the file's regexes may still take (None outside `bounded`)."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return None
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    return left


def growth_cap_bytes() -> int:
    """UTF-8 bytes past which a normalizer's output is surely over the cap (4 bytes a character at
    most): a normalizer building its output checks this as it goes (no cap outside `bounded`)."""
    cap = _GROWTH_CAP.get()
    return sys.maxsize if cap is None else 4 * cap


def check_growth_bytes(size: int) -> None:
    """Refuse a normalizer's output of `size` UTF-8 bytes, when that is over `growth_cap_bytes`."""
    cap = _GROWTH_CAP.get()
    if cap is not None and size > 4 * cap:
        raise TokenizerError(
            f"text: the tokenizer file's normalizer makes this text over {cap:,} characters long (it stopped "
            f"at {size:,} bytes), the limit ({GROWTH_FACTOR}x the text or {MIN_GROWTH_CAP:,})",
            field="text",
        )


def check_growth(length: int) -> None:
    """Refuse normalized text longer than the cap (checked after every normalizer step)."""
    cap = _GROWTH_CAP.get()
    if cap is not None and length > cap:
        raise TokenizerError(
            f"text: the tokenizer file's normalizer makes this text {length:,} characters long, over the "
            f"limit of {cap:,} ({GROWTH_FACTOR}x the text or {MIN_GROWTH_CAP:,})",
            field="text",
        )


def is_whitespace(ch: str) -> bool:
    return ch in WHITE_SPACE


def is_numeric(ch: str) -> bool:
    return unicodedata.category(ch) in ("Nd", "Nl", "No")


def is_punctuation(ch: str) -> bool:
    """ASCII punctuation (which includes $ + < = > ^ ` | ~) or any Unicode P* category."""
    if ch < "\x80":
        return ch in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
    return unicodedata.category(ch).startswith("P")


def _gaps(spans: Iterable[tuple[int, int]], length: int) -> list[Match]:
    """Matched spans plus the unmatched stretches between them, covering the text."""
    out: list[Match] = []
    previous = 0
    for start, end in spans:
        if previous != start:
            out.append((previous, start, False))
        out.append((start, end, True))  # (an empty match is kept: it still steers the merging)
        previous = end
    if previous != length:
        out.append((previous, length, False))
    return out


def regex_spans(compiled: regex.Pattern[str], text: str) -> Iterable[tuple[int, int]]:
    """Match spans as the library's regex engine (Oniguruma) iterates them."""
    previous_end = -1
    for m in compiled.finditer(text, timeout=time_left()):
        start, end = m.span()
        if start == end == previous_end:
            continue
        previous_end = end
        yield start, end


def isolated_pieces(compiled: regex.Pattern[str], text: str) -> list[str]:
    """`split(text, regex_finder(compiled), "Isolated")` as strings, faster."""
    found = compiled.findall(text, timeout=time_left()) if compiled.groups == 0 else None
    if found is not None and sum(map(len, found)) == len(text):
        return [piece for piece in found if piece]
    out: list[str] = []
    previous = 0
    for m in compiled.finditer(text, timeout=time_left()):
        start, end = m.span()
        if start == end:
            continue
        if start > previous:
            out.append(text[previous:start])
        out.append(text[start:end])
        previous = end
    if previous < len(text):
        out.append(text[previous:])
    return out


def regex_finder(compiled: regex.Pattern[str]) -> Finder:
    def find(text: str) -> list[Match]:
        if not text:
            return [(0, 0, False)]
        return _gaps(regex_spans(compiled, text), len(text))

    return find


def string_finder(literal: str) -> Finder:
    """A literal pattern (an empty one matches nothing, as in the library)."""
    compiled = regex.compile(regex.escape(literal)) if literal else None

    def find(text: str) -> list[Match]:
        if compiled is None or not text:
            return [(0, len(text), False)]
        return _gaps(((m.start(), m.end()) for m in compiled.finditer(text)), len(text))

    return find


def char_finder(test: Callable[[str], bool]) -> Finder:
    """Every character passing `test` is a match of its own."""

    def find(text: str) -> list[Match]:
        if not text:
            return [(0, 0, False)]
        out: list[Match] = []
        last = 0
        for i, ch in enumerate(text):
            if test(ch):
                if last < i:
                    out.append((last, i, False))
                out.append((i, i + 1, True))
                last = i + 1
        if last < len(text):
            out.append((last, len(text), False))
        return out

    return find


def inverted(find: Finder) -> Finder:
    return lambda text: [(s, e, not m) for s, e, m in find(text)]


def _merge(matches: Sequence[Match], keep: Callable[[bool, bool], bool]) -> list[tuple[int, int]]:
    """Fold left: a part joins the previous one when `keep(is_match, previous_match)` says so."""
    out: list[list[int]] = []
    previous = False
    for start, end, is_match in matches:
        if out and keep(is_match, previous):
            out[-1][1] = end
        else:
            out.append([start, end])
        previous = is_match
    return [(s, e) for s, e in out]


def split(text: str, find: Finder, behavior: str) -> list[tuple[int, int]]:
    """The (start, end) code point spans `text` splits into; empty spans are dropped."""
    matches = find(text)
    if behavior == "Removed":
        spans = [(s, e) for s, e, m in matches if not m]
    elif behavior == "Isolated":
        spans = [(s, e) for s, e, _ in matches]
    elif behavior == "Contiguous":
        spans = _merge(matches, lambda m, prev: m == prev)
    elif behavior == "MergedWithPrevious":
        spans = _merge(matches, lambda m, prev: m and not prev)
    elif behavior == "MergedWithNext":
        backwards = _merge([(-e, -s, m) for s, e, m in reversed(matches)], lambda m, prev: m and not prev)
        spans = [(-e, -s) for s, e in reversed(backwards)]
    else:  # read_* functions only let the five behaviours through
        raise ValueError(behavior)
    return [(s, e) for s, e in spans if e > s]
