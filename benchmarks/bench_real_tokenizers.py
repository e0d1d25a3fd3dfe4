"""Real vocabularies: our encoder against tiktoken built from the same ranks and pattern.

Usage (from the repository root):

    .venv/bin/python benchmarks/bench_real_tokenizers.py [--reps 7] [--stages]

The vocabularies are the presets cl100k_base and o200k_base (js-tiktoken's
rank files, installed by `make setup`; see webapp/tokenizer/presets/openai.py).
tiktoken never downloads anything here: each `tiktoken.Encoding` is built in
this run from the very ranks we load, with the preset's pattern and no
special tokens, and ids are compared on every text timed.

Texts, 20,000 characters each, all from material on any machine with Python
(deterministic; a different slice for every repetition, so no text is seen
twice):
- English: docstrings of the standard library's modules, classes and functions;
- code: the standard library's Python source;
- multilingual: benchmarks/data/non_latin.txt (twelve scripts, written for
  this repo; rotated per repetition) followed by generated text in seven
  scripts (corpus.generated_non_latin, another seed per repetition).

What it prints, as our time / tiktoken's (below 1: we are faster):
1. new text - both tokenizers built, our segment, pre-token and chunk caches emptied
   before every text: only what is part of the compiled tokenizer (its rule
   index, whole-token table and pair hash table) helps. Median over the
   repetitions of the ratio on the same text. With --stages, also the
   median CPU ms of each stage of that encode (textencode.encode_split's
   steps run one by one with a clock between them; their ids are checked
   against tiktoken's too).
2. cold - ours: compile the in-memory merge list (as tiktoken builds from its
   in-memory ranks; each side's input is made before the clock starts) plus
   the first encode, best of 5; and ours from the precompiled
   form (the stored .npz blob, read from memory) plus the first encode;
   tiktoken: `Encoding(...)` plus the first encode.
3. typing - a 50,000-character text (English, code and multilingual blocks)
   encoded once, then one character inserted at 25 positions in turn: our
   time per keystroke (the whole text encoded again, unchanged chunks from
   the chunk cache) next to tiktoken encoding the whole text.
4. reopening - what a new server process does once the preset was opened
   before: read the stored form and the precompiled form from the preset
   cache directory (`presets.load_preset` / `load_compiled`), first encode.

Times are CPU time of this process (`time.process_time`), both sides alike:
on a shared machine wall time mostly measures the neighbours (`--wall`
switches to `time.perf_counter`).

Exit status 0 when every id comparison agrees, 1 otherwise (figures are
reported, not judged: the goals are in docs/performance.md).
"""

from __future__ import annotations

import argparse
import ast
import gc
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from itertools import accumulate, chain, compress
from operator import not_
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus  # noqa: E402
import tiktoken  # noqa: E402

from webapp.tokenizer.core.list_order import byte_level  # noqa: E402
from webapp.tokenizer.presets import openai as presets  # noqa: E402
from webapp.tokenizer import formats as tokfiles  # noqa: E402
from webapp.tokenizer.stages import build_tokenizer, tokenizer_of  # noqa: E402
from webapp.tokenizer.core.list_order.precompiled import loads_precompiled  # noqa: E402
from webapp.tokenizer.pretokenize.patterns import PATTERNS  # noqa: E402
from webapp.tokenizer.pretokenize import chunks, textencode  # noqa: E402
from webapp.tokenizer.pretokenize.textencode import clear_text_caches  # noqa: E402

SIZE = 20_000
TYPING_SIZE = 50_000
COLD_REPEATS = 5
KINDS = ("English", "code", "multilingual")


# --------------------------------------------------------------------------
# Texts


def english_prose(n_chars: int) -> str:
    """Docstrings of the standard library (modules, classes, functions), sorted files, blank-line separated."""
    parts: list[str] = []
    total = 0
    for path in corpus.stdlib_files():
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc and len(doc) > 80:
                    parts.append(doc)
                    total += len(doc) + 2
        if total >= n_chars:
            break
    return "\n\n".join(parts)


