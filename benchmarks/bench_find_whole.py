"""How long `LibraryModel.find_whole` takes for each open-model preset, beside the one-by-one loop it replaced.

For each preset (read back from instance/presets, so `make setup-test` first): the model's
`find_whole()` (short tokens merged in batches), then the reference measured in the same
process: every token's text merged alone (`_merged_uncached`, the one-by-one loop), and a
check that both mark the same tokens. Prints both times and their ratio.

    .venv/bin/python benchmarks/bench_find_whole.py [--presets gemma3,qwen3,...]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from webapp.tokenizer.models.library import LibraryModel  # noqa: E402
from webapp.tokenizer.presets import catalog  # noqa: E402
from webapp.tokenizer.stages.models import library_model  # noqa: E402

PRESETS = "gemma3,qwen3,llama3,llama2,mistral_v1,mistral_v3"


def one_by_one(model: LibraryModel) -> bytes:
    """The reference: each token's text merged alone, marked when it gives that token back."""
    flags = bytearray(max(model.vocab.values(), default=-1) + 1)
    saved, model.whole = model.whole, None
    try:
        for token, token_id in model.vocab.items():
            if token and model._merged_uncached(token) == (token_id,):
                flags[token_id] = 1
    finally:
        model.whole = saved
    return bytes(flags)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", default=PRESETS)
    args = parser.parse_args()
    print(f"{'preset':<12} {'tokens':>8} {'find_whole':>11} {'one by one':>11} {'ratio':>6}")
    for name in args.presets.split(","):
        model = library_model(catalog.load_preset(name))
        model.cut.char_table()  # (built before either clock: both read it)
        started = time.perf_counter()
        batched = model.find_whole()
        middle = time.perf_counter()
        reference = one_by_one(model)
        ended = time.perf_counter()
        if batched != reference:
            print(f"{name}: find_whole marks other tokens than the one-by-one loop", file=sys.stderr)
            return 1
        print(f"{name:<12} {len(model.vocab):>8,} {middle - started:>10.2f}s {ended - middle:>10.2f}s "
              f"{(middle - started) / (ended - middle):>5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
