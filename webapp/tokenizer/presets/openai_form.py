"""The OpenAI presets' converted form in the preset cache: one .npz that is read in milliseconds.

What it does not do: convert ranks (openai.py), choose the folder
(cache.py), or write the file (the caller writes these bytes atomically).

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any, Mapping

import numpy as np

from webapp.tokenizer.core.list_order.byte_level import CompiledByteMerges
from webapp.tokenizer.core.int_pool import interned
from webapp.tokenizer.core.list_order.precompiled import compiled_from_arrays, precompiled_arrays
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.core.token_sizes import DEFAULT_SIZE_LIMITS, SizeLimits

#: In the file names (openai.cache_file_name): raised whenever what a stored array or field means changes.
FORM_VERSION = 1


def dumps_preset_form(tok: LoadedTokenizer, compiled: CompiledByteMerges, name: str, sha256: str) -> bytes:
    """The form of an OpenAI preset: its tokenizer and precompiled list, tagged with its name and rank hash."""
    if tok.level != "bytes" or tok.library_order or tok.pipeline:
        raise ValueError("the preset form is for byte-level tokenizers in list order without a pipeline")
    if len(compiled) != len(tok.merges):
        raise ValueError("the compiled list is not this tokenizer's")
    meta = {
        "v": FORM_VERSION, "name": name, "sha256": sha256, "source": tok.source, "pretokenize": tok.pretokenize,
        "special_tokens": dict(tok.special_tokens), "notes": list(tok.notes),
        "id_map": sorted(tok.id_map.items()), "unknown_bytes": sorted(tok.unknown_bytes), "unk_id": tok.unk_id,
    }
    ids = list(tok.vocab)
    datas = list(tok.vocab.values())
    out = io.BytesIO()
    np.savez(out, **precompiled_arrays(compiled),
             meta=np.frombuffer(json.dumps(meta, sort_keys=True).encode("utf-8"), dtype=np.uint8),
             vocab_ids=np.array(ids, dtype=np.int64),
             vocab_lengths=np.fromiter(map(len, datas), dtype=np.int64, count=len(datas)),
             vocab_bytes=np.frombuffer(b"".join(datas), dtype=np.uint8))
    return out.getvalue()


def loads_preset_form(
    data: bytes, name: str, sha256: str, special_tokens: Mapping[str, int], rules: int, scheme: str,
    limits: SizeLimits = DEFAULT_SIZE_LIMITS,
) -> tuple[LoadedTokenizer, CompiledByteMerges]:
    """The inverse of `dumps_preset_form`, checked to be the preset `name` with ranks `sha256`, its
    `special_tokens`, `rules` merges and pre-tokenization `scheme`. ValueError when the file is damaged, stale or another's."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as found:
            meta = json.loads(found["meta"].tobytes().decode("utf-8"))
            compiled = compiled_from_arrays(found)
            vocab_ids, lengths = found["vocab_ids"], found["vocab_lengths"]
            blob = found["vocab_bytes"].tobytes()
    except (OSError, KeyError, IndexError, UnicodeDecodeError, EOFError, zipfile.BadZipFile) as exc:
        raise ValueError(f"the preset form cannot be read ({exc})") from None
    _check(meta, name, sha256, special_tokens)
    if meta.get("pretokenize") != scheme:
        raise ValueError(f"the preset form does not split text as {name} does")
    if len(compiled) != rules:
        raise ValueError(f"the preset form has {len(compiled)} rules, not the {rules} of {name}")
    if vocab_ids.ndim != 1 or lengths.shape != vocab_ids.shape or int(lengths.sum()) != len(blob):
        raise ValueError("the preset form's vocab has the wrong shape")
    if len(lengths) and (int(lengths.max()) > limits.token_bytes or len(blob) > limits.vocab_bytes):
        raise ValueError("the preset form's tokens are over today's size limits")

    def make_vocab() -> dict[int, bytes]:
        ends = np.cumsum(lengths).tolist()
        return dict(zip(interned(vocab_ids.tolist()), map(blob.__getitem__, map(slice, [0, *ends[:-1]], ends))))

    def make_merges() -> tuple[tuple[int, int, int], ...]:
        flat = compiled.flat
        assert flat is not None  # (compiled_from_arrays made it from the array)
        values = iter(interned(flat.reshape(-1).tolist()))  # (one object per id: core/int_pool.py)
        merges: tuple[tuple[int, int, int], ...] = tuple(zip(values, values, values))
        compiled.share_rules(merges)  # one tuple of rules for both
        return merges

    tok = LoadedTokenizer.deferred(
        {"merges": make_merges, "vocab": make_vocab}, len(compiled),
        level="bytes", source=str(meta["source"]), pretokenize=str(meta["pretokenize"]),
        special_tokens={str(k): int(v) for k, v in meta["special_tokens"].items()},
        notes=tuple(str(n) for n in meta["notes"]),
        id_map={int(k): int(v) for k, v in meta["id_map"]},
        unknown_bytes=frozenset(int(b) for b in meta["unknown_bytes"]),
        unk_id=None if meta["unk_id"] is None else int(meta["unk_id"]),
    )
    return tok, compiled


def _check(meta: Any, name: str, sha256: str, special_tokens: Mapping[str, int]) -> None:
    """ValueError unless `meta` is this version's, of this preset, its ranks and special tokens."""
    if not isinstance(meta, dict) or meta.get("v") != FORM_VERSION:
        raise ValueError("not this version of the preset form")
    if meta.get("name") != name or meta.get("sha256") != sha256:
        raise ValueError(f"the preset form is of {meta.get('name')!r} ({meta.get('sha256')}), not of {name} ({sha256})")
    if meta.get("special_tokens") != dict(special_tokens):
        raise ValueError(f"the preset form's special tokens are not those of {name}")


__all__ = ["FORM_VERSION", "dumps_preset_form", "loads_preset_form"]
