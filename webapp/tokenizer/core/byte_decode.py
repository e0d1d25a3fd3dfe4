"""Decode (docs/algorithms.md, section 2): every id's bytes, then strict UTF-8; `join_texts` for
character-level token strings.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Mapping, Sequence

from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.validation import show_value, validate_byte_vocab, validate_ids


_SINGLE_BYTES = [bytes((b,)) for b in range(256)]


def decode(ids: Any, vocab: Any, *, max_bytes: int | None = None) -> str:
    """Byte-level decode (docs/algorithms.md, section 2): all ids' bytes, then strict UTF-8.

    >>> from webapp.tokenizer import decode
    >>> decode([257, 32, 256], {256: [104, 105], 257: [104, 105, 33]})
    'hi! hi'
    >>> decode([195], {})  # half of "é"
    Traceback (most recent call last):
    webapp.tokenizer.errors.TokenizerError: ids: the bytes are not valid UTF-8 at byte offset 0 ...
    """
    ids = validate_ids(ids)
    table = validate_byte_vocab(vocab)
    parts: list[bytes | None] = list(map(table.get, ids))
    if None in parts:
        for index, segment in enumerate(parts):
            if segment is None:
                token_id = ids[index]
                if token_id > 255:
                    raise TokenizerError(
                        f"ids: id {show_value(token_id)} at position {index + 1} is not in the vocab "
                        f"(and is not a single byte 0..255)",
                        field="ids",
                        location={"index": index + 1},
                    )
                parts[index] = _SINGLE_BYTES[token_id]
    check_decoded_size(sum(map(len, parts)), len(ids), max_bytes)  # type: ignore[arg-type]
    data = b"".join(parts)  # type: ignore[arg-type]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _utf8_error(exc, data, ids, parts) from None


def join_texts(ids: Sequence[int], text_of: Mapping[int, str], *, max_bytes: int | None = None) -> str:
    """Character-level decode: the ids' token strings joined; an id `text_of` lacks is named, and with
    `max_bytes` their UTF-8 is added up first and a longer output refused."""
    missing = next((i for i in ids if i not in text_of), None)
    if missing is not None:
        raise TokenizerError(f"ids: id {missing} is not in the tokenizer's vocab", field="ids")
    if max_bytes is not None:
        check_decoded_size(decoded_size(ids, lambda i: utf8_size(text_of[i])), len(ids), max_bytes)
    return "".join(text_of[i] for i in ids)


def decoded_size(ids: Sequence[int], size_of: Callable[[int], int]) -> int:
    """The size decoding `ids` gives, added up from each distinct id's size: nothing is joined."""
    return sum(size_of(i) * count for i, count in Counter(ids).items())


def utf8_size(token: str | None) -> int:
    """A token string's UTF-8 bytes (0 for none): what it adds to a decoded text, at most."""
    return 0 if token is None else len(token.encode("utf-8", "surrogatepass"))


def check_decoded_size(size: int, count: int, max_bytes: int | None) -> None:
    """Refuse a decode whose output would be over `max_bytes` (None: no bound), before it is built."""
    if max_bytes is not None and size > max_bytes:
        raise TokenizerError(
            f"ids: decoding these {count:,} ids gives {size:,} bytes, over the limit of {max_bytes:,} bytes "
            f"(setting LIMIT_DECODE_BYTES)",
            field="ids",
            location={"bytes": size, "limit": max_bytes},
        )


def _utf8_error(exc: UnicodeDecodeError, data: bytes, ids: tuple[int, ...], parts: list[Any]) -> TokenizerError:
    """Name the byte offset of invalid UTF-8 and the token holding that byte."""
    offset = exc.start
    position = 0
    index = 0
    for index, segment in enumerate(parts, start=1):
        if position + len(segment) > offset:
            break
        position += len(segment)
    what = "an unfinished character at the end" if exc.reason == "unexpected end of data" else exc.reason
    return TokenizerError(
        f"ids: the bytes are not valid UTF-8 at byte offset {offset} (byte 0x{data[offset]:02x}: {what}); "
        f"that byte belongs to the token at position {index} (id {show_value(ids[index - 1])})",
        field="ids",
        location={"index": index, "offset": offset},
    )
