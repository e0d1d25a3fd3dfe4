"""Benchmark text that exists on a fresh machine without downloads.

What it provides:
* English text (code, comments, docstrings): the Python standard library's own
  `*.py` files, found through `sysconfig`, read in sorted name order. Files at
  even positions feed training, files at odd positions the text to encode, so
  the merges are never learned from the very text they encode.
* Non-Latin text: `data/non_latin.txt` (paragraphs in twelve scripts written
  for this repo; never used for training) plus text generated from Unicode
  ranges: per script a fixed lexicon of pseudo-words built from random
  syllables, drawn with Zipf-like frequencies, so common "words" repeat the
  way real ones do.
* `split_words`: a GPT-2-like word split with the standard `re` module (a
  word keeps its leading space), used to turn text into training words.

What it does not do: download anything, or pretend the generated text is a
language. Everything is deterministic (fixed seeds, sorted files), so two runs
on one Python version see the same bytes.
"""

from __future__ import annotations

import random
import re
import sysconfig
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"

# Letters, digits, punctuation runs and whitespace; a word carries its leading space.
WORD_PATTERN = re.compile(r"""'(?:[sdmt]|ll|ve|re)| ?[^\W\d_]+| ?\d+| ?[^\s\w]+|\s+(?!\S)|\s+""")
LETTER_WORDS = re.compile(r"[^\W\d_]+")

# Scripts for generated text: (letters or syllable parts, joiner between words, sentence end).
_RANGES: dict[str, tuple[list[str], str, str]] = {
    "cyrillic": ([chr(c) for c in range(0x0430, 0x0450)], " ", "."),
    "greek": ([chr(c) for c in range(0x03B1, 0x03CA)], " ", "."),
    "arabic": ([chr(c) for c in range(0x0627, 0x063B)] + [chr(c) for c in range(0x0641, 0x064B)], " ", "."),
    "devanagari": (
        [chr(k) + chr(v) for k in range(0x0915, 0x093A) for v in (0x093E, 0x093F, 0x0940, 0x0947, 0x094B)]
        + [chr(k) for k in range(0x0915, 0x093A)],
        " ",
        "\u0964",
    ),
    "hiragana": ([chr(c) for c in range(0x3041, 0x3094)], "", "\u3002"),
    "han": ([chr(c) for c in range(0x4E00, 0x4E00 + 2500, 3)], "", "\u3002"),
    "hangul": ([chr(c) for c in range(0xAC00, 0xD7A4, 7)], " ", "."),
}


def stdlib_files() -> list[Path]:
    """The standard library's top-level modules, sorted by name."""
    return sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))


@lru_cache(maxsize=4)
def english_text(parity: int, n_chars: int) -> str:
    """At least `n_chars` of standard library source, from files at even (0) or odd (1) positions."""
    parts: list[str] = []
    total = 0
    for path in stdlib_files()[parity::2]:
        text = path.read_text(encoding="utf-8", errors="replace")
        parts.append(text)
        total += len(text)
        if total >= n_chars:
            break
    return "".join(parts)


def handwritten_non_latin() -> str:
    """The shipped paragraphs, without their comment header."""
    lines = (DATA / "non_latin.txt").read_text(encoding="utf-8").splitlines()
    return "\n".join(line for line in lines if not line.startswith("#")).strip() + "\n"


def _lexicon(script: str, size: int = 400) -> list[str]:
    """A fixed word list for one script (the same on every run and machine)."""
    letters, _, _ = _RANGES[script]
    rng = random.Random(f"lexicon-{script}")
    syllables = ["".join(rng.choice(letters) for _ in range(rng.randint(1, 2))) for _ in range(60)]
    return ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))) for _ in range(size)]


def generated_non_latin(seed: int, n_chars: int) -> str:
    """Paragraphs of pseudo-words in the scripts above, Zipf-like word frequencies."""
    rng = random.Random(seed)
    lexicons = {script: _lexicon(script) for script in _RANGES}
    weights = [1.0 / (rank + 1) for rank in range(400)]
    paragraphs: list[str] = []
    total = 0
    while total < n_chars:
        script = rng.choice(sorted(_RANGES))
        _, joiner, end = _RANGES[script]
        sentences = []
        for _ in range(rng.randint(2, 5)):
            words = rng.choices(lexicons[script], weights=weights, k=rng.randint(4, 12))
            sentences.append(joiner.join(words) + end)
        paragraph = joiner.join(sentences)
        paragraphs.append(paragraph)
        total += len(paragraph) + 2
    return "\n\n".join(paragraphs) + "\n"


def mixed_text(n_chars: int, english_share: float = 0.75, block: int = 2000) -> str:
    """Exactly `n_chars` of encode-side text: English blocks alternating with non-Latin ones.

    Each block of `block` characters is `english_share` English (from the
    odd-position stdlib files) and the rest non-Latin (the hand-written
    paragraphs first, then generated text with a seed training never uses).
    A longer text starts with the shorter one, so the 20x text extends the 8k text.
    """
    english = english_text(1, int(n_chars * english_share) + block)
    non_latin = handwritten_non_latin() + generated_non_latin(2, n_chars)
    out: list[str] = []
    e = nl = total = 0
    e_len = int(block * english_share)
    nl_len = block - e_len
    while total < n_chars:
        out.append(english[e : e + e_len])
        out.append(non_latin[nl : nl + nl_len])
        e += e_len
        nl += nl_len
        total += block
    return "".join(out)[:n_chars]


def training_text(n_english: int, n_non_latin: int) -> str:
    """Training-side text: even-position stdlib files plus generated non-Latin text (another seed)."""
    return english_text(0, n_english)[:n_english] + generated_non_latin(1, n_non_latin)


def split_words(text: str) -> list[str]:
    """Training words: GPT-2-like pieces (a word keeps its leading space; whitespace runs are pieces)."""
    return WORD_PATTERN.findall(text)


def letter_words(text: str) -> list[str]:
    """Plain words (runs of letters), the kind a person lists when training on words."""
    return LETTER_WORDS.findall(text)
