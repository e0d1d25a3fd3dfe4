"""Memory of one web worker with every preset open (the OpenAI four and the open models).

    .venv/bin/python benchmarks/measure_preset_memory.py            # one process
    .venv/bin/python benchmarks/measure_preset_memory.py --forked   # a worker forked after the preload

One process: builds the app as a worker does, opens every preset through the
store (`preset_entry`, as the pages do) and encodes a short text with each,
then prints the process's RSS and PSS (from /proc/self/smaps_rollup) before
and after, and after each preset: what a worker holds when it opens every
preset itself (`PRESETS_PRELOAD=0`).

`--forked`: as gunicorn's master does with the preload (gunicorn.conf.py),
opens and warms every prepared preset (`warm_preset`), freezes them out of the
garbage collector and forks one worker, which encodes a text with every
preset through the API three times; then prints the worker's RSS, its private
memory (its own pages and the master's pages it wrote, hence copied) and its
PSS as one of N workers sharing the rest with the master (private + shared /
(N + 1)), which is what each of `measure_workers_memory.py`'s workers shows.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from webapp import create_app  # noqa: E402
from webapp.tokenizer import PRESET_NAMES, set_cache_dir  # noqa: E402
from webapp.tokenizer.api import get_tokenizer  # noqa: E402
from webapp.opened.store import preset_entry, warm_preset  # noqa: E402

TEXT = "Hello world! Tiếng Việt 東京 👍🏽 def f(x): return x  " * 40


def memory(pid: str = "self") -> dict[str, float]:
    """Rss, Pss, Private_Clean and Private_Dirty in MB."""
    values = {}
    for line in open(f"/proc/{pid}/smaps_rollup"):
        parts = line.split()
        if len(parts) >= 2 and parts[1].isdigit():
            values[parts[0].rstrip(":")] = int(parts[1]) / 1024
    return values


def one_process() -> None:
    create_app({"TESTING": True, "DATABASE_URL": "sqlite://"})
    set_cache_dir(ROOT / "instance" / "presets")
    found = memory()
    print(f"{'after app start':24} RSS {found['Rss']:7.0f} MB  PSS {found['Pss']:7.0f} MB")
    for name in PRESET_NAMES:
        preset_entry(name)
        get_tokenizer(name).encode("Hello world, a first text.")
        found = memory()
        print(f"{'+ ' + name:24} RSS {found['Rss']:7.0f} MB  PSS {found['Pss']:7.0f} MB")


def forked(workers: int) -> None:
    app = create_app({"TESTING": True, "DATABASE_URL": "sqlite://"})
    set_cache_dir(ROOT / "instance" / "presets")
    for name in PRESET_NAMES:
        warm_preset(name)
    client = app.test_client()
    gc.collect()
    gc.freeze()
    master = memory()
    print(f"master after the preload: RSS {master['Rss']:.0f} MB")
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        status = 0
        try:
            for round_ in range(3):
                for name in PRESET_NAMES:
                    answer = client.post(f"/api/tokenizers/{name}/encode", json={"text": TEXT + str(round_)})
                    assert answer.status_code == 200, answer.data[:200]
            gc.collect()
            found = memory()
            private = found["Private_Clean"] + found["Private_Dirty"]
            share = private + (found["Rss"] - private) / (workers + 1)
            print(f"worker: RSS {found['Rss']:.0f} MB  private {private:.0f} MB  "
                  f"PSS as one of {workers} workers {share:.0f} MB", flush=True)
        except BaseException as exc:  # (the parent reports the exit status)
            print(f"worker failed: {exc!r}", flush=True)
            status = 1
        os._exit(status)
    _, status = os.waitpid(pid, 0)
    if status:
        raise SystemExit("the forked worker failed")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--forked", action="store_true", help="a worker forked after the master's preload")
    parser.add_argument("--workers", type=int, default=4, help="with --forked: workers sharing the master's pages")
    args = parser.parse_args()
    if args.forked:
        forked(args.workers)
    else:
        one_process()


if __name__ == "__main__":
    main()
