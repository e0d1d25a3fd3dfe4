"""Training loop alone: `train_counts` over one corpus's counted pre-tokens, for one or more code trees.

Usage (from the repository root):

    .venv/bin/python benchmarks/bench_training_loop.py --corpus FOLDER [--merges 10000] [--repeat 5]
        [--level bytes] [--tree OTHER_CHECKOUT ...]

The corpus is counted once (GPT-2 pattern, `count_files`, this tree's code)
and the counts pickled to a temporary file. Then, for `--repeat` rounds,
each tree (this repository, then every `--tree`, e.g. an older commit
unpacked with `git archive COMMIT | tar -x -C DIR`) trains on those counts
in a fresh process (`train_counts`, the corpus job's call), alternating
trees within a round. It reports per tree the median and best wall and CPU
time (CPU is less disturbed by other work on a shared machine) and a digest
of the answer (merges, counts, runner-up counts, tokens), which must be the
same for every tree, and the load average before and after.

What it does not do: counting, the API or `tokenizers` (see
bench_corpus_training.py for those), peak memory.
"""

from __future__ import annotations

import argparse
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

RUN = """
import hashlib, json, pickle, sys, time
sys.path.insert(0, ".")
from webapp.tokenizer.training.corpus import train_counts
counts = pickle.load(open(sys.argv[1], "rb"))
wall, cpu = time.perf_counter(), time.process_time()
r = train_counts(counts, sys.argv[2], int(sys.argv[3]))
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
digest = hashlib.sha1(json.dumps([r.merges, r.counts, r.runner_up, r.tokens]).encode()).hexdigest()[:12]
print(wall, cpu, digest)
"""


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True, help="a folder: every file under it is one document")
    parser.add_argument("--merges", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--level", choices=["bytes", "chars"], default="bytes")
    parser.add_argument("--tree", type=Path, action="append", default=[], help="another checkout to time too")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(ROOT))
    from webapp.tokenizer.training.shards import count_files

    files = sorted(p for p in args.corpus.rglob("*") if p.is_file())
    counted = count_files([(str(p), p) for p in files], "gpt2")
    print(f"corpus: {len(files)} files, {counted.bytes:,} bytes, {len(counted.counts):,} distinct pre-tokens; "
          f"{args.merges:,} {args.level}-level merges; load average before: {_load()}")
    trees = [ROOT, *(t.resolve() for t in args.tree)]
    results: dict[Path, list[tuple[float, float, str]]] = {tree: [] for tree in trees}
    with tempfile.TemporaryDirectory() as tmp:
        counts_file = Path(tmp) / "counts.pickle"
        counts_file.write_bytes(pickle.dumps(dict(counted.counts)))
        for _ in range(args.repeat):
            for tree in trees:
                out = subprocess.run([sys.executable, "-c", RUN, str(counts_file), args.level, str(args.merges)],
                                     cwd=tree, capture_output=True, text=True, check=True).stdout.split()
                results[tree].append((float(out[0]), float(out[1]), out[2]))
    for tree, runs in results.items():
        wall, cpu = [r[0] for r in runs], [r[1] for r in runs]
        print(f"{tree}: wall median {statistics.median(wall):.3f} s (best {min(wall):.3f}), "
              f"CPU median {statistics.median(cpu):.3f} s (best {min(cpu):.3f}); answer {sorted({r[2] for r in runs})}")
    print(f"load average after: {_load()}")
    return 0 if len({r[2] for runs in results.values() for r in runs}) == 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
