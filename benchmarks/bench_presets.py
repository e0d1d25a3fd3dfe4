"""Preset benchmark: what opening each real tokenizer preset costs, next to tiktoken.

Usage (from the repository root):

    .venv/bin/python benchmarks/bench_presets.py [--presets r50k_base,cl100k_base,o200k_base]

No downloads: the ranks come from the installed js-tiktoken package. Each
preset is measured in a fresh subprocess (so no in-process cache helps), with
a fresh cache folder:

- cold: `tokenizer_store.preset_entry` the first time (rank file rebuilt and
  hash-checked, merges recovered, converted form written, merge list compiled);
- cached: the same in a second fresh process, reading the converted form;
- tiktoken: building `tiktoken.Encoding` from the same checked ranks and
  pattern in that process (the reference: it includes no merge recovery);
- peak memory (ru_maxrss) of the process after loading.

Ratios are our time over tiktoken's measured in the same process.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from webapp import create_app
from webapp.tokenizer import presets
import tiktoken
app = create_app({"TESTING": True, "DATABASE_URL": "sqlite://"})
presets.set_cache_dir(sys.argv[3])
from webapp.opened.store import preset_entry
name = sys.argv[2]
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter(); preset_entry(name); ours = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
p = presets.get_preset(name)
t = time.perf_counter()
ranks = presets.parse_rank_bytes(presets.rank_file_bytes(name))
tiktoken.Encoding(name="bench", pat_str=p.pattern, mergeable_ranks=ranks, special_tokens=dict(p.special_tokens))
theirs = time.perf_counter() - t
print(json.dumps({"ours": ours, "tiktoken": theirs, "mb": (peak - base) / 1024}))
"""


def measure(name: str, cache: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(ROOT), name, cache], check=True, capture_output=True, text=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--presets", default="r50k_base,p50k_base,cl100k_base,o200k_base")
    args = parser.parse_args()
    print(f"{'preset':<12} {'cold':>7} {'cached':>7} {'tiktoken':>9} {'cold/tt':>8} {'cached/tt':>9} {'+MB':>5}")
    for name in args.presets.split(","):
        with tempfile.TemporaryDirectory() as cache:
            cold = measure(name, cache)
            warm = measure(name, cache)
        print(
            f"{name:<12} {cold['ours']:7.2f} {warm['ours']:7.2f} {warm['tiktoken']:9.2f} "
            f"{cold['ours'] / cold['tiktoken']:8.1f} {warm['ours'] / warm['tiktoken']:9.1f} {warm['mb']:5.0f}"
        )


if __name__ == "__main__":
    main()
