"""Validation of everything a user may hand to the tokenizer, in one place.

What it does not do: parse text formats (see `textformats.py`), enforce size
limits (the web layer's configuration does that), or judge whether odd but
well-typed input makes sense (a rule naming a token made only later, a
repeated pair, a `new` below 256 are all valid: the algorithms take rules
literally).

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from itertools import chain
from typing import Any

from webapp.tokenizer.errors import TokenizerError

ByteRule = tuple[int, int, int]
CharRule = tuple[str, str]


def show_value(value: Any, limit: int = 60, depth: int = 0) -> str:
    """A short JSON-like rendering of a bad value for a message (nested lists
    past a few levels are shown as [...]: the value may be nested very deeply)."""
    if isinstance(value, tuple):
        value = list(value)
    if value is True or value is False:
        text = "true" if value else "false"
    elif value is None:
        text = "null"
    elif isinstance(value, str):
        text = '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    elif isinstance(value, list) and depth >= 4:
        text = "[...]"
    elif isinstance(value, list):
        text = "[" + ", ".join(show_value(v, limit, depth + 1) for v in value[:8]) + (", ..." if len(value) > 8 else "") + "]"
    elif isinstance(value, int) and value.bit_length() > 1000:
        text = f"{'-' if value < 0 else ''}<an integer of {value.bit_length()} bits>"  # repr() may refuse it
    else:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _key_text(key: Any) -> str:
    """A dict key as `location` shows it: the string itself, or a safe rendering."""
    return key if isinstance(key, str) else show_value(key, 200)


def _kind(value: Any) -> str:
    """The JSON name of a value's type, for "expected X, got Y" messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number with a fraction"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_seq(value: Any) -> bool:
    return isinstance(value, (list, tuple))


def validate_byte_merges(merges: Any) -> tuple[ByteRule, ...]:
    """Byte-level rules: a list of `[left, right, new]`, three non-negative integers each."""
    if not _is_seq(merges):
        raise TokenizerError(
            f"merges: should be a list of rules [left, right, new], got {_kind(merges)}",
            field="merges",
        )
    fast = _plain_byte_rules(merges)
    if fast is not None:
        return fast
    out: list[ByteRule] = []
    append = out.append
    for number, rule in enumerate(merges, start=1):
        # Fast path for plain ints (type() is exact, so bool never passes here).
        if type(rule) in (list, tuple) and len(rule) == 3:
            left, right, new = rule
            if type(left) is int and type(right) is int and type(new) is int and min(left, right, new) >= 0:
                append((left, right, new))
                continue
        if (
            not _is_seq(rule)
            or len(rule) != 3
            or not all(_is_int(v) and v >= 0 for v in rule)
        ):
            raise TokenizerError(
                f"merges: rule {number} should be three non-negative integers "
                f"[left, right, new], got {show_value(rule)}",
                field="merges",
                location={"rule": number},
            )
        out.append((rule[0], rule[1], rule[2]))
    return tuple(out)


def _plain_byte_rules(merges: list | tuple) -> tuple[ByteRule, ...] | None:
    """The common case checked with C-level passes: lists/tuples of three plain non-negative ints.

    None when anything else is present; the caller's loop then finds and names it.
    """
    values = plain_byte_values(merges)
    if values is None or (values and min(values) < 0):
        return None
    return tuple(map(tuple, merges))


def plain_byte_values(merges: list | tuple) -> list[int] | None:
    """All values of `merges` in order when it is lists/tuples of three plain ints each, else None."""
    count = len(merges)
    row_types = list(map(type, merges))
    if row_types.count(list) != count and row_types.count(list) + row_types.count(tuple) != count:
        return None
    if list(map(len, merges)).count(3) != count:
        return None
    values = list(chain.from_iterable(merges))
    # list.count compares by identity first: cheaper than a set of types.
    if list(map(type, values)).count(int) != len(values):
        return None
    return values


def _byte_vocab_key(key: Any) -> int:
    if _is_int(key) and key >= 0:
        return int(key)
    # int() refuses strings over 4300 digits with a bare ValueError; no id is that long.
    if isinstance(key, str) and key.isascii() and key.isdigit() and len(key) <= 4000:
        return int(key)
    raise TokenizerError(
        f"vocab: key {show_value(key)} should be a token id, a non-negative integer "
        f'(or its decimal digits as a string, like "256")',
        field="vocab",
        location={"key": _key_text(key)},
    )


def validate_byte_vocab(vocab: Any) -> dict[int, bytes]:
    """Byte-level vocab: `{id: [byte, ...]}`; keys may be strings of digits, values lists of 0..255 or bytes."""
    if not isinstance(vocab, dict):
        raise TokenizerError(
            f"vocab: should be an object mapping token ids to lists of bytes, got {_kind(vocab)}",
            field="vocab",
        )
    out: dict[int, bytes] = {}
    for key, value in vocab.items():
        token_id = _byte_vocab_key(key)
        if token_id in out:
            raise TokenizerError(
                f"vocab: id {show_value(token_id)} is listed twice (key {show_value(key)})",
                field="vocab",
                location={"key": _key_text(key)},
            )
        if isinstance(value, (bytes, bytearray)):
            out[token_id] = bytes(value)
            continue
        if not _is_seq(value) or not all(_is_int(b) and 0 <= b <= 255 for b in value):
            raise TokenizerError(
                f"vocab: token {show_value(token_id)} should be a list of byte values 0..255, got {show_value(value)}",
                field="vocab",
                location={"key": _key_text(key)},
            )
        out[token_id] = bytes(value)
    return out


