"""Small pieces every format module shares: the file error, value quoting, text and JSON reading.

What it does not do: know any tokenizer format.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from webapp.tokenizer.errors import TokenizerError, short_repr
from webapp.tokenizer.textformats import MAX_JSON_DEPTH, JsonProblem, load_json

ByteRule = tuple[int, int, int]
CharRule = tuple[str, str]


def file_error(message: str, **location: Any) -> TokenizerError:
    return TokenizerError(f"file: {message}", field="file", location=location or None)


def shown_value(value: Any, limit: int = 40) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, bytes) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def file_text(content: str | bytes, what: str = "file") -> str:
    if isinstance(content, str):
        return content
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise file_error(
            f"the {what} is not UTF-8 text (invalid byte at offset {exc.start})", offset=exc.start
        ) from None


def parse_json_file(content: str | bytes, what: str) -> Any:
    text = file_text(content, what)
    try:
        return load_json(text)  # (the one reader: depth checked before parsing)
    except JsonProblem as exc:
        if exc.deep:
            raise file_error(f"{what} is nested more than {MAX_JSON_DEPTH} levels deep; no tokenizer file is") from None
        if exc.line is not None:
            raise file_error(f"{what} is not valid JSON: {exc.detail} at line {exc.line} column {exc.column}",
                              line=exc.line, column=exc.column) from None
        raise file_error(f"{what} is not valid JSON: {exc.reason}") from None
    except ValueError as exc:  # an integer of over 4,300 digits
        raise file_error(f"{what} is not valid JSON: {short_repr(str(exc))}") from None


def bytes_of(token: int, vocab: Mapping[int, bytes]) -> bytes:
    return bytes([token]) if token < 256 else vocab[token]


def bytes_of_or_empty(token: int, made: Mapping[int, bytes]) -> bytes:
    return bytes([token]) if token < 256 else made.get(token, b"")
