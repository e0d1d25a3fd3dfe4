"""Explain benchmark: explaining a 10,000-character text against encoding it, in one run.

Usage (from the repository root):

    .venv/bin/python benchmarks/bench_explain.py [--presets cl100k_base,llama3] [--chars 10000] [--repeat 5]

For each preset, the same 10,000-character text (generated from a fixed seed:
words, numbers, punctuation, a few non-ASCII letters) is encoded and
explained through the API the pages use, with the Flask test client, in this
one process:

- encode: `POST /api/tokenizers/<id>/encode` (ids and every token's span);
- explain: `POST /api/tokenizers/<id>/explain` (ids, tokens, every boundary).

Each is run once to warm the caches both use (the loaded preset, its pieces),
then `--repeat` times; the best time of each is printed with their ratio
(explain / encode). The target is a ratio of at most 3.

`--fresh`: never-seen text instead. Each of `--repeat` rounds makes two new texts of the same
kind, every word with a random three-letter tag so that no piece is in any cache, encodes one and
explains the other (each text is asked once, so neither warms the other's pieces); printed: the
median time of each and the median of the rounds' ratios (explain / encode). The preset is warmed
once first on a text of its own.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WORDS = ("the lowest of numbers runs naïve café über quickly jumped tokenizer boundary merge rule "
         "pre-token special (value) [index] {key}: 'quoted' \"double\" it's we'll").split()


def sample_text(chars: int, seed: int = 29, tagged: bool = False) -> str:
    """Words, numbers and punctuation from a fixed seed; `tagged`: each word with a random tag (never seen)."""
    rng = random.Random(seed)
    parts: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(WORDS) if rng.random() < 0.85 else str(rng.randrange(10**7))
        if tagged:
            word += "".join(rng.choice("bcdfghjkmnpqrstvwxz") for _ in range(3))
        parts.append(word)
        size += len(word) + 1
    return " ".join(parts)[:chars]


def best(call, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()  # (the garbage of the call before is not charged to this one)
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--presets", default="cl100k_base,o200k_base,llama3,gemma3")
    parser.add_argument("--chars", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--fresh", action="store_true", help="never-seen text each round (see the docstring)")
    args = parser.parse_args()
    import tempfile

    from tests.conftest import make_app

    app = make_app(Path(tempfile.mkdtemp()))
    client = app.test_client()
    text = sample_text(args.chars)
    print(f"text: {len(text):,} characters, {len(text.encode()):,} bytes" + (", never seen (--fresh)" if args.fresh else ""))
    if args.fresh:
        for name in args.presets.split(","):
            fresh_rounds(client, name, args.chars, args.repeat)
        return
    for name in args.presets.split(","):
        body = {"text": text}

        def encode() -> None:
            r = client.post(f"/api/tokenizers/{name}/encode", json=body)
            assert r.status_code == 200, r.get_data(as_text=True)[:200]

        def explain() -> None:
            r = client.post(f"/api/tokenizers/{name}/explain", json=body)
            assert r.status_code == 200, r.get_data(as_text=True)[:200]

        encode(), explain()  # (warm: the preset loaded, its caches filled)
        enc, exp = best(encode, args.repeat), best(explain, args.repeat)
        print(f"{name:14} encode {enc * 1000:8.1f} ms   explain {exp * 1000:8.1f} ms   ratio {exp / enc:5.2f}")


def fresh_rounds(client, name: str, chars: int, repeat: int) -> None:
    """Median encode and explain times on never-seen texts, and the median of the rounds' ratios."""
    def timed(route: str, text: str) -> float:
        gc.collect()  # (an explain leaves about 1.7 MB of answer behind: its collection is not the next call's)
        start = time.perf_counter()
        r = client.post(f"/api/tokenizers/{name}/{route}", json={"text": text})
        elapsed = time.perf_counter() - start
        assert r.status_code == 200, r.get_data(as_text=True)[:200]
        return elapsed

    timed("explain", sample_text(chars, seed=1, tagged=True))  # (warm: the preset loaded)
    encodes, explains = [], []
    for round_ in range(repeat):
        encodes.append(timed("encode", sample_text(chars, seed=100 + 2 * round_, tagged=True)))
        explains.append(timed("explain", sample_text(chars, seed=101 + 2 * round_, tagged=True)))
    ratio = statistics.median(b / a for a, b in zip(encodes, explains))
    print(f"{name:14} encode {statistics.median(encodes) * 1000:8.1f} ms   "
          f"explain {statistics.median(explains) * 1000:8.1f} ms   ratio {ratio:5.2f} (median of {repeat})")


if __name__ == "__main__":
    main()
