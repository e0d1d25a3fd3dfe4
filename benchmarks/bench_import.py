"""Import benchmark: how long a 50,000-rule tokenizer file takes to open.

Usage (from the repository root):

    .venv/bin/python benchmarks/bench_import.py [--rules 50000]

No downloads. The benchmark first makes a real-shaped tokenizer: Hugging
Face `tokenizers` trains a GPT-2-style byte-level BPE (ByteLevel
pre-tokenizer with GPT-2's regex, the full byte alphabet) with 50,000 merges
on text that exists on every machine (the Python standard library's sources
plus generated non-Latin text, see corpus.py). It then writes that tokenizer
in each format the playground reads and times, per format, best of 3:

- parse: `import_tokenizer` (file text -> playground merges, vocab, id map;
  for tiktoken this includes recovering the merges from the ranks);
- open: what `POST /api/import` adds - the canonical stored form, zlib,
  the content-addressed write to a fresh SQLite database, and compiling the
  merge list (cold: no cache holds it);
- then the first and a repeated encode of ~8,000 characters of mixed text with
  the opened tokenizer (GPT-2 pre-tokenization), next to `tokenizers` itself
  on the same text; the ids are checked to be the library's.

Training the tokenizer is not timed (it is printed for information).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import corpus  # noqa: E402
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers  # noqa: E402

from webapp.tokenizer import formats as tokfiles  # noqa: E402
from webapp.tokenizer.stages import tokenizer_of  # noqa: E402


def best_of(runs: int, work: Callable[[], Any]) -> tuple[float, Any]:
    best = float("inf")
    result = None
    for _ in range(runs):
        start = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - start)
    return best, result


def train(rules: int) -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=256 + rules,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    text = corpus.training_text(6_000_000, 1_500_000)
    lines = text.split("\n")
    tok.train_from_iterator(lines, trainer=trainer)
    return tok


def files_for(tok: Tokenizer, workdir: Path) -> dict[str, dict[str, Any]]:
    """The same tokenizer in every format the importer reads."""
    hf_json = tok.to_str()
    tok.model.save(str(workdir))
    vocab_json = (workdir / "vocab.json").read_text("utf-8")
    merges_txt = (workdir / "merges.txt").read_text("utf-8")
    loaded = tokfiles.import_tokenizer(hf_json)
    ranks_file = tokfiles.export_tiktoken(loaded)
    minbpe = tokfiles.export_minbpe(loaded)
    seed = tokfiles.export_seed(loaded)
    return {
        "tokenizer.json": {"content": hf_json},
        "vocab.json + merges.txt": {"content": vocab_json, "merges_txt": merges_txt},
        "tiktoken ranks": {"content": ranks_file},
        "minbpe .model": {"content": minbpe},
        "playground JSON": {"content": seed},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rules", type=int, default=50_000)
    args = parser.parse_args()

    start = time.perf_counter()
    tok = train(args.rules)
    n_rules = len(json.loads(tok.to_str())["model"]["merges"])
    print(f"trained a byte-level BPE with {n_rules:,} merges in {time.perf_counter() - start:.1f} s (not timed below)")
    if n_rules < args.rules:
        print(f"note: the corpus gave only {n_rules:,} merges")

    from webapp import create_app
    from webapp.opened import store as tokenizer_store
    from webapp.tokenizer.core.list_order import byte_level
    from webapp.infra.storage import default_sqlite_url, get_storage

    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        inputs = files_for(tok, workdir)
        app = create_app({"TESTING": True, "DATABASE_URL": default_sqlite_url(workdir)})
        text = corpus.mixed_text(8_000)
        expected = tok.encode(text).ids

        print()
        print(f"{'format':<26} {'size':>9} {'parse':>9} {'open':>9} {'rules':>8}")
        opened: dict[str, Any] = {}
        for name, item in inputs.items():
            size = len(item["content"].encode("utf-8")) + len(item.get("merges_txt", "").encode("utf-8"))
            parse_s, loaded = best_of(3, lambda: tokfiles.import_tokenizer(item["content"], merges_txt=item.get("merges_txt")))

            open_s = float("inf")
            for run in range(3):
                # cold every time: a fresh database, and no compiled list in any cache
                db = workdir / f"{len(opened)}-{run}"
                db.mkdir()
                fresh = create_app({"TESTING": True, "DATABASE_URL": default_sqlite_url(db)})
                tokenizer_store.LOADED.clear()
                byte_level._compiled.data.clear()  # the engine's cache of compiled lists (benchmark only)
                with fresh.app_context():
                    began = time.perf_counter()
                    entry = tokenizer_store.store_tokenizer(loaded)
                    open_s = min(open_s, time.perf_counter() - began)
                get_storage(fresh).dispose()
            opened[name] = entry
            print(f"{name:<26} {size / 1e6:>7.2f}MB {parse_s:>8.2f}s {open_s:>8.2f}s {len(loaded.merges):>8,}")
            print(f"{'':<26} {'':>9} {'= ' + format(parse_s + open_s, '.2f') + ' s to open in the playground':>30}")

        entry = opened["tokenizer.json"]
        print()
        first_s, ids = best_of(1, lambda: tokenizer_of(entry.tok, "gpt2", entry.compiled).encode(text))
        again_s, ids_again = best_of(3, lambda: tokenizer_of(entry.tok, "gpt2", entry.compiled).encode(text))
        library_s, library_ids = best_of(3, lambda: tok.encode(text).ids)
        assert ids == ids_again == expected == library_ids, "ids differ from the library's"
        print(f"encode {len(text):,} chars (gpt2 pre-tokenization) with the opened tokenizer.json: "
              f"first {first_s * 1000:.1f} ms, again {again_s * 1000:.1f} ms; "
              f"tokenizers {library_s * 1000:.1f} ms; ids equal ({len(ids):,} tokens)")
        get_storage(app).dispose()


if __name__ == "__main__":
    main()
