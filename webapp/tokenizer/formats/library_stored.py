"""The precompiled form of a tokenizer in the library's merge order: read in a fraction of a second.

A tokenizer.json opened through formats/hf_json.py takes seconds for the
large open models (gemma3: 514,906 merges of strings), and so does its
stored form for a character-level file (the merges are a JSON list of string
pairs). For presets, prepared once at setup, this module writes one .npz:

- `rules`: the model's rules in the file's ids (n x 3 int64), from which
  `LibraryMerges` builds its pair map with numpy;
- `tokens`: the model's vocab as a JSON list of [token, id];
- `edges`: where a long piece may be cut (hf/model.py, `_segments`);
- `whole`: one byte per id, 1 for a token whose own text encodes to it
  (`LibraryModel.find_whole`: such a piece is then a lookup, no merging);
- `meta`: the rest of the `LoadedTokenizer` as JSON (byte level: its stored
  form, which already reads in milliseconds; character level: every field
  but the merges and vocab, which follow from `rules` and `tokens`).

What it does not do: check what it reads beyond its shape (the file is ours,
written at setup under a name that holds the source file's hash).
"""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np

from webapp.tokenizer.formats.stored import dumps_stored, loads_stored
from webapp.tokenizer.hf.encoding import attach_model, library_model
from webapp.tokenizer.hf.model import LibraryModel
from webapp.tokenizer.loaded import LoadedTokenizer

LIBRARY_FORM_VERSION = 2


def _json_array(value: Any) -> np.ndarray:
    return np.frombuffer(json.dumps(value, ensure_ascii=False).encode("utf-8"), dtype=np.uint8)


def _read_json(array: np.ndarray) -> Any:
    return json.loads(array.tobytes().decode("utf-8"))


def dumps_library(tok: LoadedTokenizer) -> bytes:
    """The precompiled form of a library-order tokenizer (see the module doc)."""
    if not tok.library_order:
        raise ValueError("dumps_library is for tokenizers in the library's merge order")
    model = library_model(tok)
    rules = np.array([(a, b, n) for a, b, n in _model_rules(tok, model)], dtype=np.int64).reshape(-1, 3)
    if tok.level == "bytes":
        meta: dict[str, Any] = {"v": LIBRARY_FORM_VERSION, "stored": dumps_stored(tok).decode("utf-8")}
    else:
        meta = {"v": LIBRARY_FORM_VERSION, "level": "chars", "source": tok.source, "pretokenize": tok.pretokenize,
                "special_tokens": tok.special_tokens, "notes": list(tok.notes), "pipeline": tok.pipeline,
                "model": tok.model, "unk_id": tok.unk_id}
    out = io.BytesIO()
    whole = model.whole if model.whole is not None else model.find_whole()
    np.savez(out, rules=rules, tokens=_json_array(list(model.vocab.items())), meta=_json_array(meta),
             edges=model.edge_array(), whole=np.frombuffer(whole, dtype=np.uint8))
    return out.getvalue()


def _model_rules(tok: LoadedTokenizer, model: LibraryModel) -> list[tuple[int, int, int]]:
    """The model's rules in file ids, in the file's order."""
    if tok.level == "chars":
        vocab = tok.vocab
        return [(vocab[a], vocab[b], vocab[a + b]) for a, b in tok.merges]
    fid = tok.id_map.get
    return [(fid(a, a), fid(b, b), fid(n, n)) for a, b, n in tok.merges]


def loads_library(data: bytes) -> LoadedTokenizer:
    """The inverse of `dumps_library`: the tokenizer, its model already built and attached."""
    with np.load(io.BytesIO(data), allow_pickle=False) as found:
        rules = found["rules"]
        tokens = _read_json(found["tokens"])
        meta = _read_json(found["meta"])
        edges = found["edges"] if "edges" in found.files else None
        whole = found["whole"].tobytes() if "whole" in found.files else None
    if meta.get("v") != LIBRARY_FORM_VERSION:
        raise ValueError("not this version of the precompiled form")
    vocab = {str(token): int(i) for token, i in tokens}
    if "stored" in meta:
        tok = loads_stored(meta["stored"].encode("utf-8"))
    else:
        names = {i: token for token, i in vocab.items()}
        pairs = tuple(zip(map(names.__getitem__, rules[:, 0].tolist()), map(names.__getitem__, rules[:, 1].tolist())))
        unk = meta["unk_id"]
        tok = LoadedTokenizer(
            level="chars", merges=pairs, vocab=vocab, source=str(meta["source"]), pretokenize=meta["pretokenize"],
            special_tokens={str(k): int(v) for k, v in meta["special_tokens"].items()},
            notes=tuple(meta["notes"]), pipeline=meta["pipeline"], model=meta["model"],
            unk_id=None if unk is None else int(unk),
        )
    model = LibraryModel(vocab, rules, tok.model, tok.unk_id, edges)
    model.whole = whole
    attach_model(tok, model)
    return tok


__all__ = ["LIBRARY_FORM_VERSION", "dumps_library", "loads_library"]
