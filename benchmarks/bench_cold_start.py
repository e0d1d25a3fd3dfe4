"""Cold start: a fresh Python process that imports, loads a tokenizer from its cache and encodes once.

Usage (from the repository root):

    .venv/bin/python benchmarks/bench_cold_start.py [--runs 7] [--cache DIR]

Two pairs, each side in its own fresh process, the import included:

- `from webapp.tokenizer import get_encoding; get_encoding("o200k_base").encode(TEXT)`
  next to `import tiktoken; tiktoken.get_encoding("o200k_base").encode(TEXT)`, tiktoken
  reading its own cache file (TIKTOKEN_CACHE_DIR, filled here with the checked rank file
  under the name tiktoken gives it, so nothing is downloaded);
- `from webapp.tokenizer import get_tokenizer; get_tokenizer("gemma3").encode(TEXT)` next to
  `from tokenizers import Tokenizer; Tokenizer.from_file(<gemma3's tokenizer.json>).encode(TEXT)`.

The playground reads the preset cache that PLAYGROUND_PRESET_CACHE names (`--cache`; default:
a temporary folder, so the figures never depend on what another checkout left there). One
warm-up run of every command first fills both caches (and writes the .pyc files); then
`--runs` rounds, the two sides of a pair one after the other in alternating order. Printed:
the median wall time of each side (time.perf_counter around subprocess.run), the median CPU
time (user + system of the child, from resource.getrusage), and the median of the rounds'
ratios, ours over theirs (below 1.0: ours is faster). On a shared machine the CPU ratio is
the steadier one.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TEXT = "Hello world! The café's naïve façade, 東京タワー, Привет 👍 x = f(42) + 3.14;  done."
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
GEMMA3_JSON = ROOT / "node_modules" / "@lenml" / "tokenizer-gemma3" / "models" / "tokenizer.json"

COMMANDS = {
    "ours o200k": "from webapp.tokenizer import get_encoding; get_encoding('o200k_base').encode(TEXT)",
    "tiktoken o200k": "import tiktoken; tiktoken.get_encoding('o200k_base').encode(TEXT)",
    "ours gemma3": "from webapp.tokenizer import get_tokenizer; get_tokenizer('gemma3').encode(TEXT)",
    "tokenizers gemma3": (f"from tokenizers import Tokenizer; Tokenizer.from_file({str(GEMMA3_JSON)!r})"
                          ".encode(TEXT, add_special_tokens=False)"),
}
PAIRS = (("ours o200k", "tiktoken o200k"), ("ours gemma3", "tokenizers gemma3"))


def fill_tiktoken_cache(folder: Path) -> None:
    """tiktoken's cache file for o200k_base: the checked rank file, named as tiktoken names it (sha1 of its URL)."""
    from webapp.tokenizer.presets.openai import rank_file_bytes

    (folder / hashlib.sha1(O200K_URL.encode()).hexdigest()).write_bytes(rank_file_bytes("o200k_base"))


def run(name: str, env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, child CPU seconds) of one fresh process running the command `name`."""
    code = f"TEXT = {TEXT!r}\n{COMMANDS[name]}"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--cache", help="the playground's preset cache folder (default: a new temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tiktoken_dir = Path(tmp) / "tiktoken"
        tiktoken_dir.mkdir()
        fill_tiktoken_cache(tiktoken_dir)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(TIKTOKEN_CACHE_DIR=str(tiktoken_dir), PLAYGROUND_PRESET_CACHE=args.cache or str(Path(tmp) / "presets"),
                   PYTHONPATH=str(ROOT))
        for name in COMMANDS:  # warm-up: fills the caches (the first "ours" converts: seconds)
            run(name, env)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in COMMANDS}
        for round_index in range(args.runs):
            for pair in PAIRS:
                for name in (pair if round_index % 2 == 0 else pair[::-1]):
                    times[name].append(run(name, env))
    print(f"{args.runs} rounds, fresh processes, import included; text of {len(TEXT)} characters")
    print(f"{'':<20} {'wall (median)':>14} {'CPU (median)':>13}")
    for name, got in times.items():
        print(f"{name:<20} {statistics.median(w for w, _ in got):13.3f}s {statistics.median(c for _, c in got):12.3f}s")
    for ours, theirs in PAIRS:
        wall = statistics.median(a[0] / b[0] for a, b in zip(times[ours], times[theirs]))
        cpu = statistics.median(a[1] / b[1] for a, b in zip(times[ours], times[theirs]))
        print(f"{ours} / {theirs}: wall {wall:.2f}x, CPU {cpu:.2f}x (median of the rounds' ratios)")


if __name__ == "__main__":
    main()
