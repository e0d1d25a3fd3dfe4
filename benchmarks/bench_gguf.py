"""GGUF files: opening one (read the metadata, build the tokenizer) and encoding never-seen text with it,
next to llama.cpp itself on the same file.

Usage (from the repository root, after `make setup` and `make tests/oracles/node_modules/.installed`):

    .venv/bin/python benchmarks/bench_gguf.py [--presets o200k_base,mistral_v3] [--words 4000] [--reps 5]

Each preset is exported with `export_gguf` (before any clock starts) and written to a temporary file.

- open: `import_tokenizer(data, filename="model.gguf")` on the file's bytes (its metadata read by
  formats/gguf.py, then the tokenizer built: formats/gguf_tokenizer.py), best of `--reps`, with the
  metadata read alone beside it; the reference is llama.cpp's own load of the same file's vocabulary
  (node-llama-cpp's `loadModel({vocabOnly: true})`, timed inside node, best of `--reps` processes).
  Target: 1 s or less for a 200,000-token vocabulary.
- encode: texts no cache has seen (words of several scripts, each with a random tag, as
  bench_open_presets.py makes them; 25 texts of `--words` / 25 words) encoded by the opened file
  (`tokenizer_of(tok).encode`, special tokens as text), `--reps` rounds with new texts each round;
  the reference is llama.cpp's tokenize of texts of the same making, timed inside node
  (tests/oracles/llama_tokenize.mjs, `time_rounds`: one warm-up round, then `--reps` rounds; llama.cpp
  keeps no cache between calls). The ids of the timed texts are compared with llama.cpp's.
  Target: 1.5x or less.

Ratios are ours over llama.cpp's, measured in the same run; only they mean anything across machines.
Times are wall time (node's are measured by node); on a shared machine read the ratios of the best times.
Exit status 0 when every id comparison agrees, 1 otherwise.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.oracles.llama_cpp import missing_llama_cpp, tokenize_with_llama_cpp  # noqa: E402
from webapp.tokenizer import import_tokenizer  # noqa: E402
from webapp.tokenizer.formats.gguf import read_metadata  # noqa: E402
from webapp.tokenizer.formats.gguf_export import export_gguf  # noqa: E402
from webapp.tokenizer.presets import catalog  # noqa: E402
from webapp.tokenizer.stages import tokenizer_of  # noqa: E402

WORDS = ("the quick brown fox jumps over lazy dog tiếng việt ngôn ngữ 東京 北京 首都 русский текст "
         "العربية हिन्दी def return class import 12345 3.14 naïve café 👍🏽 straße Ελληνικά 한국어").split()
TEXTS_PER_ROUND = 25


def fresh_texts(rng: random.Random, words: int) -> list[str]:
    """Texts whose pre-tokens no cache has seen: each word gets a random tag."""
    out: list[str] = []
    per_text = max(1, words // TEXTS_PER_ROUND)
    for _ in range(TEXTS_PER_ROUND):
        parts: list[str] = []
        for _ in range(per_text):
            word = rng.choice(WORDS)
            parts.append(word + rng.choice(["", "s", "ed", "ing", "x"]) + str(rng.randrange(10**6)))
            parts.append(rng.choice([" ", " ", " ", "  ", "\n", ", ", ". "]))
        out.append("".join(parts))
    return out


def bench(name: str, words: int, reps: int) -> bool:
    data = export_gguf(catalog.load_preset(name))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"{name}.gguf"
        path.write_bytes(data)
        metadata, opening = [], []
        tok = None
        for _ in range(reps):
            started = time.perf_counter()
            read_metadata(data)
            metadata.append(time.perf_counter() - started)
            started = time.perf_counter()
            tok = import_tokenizer(data, filename="model.gguf")
            opening.append(time.perf_counter() - started)
        assert tok is not None
        stages = tokenizer_of(tok)
        rng = random.Random(name)
        theirs_texts = fresh_texts(rng, words)
        loads = []
        answer = None
        for _ in range(reps):
            answer = tokenize_with_llama_cpp(path, theirs_texts, time_rounds=reps)
            loads.append(answer.load_seconds)
        assert answer is not None
        ours_times: list[float] = []
        agree = True
        for _ in range(reps):
            texts = fresh_texts(rng, words)
            started = time.perf_counter()
            ours = [stages.encode(text, frozenset()) for text in texts]
            ours_times.append(time.perf_counter() - started)
            agree &= ours == tokenize_with_llama_cpp(path, texts).ids
        agree &= [stages.encode(text, frozenset()) for text in theirs_texts] == answer.ids
    tokens = sum(len(ids) for ids in answer.ids)
    print(f"{name}: {len(read_metadata(data).values['tokenizer.ggml.tokens']):,} tokens, "
          f"{len(data) / 1e6:.1f} MB of metadata")
    print(f"  open    ours {min(opening):7.3f} s (metadata read {min(metadata):.3f} s)   "
          f"llama.cpp load {min(loads):7.3f} s   ratio {min(opening) / min(loads):5.2f}   target <= 1 s: "
          f"{'met' if min(opening) <= 1.0 else f'missed by {min(opening) - 1.0:.2f} s'}")
    ratio = min(ours_times) / min(answer.seconds)
    print(f"  encode  ours {min(ours_times):7.3f} s   llama.cpp {min(answer.seconds):7.3f} s   ratio {ratio:5.2f}   "
          f"({TEXTS_PER_ROUND} texts, {words:,} words, ~{tokens:,} tokens a round; target <= 1.5x: "
          f"{'met' if ratio <= 1.5 else 'missed'})   ids {'agree' if agree else 'DIFFER'}", flush=True)
    return agree


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--presets", default="o200k_base,gpt_oss,llama3,mistral_v3")
    parser.add_argument("--words", type=int, default=4000)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    why = missing_llama_cpp()
    if why is not None:
        sys.exit(f"llama.cpp is not available: {why}")
    ok = True
    for name in args.presets.split(","):
        ok &= bench(name, args.words, args.reps)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
