"""The playground's own JSON (format "playground": what the pages' merges / vocab fields hold) and page state.

Import and export of the playground JSON, `from_playground` (a tokenizer from
what a page holds) and `with_pretokenize`. What it does not do: validate
merges itself (validation does).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Mapping, Sequence

from webapp.tokenizer.core.list_order.byte_level import implied_byte_vocab
from webapp.tokenizer.formats.common import bytes_of_or_empty, file_error, is_int, parse_json_file, shown_value
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.pretokenize.patterns import check_scheme
from webapp.tokenizer.core.token_sizes import DEFAULT_SIZE_LIMITS, SizeLimits, check_sizes
from webapp.tokenizer.validation import (
    validate_byte_merges,
    validate_byte_vocab,
    validate_char_merges,
    validate_char_vocab,
)

PLAYGROUND_FORMAT_NAME = "bpe-playground"
#: The `source` a tokenizer read from playground JSON carries. It keeps the
#: format's old name "seed" because the source is part of the stored bytes, so
#: of the tokenizer id: renaming it would change the ids of files opened before.
PLAYGROUND_JSON_SOURCE = "seed"


def parse_playground_json(
    content: str | bytes | Mapping[str, Any], *, limits: SizeLimits = DEFAULT_SIZE_LIMITS
) -> LoadedTokenizer:
    """`{"merges": [...], "vocab": {...}}` as the pages use, plus optional extras we export."""

    data = content if isinstance(content, Mapping) else parse_json_file(content, "playground JSON")
    if not isinstance(data, Mapping) or "merges" not in data:
        raise file_error('a playground JSON file is a JSON object with "merges" (and "vocab")')
    merges = data["merges"]
    level = data.get("level")
    if level is None:
        first = merges[0] if isinstance(merges, list) and merges else None
        level = "chars" if isinstance(first, list) and first and isinstance(first[0], str) else "bytes"
    scheme = data.get("pretokenize", "none")
    check_scheme(scheme)
    if level == "chars":
        char_rules = validate_char_merges(merges)
        char_vocab = validate_char_vocab(data.get("vocab") or {})
        return LoadedTokenizer(level="chars", merges=tuple(char_rules), vocab=char_vocab, source=PLAYGROUND_JSON_SOURCE)
    if level != "bytes":
        raise file_error(f'"level" should be "bytes" or "chars", got {shown_value(level)}')
    rules = validate_byte_merges(merges)
    vocab_given = validate_byte_vocab(data.get("vocab") or {})
    implied = implied_byte_vocab(rules, limits)
    vocab = {i: b for i, b in implied.items() if i >= 256}
    for i, b in vocab_given.items():
        if i >= 256 and i not in vocab:
            vocab[i] = b
    id_map = _int_map(data.get("id_map") or {}, "id_map")
    unknown = data.get("unknown_bytes") or []
    if not isinstance(unknown, list) or not all(is_int(b) and 0 <= b < 256 for b in unknown):
        raise file_error('"unknown_bytes" should be a list of byte values 0..255')
    unk_id = data.get("unk_id")
    if unk_id is not None and not is_int(unk_id):
        raise file_error('"unk_id" should be an integer or null')
    return LoadedTokenizer(
        level="bytes", merges=tuple(rules), vocab=vocab, source=PLAYGROUND_JSON_SOURCE, pretokenize=scheme,
        id_map=id_map, unknown_bytes=frozenset(unknown), unk_id=unk_id,
    )


def _int_map(raw: Any, what: str) -> dict[int, int]:
    if not isinstance(raw, Mapping):
        raise file_error(f'"{what}" should be an object {{"id": id}}')
    out: dict[int, int] = {}
    for key, value in raw.items():
        try:
            number = int(key)
        except (TypeError, ValueError):
            number = -1
        if number < 0 or not is_int(value) or value < 0:
            raise file_error(f'"{what}": entry {shown_value(key)}: {shown_value(value)} should map an id to an id')
        out[number] = value
    return out


def export_playground_json(tok: LoadedTokenizer) -> str:
    """The playground's own JSON: what the pages' merges / vocab fields accept, plus the id map."""
    out: dict[str, Any] = {"format": PLAYGROUND_FORMAT_NAME, "level": tok.level}
    if tok.level == "chars":
        out["merges"] = [list(rule) for rule in tok.merges]
        out["vocab"] = dict(tok.vocab)
    else:
        out["merges"] = [list(rule) for rule in tok.merges]
        out["vocab"] = {str(i): list(b) for i, b in sorted(tok.vocab.items())}
        out["pretokenize"] = tok.pretokenize
        if tok.id_map:
            out["id_map"] = {str(k): v for k, v in sorted(tok.id_map.items())}
        if tok.unknown_bytes:
            out["unknown_bytes"] = sorted(tok.unknown_bytes)
            out["unk_id"] = tok.unk_id
    return json.dumps(out, ensure_ascii=False, separators=(",", ":"))


def from_playground(
    *, level: str, merges: Sequence[Any], vocab: Mapping[Any, Any] | None = None, pretokenize: str = "none",
    limits: SizeLimits = DEFAULT_SIZE_LIMITS,
) -> LoadedTokenizer:
    """A LoadedTokenizer from what a page holds (already validated merges / vocab).

    Byte-level token lengths are checked against `limits` before any bytes are built."""
    check_scheme(pretokenize)
    if level == "chars":
        return LoadedTokenizer(
            level="chars", merges=tuple(tuple(r) for r in merges), vocab=dict(vocab or {}),
            source="playground",
        )
    rules = tuple(tuple(r) for r in merges)
    check_sizes(rules, limits, "last")
    made: dict[int, bytes] = {}
    for left, right, new in rules:
        if new >= 256:
            # odd lists (operands made only later) get no bytes here; export refuses them
            made[new] = bytes_of_or_empty(left, made) + bytes_of_or_empty(right, made)
    return LoadedTokenizer(
        level="bytes", merges=rules, vocab={i: b for i, b in made.items() if b},
        source="playground", pretokenize=pretokenize,
    )


def with_pretokenize(tok: LoadedTokenizer, scheme: str) -> LoadedTokenizer:
    """The same tokenizer with another pre-tokenization choice."""
    return replace(tok, pretokenize=check_scheme(scheme))
