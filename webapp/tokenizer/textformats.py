"""Parsing of what people type into the playground's text boxes.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Iterator

import numpy as np

from webapp.tokenizer.errors import TokenizerError

__all__ = [
    "looks_like_json",
    "JsonProblem",
    "load_json",
    "parse_json",
    "plain_rule_lines",
    "parse_byte_merges",
    "parse_char_merges",
    "parse_byte_vocab",
    "parse_char_vocab",
    "parse_ids",
    "parse_words",
    "parse_num_merges",
    "format_byte_merges",
    "format_char_merges",
    "format_byte_vocab",
    "format_char_vocab",
    "format_ids",
    "format_words",
]

# A number in the plain forms: an optional sign so "-1" reaches validation and
# gets the "non-negative" message rather than a syntax one.
_INT_RE = re.compile(r"[+-]?\d+\Z")
# Separators between numbers in the plain forms.
_NUMBER_ITEM_RE = re.compile(r"[^\s,]+")


def looks_like_json(source: str) -> bool:
    """True when the first non-blank character opens a JSON list or object."""
    stripped = source.lstrip()
    return stripped[:1] in ("[", "{")


def _reject_constant(name: str) -> Any:
    # json.loads accepts NaN and Infinity by default; they are not JSON.
    raise ValueError(f"{name} is not valid JSON")


#: JSON nested deeper than this is refused before it is parsed: nothing the
#: playground takes nests past 3 levels, and deep values would make every
#: recursive step after parsing (messages, hashing) a RecursionError.
MAX_JSON_DEPTH = 64
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def json_depth(source: str) -> int:
    """How deep the brackets of JSON text nest, strings skipped; in C-speed steps
    (regex, numpy), so it can run on every body before json.loads."""
    if source.count("[") + source.count("{") <= MAX_JSON_DEPTH:
        return 0  # cannot be deeper than the limit: skip the scan
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", source)).encode("ascii")
    if not brackets:
        return 0
    codes = np.frombuffer(brackets, dtype=np.uint8)
    return int(np.cumsum(np.where((codes == 0x5B) | (codes == 0x7B), 1, -1)).max())


class JsonProblem(ValueError):
    """JSON the one reader refuses: `reason` says why (line and column where known; `deep` for nesting)."""

    def __init__(self, reason: str, line: int | None = None, column: int | None = None, deep: bool = False,
                 detail: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.detail = detail or reason  # (a syntax error: the parser's message alone, without its place)
        self.line = line
        self.column = column
        self.deep = deep

    @property
    def location(self) -> dict[str, int]:
        if self.deep:
            return {"limit": MAX_JSON_DEPTH}
        return {"line": self.line, "column": self.column} if self.line is not None and self.column is not None else {}


def load_json(source: str | bytes) -> Any:
    """The one JSON reader for whatever a user sent, typed, shared or opened: the nesting depth checked
    (MAX_JSON_DEPTH) before parsing, NaN and Infinity refused; a JsonProblem saying where it breaks."""
    if isinstance(source, bytes):
        try:
            source = source.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JsonProblem(f"not valid UTF-8 at byte offset {exc.start}") from None
    if json_depth(source) > MAX_JSON_DEPTH:
        raise JsonProblem(f"JSON nested too deeply (more than {MAX_JSON_DEPTH} levels)", deep=True)
    try:
        return json.loads(source, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise JsonProblem(f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
                          exc.lineno, exc.colno, detail=exc.msg) from None
    except RecursionError:
        raise JsonProblem(f"JSON nested too deeply (more than {MAX_JSON_DEPTH} levels)", deep=True) from None
    except ValueError as exc:  # NaN/Infinity, or an integer with too many digits
        raise JsonProblem(f"invalid JSON: {str(exc)[:200]}") from None


def parse_json(source: str, field: str) -> Any:
    """`load_json` with errors that name the field, line and column."""
    try:
        return load_json(source)
    except JsonProblem as exc:
        raise TokenizerError(f"{field}: {exc.reason}", field=field, location=exc.location) from None


def _lines(source: str) -> Iterator[tuple[int, str]]:
    """Numbered (from 1) lines that carry content: no blanks, no # comments."""
    for number, line in enumerate(source.splitlines(), start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            yield number, line


def _items(line: str, pattern: re.Pattern[str]) -> list[tuple[int, str]]:
    """(column from 1, item) for each item of a line."""
    return [(m.start() + 1, m.group()) for m in pattern.finditer(line)]


def _int_item(field: str, item: str, line: int, column: int, what: str = "an integer") -> int:
    if not _INT_RE.match(item):
        raise TokenizerError(
            f"{field}: line {line}, column {column}: expected {what}, got {_quote(item)}",
            field=field,
            location={"line": line, "column": column},
        )
    try:
        return int(item)
    except ValueError:  # more digits than Python converts
        raise TokenizerError(
            f"{field}: line {line}, column {column}: number too long ({len(item)} digits)",
            field=field,
            location={"line": line, "column": column},
        ) from None


def _quote(item: str, limit: int = 40) -> str:
    """A short quoted form of what the user typed, for messages."""
    shown = item if len(item) <= limit else item[: limit - 1] + "…"
    return json.dumps(shown, ensure_ascii=False)


def _wrong_count(field: str, line: int, expected: str, got: int, example: str) -> TokenizerError:
    return TokenizerError(
        f"{field}: line {line}: expected {expected} (like `{example}`), got {got} item{'s' if got != 1 else ''}",
        field=field,
        location={"line": line, "column": 1},
    )


def _plain_or_json(source: str, field: str, plain: Callable[[str], Any]) -> Any:
    if looks_like_json(source):
        return parse_json(source, field)
    return plain(source)


def plain_rule_lines(source: str) -> list[int] | None:
    """The line (from 1) of each rule of a plain-form merge list; None for JSON."""
    if looks_like_json(source):
        return None
    return [number for number, _ in _lines(source)]


def parse_byte_merges(source: str) -> Any:
    """Byte-level merges: JSON, or lines of three numbers `left right new`."""

    def plain(text: str) -> list[list[int]]:
        rules: list[list[int]] = []
        for number, line in _lines(text):
            items = _items(line, _NUMBER_ITEM_RE)
            if len(items) != 3:
                raise _wrong_count("merges", number, "three numbers left right new", len(items), "108 111 256")
            rules.append([_int_item("merges", item, number, col) for col, item in items])
        return rules

    return _plain_or_json(source, "merges", plain)


def parse_char_merges(source: str) -> Any:
    """Character-level merges: JSON, or lines of two whitespace-separated tokens `l o`."""

    def plain(text: str) -> list[list[str]]:
        rules: list[list[str]] = []
        for number, line in _lines(text):
            parts = line.split()
            if len(parts) != 2:
                raise _wrong_count("merges", number, "two tokens left right", len(parts), "l o")
            rules.append(parts)
        return rules

    return _plain_or_json(source, "merges", plain)


def parse_byte_vocab(source: str) -> Any:
    """Byte-level vocab: JSON, or lines `256: 108 111` (an id, a colon, its bytes)."""

    def plain(text: str) -> dict[str, list[int]]:
        vocab: dict[str, list[int]] = {}
        for number, line in _lines(text):
            key_part, colon, rest = line.partition(":")
            if not colon:
                raise TokenizerError(
                    f"vocab: line {number}: expected `id: bytes` (like `256: 108 111`)",
                    field="vocab",
                    location={"line": number, "column": 1},
                )
            key_items = _items(key_part, _NUMBER_ITEM_RE)
            if len(key_items) != 1:
                raise TokenizerError(
                    f"vocab: line {number}: expected one id before the colon (like `256: 108 111`)",
                    field="vocab",
                    location={"line": number, "column": 1},
                )
            key_col, key = key_items[0]
            key_id = _int_item("vocab", key, number, key_col, "an id")
            offset = len(key_part) + 1
            values = [
                _int_item("vocab", item, number, offset + col, "a byte value")
                for col, item in _items(rest, _NUMBER_ITEM_RE)
            ]
            if str(key_id) in vocab:
                raise TokenizerError(
                    f"vocab: line {number}: id {key_id} is listed twice",
                    field="vocab",
                    location={"line": number, "column": key_col},
                )
            vocab[str(key_id)] = values
        return vocab

    return _plain_or_json(source, "vocab", plain)


def parse_char_vocab(source: str) -> Any:
    """Character-level vocab: JSON, or lines `token id` (like `lower 8`)."""

    def plain(text: str) -> dict[str, int]:
        vocab: dict[str, int] = {}
        for number, line in _lines(text):
            items = _items(line, re.compile(r"\S+"))
            if len(items) != 2:
                raise _wrong_count("vocab", number, "a token and its id", len(items), "lower 8")
            (_, token), (id_col, raw_id) = items
            if token in vocab:
                raise TokenizerError(
                    f"vocab: line {number}: token {_quote(token)} is listed twice",
                    field="vocab",
                    location={"line": number, "column": items[0][0]},
                )
            vocab[token] = _int_item("vocab", raw_id, number, id_col, "an id")
        return vocab

    return _plain_or_json(source, "vocab", plain)


def parse_ids(source: str) -> Any:
    """Ids: a JSON list, or numbers separated by spaces, commas or newlines."""

    def plain(text: str) -> list[int]:
        ids: list[int] = []
        for number, line in enumerate(text.splitlines(), start=1):
            for col, item in _items(line, _NUMBER_ITEM_RE):
                ids.append(_int_item("ids", item, number, col, "an id"))
        return ids

    return _plain_or_json(source, "ids", plain)


def parse_words(source: str) -> Any:
    """Words: a JSON list, or the text split on whitespace (repeats count)."""
    if source.lstrip().startswith("["):
        return parse_json(source, "words")
    return source.split()


def parse_num_merges(source: str) -> int:
    """The number of merges to learn: a whole number (validated for range elsewhere)."""
    stripped = source.strip()
    if not stripped:
        raise TokenizerError("num_merges: enter a whole number of merges, like 10", field="num_merges")
    if not _INT_RE.match(stripped):
        raise TokenizerError(
            f"num_merges: expected a whole number, got {_quote(stripped)}",
            field="num_merges",
        )
    if len(stripped) > 30:
        raise TokenizerError(f"num_merges: number too long ({len(stripped)} digits)", field="num_merges")
    return int(stripped)


# --- The reverse direction: values to the plain text people would type. ---


def _is_plain_token(token: str) -> bool:
    """Can this token be written in the plain `l o` form and read back unchanged?"""
    return bool(token) and not any(ch.isspace() for ch in token) and token[0] not in "#[{"


def format_byte_merges(merges: Any) -> str:
    """`108 111 256` lines."""
    return "\n".join(" ".join(str(x) for x in rule) for rule in merges)


def format_char_merges(merges: Any) -> str:
    """`l o` lines when every token allows it, JSON otherwise."""
    merges = [list(rule) for rule in merges]
    if all(_is_plain_token(t) for rule in merges for t in rule):
        return "\n".join(f"{a} {b}" for a, b in merges)
    return json.dumps(merges, ensure_ascii=False)


def format_byte_vocab(vocab: Any) -> str:
    """Compact JSON `{"256": [108, 111], ...}` (ids in numeric order)."""
    items = sorted(((int(k), list(v)) for k, v in dict(vocab).items()), key=lambda kv: kv[0])
    return "{" + ", ".join(f'"{k}": {json.dumps(v)}' for k, v in items) + "}"


def format_char_vocab(vocab: Any) -> str:
    """Compact JSON `{"l": 0, ...}` in id order."""
    items = sorted(dict(vocab).items(), key=lambda kv: (kv[1], kv[0]))
    return json.dumps(dict(items), ensure_ascii=False)


def format_ids(ids: Any) -> str:
    """Ids separated by spaces."""
    return " ".join(str(i) for i in ids)


def format_words(words: Any) -> str:
    """Words separated by spaces when that reads back unchanged, JSON otherwise."""
    words = list(words)
    if all(w and not any(ch.isspace() for ch in w) for w in words) and not (words and words[0].startswith("[")):
        return " ".join(words)
    return json.dumps(words, ensure_ascii=False)
