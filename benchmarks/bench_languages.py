"""The time to count all 532 languages (each declaration and English over the same articles) per preset.

    .venv/bin/python benchmarks/bench_languages.py [--only NAME ...]

For each preset of the catalog: our count (webapp.tokenizer's count_languages
with the preset's encode_ordinary, what the set-up step stores), cold (the
preset loaded from instance/presets, every cache empty) and then warm, and in
the same run the peer's time over the same texts as the reference: tiktoken
built from the same ranks (OpenAI presets) or `tokenizers` loading the same
tokenizer.json (open models with one). Prints seconds and ours / peer (below
1: we are faster), and checks the counts are the peer's. Exits non-zero when
a preset with a vocabulary of 200k or more takes over 60 s.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from webapp.tokenizer import PRESET_NAMES, get_encoding, set_cache_dir  # noqa: E402
from webapp.tokenizer.presets.openai import load_ranks  # noqa: E402
from webapp.tokenizer.chat.templates import preset_config_path  # noqa: E402
from webapp.tokenizer.languages import declarations as decl  # noqa: E402
from webapp.tokenizer.languages.counting import count_languages  # noqa: E402
from webapp.tokenizer.presets import catalog as presets  # noqa: E402
from webapp.tokenizer.pretokenize.patterns import PATTERNS  # noqa: E402

TARGET_SECONDS = 60.0


def peer(name: str):  # type: ignore[no-untyped-def]
    """A function texts -> counts by the peer library, or None."""
    preset = presets.get_preset(name)
    if not presets.is_open_model(name):
        import tiktoken
        enc = tiktoken.Encoding("ref", pat_str=PATTERNS[preset.scheme], mergeable_ranks=load_ranks(name),  # type: ignore[union-attr]
                                special_tokens={})
        return lambda texts: [len(ids) for ids in enc.encode_ordinary_batch(texts, num_threads=1)]
    path = preset_config_path(name)
    if path is None or not (path.parent / "tokenizer.json").is_file():
        return None
    import tokenizers
    lib = tokenizers.Tokenizer.from_file(str(path.parent / "tokenizer.json"))
    return lambda texts: [len(e.ids) for e in lib.encode_batch(texts, add_special_tokens=False)]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", nargs="+")
    args = parser.parse_args()
    set_cache_dir(ROOT / "instance" / "presets")
    declarations = decl.load_all()
    print(f"{len(declarations)} declarations; preset, vocab, ours cold s, ours warm s, peer s, ours/peer (warm)")
    failed = False
    for name in args.only or PRESET_NAMES:
        if not presets.is_installed(name):
            print(f"{name}: not installed")
            continue
        presets.clear_caches()
        started = time.perf_counter()
        encoding = get_encoding(name)
        def ours(texts: list[str]) -> list[int]:
            return [len(ids) for ids in encoding.encode_ordinary_batch(texts)]
        rows = count_languages(declarations, ours)
        cold = time.perf_counter() - started
        started = time.perf_counter()
        count_languages(declarations, ours)
        warm = time.perf_counter() - started
        reference = peer(name)
        line = f"{name}: vocab {encoding.n_vocab:,}, cold {cold:.2f} s, warm {warm:.2f} s"
        if reference is not None:
            started = time.perf_counter()
            theirs = count_languages(declarations, reference)
            peer_s = time.perf_counter() - started
            same = [r["tokens"] for r in rows] == [r["tokens"] for r in theirs]
            line += f", peer {peer_s:.2f} s, ours/peer {warm / peer_s:.2f}, counts {'equal' if same else 'DIFFER'}"
            failed |= not same
        if encoding.n_vocab >= 200_000 and cold > TARGET_SECONDS:
            line += f"  OVER the {TARGET_SECONDS:.0f} s target"
            failed = True
        print(line, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
