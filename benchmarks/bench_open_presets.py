"""Open-model presets: opening one in a fresh process, and encoding never-seen text, next to `tokenizers`.

Usage (from the repository root, after `make setup` prepared the presets):

    .venv/bin/python benchmarks/bench_open_presets.py [--presets gemma3,llama3] [--words 20000] [--reps 5]

- open: a fresh subprocess imports the package, opens the preset from
  instance/presets (its precompiled form) and encodes one short text; the
  wall time of that (import included, then without it) and the process's peak
  memory (VmHWM: ru_maxrss would carry the parent's over exec);
- encode: texts no cache has seen (words of several scripts with a random
  tag each, so every pre-token is new) encoded once by the playground
  (`tokenizer_of(tok).encode`) and once by `tokenizers.Tokenizer.encode_batch` of one
  text at a time (`encode`; for mistral_tekken: tiktoken over the Tekken
  file's ranks and pattern, which is what mistral-common's Tekkenizer runs);
  both in this process, `--reps` rounds (each with new text, ours then
  theirs seconds apart): the best time of each, and the median of the
  rounds' ratios (ours over the library's).
- first / lib first: the first encode of 2,000 never-seen words right after
  opening (and one short encode), in a fresh process: ours, and the
  library's after `Tokenizer.from_file` (for mistral_tekken: tiktoken's
  after building its Encoding from the file); `--reps` pairs of fresh
  processes, the median of each and the median of the pairs' ratios.

The default is every open model whose reference runs here: the tokenizer.json
presets and mistral_tekken. The SentencePiece presets (mistral_v1, mistral_v3)
have their own benchmark against the `sentencepiece` library
(benchmarks/bench_sentencepiece.py); naming one in `--presets` is refused.

Ratios are measured in the same run; only they mean anything across machines.
On a shared machine read the medians of the ratios, not single times.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tokenizers import Tokenizer  # noqa: E402

from webapp.tokenizer import get_tokenizer, set_cache_dir  # noqa: E402
from webapp.tokenizer.stages import tokenizer_of  # noqa: E402
from webapp.tokenizer.presets import open_models  # noqa: E402

LIBRARY_CHILD = r"""
import json, sys, time
from tokenizers import Tokenizer
tok = Tokenizer.from_file(sys.argv[1])
tok.encode("Hello world, this is the first text after opening.", add_special_tokens=False)
first = time.perf_counter()
tok.encode(sys.argv[2], add_special_tokens=False)
print(json.dumps({"first": time.perf_counter() - first}))
"""

TEKKEN_CHILD = r"""
import base64, json, sys, time
sys.path.insert(0, sys.argv[1])
import tiktoken
from webapp.tokenizer.presets import open_models
data = json.loads(open_models.file_bytes("mistral_tekken"))
special = data["config"]["default_num_special_tokens"]
inner = data["config"]["default_vocab_size"] - special
ranks = {base64.b64decode(x["token_bytes"]): x["rank"] for x in data["vocab"][:inner]}
enc = tiktoken.Encoding(name="tekken", pat_str=data["config"]["pattern"], mergeable_ranks=ranks, special_tokens={})
[i + special for i in enc.encode("Hello world, this is the first text after opening.")]
first = time.perf_counter()
[i + special for i in enc.encode(sys.argv[2])]
print(json.dumps({"first": time.perf_counter() - first}))
"""

CHILD = r"""
import json, sys, time
started = time.perf_counter()
sys.path.insert(0, sys.argv[1])
from webapp.tokenizer import get_tokenizer, set_cache_dir
imported = time.perf_counter()
set_cache_dir(sys.argv[2])
ids = get_tokenizer(sys.argv[3]).encode("Hello world, this is the first text after opening.")
done = time.perf_counter()
text = sys.argv[4]
first = time.perf_counter()
get_tokenizer(sys.argv[3]).encode(text)
first = time.perf_counter() - first
hwm = [line for line in open("/proc/self/status") if line.startswith("VmHWM:")][0]
print(json.dumps({"with_import": done - started, "open_encode": done - imported, "first": first,
                  "peak_mb": int(hwm.split()[1]) / 1024}))