def validate_ids(ids: Any) -> tuple[int, ...]:
    """A list of token ids: non-negative integers."""
    if not _is_seq(ids):
        raise TokenizerError(
            f"ids: should be a list of token ids (non-negative integers), got {_kind(ids)}",
            field="ids",
        )
    if set(map(type, ids)) <= {int} and (not ids or min(ids) >= 0):
        return tuple(ids)  # the common case, checked at C speed (a bool's type is not int)
    for index, value in enumerate(ids, start=1):
        if not (_is_int(value) and value >= 0):
            raise TokenizerError(
                f"ids: position {index} should be a token id (a non-negative integer), got {show_value(value)}",
                field="ids",
                location={"index": index},
            )
    return tuple(ids)


def validate_char_merges(merges: Any) -> tuple[CharRule, ...]:
    """Character-level rules: a list of `[left, right]`, two non-empty strings each."""
    if not _is_seq(merges):
        raise TokenizerError(
            f"merges: should be a list of rules [left, right] (two strings each), got {_kind(merges)}",
            field="merges",
        )
    fast = _plain_char_rules(merges)
    if fast is not None:
        return fast
    out: list[CharRule] = []
    for number, rule in enumerate(merges, start=1):
        if not _is_seq(rule) or len(rule) != 2 or not all(isinstance(v, str) and v for v in rule):
            raise TokenizerError(
                f"merges: rule {number} should be two non-empty strings [left, right], got {show_value(rule)}",
                field="merges",
                location={"rule": number},
            )
        for side in rule:
            _check_encodable(side, "merges", f"rule {number}", {"rule": number})
        out.append((rule[0], rule[1]))
    return tuple(out)


def _plain_char_rules(merges: list | tuple) -> tuple[CharRule, ...] | None:
    """The common case checked with C-level passes; None sends the caller to its naming loop."""
    if not set(map(type, merges)) <= {list, tuple} or not set(map(len, merges)) <= {2}:
        return None
    sides = list(chain.from_iterable(merges))
    if sides and (set(map(type, sides)) != {str} or not all(sides)):
        return None
    try:
        "".join(sides).encode("utf-8")
    except UnicodeEncodeError:
        return None
    return tuple(map(tuple, merges))


def validate_char_vocab(vocab: Any) -> dict[str, int]:
    """Character-level vocab: `{token: id}` with non-negative integer ids."""
    if not isinstance(vocab, dict):
        raise TokenizerError(
            f"vocab: should be an object mapping tokens (strings) to ids, got {_kind(vocab)}",
            field="vocab",
        )
    # Common case with C-level passes (type() is exact: a bool is not an int here).
    if set(map(type, vocab)) <= {str} and set(map(type, vocab.values())) <= {int}:
        if not vocab or min(vocab.values()) >= 0:
            return dict(vocab)
    out: dict[str, int] = {}
    for key, value in vocab.items():
        if not isinstance(key, str):
            raise TokenizerError(
                f"vocab: key {show_value(key)} should be a token (a string), got {_kind(key)}",
                field="vocab",
                location={"key": _key_text(key)},
            )
        if not (_is_int(value) and value >= 0):
            raise TokenizerError(
                f"vocab: token {show_value(key)} should map to an id (a non-negative integer), got {show_value(value)}",
                field="vocab",
                location={"key": key},
            )
        out[key] = value
    return out


def _check_encodable(text: str, field: str, what: str, location: dict[str, Any]) -> None:
    """Reject lone surrogates: they are code points UTF-8 cannot encode."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        position = exc.start + 1
        offset = len(text[: exc.start].encode("utf-8", "surrogatepass"))
        raise TokenizerError(
            f"{field}: {what} has a lone surrogate U+{ord(text[exc.start]):04X} at character "
            f"{position} (byte offset {offset}), which is not valid text and cannot be encoded as UTF-8",
            field=field,
            location={**location, "position": position, "offset": offset},
        ) from None


def validate_text(text: Any, field: str = "text") -> str:
    """Text to encode: a string that UTF-8 can encode (no lone surrogates)."""
    if not isinstance(text, str):
        raise TokenizerError(f"{field}: should be a string, got {_kind(text)}", field=field)
    _check_encodable(text, field, "the text", {})
    return text


def validate_words(words: Any) -> tuple[str, ...]:
    """Training words: a list of strings (any characters; empty words hold no pairs)."""
    if not _is_seq(words):
        raise TokenizerError(f"words: should be a list of strings, got {_kind(words)}", field="words")
    if set(map(type, words)) <= {str}:
        try:
            # The usual case in one C-speed pass; any problem is found again below, with its word.
            "".join(words).encode("utf-8")
            return tuple(words)
        except UnicodeEncodeError:
            pass
    for index, word in enumerate(words, start=1):
        if not isinstance(word, str):
            raise TokenizerError(
                f"words: word {index} should be a string, got {show_value(word)}",
                field="words",
                location={"index": index},
            )
        _check_encodable(word, "words", f"word {index}", {"index": index})
    return tuple(words)


def validate_num_merges(num_merges: Any) -> int:
    """How many merges to learn: a non-negative integer."""
    if not (_is_int(num_merges) and num_merges >= 0):
        raise TokenizerError(
            f"num_merges: should be a non-negative integer, got {show_value(num_merges)}",
            field="num_merges",
        )
    return int(num_merges)
