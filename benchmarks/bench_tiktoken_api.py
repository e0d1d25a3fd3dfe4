"""The tiktoken-style API: a batch of short texts against the same texts one by one.

Usage (from the repository root):

    .venv/bin/python benchmarks/bench_tiktoken_api.py [--encoding cl100k_base] [--texts 1000] [--reps 7] [--wall]

Texts: `--texts` short texts per repetition (one line each, 20 to 200
characters: lines of the standard library's source and of
benchmarks/data/non_latin.txt), a different set for every repetition, so
"new text" is new. Nothing is downloaded: tiktoken's encoding is built in
this run from the ranks our preset loads (js-tiktoken's, hash-checked).

What it prints, each a median over the repetitions of a ratio measured in
the same repetition:
1. ours, new text: `encode_batch(texts)` over `[encode(t) for t in texts]`,
   our segment, pre-token and chunk caches emptied before each of the two
   (which goes first alternates);
2. ours, seen text: the same two again, the caches now holding the texts;
3. tiktoken (reference): its `encode_batch` (a thread pool) over its loop;
4. ours over tiktoken, new text: batch over batch, loop over loop, and
   our batch over tiktoken's loop (its faster way for short texts).
Below 1 means the first is faster. The ids of all four are compared.

Times are CPU time of this process (`time.process_time`, all threads:
tiktoken's pool counts in full); `--wall` uses `time.perf_counter`.
Exit status 0 when all ids agree, 1 otherwise.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus  # noqa: E402
import tiktoken  # noqa: E402

from webapp.tokenizer import get_encoding  # noqa: E402
from webapp.tokenizer.presets import openai as presets  # noqa: E402
from webapp.tokenizer.pretokenize.textencode import clear_text_caches  # noqa: E402

CLOCK: Callable[[], float] = time.process_time


def short_lines(count: int) -> list[str]:
    """`count` distinct lines of 20-200 characters: standard library source, then non-Latin text, interleaved."""
    code = [line.strip() for line in corpus.english_text(1, 6_000_000).splitlines()]
    other = [line.strip() for line in corpus.handwritten_non_latin().replace(". ", ".\n").splitlines()]
    seen: set[str] = set()
    out: list[str] = []
    for index, line in enumerate(code):
        if 20 <= len(line) <= 200 and line not in seen:
            seen.add(line)
            out.append(line)
            if index % 10 == 0 and other:  # a non-Latin sentence now and then
                sentence = other.pop(0)
                if 20 <= len(sentence) <= 200 and sentence not in seen:
                    seen.add(sentence)
                    out.append(sentence)
        if len(out) >= count:
            return out[:count]
    raise SystemExit(f"only {len(out)} distinct short lines on this machine; ask for fewer texts")


def timed(work: Callable[[], Any]) -> tuple[float, Any]:
    gc.disable()
    try:
        start = CLOCK()
        result = work()
        return CLOCK() - start, result
    finally:
        gc.enable()


def oracle(name: str, ours: Any) -> Any:
    """tiktoken's Encoding from the very ranks, pattern and special tokens we use."""
    preset_name = {"gpt2": "r50k_base", "p50k_edit": "p50k_base", "o200k_harmony": "o200k_base"}.get(name, name)
    return tiktoken.Encoding(
        name=f"bench-{name}", pat_str=ours._pat_str, mergeable_ranks=presets.load_ranks(preset_name),
        special_tokens=dict(ours._special_tokens),
    )


def main() -> int:
    global CLOCK
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--encoding", default="cl100k_base")
    parser.add_argument("--texts", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--wall", action="store_true", help="wall time instead of CPU time")
    args = parser.parse_args()
    if args.wall:
        CLOCK = time.perf_counter
    enc = get_encoding(args.encoding)
    theirs = oracle(args.encoding, enc)
    compiled = enc._merges()
    pool = short_lines(args.texts * (args.reps + 1))
    batches = [pool[i * args.texts : (i + 1) * args.texts] for i in range(args.reps + 1)]

    def forget() -> None:
        compiled.segment_cache.clear()
        clear_text_caches(compiled)

    ratios: dict[str, list[float]] = {"new": [], "seen": [], "tiktoken": [], "vs_batch": [], "vs_loop": [], "vs_best": []}
    agree = True
    for rep, texts in enumerate(batches):
        forget()
        order = ("batch", "loop") if rep % 2 else ("loop", "batch")
        new: dict[str, tuple[float, Any]] = {}
        for kind in order:
            forget()
            new[kind] = timed(lambda: enc.encode_batch(texts) if kind == "batch" else [enc.encode(t) for t in texts])
        seen_batch = timed(lambda: enc.encode_batch(texts))
        seen_loop = timed(lambda: [enc.encode(t) for t in texts])
        their_loop = timed(lambda: [theirs.encode(t) for t in texts])
        their_batch = timed(lambda: theirs.encode_batch(texts))
        results = [new["batch"][1], new["loop"][1], seen_batch[1], seen_loop[1], their_batch[1]]
        agree = agree and all(result == their_loop[1] for result in results)
        if rep == 0:
            continue  # warm-up: imports, tables, tiktoken's pool
        ratios["new"].append(new["batch"][0] / new["loop"][0])
        ratios["seen"].append(seen_batch[0] / seen_loop[0])
        ratios["tiktoken"].append(their_batch[0] / their_loop[0])
        ratios["vs_batch"].append(new["batch"][0] / their_batch[0])
        ratios["vs_loop"].append(new["loop"][0] / their_loop[0])
        ratios["vs_best"].append(new["batch"][0] / min(their_loop[0], their_batch[0]))
        print(
            f"rep {rep}: ours new batch {new['batch'][0] * 1e3:.1f} ms, loop {new['loop'][0] * 1e3:.1f} ms; "
            f"seen batch {seen_batch[0] * 1e3:.1f} ms, loop {seen_loop[0] * 1e3:.1f} ms; "
            f"tiktoken batch {their_batch[0] * 1e3:.1f} ms, loop {their_loop[0] * 1e3:.1f} ms"
        )
    clock = "wall" if args.wall else "CPU"
    chars = sum(map(len, batches[1])) / args.texts
    print(f"\n{args.encoding}, {args.texts} texts of {chars:.0f} characters on average, "
          f"{args.reps} repetitions, {clock} time, medians (below 1: the first is faster):")
    print(f"  ours, new text:  batch / one by one = {statistics.median(ratios['new']):.2f}")
    print(f"  ours, seen text: batch / one by one = {statistics.median(ratios['seen']):.2f}")
    print(f"  tiktoken:        batch / one by one = {statistics.median(ratios['tiktoken']):.2f}  (reference)")
    print(f"  ours / tiktoken, new text: batch {statistics.median(ratios['vs_batch']):.2f}, "
          f"one by one {statistics.median(ratios['vs_loop']):.2f}; "
          f"our batch / tiktoken's faster way {statistics.median(ratios['vs_best']):.2f}")
    print("ids: all equal to tiktoken's" if agree else "ids: DIFFERENT from tiktoken's")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
