"""The one exception type of the tokenizer package.

Every problem with user input becomes a `TokenizerError`: a `ValueError` whose
message a person can act on, plus machine-readable parts the web layer uses to
show the message beside the right field (`field`) and to point at the place
(`location`, e.g. {"rule": 3} or {"line": 2, "column": 5} or {"offset": 17}).
A leaf shared by every layer. What it does not do: choose HTTP statuses or
render messages (the web layer does).
"""

from __future__ import annotations

from typing import Any


def short_repr(value: Any, limit: int = 80) -> str:
    """`repr(value)` cut to `limit` characters plus "…": messages never echo a whole input."""
    if isinstance(value, (str, bytes)) and len(value) > limit:
        value = value[: limit + 1]  # repr of a cut value: no need to render all of it
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def json_type(value: Any) -> str:
    """What kind of JSON value `value` is, as a message says it ("a list", "null", ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


class TokenizerError(ValueError):
    """Invalid input for one of the tokenizer functions.

    `field` names the input at fault ("merges", "vocab", "ids", "text",
    "words", "num_merges"); `location` says where inside it, with keys such as
    rule, key, index, position, offset, line, column.
    """

    def __init__(self, message: str, *, field: str, location: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.location = dict(location or {})

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape the API returns under "error"."""
        out: dict[str, Any] = {"message": self.message, "field": self.field}
        if self.location:
            out["location"] = self.location
        return out
