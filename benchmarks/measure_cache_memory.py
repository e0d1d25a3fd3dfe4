"""Memory of the bounded caches, measured: what one full segment cache and one compiled rule cost.

Each figure is the growth of this process's RSS (/proc/self/status, VmRSS)
while one cache is filled past its bounds, in a fresh subprocess per figure.
docs/limits.md (Caches) derives the per-worker bound from these figures
and the caches' sizes (webapp.tokenizer.caches.NAMED).

    .venv/bin/python benchmarks/measure_cache_memory.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def segment_cache() -> dict[str, float]:
    """One compiled list's segment cache filled past its bounds with its worst case.

    At 65,536 entries the weight bound leaves 15 bytes per segment; a segment's
    ids are at most one per byte, and ids above 255 are fresh int objects
    (those below are shared), so the worst value is 7 ids above 255 and one
    byte. 200,000 such segments go through the cache's own `put_many`.
    """
    import random

    from webapp.tokenizer.core.list_order import byte_level

    compiled = byte_level.compile_byte_merges([[97, 98, 256]])
    cache = compiled.segment_cache
    rng = random.Random(1)
    before = rss_mb()
    for _ in range(200):
        batch = [(rng.randbytes(15), tuple(rng.randrange(256, 1 << 20) for _ in range(7)) + (97,)) for _ in range(1000)]
        cache.put_many(batch)
    return {"entries": len(cache), "max_entries": cache.max_entries, "weight": cache.weight,
            "max_weight": cache.max_weight or 0, "rss_growth_mb": rss_mb() - before}


def compiled_chars() -> dict[str, float]:
    """A compiled character-level list of 300,000 rules (distinct two-character tokens and their joins)."""
    from webapp.tokenizer.core.list_order import char_level

    count = 300_000
    before = rss_mb()
    rules = [(chr(0x4E00 + i // 600), chr(0x4E00 + i % 600)) for i in range(count)]
    compiled = char_level.compile_char_merges(rules)
    compiled.tokens("".join(chr(0x4E00 + i) for i in range(600)))
    grown = rss_mb() - before
    return {"rules": count, "rss_growth_mb": grown, "bytes_per_rule": grown * 2**20 / count}


def compiled_rules() -> dict[str, float]:
    """A compiled well-formed list of 300,000 rules (the default LIMIT_RULES)."""
    import numpy as np

    from webapp.tokenizer.core.list_order import byte_level

    count = 300_000
    before = rss_mb()
    left = np.arange(count, dtype=np.int64) % 256
    # rule i joins a byte to the token rule i - 1 made: a chain, well-formed
    rules = np.stack([left, np.arange(count, dtype=np.int64) + 255, np.arange(count, dtype=np.int64) + 256], axis=1)
    rules[0, 1] = 98
    compiled = byte_level.compile_byte_merges(rules.tolist())
    compiled.encode_bytes(bytes(range(256)) * 40, [])  # builds what an encode builds
    grown = rss_mb() - before
    return {"rules": count, "rss_growth_mb": grown, "bytes_per_rule": grown * 2**20 / count}


def opened_tokenizer() -> dict[str, float]:
    """An opened byte-level tokenizer of 300,000 rules as tokenizer_store.LOADED keeps it (parsed, compiled, file vocab).

    Each rule joins its own pair of bytes (short tokens, as in real files).
    """
    from webapp.opened import store as tokenizer_store
    from webapp.tokenizer import formats

    count = 300_000
    merges = [[i % 256, (i // 256) % 256, 256 + i] for i in range(count)]
    before = rss_mb()
    entry = tokenizer_store.make_entry("measure", formats.from_playground(level="bytes", merges=merges))
    entry.compiled.encode_bytes(bytes(range(256)) * 40, [])
    grown = rss_mb() - before
    return {"rules": count, "rss_growth_mb": grown, "bytes_per_rule": grown * 2**20 / count}


def text_caches() -> dict[str, float]:
    """One compiled list's text-segment cache and one scheme's chunk cache, filled past their bounds.

    Chunks of 60 four-byte characters (cl100k cuts at a newline before a
    non-space), none merged: each character is 4 single-byte ids, the most
    ids a character of chunk text can hold; pre-tokens are short random words
    of characters over U+FFFF (4 bytes each) with distinct texts.
    """
    import random

    from webapp.tokenizer.core.list_order import byte_level
    from webapp.tokenizer.pretokenize import textencode

    compiled = byte_level.compile_byte_merges([[97, 98, 256]])
    rng = random.Random(1)
    before = rss_mb()
    for _ in range(12):  # 12 x 4,000 chunks: three times the chunk bound
        lines = ["".join(chr(rng.randrange(0x1F300, 0x1F5FF)) for _ in range(60)) for _ in range(4000)]
        textencode.encode_split(compiled, "\n".join(lines), "cl100k")
    pretokens, chunks = textencode._caches(compiled, "cl100k")
    return {"chunk_entries": len(chunks), "chunk_weight": chunks.weight, "pretoken_entries": len(pretokens),
            "pretoken_weight": pretokens.weight, "rss_growth_mb": rss_mb() - before}


def list_budget() -> dict[str, float]:
    """Many compiled lists' caches filled past a worker-wide budget of 3,000,000 units.

    12 lists, each sent 16,000 chunks of 60 unmerged four-byte characters
    (the worst chunk content, as in `text_caches`) and 200,000 fifteen-byte
    segments of 7 fresh ids (the worst byte segments, as in `segment_cache`): about
    20 M units offered in all. RSS growth over the budget gives the cost per unit.
    """
    import random

    from webapp.tokenizer.core.list_order import byte_level
    from webapp.tokenizer import caches
    from webapp.tokenizer.pretokenize import textencode

    budget = caches.LIST_BUDGET
    budget.limit = 3_000_000
    rng = random.Random(1)
    lists = [byte_level.compile_byte_merges([[97, 98 + n, 256]]) for n in range(12)]
    before = rss_mb()
    peak = 0
    for compiled in lists:
        for _ in range(4):
            lines = ["".join(chr(rng.randrange(0x1F300, 0x1F5FF)) for _ in range(60)) for _ in range(4000)]
            textencode.encode_split(compiled, "\n".join(lines), "cl100k")
            peak = max(peak, budget.total)
        for _ in range(200):
            compiled.segment_cache.put_many([(rng.randbytes(15), tuple(rng.randrange(256, 1 << 20) for _ in range(7)) + (97,))
                                      for _ in range(1000)])
            peak = max(peak, budget.total)
    grown = rss_mb() - before
    total = sum(cache.weight for cache in budget.caches())
    return {"lists": len(lists), "limit": budget.limit, "total": total, "peak_total": peak,
            "rss_growth_mb": grown, "bytes_per_unit": grown * 2**20 / budget.limit}


def printable_text() -> dict[str, float]:
    """The pages' printable-text caches filled to their weight bound with 64-character tokens
    (a whitespace mark and a not-UTF-8 byte in each, so every value is rebuilt text)."""
    from webapp.web.common import viewmodels as vm

    before = rss_mb()
    i = 0
    while vm.PRINTABLE_TEXT.weight < vm.PRINTABLE_TEXT.max_weight - 100:
        vm.printable(" \t" + str(i) + "x" * 60)
        i += 1
    middle = rss_mb()
    j = 0
    while vm.PRINTABLE_BYTES.weight < vm.PRINTABLE_BYTES.max_weight - 100:
        vm.printable_bytes(b"\xff" + str(j).encode() + b"y" * 60)
        j += 1
    return {"text_entries": i, "text_rss_growth_mb": middle - before, "bytes_entries": j,
            "bytes_rss_growth_mb": rss_mb() - middle}


def main() -> None:
    if len(sys.argv) > 1:
        print(json.dumps(globals()[sys.argv[1]]()))
        return
    for name in ("segment_cache", "text_caches", "compiled_rules", "compiled_chars", "opened_tokenizer",
                 "list_budget", "printable_text"):
        run = subprocess.run([sys.executable, __file__, name], capture_output=True, text=True, check=True,
                             env={**os.environ, "PYTHONPATH": ROOT})
        print(name, run.stdout.strip())


if __name__ == "__main__":
    main()
