"""The precompiled form of a tokenizer in the library's merge order: read in a fraction of a second.

What it does not do: check what it reads beyond its shape and that every rule's
ids are tokens (the file is ours, written at setup under a name that holds the
source file's hash); an unreadable or damaged file is a ValueError, so the
caller converts the source file again.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import numpy as np

from webapp.tokenizer.core.collector import collector_paused
from webapp.tokenizer.core.library_order.early_pairs import EarlyPairs
from webapp.tokenizer.core.int_pool import interned
from webapp.tokenizer.core.library_order.score_order import ScoreMerges
from webapp.tokenizer.formats.stored import dumps_stored, loads_stored
from webapp.tokenizer.models.library import LibraryModel
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.stages.models import LIBRARY_MODEL, library_model

#: In the file names (open_models.cache_file_name): a file with the current name is read as it is,
#: so this goes up whenever what a stored array means changes - here, or in the tables it keeps
#: from core/library_order/merges.py (the pair table) and core/library_order/early_pairs.py.
LIBRARY_FORM_VERSION = 5
#: The EarlyPairs tables stored (its `news` are the rules' third column).
EARLY_TABLES = ("unit_of", "first_unit", "last_unit", "left_min", "right_min", "operand_min", "unit_rank")


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
    texts = list(model.vocab)
    whole = model.whole if model.whole is not None else model.find_whole()
    pair_table = model.merges.pair_table()
    early = model.early_pairs()
    tables: dict[str, Any] = {}
    if isinstance(model.merges, ScoreMerges):  # (a SentencePiece model's score order has no batch tables)
        meta["tables"] = False
    elif pair_table is None or early is None:
        raise ValueError("the rules' ids are too large for the precompiled form")
    else:
        tables = {"pair_keys": pair_table[0], "pair_ranks": pair_table[1],
                  **{f"early_{name}": getattr(early, name) for name in EARLY_TABLES}}
    out = io.BytesIO()
    np.savez(out, rules=rules, meta=_json_array(meta), edges=model.cut.edge_array(), char_table=model.cut.char_table(),
             **tables,
             whole=np.frombuffer(whole, dtype=np.uint8),
             token_text=np.frombuffer("".join(texts).encode("utf-8", "surrogatepass"), dtype=np.uint8),
             token_lengths=np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)),
             token_ids=np.fromiter(model.vocab.values(), dtype=np.int64, count=len(texts)))
    return out.getvalue()


def _model_rules(tok: LoadedTokenizer, model: LibraryModel) -> list[tuple[int, int, int]]:
    """The model's rules in file ids, in the file's order."""
    if tok.level == "chars":
        vocab = tok.vocab
        return [(vocab[a], vocab[b], vocab[a + b]) for a, b in tok.merges]
    fid = tok.id_map.get
    return [(fid(a, a), fid(b, b), fid(n, n)) for a, b, n in tok.merges]


def loads_library(data: bytes) -> LoadedTokenizer:
    """The inverse of `dumps_library`: the tokenizer, its model already built and attached (ValueError if unreadable)."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as found:
            meta = _read_json(found["meta"])
            if not isinstance(meta, dict) or meta.get("v") != LIBRARY_FORM_VERSION:
                raise ValueError("not this version of the precompiled form")
            rules = found["rules"]
            text = found["token_text"].tobytes().decode("utf-8", "surrogatepass")
            lengths = found["token_lengths"]
            ids = found["token_ids"]
            edges = found["edges"]
            whole = found["whole"].tobytes()
            char_table = found["char_table"]
            with_tables = meta.get("tables", True)
            pair_keys, pair_ranks = (found["pair_keys"], found["pair_ranks"]) if with_tables else (None, None)
            early = {name: found[f"early_{name}"] for name in EARLY_TABLES} if with_tables else {}
    except (OSError, KeyError, IndexError, UnicodeDecodeError, EOFError, zipfile.BadZipFile) as exc:
        raise ValueError(f"the precompiled tokenizer cannot be read ({exc})") from None
    if (rules.ndim != 2 or rules.shape[1] != 3 or ids.ndim != 1 or lengths.shape != ids.shape
            or (len(ids) and (int(ids.min()) < 0 or int(lengths.min()) < 0)) or int(lengths.sum()) != len(text)
            or len(whole) != (int(ids.max()) + 1 if len(ids) else 0)):
        raise ValueError("the precompiled tokenizer has the wrong shape")
    with collector_paused(collect=True):
        ends = np.cumsum(lengths).tolist()
        vocab = dict(zip(map(text.__getitem__, map(slice, [0, *ends[:-1]], ends)), interned(ids.tolist())))
        if "stored" in meta:
            tok = loads_stored(meta["stored"].encode("utf-8"))
        else:
            tok = _char_level(meta, vocab, rules, ids)
        pairs = (pair_keys, pair_ranks) if pair_keys is not None and pair_ranks is not None else None
        model = LibraryModel(vocab, rules, tok.model, tok.unk_id, edges, pairs)
        model.whole = whole
        model.cut.set_char_table(char_table)
        if pair_keys is not None and pair_ranks is not None:
            model.merges.set_pair_table(pair_keys, pair_ranks)
            model.set_early_pairs(EarlyPairs(**early, news=np.ascontiguousarray(rules[:, 2], dtype=np.int64)))
        tok.built.keep(LIBRARY_MODEL, model)  # (what stages.models.library_model gives back)
    return tok


def _char_level(meta: dict[str, Any], vocab: dict[str, int], rules: np.ndarray, ids: np.ndarray) -> LoadedTokenizer:
    """A character-level tokenizer: its merges are the rules' operands spelt as tokens (made on first use:
    encoding runs on the model's arrays, and half a million string pairs take a third of a second)."""
    size = int(ids.max()) + 1 if len(ids) else 0
    operands = rules[:, :2]
    present = np.zeros(size + 1, dtype=bool)
    present[ids] = True  # (the last slot stays False: where an id out of range is sent)
    if len(operands) and not present[np.where((operands >= 0) & (operands < size), operands, -1)].all():
        raise ValueError("the precompiled tokenizer has a rule whose ids are not tokens")

    def make_merges() -> tuple[tuple[str, str], ...]:
        names: list[str | None] = [None] * size
        for token, i in vocab.items():
            names[i] = token
        with collector_paused():
            pairs = zip(map(names.__getitem__, operands[:, 0].tolist()), map(names.__getitem__, operands[:, 1].tolist()))
            return tuple(pairs)  # type: ignore[arg-type]  # (every operand is a token: checked above)

    unk = meta["unk_id"]
    return LoadedTokenizer.deferred(
        {"merges": make_merges}, len(rules),
        level="chars", vocab=vocab, source=str(meta["source"]), pretokenize=meta["pretokenize"],
        special_tokens={str(k): int(v) for k, v in meta["special_tokens"].items()},
        notes=tuple(meta["notes"]), pipeline=meta["pipeline"], model=meta["model"],
        unk_id=None if unk is None else int(unk),
    )


__all__ = ["LIBRARY_FORM_VERSION", "dumps_library", "loads_library"]