def multilingual(rep: int, n_chars: int) -> str:
    """The hand-written paragraphs (rotated by `rep`) and then generated text of seed 100 + rep."""
    paragraphs = [p for p in corpus.handwritten_non_latin().split("\n\n") if p.strip()]
    shift = rep % len(paragraphs)
    head = "\n\n".join(paragraphs[shift:] + paragraphs[:shift])
    return (head + "\n\n" + corpus.generated_non_latin(100 + rep, n_chars))[:n_chars]


def texts_for(kind: str, reps: int) -> list[str]:
    """`reps` + 1 distinct texts of SIZE characters (the first is a warm-up)."""
    count = reps + 1
    if kind == "multilingual":
        return [multilingual(rep, SIZE) for rep in range(count)]
    source = english_prose(SIZE * count) if kind == "English" else corpus.english_text(1, SIZE * count)
    if len(source) < SIZE * count:
        raise SystemExit(f"not enough {kind} text on this machine for {reps} repetitions")
    return [source[i * SIZE : (i + 1) * SIZE] for i in range(count)]


# --------------------------------------------------------------------------
# Timing


CLOCK = time.process_time  # CPU time: the machine is shared, so wall time says more about the neighbours


def timed(work: Callable[[], Any]) -> tuple[float, Any]:
    """(CPU seconds of this process, result) of one call, the garbage collector off."""
    gc.disable()
    try:
        start = CLOCK()
        result = work()
        return CLOCK() - start, result
    finally:
        gc.enable()


class Ours:
    """A preset as the playground holds it: the LoadedTokenizer (file ids) and its compiled list."""

    def __init__(self, tok: tokfiles.LoadedTokenizer, compiled: byte_level.CompiledByteMerges) -> None:
        self.tok = tok
        self.compiled = compiled

    def encode(self, text: str) -> list[int]:
        return tokenizer_of(self.tok, compiled=self.compiled).encode(text)

    def forget_text(self) -> None:
        """Empty every cache that text fills (segments by bytes, pre-tokens by text, chunks)."""
        self.compiled.segment_cache.clear()
        clear_text_caches(self.compiled)


def stage_times(ours: Ours, scheme: str, text: str) -> tuple[dict[str, float], list[int]]:
    """CPU seconds of each stage of one new-text encode, and its ids.

    The stages are those of textencode.encode_split for a text whose chunks
    all miss (see that module), called one by one here with a clock between
    them; the ids are compared with the real encode's by the caller.
    """
    compiled, relabel = ours.compiled, textencode.relabel_for(ours.tok.id_map)
    pretoken_cache, chunk_cache = textencode._caches(compiled, scheme, relabel.key)
    marks: list[tuple[str, float]] = [("start", CLOCK())]

    def mark(name: str) -> None:
        marks.append((name, CLOCK()))

    bounds = chunks.chunk_bounds(text, scheme)
    pieces = [text[a:b] for a, b in zip(bounds, bounds[1:])]
    list(map(chunk_cache.data.get, pieces))  # the lookups a real encode makes (all miss: new text)
    mark("chunk cuts and lookups")
    split = chunks.split_chunks(pieces, scheme)
    pretokens = list(chain.from_iterable(split))
    mark("split (the pattern)")
    values = list(map(textencode._whole_table(compiled, relabel).get, pretokens))
    mark("whole-token lookups")
    misses = list(compress(range(len(values)), map(not_, values)))
    rest = list(dict.fromkeys(map(pretokens.__getitem__, misses)))
    new = list(compress(rest, map(not_, map(pretoken_cache.data.get, rest))))
    mark("finding the misses")
    encoded = textencode._encode_pretokens(compiled, new, relabel)
    mark("BPE of the misses (batch)")
    made = dict(zip(new, encoded))
    pretoken_cache.put_many(list(made.items()))
    for index in misses:
        values[index] = made[pretokens[index]]
    mark("filling them in")
    ids = list(chain.from_iterable(values))  # type: ignore[arg-type]
    mark("joining the ids")
    token_ends = [0, *accumulate(map(len, values))]  # type: ignore[arg-type]
    chunk_ends = list(map(token_ends.__getitem__, accumulate(map(len, split), initial=0)))
    chunk_cache.put_many(list(zip(pieces, map(tuple, map(ids.__getitem__, map(slice, chunk_ends, chunk_ends[1:]))))))
    mark("chunk cache (for typing)")
    times = {name: end - begin for (_, begin), (name, end) in zip(marks, marks[1:])}
    return times, ids


