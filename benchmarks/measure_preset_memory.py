"""Memory of one web worker with every preset open (the OpenAI four and the open models).

    .venv/bin/python benchmarks/measure_preset_memory.py

Builds the app as a worker does, opens every preset through the store
(`preset_entry`, as the pages do) and encodes a short text with each, then
prints the process's RSS and PSS (from /proc/self/smaps_rollup) before and
after, and after each preset. Each of N gunicorn workers keeps its own copy
today (nothing is shared between them yet), so N workers hold about N times
the figure after the first request that opens each preset.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from webapp import create_app  # noqa: E402
from webapp.tokenizer import PRESET_NAMES, set_cache_dir  # noqa: E402
from webapp.tokenizer.presets.real import get_tokenizer  # noqa: E402
from webapp.tokenizers.store import preset_entry  # noqa: E402


def memory() -> tuple[float, float]:
    """(RSS, PSS) in MB."""
    values = {}
    for line in open("/proc/self/smaps_rollup"):
        parts = line.split()
        if parts[0] in ("Rss:", "Pss:"):
            values[parts[0]] = int(parts[1]) / 1024
    return values["Rss:"], values["Pss:"]


def main() -> None:
    create_app({"TESTING": True, "DATABASE_URL": "sqlite://"})
    set_cache_dir(ROOT / "instance" / "presets")
    rss, pss = memory()
    print(f"{'after app start':24} RSS {rss:7.0f} MB  PSS {pss:7.0f} MB")
    for name in PRESET_NAMES:
        preset_entry(name)
        get_tokenizer(name).encode("Hello world, a first text.")
        rss, pss = memory()
        print(f"{'+ ' + name:24} RSS {rss:7.0f} MB  PSS {pss:7.0f} MB")


if __name__ == "__main__":
    main()
