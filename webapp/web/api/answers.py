"""The tokens of a byte-level encoding as the JSON API answers them (inline and in the "encode" job).

What it does not do: encode (the engine does) or read requests.
"""

from __future__ import annotations

from typing import Any

from webapp import tokenizer as tk
from webapp.tokenizer import ImpliedVocab


def byte_tokens(text: str, ids: list[int], merges: Any) -> list[dict[str, Any]]:
    """Each token's id, bytes, text (null when not UTF-8 on its own) and byte span.

    Bytes come from the vocab the merges imply; for odd lists where that does
    not spell the text back (an id defined twice), the engine's trace is used.
    The implied bytes are built only when their lengths add up to the text's:
    a few rules can imply tokens of terabytes that this encoding never uses.
    """
    implied = ImpliedVocab(merges.rules)
    data = text.encode("utf-8")
    token_bytes: list[bytes | None] = [None]
    if implied.total(ids) == len(data) and all(implied.length(i) is not None for i in ids):
        vocab = implied.bytes_for(ids, len(data)) or {}
        token_bytes = [vocab.get(i) for i in ids]
    if any(p is None for p in token_bytes) or b"".join(token_bytes) != data:  # type: ignore[arg-type]
        trace = tk.encode_trace(text, merges, limits=tk.TraceLimits.tokens_only(len(ids)))
        token_bytes = [t.value for t in trace.tokens]  # type: ignore[misc]
    shown_of: dict[bytes, tuple[str | None, list[int]]] = {}  # tokens repeat: decode each once
    out = []
    offset = 0
    for token_id, value in zip(ids, token_bytes):
        assert value is not None
        known = shown_of.get(value)
        if known is None:
            try:
                known = (value.decode("utf-8"), list(value))
            except UnicodeDecodeError:
                known = (None, list(value))
            shown_of[value] = known
        end = offset + len(value)
        out.append({"id": token_id, "text": known[0], "bytes": known[1], "start": offset, "end": end})
        offset = end
    return out
