"""The Vocabulary's query-string fields (webapp.web.vocab): a search `q` and a page (`offset`, `limit`).

Each reader turns a query-string value (or JSON) into a checked value, or
raises `TokenizerError` naming the field, with the fixed bounds below in
its message. What it does not do: search (webapp.tokenizer's vocabulary
index) or any other page's fields (webapp.infra.inputs).
"""

from __future__ import annotations

from typing import Any

from webapp.tokenizer import TokenizerError
from webapp.tokenizer.errors import json_type


def wrong_type(field: str, expected: str, value: Any) -> TokenizerError:
    return TokenizerError(f"{field}: expected {expected}, got {json_type(value)}", field=field)


#: A vocabulary search (`q`) is 1 to VOCAB_QUERY_BYTES bytes of UTF-8; a page of results
#: holds 1 to VOCAB_PAGE_MAX tokens (VOCAB_PAGE_DEFAULT when not given). Fixed, not settings.
VOCAB_QUERY_BYTES, VOCAB_PAGE_DEFAULT, VOCAB_PAGE_MAX, VOCAB_OFFSET_MAX = 256, 50, 200, 10_000_000


def read_vocab_query(value: Any) -> bytes | None:
    """`q`: None when absent; else its UTF-8 bytes, 1 to VOCAB_QUERY_BYTES of them."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise wrong_type("q", "text", value)
    size = len(data := value.encode("utf-8", "surrogatepass"))
    if not data:
        raise TokenizerError(f"q: give 1 to {VOCAB_QUERY_BYTES} bytes of text to search for (it is empty)",
                             field="q", location={"bytes": 0})
    if size > VOCAB_QUERY_BYTES:
        raise TokenizerError(f"q: {size:,} bytes is over the limit of {VOCAB_QUERY_BYTES} bytes (VOCAB_QUERY_BYTES, "
                             "fixed)", field="q", location={"bytes": size, "limit": VOCAB_QUERY_BYTES})
    return data


def read_count(value: Any, field: str, default: int, low: int, high: int) -> int:
    """A whole number from a query string (decimal digits) or JSON, from `low` to `high`."""
    if value is None or value == "":
        return default
    if isinstance(value, str):
        if not (text := value.strip()).isascii() or not text.isdigit() or len(text) > 12:
            raise TokenizerError(f"{field}: expected a whole number from {low:,} to {high:,}, got {value[:20]!r}",
                                 field=field)
        value = int(text)
    if not isinstance(value, int) or isinstance(value, bool):
        raise wrong_type(field, "a whole number", value)
    if not low <= value <= high:
        raise TokenizerError(f"{field}: {value:,} is not from {low:,} to {high:,}", field=field,
                             location={"min": low, "max": high})
    return value


def read_vocab_page(offset: Any, limit: Any) -> tuple[int, int]:
    """(offset, limit) of a page of vocabulary results."""
    return (read_count(offset, "offset", 0, 0, VOCAB_OFFSET_MAX),
            read_count(limit, "limit", VOCAB_PAGE_DEFAULT, 1, VOCAB_PAGE_MAX))