def fresh_compile(merge_list: list[list[int]]) -> byte_level.CompiledByteMerges:
    """Compile an in-memory merge list from scratch (the compiled-list cache emptied first)."""
    byte_level.clear_caches()
    return byte_level.compile_byte_merges(merge_list)


def print_stages(ours: Ours, scheme: str, texts: list[str], theirs: tiktoken.Encoding) -> bool:
    """Median CPU ms of each stage over `texts` (the first warms up); False if an id differs."""
    ok = True
    per_stage: dict[str, list[float]] = {}
    for index, text in enumerate(texts):
        ours.forget_text()
        gc.disable()
        try:
            times, ids = stage_times(ours, scheme, text)
        finally:
            gc.enable()
        if ids != theirs.encode_ordinary(text):
            ok = False
            print("  MISMATCH: the stage-by-stage encode differs from tiktoken's")
        if index:
            for name, seconds in times.items():
                per_stage.setdefault(name, []).append(seconds)
    medians = {name: statistics.median(values) * 1e3 for name, values in per_stage.items()}
    print("      " + "; ".join(f"{name} {ms:.2f}" for name, ms in medians.items()) + f" (sum {sum(medians.values()):.2f} ms)")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=7, help="texts per kind (each new)")
    parser.add_argument("--names", default="cl100k_base,o200k_base")
    parser.add_argument("--wall", action="store_true", help="wall-clock time instead of CPU time")
    parser.add_argument("--stages", action="store_true", help="also where the new-text time goes, stage by stage")
    args = parser.parse_args()
    global CLOCK
    if args.wall:
        CLOCK = time.perf_counter
    ok = True
    print(f"tiktoken {tiktoken.__version__}; {SIZE:,} characters per text, {args.reps} texts per kind")
    for name in args.names.split(","):
        preset = presets.get_preset(name)
        try:
            ranks = presets.load_ranks(name)
        except presets.PresetMissing as exc:
            print(exc.message if hasattr(exc, "message") else str(exc))
            return 1
        cache_dir = Path(tempfile.mkdtemp(prefix="bench-presets-"))
        presets.clear_caches()
        first_open_s, (tok, compiled) = timed(
            lambda: (presets.load_preset(name, cache_dir), presets.load_compiled(name, cache_dir))
        )
        pattern = PATTERNS[preset.scheme]

        def build_theirs() -> tiktoken.Encoding:
            return tiktoken.Encoding(f"bench-{name}", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})

        theirs = build_theirs()
        blob = (cache_dir / presets.compiled_file_name(name)).read_bytes()
        ours = Ours(tok, compiled)
        print()
        print(f"{name}: {len(tok.merges):,} merges, pattern {preset.scheme}; first open (recover the merges "
              f"from the ranks, precompile, store both) {first_open_s:.2f} s, precompiled form {len(blob) / 1e6:.1f} MB")

        # 1. New text.
        print(f"  {'new text':<14} {'ours ms':>9} {'tiktoken ms':>12} {'ratio':>7}")
        for kind in KINDS:
            texts = texts_for(kind, args.reps)
            ratios: list[float] = []
            mine: list[float] = []
            ref: list[float] = []
            for index, text in enumerate(texts):
                ours.forget_text()
                ours_s, ids = timed(lambda: ours.encode(text))
                their_s, expected = timed(lambda: theirs.encode_ordinary(text))
                if ids != expected:
                    ok = False
                    print(f"  MISMATCH: {kind} text {index}: ids differ from tiktoken's")
                if index:  # the first text warms both up
                    ratios.append(ours_s / their_s)
                    mine.append(ours_s)
                    ref.append(their_s)
            print(f"  {kind:<14} {statistics.median(mine) * 1e3:>9.2f} {statistics.median(ref) * 1e3:>12.2f} "
                  f"{statistics.median(ratios):>6.2f}x")
            if args.stages:
                ok = print_stages(ours, preset.scheme, texts, theirs) and ok

        # 2. Cold.
        text = texts_for("English", 1)[1] + texts_for("code", 1)[1]
        text = text[:SIZE]
        expected = theirs.encode_ordinary(text)
        cold_theirs: list[float] = []
        cold_ours: list[float] = []
        cold_pre: list[float] = []
        # The input of each side is in memory before the clock starts: tiktoken's rank dict, our merge list.
        merge_list = [list(rule) for rule in tok.merges]
        for _ in range(COLD_REPEATS):
            del theirs
            gc.collect()
            theirs_s, (theirs, their_ids) = timed(lambda: (t := build_theirs(), t.encode_ordinary(text)))
            gc.collect()
            ours_s, (cold, ids) = timed(lambda: (c := fresh_compile(merge_list), build_tokenizer(tok, compiled=c).encode(text)))
            gc.collect()
            pre_s, (pre, pre_ids) = timed(lambda: (c := loads_precompiled(blob), build_tokenizer(tok, compiled=c).encode(text)))
            if not (ids == pre_ids == their_ids == expected):
                ok = False
                print("  MISMATCH: cold ids differ from tiktoken's")
            cold_theirs.append(theirs_s)
            cold_ours.append(ours_s)
            cold_pre.append(pre_s)
        best_theirs = min(cold_theirs)
        print(f"  cold, {SIZE:,} chars: tiktoken Encoding + encode {best_theirs * 1e3:.0f} ms; "
              f"ours compile + encode {min(cold_ours) * 1e3:.0f} ms = {min(cold_ours) / best_theirs:.2f}x; "
              f"ours from the precompiled blob + encode {min(cold_pre) * 1e3:.0f} ms = {min(cold_pre) / best_theirs:.2f}x "
              f"(best of {COLD_REPEATS})")
        ours = Ours(tok, pre)

        # 3. Typing.
        blocks = [texts_for(kind, 3)[1 + i % 3][:10_000] for i, kind in enumerate(KINDS * 2)]
        long_text = "".join(blocks)[:TYPING_SIZE]
        ours.forget_text()
        ours.encode(long_text)
        whole_theirs_s, _ = timed(lambda: theirs.encode_ordinary(long_text))
        keys: list[float] = []
        for step in range(25):
            at = (step * 1_999) % TYPING_SIZE
            edited = long_text[:at] + "xé,;\n "[step % 6] + long_text[at:]
            key_s, ids = timed(lambda: ours.encode(edited))
            keys.append(key_s)
            if step % 5 == 0 and ids != theirs.encode_ordinary(edited):
                ok = False
                print("  MISMATCH: ids differ from tiktoken's after a keystroke")
            long_text = edited
        print(f"  typing into {TYPING_SIZE:,} chars: per keystroke median {statistics.median(keys) * 1e3:.2f} ms, "
              f"max {max(keys) * 1e3:.2f} ms (25 keystrokes); tiktoken encoding the whole text "
              f"{whole_theirs_s * 1e3:.2f} ms; ratio {statistics.median(keys) / whole_theirs_s:.2f}x")

        # 4. Reopening: a new process's path, from what the first open stored in the cache dir.
        reopen: list[float] = []
        for _ in range(3):
            presets.clear_caches()
            gc.collect()
            reopen_s, ids = timed(
                lambda: build_tokenizer(
                    presets.load_preset(name, cache_dir), compiled=presets.load_compiled(name, cache_dir)
                ).encode("Hello, world!")
            )
            reopen.append(reopen_s)
        if ids != theirs.encode_ordinary("Hello, world!"):
            ok = False
            print("  MISMATCH: ids differ after reopening")
        print(f"  reopening (stored form + precompiled form read from the cache dir, first encode): "
              f"{min(reopen):.2f} s (best of 3); tiktoken Encoding from in-memory ranks {best_theirs:.2f} s")
        shutil.rmtree(cache_dir, ignore_errors=True)
    print()
    print("ids identical to tiktoken's on every text" if ok else "SOME IDS DIFFER")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
