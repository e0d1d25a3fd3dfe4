"""The stored form: compact canonical bytes of a `LoadedTokenizer` for the content-addressed store.

Same tokenizer, same bytes, same id. What it does not do: check what it reads
as closely as the importers (the bytes were written by us), except token
sizes, which are checked again since the limits may have been lowered.

Details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any, Sequence

import numpy as np

from webapp.tokenizer.core.int_pool import interned
from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.formats.common import ByteRule
from webapp.tokenizer.hf import pipeline as hp
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.pretokenize.patterns import check_scheme
from webapp.tokenizer.core.token_sizes import DEFAULT_SIZE_LIMITS, SizeLimits, check_sizes


# Version 2 adds the tokenizer.json pipeline and the character level's
# unknown token (and, since, a tokenizer.json's "model" options when present:
# the library's merge order; older readers never saw such a tokenizer); version 3 writes byte-level merges as base64 of little-endian
# int64 triples (read in milliseconds; 1 and 2 wrote a JSON list). All still load.
STORED_VERSION = 3
_READABLE_VERSIONS = (1, 2, 3)
_INT64_MAX = (1 << 63) - 1


def dumps_stored(tok: LoadedTokenizer, *, limits: SizeLimits = DEFAULT_SIZE_LIMITS) -> bytes:
    """Canonical bytes for a tokenizer (same tokenizer, same bytes, same id).

    The byte-level vocab is left out: it follows from the merges.
    """
    doc: dict[str, Any] = {
        "v": STORED_VERSION,
        "level": tok.level,
        "merges": _stored_merges(tok),
        "source": tok.source,
        "pretokenize": tok.pretokenize,
        "special_tokens": dict(sorted(tok.special_tokens.items())),
        "notes": list(tok.notes),
    }
    if tok.pipeline:
        doc["pipeline"] = tok.pipeline
    if tok.chat:
        doc["chat"] = tok.chat  # a chat template opened with the file (absent otherwise: ids stay as they were)
    if tok.model:
        doc["model"] = tok.model
    if tok.level == "chars":
        doc["vocab"] = dict(sorted(tok.vocab.items()))
        if tok.unk_id is not None:
            doc["unk_id"] = tok.unk_id
    else:
        derived = _derived_byte_vocab(tok.merges, limits)
        doc["extra_vocab"] = [
            [i, list(b)] for i, b in sorted(tok.vocab.items()) if derived.get(i) != b
        ]
        doc["id_map"] = [[k, v] for k, v in sorted(tok.id_map.items())]
        doc["unknown_bytes"] = sorted(tok.unknown_bytes)
        doc["unk_id"] = tok.unk_id
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode("utf-8")


def _stored_pipeline(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("pipeline")
    if value:
        hp.compile_pipeline(value)  # (fails here, not at the first encode, if it cannot be read)
    return value


def _stored_chat(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("chat")
    if value:
        from webapp.tokenizer.chat.templates import ChatTemplate  # (here: the template engine only for a stored chat template)

        ChatTemplate.from_json(value)  # (fails here if it cannot be read)
    return value


def _stored_model(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("model")
    # (the library's order, or a SentencePiece model's score order: core/library_order/score_order.py)
    if value and json.loads(value).get("order") not in ("library", "score"):
        raise ValueError("model order")
    return value


def _stored_merges(tok: LoadedTokenizer) -> Any:
    """Byte-level merges as one base64 string of int64s (parsed in milliseconds); else a JSON list.

    Ids beyond int64 (never in a real file) keep the JSON list form.
    """
    if tok.level == "bytes" and tok.merges and max(map(max, tok.merges)) <= _INT64_MAX:
        flat = np.array(tok.merges, dtype="<i8").reshape(-1)
        return base64.b64encode(flat.tobytes()).decode("ascii")
    return [list(rule) for rule in tok.merges]


def _loaded_byte_rules(stored: Any) -> tuple[ByteRule, ...]:
    """The inverse of `_stored_merges` for the byte level."""
    if isinstance(stored, str):
        flat = np.frombuffer(base64.b64decode(stored, validate=True), dtype="<i8")
        if len(flat) % 3 or (len(flat) and int(flat.min()) < 0):
            raise ValueError("stored merges are not triples of non-negative ids")
        values = iter(interned(flat.tolist()))  # (one object per id: core/int_pool.py)
        return tuple(zip(values, values, values))  # triples straight from the flat list
    return tuple((int(a), int(b), int(n)) for a, b, n in stored)


def _derived_byte_vocab(
    rules: Sequence[ByteRule], limits: SizeLimits = DEFAULT_SIZE_LIMITS, *, ours: bool = False
) -> dict[int, bytes]:
    """{id: bytes} for every id above 255 a rule makes (first definition wins), sizes checked."""
    if not ours:
        check_sizes(rules, limits, "first")
    known: dict[int, bytes] = dict(_SINGLE_BYTES)
    get = known.get
    for left, right, new in rules:
        if new not in known and new >= 256:
            known[new] = get(left, b"") + get(right, b"")
    for b in range(256):
        del known[b]
    if ours and known:
        sizes = list(map(len, known.values()))
        if max(sizes) > limits.token_bytes or sum(sizes) > limits.vocab_bytes:
            check_sizes(rules, limits, "first")  # raises, naming the first rule over a limit
    if b"" in known.values():
        return {i: b for i, b in known.items() if b}
    return known


_SINGLE_BYTES: dict[int, bytes] = {b: bytes((b,)) for b in range(256)}


def loads_stored(data: bytes, *, limits: SizeLimits = DEFAULT_SIZE_LIMITS) -> LoadedTokenizer:
    """The inverse of `dumps_stored` (light checks: the bytes were written by us;
    token sizes are checked again, since the limits may have been lowered since)."""
    try:
        doc = json.loads(data.decode("utf-8"))
        if doc.get("v") not in _READABLE_VERSIONS:
            raise ValueError(f"stored tokenizer version {doc.get('v')!r}")
        level = doc["level"]
        common: dict[str, Any] = dict(
            source=str(doc["source"]),
            pretokenize=check_scheme(doc["pretokenize"]),
            special_tokens={str(k): int(v) for k, v in doc["special_tokens"].items()},
            notes=tuple(str(n) for n in doc["notes"]),
            pipeline=_stored_pipeline(doc.get("pipeline", "")),
            chat=_stored_chat(doc.get("chat", "")),
            model=_stored_model(doc.get("model", "")),
        )
        if level == "chars":
            pairs = tuple((str(a), str(b)) for a, b in doc["merges"])
            tokens = {str(k): int(v) for k, v in doc["vocab"].items()}
            unk = doc.get("unk_id")
            return LoadedTokenizer(level="chars", merges=pairs, vocab=tokens,
                                   unk_id=None if unk is None else int(unk), **common)
        rules = _loaded_byte_rules(doc["merges"])
        vocab = _derived_byte_vocab(rules, limits, ours=True)
        for i, values in doc["extra_vocab"]:
            vocab[int(i)] = bytes(values)
        return LoadedTokenizer(
            level="bytes",
            merges=rules,
            vocab=vocab,
            id_map={int(k): int(v) for k, v in doc["id_map"]},
            unknown_bytes=frozenset(int(b) for b in doc["unknown_bytes"]),
            unk_id=None if doc["unk_id"] is None else int(doc["unk_id"]),
            **common,
        )
    except TokenizerError:
        raise  # over a size limit (lowered since it was stored): says which rule
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError, binascii.Error) as exc:
        raise TokenizerError(f"tokenizer: the stored tokenizer cannot be read ({exc})", field="tokenizer") from None
