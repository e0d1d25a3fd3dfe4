"""A compiled byte-level merge list in a form that loads in milliseconds, plus its whole-token table.

What it does not do: decide where the arrays are kept (presets/openai_form.py
writes them into a preset's file, presets/cache.py picks its folder), or anything for merge lists that are not well-formed (they are not
precompiled; `dumps_precompiled` refuses them).

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import io
import zipfile
from typing import Any

import numpy as np

from webapp.tokenizer.core.list_order import engine
from webapp.tokenizer.core.list_order.byte_level import CompiledByteMerges
from webapp.tokenizer.core.int_pool import interned

#: 2 adds the split table (`splits`: 256 x 256, made with numpy on reading in version 1).
PRECOMPILED_VERSION = 2


def token_bytes(compiled: CompiledByteMerges) -> dict[int, bytes]:
    """{id: bytes} of every id a well-formed list makes (each new id made once, operands earlier)."""
    vocab = {b: bytes((b,)) for b in range(256)}
    for left, right, new in compiled.rules:
        vocab[new] = vocab[left] + vocab[right]
    return vocab


def find_whole_tokens(compiled: CompiledByteMerges) -> dict[str, tuple[int, ...]]:
    """{token text: (id,)} for every token (up to SMALL_SEGMENT bytes, valid UTF-8) that encodes to itself.

    Sets `compiled.whole` and returns it. Only for well-formed lists.
    """
    if not compiled.well_formed:
        raise ValueError("whole tokens are only worked out for well-formed merge lists")
    small = engine.SMALL_SEGMENT
    ids: list[int] = []
    texts: list[str] = []
    datas: list[bytes] = []
    for token, data in token_bytes(compiled).items():
        if token < 256 or len(data) > small:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        ids.append(token)
        texts.append(text)
        datas.append(data)
    encoded = compiled.encode_batch(datas) if datas else []
    whole: dict[str, tuple[int, ...]] = {text: got for text, token, got in zip(texts, ids, encoded) if got == (token,)}
    # Single characters that are one byte (ASCII) encode to their byte: a lookup as well.
    whole.update((chr(b), (b,)) for b in range(128))
    compiled.whole = whole
    return whole


def precompiled_arrays(compiled: CompiledByteMerges) -> dict[str, Any]:
    """The arrays of the precompiled form (see `dumps_precompiled`), for a caller's own .npz."""
    flat = compiled.flat
    if not compiled.well_formed or flat is None or compiled.splits is None:
        raise ValueError("only well-formed merge lists are precompiled")
    whole = compiled.whole if compiled.whole is not None else find_whole_tokens(compiled)
    tables = compiled.batch_tables()
    texts = list(whole)
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    return {
        "version": np.array([PRECOMPILED_VERSION], dtype=np.int64),
        "rules": flat,
        "splits": compiled.splits,
        "pair_keys": tables.pair_keys,
        "pair_first": tables.first_ranks,
        "whole_ids": np.fromiter((ids[0] for ids in whole.values()), dtype=np.int64, count=len(whole)),
        "whole_lengths": lengths,
        "whole_text": np.frombuffer("".join(texts).encode("utf-8"), dtype=np.uint8),
    }


def dumps_precompiled(compiled: CompiledByteMerges) -> bytes:
    """The compiled list, its batch index and whole-token table as one .npz blob."""
    out = io.BytesIO()
    np.savez(out, **precompiled_arrays(compiled))
    return out.getvalue()


def compiled_from_arrays(found: Any) -> CompiledByteMerges:
    """The inverse of `precompiled_arrays` (`found`: an open .npz or a dict of its arrays; ValueError if unusable)."""
    try:
        if int(found["version"][0]) != PRECOMPILED_VERSION:
            raise ValueError("another precompiled version")
        rules = found["rules"].astype(np.int64, copy=False)
        splits = found["splits"]
        keys = found["pair_keys"]
        first_rank = found["pair_first"]
        whole_ids = found["whole_ids"]
        lengths = found["whole_lengths"]
        data = found["whole_text"].tobytes()
    except (OSError, KeyError, IndexError, UnicodeDecodeError, EOFError, zipfile.BadZipFile) as exc:
        raise ValueError(f"the precompiled tokenizer cannot be read ({exc})") from None
    if (rules.ndim != 2 or rules.shape[1] != 3 or not len(rules) or whole_ids.shape != lengths.shape
            or whole_ids.ndim != 1 or splits.shape != (256, 256) or splits.dtype != np.bool_):
        raise ValueError("the precompiled tokenizer has the wrong shape")
    compiled = CompiledByteMerges.from_array(rules, splits, (keys, first_rank))

    def make_whole() -> dict[str, tuple[int, ...]]:
        text = data.decode("utf-8")  # (valid: written from str; a damaged file fails its zip CRC when read)
        if int(lengths.sum()) != len(text):
            raise ValueError("the precompiled whole-token table has the wrong shape")
        ids = interned(whole_ids.tolist())  # (one object per id: core/int_pool.py)
        ends = np.cumsum(lengths).tolist()
        starts = [0, *ends[:-1]]
        return dict(zip(map(text.__getitem__, map(slice, starts, ends)), zip(ids)))

    compiled.defer_whole(make_whole)
    return compiled


def loads_precompiled(data: bytes) -> CompiledByteMerges:
    """The inverse of `dumps_precompiled`: a ready CompiledByteMerges (ValueError if unreadable)."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as blob:
            return compiled_from_arrays(blob)
    except (OSError, EOFError, zipfile.BadZipFile) as exc:
        raise ValueError(f"the precompiled tokenizer cannot be read ({exc})") from None


__all__ = [
    "PRECOMPILED_VERSION", "compiled_from_arrays", "dumps_precompiled", "find_whole_tokens", "loads_precompiled",
    "precompiled_arrays", "token_bytes",
]