"""

WORDS = ("the quick brown fox jumps over lazy dog tiếng việt ngôn ngữ 東京 北京 首都 русский текст "
         "العربية हिन्दी def return class import 12345 3.14 naïve café 👍🏽 straße").split()


def fresh_text(rng: random.Random, words: int) -> str:
    """Text whose pre-tokens no cache has seen: each word gets a random tag."""
    out = []
    for _ in range(words):
        word = rng.choice(WORDS)
        out.append(word + rng.choice(["", "s", "ed", "ing", "x"]) + str(rng.randrange(10**6)))
        out.append(rng.choice([" ", " ", " ", "  ", "\n", ", ", ". "]))
    return "".join(out)


def time_encode(name: str, library: Any, words: int, reps: int) -> tuple[float, float, float]:
    """(our best time, the library's best time, the median of the rounds' ratios)."""
    loaded = get_tokenizer(name).loaded
    rng = random.Random(name)
    ours_times: list[float] = []
    theirs_times: list[float] = []
    for _ in range(reps):
        text_a, text_b = fresh_text(rng, words), fresh_text(rng, words)
        started = time.perf_counter()
        ours = tokenizer_of(loaded).encode(text_a)
        ours_times.append(time.perf_counter() - started)
        started = time.perf_counter()
        theirs = library.encode(text_b, add_special_tokens=False).ids
        theirs_times.append(time.perf_counter() - started)
        assert ours == library.encode(text_a, add_special_tokens=False).ids and theirs
    ratio = statistics.median(a / b for a, b in zip(ours_times, theirs_times))
    return min(ours_times), min(theirs_times), ratio


def _child(args: list[str]) -> dict[str, float]:
    found: dict[str, float] = json.loads(subprocess.run([sys.executable, "-c", *args], capture_output=True,
                                                        text=True, check=True).stdout)
    return found


def tekken_oracle() -> Any:
    """What mistral-common's Tekkenizer.encode(text, bos=False, eos=False) runs: tiktoken over the
    file's ranks and pattern (mistral-common itself asks for an older numpy than the app pins)."""
    import tiktoken

    data = json.loads(open_models.file_bytes("mistral_tekken"))
    special = data["config"]["default_num_special_tokens"]
    inner = data["config"]["default_vocab_size"] - special
    ranks = {base64.b64decode(x["token_bytes"]): x["rank"] for x in data["vocab"][:inner]}
    enc = tiktoken.Encoding(name="tekken", pat_str=data["config"]["pattern"], mergeable_ranks=ranks, special_tokens={})
    return _Shifted(enc, special)


class _Shifted:
    def __init__(self, enc: Any, special: int) -> None:
        self.enc, self.special = enc, special

    def encode(self, text: str, add_special_tokens: bool = False) -> Any:
        return _Ids([i + self.special for i in self.enc.encode(text)])


class _Ids:
    def __init__(self, ids: list[int]) -> None:
        self.ids = ids


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--presets", default=",".join(p.name for p in open_models.OPEN_MODEL_LIST
                                                      if p.kind in ("tokenizer.json", "tekken")))
    parser.add_argument("--words", type=int, default=20_000)
    parser.add_argument("--reps", type=int, default=5, help="rounds of encoding, and pairs of fresh processes")
    args = parser.parse_args()
    cache = ROOT / "instance" / "presets"
    set_cache_dir(cache)
    print(f"{'preset':14} {'open+encode':>11} {'w/ import':>9} {'peak MB':>8} {'first':>7} {'lib first':>9} "
          f"{'ratio':>6} {'ours s':>8} {'library s':>9} {'ratio':>6}")
    sample = fresh_text(random.Random("first"), 2000)
    for name in args.presets.split(","):
        preset = open_models.OPEN_MODELS[name]
        if preset.kind not in ("tokenizer.json", "tekken"):
            parser.error(f"--presets: {name} is a {preset.kind} preset; benchmarks/bench_sentencepiece.py times it")
        opened: list[dict[str, float]] = []
        libs: list[float] = []
        for _ in range(args.reps):
            opened.append(_child([CHILD, str(ROOT), str(cache), name, sample]))
            if preset.kind == "tekken":
                libs.append(_child([TEKKEN_CHILD, str(ROOT), sample])["first"])
            else:
                libs.append(_child([LIBRARY_CHILD, str(preset.file_path()), sample])["first"])
        median = {key: statistics.median(o[key] for o in opened) for key in opened[0]}
        first_ratio = statistics.median(o["first"] / lib for o, lib in zip(opened, libs))
        if preset.kind == "tekken":
            library: Any = tekken_oracle()
        else:
            library = Tokenizer.from_file(str(preset.file_path()))
        ours, theirs, ratio = time_encode(name, library, args.words, args.reps)
        print(f"{name:14} {median['open_encode']:11.2f} {median['with_import']:9.2f} {median['peak_mb']:8.0f} "
              f"{median['first']:7.3f} {statistics.median(libs):9.3f} {first_ratio:6.1f} "
              f"{ours:8.3f} {theirs:9.3f} {ratio:6.1f}", flush=True)


if __name__ == "__main__":
    main()
