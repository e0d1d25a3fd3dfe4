"""Every vocab entry of every open-model preset, typed alone, against the `tokenizers` library.

    .venv/bin/python scripts/sweep_open_presets.py [NAME ...]

Not part of `make test` (it encodes about a million texts: a few minutes).
For each preset: every entry of the model's vocab is typed as text (a
byte-level token as the text of its bytes, when they are UTF-8; a
character-level token as itself) and encoded by the playground and by
`tokenizers.Tokenizer.from_file(...).encode(text, add_special_tokens=False)`.
Prints, per preset, the entries typed, those skipped (bytes that are not
UTF-8 on their own), the mismatches (the first few shown) and the seconds
spent; exits 1 on any mismatch. The figures are in docs/presets.md.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tokenizers import Tokenizer  # noqa: E402

from webapp.tokenizer import get_tokenizer  # noqa: E402
from webapp.tokenizer.core.alphabet import token_to_bytes  # noqa: E402
from webapp.tokenizer.stages import tokenizer_of  # noqa: E402
from webapp.tokenizer.presets import open_models  # noqa: E402
from webapp.tokenizer.presets.openai import set_cache_dir  # noqa: E402

BATCH = 20_000


def sweep(name: str) -> int:
    preset = open_models.OPEN_MODELS[name]
    library = Tokenizer.from_file(str(preset.file_path()))
    ours = get_tokenizer(name).loaded
    started = time.perf_counter()
    texts: list[str] = []
    skipped = 0
    for token in library.get_vocab(with_added_tokens=False):
        if ours.level == "bytes":
            data = token_to_bytes(token)
            try:
                texts.append(data.decode("utf-8") if data is not None else token)
            except UnicodeDecodeError:
                skipped += 1
        else:
            texts.append(token)
    bad: list[tuple[str, list[int], list[int]]] = []
    for at in range(0, len(texts), BATCH):
        chunk = texts[at : at + BATCH]
        expected = [e.ids for e in library.encode_batch(chunk, add_special_tokens=False)]
        for text, want in zip(chunk, expected):
            got = tokenizer_of(ours).encode(text)
            if got != want:
                bad.append((text, got, want))
    spent = time.perf_counter() - started
    print(f"{name}: {len(texts):,} entries typed alone, {skipped:,} skipped (not UTF-8 alone), "
          f"{len(bad):,} differ ({spent:.0f} s)")
    for text, got, want in bad[:5]:
        print(f"  {text!r}: ours {got}, library {want}")
    return len(bad)


def main(argv: list[str]) -> int:
    set_cache_dir(Path(__file__).resolve().parents[1] / "instance" / "presets")
    names = argv or [p.name for p in open_models.OPEN_MODEL_LIST]
    return 1 if sum(sweep(name) for name in names) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
