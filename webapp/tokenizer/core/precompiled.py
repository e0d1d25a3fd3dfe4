"""A compiled byte-level merge list in a form that loads in milliseconds, plus its whole-token table.

What it does:
* `find_whole_tokens(compiled)` - the tokens whose own bytes encode to that
  one token (BPE over bytes(t) gives [t]), keyed by their text. Encoding a
  segment that equals such a token is then a dict lookup, with no BPE at all:
  exact by construction, because the table holds only tokens for which the
  engine itself was run on the token's bytes and gave the token. Tokens that
  are not valid UTF-8 are left out (segments of text are always valid UTF-8),
  and so are tokens over SMALL_SEGMENT bytes (longer segments take the engine).
  It runs the batch encoder once over every token (about a quarter of a
  second per 100,000 tokens), so it is done once, when a tokenizer is
  precompiled, and stored.
* `dumps_precompiled(compiled)` / `loads_precompiled(data)` - the rules as an
  int64 array, the sorted pair index the batch encoder searches, and the
  whole-token table, as numpy arrays in one `.npz` blob (no pickle). Loading
  skips validation (the blob is ours, written from a validated list) and
  the sort.

What it does not do: decide where the blob is kept (presets/openai.py / files.py
do), or anything for merge lists that are not well-formed (they are not
precompiled; `dumps_precompiled` refuses them).
"""

from __future__ import annotations

import io
import zipfile
from typing import Any

import numpy as np

from webapp.tokenizer.core import engine
from webapp.tokenizer.core.byte_level import CompiledByteMerges
from webapp.tokenizer.core.int_pool import interned

PRECOMPILED_VERSION = 1


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
    encoded = compiled._encode_batch(datas) if datas else []
    whole: dict[str, tuple[int, ...]] = {text: got for text, token, got in zip(texts, ids, encoded) if got == (token,)}
    # Single characters that are one byte (ASCII) encode to their byte: a lookup as well.
    whole.update((chr(b), (b,)) for b in range(128))
    compiled.whole = whole
    return whole


def dumps_precompiled(compiled: CompiledByteMerges) -> bytes:
    """The compiled list, its batch index and whole-token table as one .npz blob."""
    if not compiled.well_formed or compiled._flat is None:
        raise ValueError("only well-formed merge lists are precompiled")
    whole = compiled.whole if compiled.whole is not None else find_whole_tokens(compiled)
    keys, first_rank, _news = compiled._batch_index()
    texts = list(whole)
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    arrays: dict[str, Any] = {
        "version": np.array([PRECOMPILED_VERSION], dtype=np.int64),
        "rules": compiled._flat,
        "pair_keys": keys,
        "pair_first": first_rank,
        "whole_ids": np.fromiter((ids[0] for ids in whole.values()), dtype=np.int64, count=len(whole)),
        "whole_lengths": lengths,
        "whole_text": np.frombuffer("".join(texts).encode("utf-8"), dtype=np.uint8),
    }
    out = io.BytesIO()
    np.savez(out, **arrays)
    return out.getvalue()


def loads_precompiled(data: bytes) -> CompiledByteMerges:
    """The inverse of `dumps_precompiled`: a ready CompiledByteMerges (ValueError if unreadable)."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as blob:
            if int(blob["version"][0]) != PRECOMPILED_VERSION:
                raise ValueError("another precompiled version")
            rules = blob["rules"].astype(np.int64, copy=False)
            keys = blob["pair_keys"]
            first_rank = blob["pair_first"]
            ids = interned(blob["whole_ids"].tolist())  # (one object per id: core/int_pool.py)
            lengths = blob["whole_lengths"]
            text = blob["whole_text"].tobytes().decode("utf-8")
    except (OSError, KeyError, IndexError, UnicodeDecodeError, EOFError, zipfile.BadZipFile) as exc:
        raise ValueError(f"the precompiled tokenizer cannot be read ({exc})") from None
    if rules.ndim != 2 or rules.shape[1] != 3 or not len(rules) or len(ids) != len(lengths):
        raise ValueError("the precompiled tokenizer has the wrong shape")
    compiled = CompiledByteMerges._from_array(rules)
    if not compiled.well_formed:
        raise ValueError("the precompiled tokenizer is not a well-formed merge list")
    compiled._batch = (keys, first_rank, rules[:, 2])
    ends = np.cumsum(lengths).tolist()
    starts = [0, *ends[:-1]]
    compiled.whole = dict(zip(map(text.__getitem__, map(slice, starts, ends)), zip(ids)))
    return compiled


__all__ = ["PRECOMPILED_VERSION", "dumps_precompiled", "find_whole_tokens", "loads_precompiled", "token_bytes"]
