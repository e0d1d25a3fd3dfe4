"""Every benchmark before and after a change, in one run: the same benchmark scripts on both revisions' code.

Usage (from the repository root, after `make setup`):

    .venv/bin/python benchmarks/compare_revisions.py --base REV [--only engine,explain] [--rounds 1]

The base revision is checked out in a temporary git worktree that shares this
checkout's .venv, node_modules and instance/ (the prepared presets and
languages; their files are named by format version, so each revision reads
its own). This checkout's benchmarks/ is copied over the base's, so both
revisions run the same benchmark code (`--own-scripts`: each its own). Each
benchmark runs with the same arguments in the base tree and in this one,
alternating, `--rounds` times; nothing else should run meanwhile.
Printed: each run's output, then one table of every figure of a line that
reads the same in both revisions once its numbers are taken out (a time, a
size, a ratio: each benchmark here also prints its speed as a ratio against a
reference timed in the same process, the figure to compare across runs), with
the change of each. Exits 1 when a benchmark fails in either tree.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The benchmarks, by name: the script and the arguments both trees get (short runs of the README's).
BENCHMARKS: dict[str, list[str]] = {
    "engine": ["bench_engine.py"],
    "typing": ["bench_typing.py", "--keys", "10"],
    "never-seen text": ["bench_real_tokenizers.py", "--reps", "5"],
    "open models": ["bench_open_presets.py", "--reps", "5"],
    "corpus": ["bench_corpus_training.py", "--megabytes", "5", "--merges", "5000"],
    "chat": ["bench_chat_counts.py", "--reps", "9"],
    "explain": ["bench_explain.py", "--presets", "cl100k_base,llama3", "--repeat", "5"],
    "explain never-seen": ["bench_explain.py", "--presets", "cl100k_base", "--fresh", "--repeat", "5"],
    "sentencepiece": ["bench_sentencepiece.py", "--files", "v1,v3", "--reps", "5"],
    "sentencepiece prose": ["bench_sentencepiece.py", "--files", "v1,v3", "--reps", "7", "--prose"],
    "cold start": ["bench_cold_start.py", "--runs", "7"],
    "gguf": ["bench_gguf.py", "--presets", "gemma3,gpt_oss", "--reps", "3"],
    "unreachable": ["bench_unreachable.py", "--preset", "o200k_base", "--preset", "gpt_oss", "--preset", "mistral_v1"],
    "worker memory": ["measure_workers_memory.py"],
}

#: A figure: digits not inside a name (the 100 of cl100k_base, the 3 of llama3).
NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")


def worktree(base: str, same_scripts: bool) -> Path:
    """A detached worktree of `base` beside this checkout's installed parts (links, never copies), with
    this checkout's benchmarks/ when `same_scripts`."""
    where = Path(tempfile.mkdtemp(prefix="bench-base-"))
    shutil.rmtree(where)
    subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(where), base], cwd=ROOT, check=True)
    for shared in (".venv", "node_modules", "instance", "tests/oracles/node_modules"):
        if (ROOT / shared).exists() and not (where / shared).exists():
            (where / shared).symlink_to(ROOT / shared)
    if same_scripts:
        shutil.copytree(ROOT / "benchmarks", where / "benchmarks", dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return where


def run(tree: Path, command: list[str]) -> tuple[int, str]:
    script = tree / "benchmarks" / command[0]
    if not script.exists():
        return 2, f"(no {command[0]} in this revision)\n"
    done = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), str(script), *command[1:]], cwd=tree,
                          capture_output=True, text=True)
    return done.returncode, done.stdout + (done.stderr[-2000:] if done.returncode else "")


def figure_lines(output: str) -> dict[str, list[float]]:
    """{a line with its figures taken out: the figures}, for the lines that print any."""
    found: dict[str, list[float]] = {}
    for line in output.splitlines():
        figures = [float(f.replace(",", "")) for f in NUMBER.findall(line)]
        if figures:
            found.setdefault(" ".join(NUMBER.sub("#", line).split()), figures)
    return found


def median_figures(outputs: list[str]) -> dict[str, list[float]]:
    """Each line's figures, the median of the rounds' (lines every round printed)."""
    rounds = [figure_lines(output) for output in outputs]
    return {line: [statistics.median(values) for values in zip(*(r[line] for r in rounds))]
            for line in rounds[0] if all(line in r and len(r[line]) == len(rounds[0][line]) for r in rounds)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", required=True, help="the revision before the change (a commit, tag or branch)")
    parser.add_argument("--only", default="", help="comma-separated benchmark names (default: all)")
    parser.add_argument("--rounds", type=int, default=1, help="times each benchmark runs in each tree")
    parser.add_argument("--own-scripts", action="store_true", help="each revision runs its own benchmarks/")
    args = parser.parse_args()
    names = [n.strip() for n in args.only.split(",") if n.strip()] or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark {unknown[0]!r}; known: {', '.join(BENCHMARKS)}")
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    base_tree = worktree(args.base, not args.own_scripts)
    failed = False
    rows: list[tuple[str, str, list[float], list[float]]] = []
    try:
        for name in names:
            outputs: dict[str, list[str]] = {"base": [], "head": []}
            for _ in range(args.rounds):
                for side, tree in (("base", base_tree), ("head", ROOT)):
                    code, output = run(tree, BENCHMARKS[name])
                    print(f"--- {name}, {side} ({args.base if side == 'base' else head.strip()}), exit {code}")
                    print(output.rstrip(), flush=True)
                    failed |= code != 0
                    outputs[side].append(output)
            before = median_figures(outputs["base"])
            after = median_figures(outputs["head"])
            rows.extend((name, line, before[line], after[line]) for line in after if line in before)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(base_tree)], cwd=ROOT, check=False)
    print(f"\nThe figures, base {args.base} -> head {head.strip()} (the median of the rounds; a line's # are its "
          "figures in order):")
    for name, line, before, after in rows:
        change = ", ".join(f"{b:g} -> {a:g} ({(a - b) / b:+.0%})" if b else f"{b:g} -> {a:g}"
                           for b, a in zip(before, after) if a != b or b)
        print(f"{name:<14} {line[:70]:<70} {change}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
