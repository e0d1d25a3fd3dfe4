"""Inline Counts over every preset by text size: where JOB_COUNTS_WORK comes from (docs/limits.md).

One process, Flask test client, every preset opened first, a new slice of
English text (benchmarks/corpus.py) for each request, best of 2 per size;
prints the time and the cost per character per tokenizer.

    .venv/bin/python benchmarks/bench_counts_sizes.py
"""
import sys, time, tempfile
sys.path.insert(0, "benchmarks"); sys.path.insert(0, ".")  # (run from the repository root)
from corpus import english_text
from tests.conftest import make_app
app = make_app(tempfile.mkdtemp(), RATE_LIMIT_WORK="")
c = app.test_client()
from webapp.web.counts.counting import default_refs
big = english_text(0, 3_000_000)
c.post("/api/counts", json={"text": "warm up all presets"})
off = 0
for n in (10_000, 50_000, 100_000, 200_000):
    best = 1e9
    for _ in range(2):
        text = big[off:off+n]; off += n
        s = time.perf_counter(); r = c.post("/api/counts", json={"text": text}); best = min(best, time.perf_counter() - s)
    assert r.status_code == 200, r.get_json()
    print(n, f"{best*1000:.0f} ms", f"{best/n/len(default_refs())*1e9:.0f} ns/char/tok", flush=True)
