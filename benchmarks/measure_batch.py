"""The batch encoder's own figures, quoted in core/list_order/batch.py, pretokenize/textencode.py, docs/performance.md and docs/limits.md.

Usage (from the repository root):

    .venv/bin/python benchmarks/measure_batch.py

For each preset (from the preset cache in instance/presets, precompiled as
the app serves it), it prints:
- memory: the arrays a compiled list keeps for the batch (`nbytes` of the pair
  hash table and of the operand ranks) and the size of its whole-token table
  translated into the preset's own ids (`sys.getsizeof` of the dict: the keys
  and values are shared with the untranslated table);
- pair lookups: the time to build the hash table, and the time per key of a
  sorted search and of the hash table for 1,000 and 6,000 keys (existing
  pairs and absent ones, half each), best of 20;
- for cl100k and o200k only: English new text (the benchmark's docstring
  text, 20,000 characters): how many distinct pre-tokens miss the whole-token
  table, how many batch rounds they take, the batch's time, and the engine's
  time for the same pre-tokens one by one (best of 20 each).

Times are wall time (`time.perf_counter`); run it on a quiet machine.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_real_tokenizers as real  # noqa: E402

from webapp.tokenizer.core.list_order import batch  # noqa: E402
from webapp.tokenizer.presets import openai as presets  # noqa: E402
from webapp.tokenizer.pretokenize import textencode  # noqa: E402
from webapp.tokenizer.pretokenize.chunks import split_text  # noqa: E402
from webapp.tokenizer.core.ranks import INF  # noqa: E402

CACHE = ROOT / "instance" / "presets"


def best(work: Callable[[], Any], repeat: int = 20) -> float:
    """The fastest of `repeat` calls, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def memory(name: str) -> None:
    tok = presets.load_preset(name, CACHE)
    compiled = presets.load_compiled(name, CACHE)
    lookup = batch.pair_ranks(compiled)
    start = time.perf_counter()
    slots, values, _, _ = lookup._table if lookup._table is not None else lookup._build()
    built = time.perf_counter() - start
    as_left, as_right = compiled.batch_tables().operand_ranks.get()
    translated = textencode._whole_table(compiled, textencode.relabel_for(tok.id_map))
    print(f"{name}: {len(lookup.keys) - 1:,} pairs; hash table {(slots.nbytes + values.nbytes) / 1e6:.1f} MB "
          f"(built in {built * 1e3:.0f} ms); operand ranks {(as_left.nbytes + as_right.nbytes) / 1e6:.1f} MB; "
          f"translated whole-token table {sys.getsizeof(translated) / 1e6:.1f} MB")
    rng = np.random.default_rng(0)
    for count in (1_000, 6_000):
        keys = lookup.keys[rng.integers(0, len(lookup.keys) - 1, count)].copy()
        keys[::2] += 1  # about half of them are then pairs no rule has
        assert (lookup._hashed(keys) == lookup._searched(keys)).all()
        ordered = np.sort(keys)
        searched = best(lambda: lookup._searched(np.sort(keys)))
        hashed = best(lambda: lookup._hashed(keys))
        del ordered
        print(f"  {count:,} keys: sorted search {searched / count * 1e9:.0f} ns a key (sort included), "
              f"hash table {hashed / count * 1e9:.0f} ns a key, {searched / hashed:.1f}x faster")


def english_batch(name: str) -> None:
    tok = presets.load_preset(name, CACHE)
    compiled = presets.load_compiled(name, CACHE)
    compiled.table.first  # the engine's indexes, as in a server that has encoded before
    scheme = presets.get_preset(name).scheme
    text = real.texts_for("English", 1)[1]
    whole = compiled.whole or {}
    new = list(dict.fromkeys(p for p in split_text(text, scheme) if p not in whole))
    relabel = textencode.relabel_for(tok.id_map)
    rounds = [0]
    lookup = batch.pair_ranks(compiled)
    plain = lookup.ranks_of

    def counted(key: np.ndarray) -> np.ndarray:
        rounds[0] += 1  # the rounds rank the pairs around their merges once each
        return plain(key)

    lookup.ranks_of = counted  # type: ignore[method-assign]
    old = textencode.ENGINE_MAX_BYTES
    textencode.ENGINE_MAX_BYTES = 0  # this measures the batch, however few the bytes
    try:
        textencode._encode_pretokens(compiled, new, relabel)
        round_count = rounds[0]
        batch_s = best(lambda: textencode._encode_pretokens(compiled, new, relabel))
    finally:
        textencode.ENGINE_MAX_BYTES = old
        del lookup.ranks_of
    run = compiled.table.run
    data = [list(p.encode()) for p in new]
    engine_s = best(lambda: [run(d) for d in data])
    size = sum(map(len, data))
    print(f"  English, 20,000 characters: {len(new)} distinct pre-tokens miss the whole-token table ({size:,} bytes); "
          f"batch {batch_s * 1e3:.2f} ms in {round_count} rounds (about {batch_s / round_count * 1e6:.0f} µs a round); "
          f"engine one by one {engine_s * 1e3:.2f} ms ({engine_s / len(new) * 1e6:.1f} µs a pre-token)")


def main() -> int:
    assert INF > np.iinfo(np.int32).max
    for name in ("r50k_base", "p50k_base", "cl100k_base", "o200k_base"):
        memory(name)
        if name in ("cl100k_base", "o200k_base"):
            english_batch(name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
