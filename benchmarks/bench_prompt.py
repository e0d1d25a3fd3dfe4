"""Prompt-end benchmark: the prompt answer of a 20,000-character text against its encode answer, while typing.

Usage (from the repository root):

    .venv/bin/python benchmarks/bench_prompt.py [--presets cl100k_base,llama3] [--chars 20000] [--keys 15]

For each preset, a text of `--chars` characters (bench_explain.sample_text: words, numbers,
punctuation, a few non-ASCII letters, fixed seed) is "typed": each of the last `--keys`
keystrokes gives a text one character longer, and each such text is sent, in this one
process with the Flask test client, to

- encode: `POST /api/tokenizers/<id>/encode` (ids and every token's span: what the page asks
  on each keystroke), then
- prompt: `POST /api/tokenizers/<id>/prompt` (ids, stable, witnesses, healing).

The first keystroke warms the caches both use. The medians over the other keystrokes are
printed with their ratio (prompt / encode); the target is at most 1.5.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.bench_explain import sample_text  # noqa: E402


def timed(client: object, url: str, text: str) -> float:
    start = time.perf_counter()
    r = client.post(url, json={"text": text})  # type: ignore[attr-defined]
    took = time.perf_counter() - start
    assert r.status_code == 200, r.get_data(as_text=True)[:200]
    return took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--presets", default="cl100k_base,o200k_base,llama3,qwen3,mistral_v1,gemma3")
    parser.add_argument("--chars", type=int, default=20_000)
    parser.add_argument("--keys", type=int, default=15)
    args = parser.parse_args()
    from tests.conftest import make_app

    app = make_app(Path(tempfile.mkdtemp()))
    app.config["LIMIT_EXPLAIN_BYTES"] = max(app.config.get("LIMIT_EXPLAIN_BYTES", 0), 4 * args.chars)
    client = app.test_client()
    full = sample_text(args.chars + args.keys)
    print(f"text: {args.chars:,} characters and {args.keys} keystrokes")
    for name in args.presets.split(","):
        encode, prompt = [], []
        for key in range(args.keys + 1):
            text = full[:args.chars + key]
            enc = timed(client, f"/api/tokenizers/{name}/encode", text)
            pro = timed(client, f"/api/tokenizers/{name}/prompt", text)
            if key:  # (the first keystroke warms the caches)
                encode.append(enc)
                prompt.append(pro)
        e, p = statistics.median(encode), statistics.median(prompt)
        print(f"{name:14} encode {e * 1000:8.1f} ms   prompt {p * 1000:8.1f} ms   ratio {p / e:5.2f}   "
              f"(worst prompt {max(prompt) * 1000:.1f} ms)")


if __name__ == "__main__":
    main()
