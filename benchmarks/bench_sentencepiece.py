"""SentencePiece .model files: opening one, and encoding never-seen text, next to `sentencepiece` itself.

Usage (from the repository root, after `make setup` downloaded mistral-common's wheel):

    .venv/bin/python benchmarks/bench_sentencepiece.py [--files v1,v3] [--words 20000] [--reps 5] [--tags letters|hex]

- open: the file's bytes read from the wheel, then `import_tokenizer` (parse with
  sentencepiece_model_pb2, rules by score, pipeline, and the model that encodes:
  the rules as ids, the edge and character tables) in this process, beside
  `SentencePieceProcessor(model_proto=...)`, which also builds its tables when it
  loads: the best of `--reps` of each; the target is ours under 1 s;
- encode: texts no cache has seen (words of several scripts, each with a random
  tag, so every word is new to the piece cache; by default the tag is three
  letters, so that every word is a new piece to merge; `--tags hex` makes it hex
  digits, which the Mistral files split off as one-digit pieces, so that much
  of such text is one-character pieces and the words before them repeat) encoded once by the playground
  (`tokenizer_of(tok).encode`, a fresh tokenizer opened for the round so its caches are
  empty) and once by `SentencePieceProcessor.encode`, `--reps` rounds with new
  text: the best time of each and the median of the rounds' ratios (ours over
  sentencepiece's); the target is a ratio of at most 1.5. The ids are checked
  equal in every round;
- read back (last column, no target): the same round's text encoded by a copy of
  the tokenizer read back from its stored form (`loads_stored`, what the web app
  does when its cache of opened tokenizers lost one), whose first encode also
  builds the model from the string merges: the median ratio of that encode over
  sentencepiece's.

`--prose`: the encode column is instead the Python API on prose. Each round takes a new
8,000-character slice of English and mixed-script prose (benchmarks/corpus.py's `mixed_text`, the
round's own stretch of it) with a fresh tagged word after every tenth word, and encodes it with the
preset's handle (`get_tokenizer("mistral_v1").encode`, as a script would, its caches kept between
rounds: no round's words were seen before) and with `SentencePieceProcessor.encode`; the ids are
checked equal; printed: the best time of each and the median of the rounds' ratios (target: at most
1.5x). `--texts-first` makes every round's slice before the first timed encode (by default each is made
just before its round, as a script would make its text: the work of making it leaves our encode's code
colder than sentencepiece's; docs/performance.md has both figures).

Ratios are measured in the same run; only they mean anything across machines.
"""

from __future__ import annotations

import argparse
import random
import statistics
import string
import sys
import time
import zipfile
from typing import Any
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sentencepiece as spm  # noqa: E402

from webapp.tokenizer import import_tokenizer  # noqa: E402
from webapp.tokenizer.formats.stored import dumps_stored, loads_stored  # noqa: E402
from webapp.tokenizer.stages import tokenizer_of  # noqa: E402
from webapp.tokenizer.presets.open_models import pypi_dir  # noqa: E402

FILES = {"v1": "tokenizer.model.v1", "v2": "mistral_instruct_tokenizer_240216.model.v2",
         "v3": "mistral_instruct_tokenizer_240323.model.v3", "v7": "mistral_instruct_tokenizer_241114.model.v7"}
WORDS = ("the quick brown fox jumps over lazy dogs while tokenizers split text into pieces "
         "Tiếng Việt ngôn ngữ русский текст über straße 東京 日本語 北京 한국어 العربية हिन्दी 1234 3.14").split()


def never_seen(count: int, rng: random.Random, tags: str = "letters") -> str:
    """`count` words, each with a random tag: hex digits ("hex"; the Mistral files split digits, so much of
    such text is one-character pieces) or three lowercase letters ("letters": whole new words to merge)."""
    if tags == "letters":
        return " ".join(rng.choice(WORDS) + "".join(rng.choices(string.ascii_lowercase, k=3)) for _ in range(count))
    return " ".join(f"{rng.choice(WORDS)}{rng.randrange(36 ** 3):x}" for _ in range(count))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", default="v1,v3")
    parser.add_argument("--words", type=int, default=20000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--tags", choices=("letters", "hex"), default="letters",
                        help="the random tag on each word: three letters (the default: every word new) or hex digits")
    parser.add_argument("--prose", action="store_true", help="the Python API on prose slices (see the docstring)")
    parser.add_argument("--texts-first", action="store_true",
                        help="with --prose: make every slice before the first timed round")
    args = parser.parse_args()
    if args.prose:
        return prose_rounds(args.files.split(","), args.reps, args.texts_first)
    wheel = zipfile.ZipFile(pypi_dir() / "mistral_common-1.13.1-py3-none-any.whl")
    print(f"{'file':<6} {'open ours':>10} {'open spm':>9} {'encode ours':>12} {'encode spm':>11} {'ratio (median)':>15}"
          f" {'read back':>10}")
    for key in args.files.split(","):
        data = wheel.read(f"mistral_common/data/{FILES[key]}")
        opens, spm_opens, ours, theirs, ratios, read_back = [], [], [], [], [], []
        stored = dumps_stored(import_tokenizer(data, filename="tokenizer.model"))
        rng = random.Random(f"bench-{key}")
        for _ in range(args.reps):
            t0 = time.perf_counter()
            tok = import_tokenizer(data, filename="tokenizer.model")
            t1 = time.perf_counter()
            sp = spm.SentencePieceProcessor(model_proto=data)
            t2 = time.perf_counter()
            opens.append(t1 - t0)
            spm_opens.append(t2 - t1)
            text = never_seen(args.words, rng, args.tags)
            ref = timed_pair(lambda: tokenizer_of(tok).encode(text, frozenset()), lambda: sp.encode(text),
                             ours, theirs, ratios)
            if ref is None:
                print(f"{key}: ids differ from sentencepiece's", file=sys.stderr)
                return 1
            copy = loads_stored(stored)
            t3 = time.perf_counter()
            again = tokenizer_of(copy).encode(text, frozenset())
            t4 = time.perf_counter()
            if again != ref:
                print(f"{key}: the read-back copy's ids differ from sentencepiece's", file=sys.stderr)
                return 1
            read_back.append((t4 - t3) / theirs[-1])
        print(f"{key:<6} {min(opens):>9.3f}s {min(spm_opens):>8.3f}s {min(ours):>11.3f}s {min(theirs):>10.3f}s "
              f"{statistics.median(ratios):>14.2f}x {statistics.median(read_back):>9.2f}x")
    return 0


PRESETS = {"v1": "mistral_v1", "v3": "mistral_v3"}


def timed_pair(mine: Any, reference: Any, ours: list[float], theirs: list[float], ratios: list[float]) -> Any:
    """Time our encode, then the reference's, and keep both times and their ratio; the reference's ids, or
    None when ours differ."""
    t0 = time.perf_counter()
    got = mine()
    t1 = time.perf_counter()
    expected = reference()
    t2 = time.perf_counter()
    ours.append(t1 - t0)
    theirs.append(t2 - t1)
    ratios.append((t1 - t0) / (t2 - t1))
    return expected if got == expected else None


def prose_slice(round_: int, rng: random.Random, size: int = 8000) -> str:
    """The round's own 8,000 characters of mixed prose, a fresh tagged word after every tenth word."""
    from benchmarks.corpus import mixed_text

    text = mixed_text(size * (round_ + 1))[size * round_:]
    words = text.split(" ")
    for at in range(len(words) - 1, 0, -10):
        words.insert(at, "".join(rng.choices(string.ascii_lowercase, k=5)) + rng.choice(WORDS))
    return " ".join(words)


def prose_rounds(files: list[str], reps: int, texts_first: bool = False) -> int:
    from webapp.tokenizer import get_tokenizer

    wheel = zipfile.ZipFile(pypi_dir() / "mistral_common-1.13.1-py3-none-any.whl")
    print(f"{'preset':<11} {'encode ours':>12} {'encode spm':>11} {'ratio (median)':>15}   (prose, --prose)")
    for key in files:
        handle = get_tokenizer(PRESETS[key])
        sp = spm.SentencePieceProcessor(model_proto=wheel.read(f"mistral_common/data/{FILES[key]}"))
        handle.encode("warm up: the preset opened")
        rng = random.Random(f"prose-{key}")
        ours, theirs, ratios = [], [], []
        made = [prose_slice(round_ + 1, rng) for round_ in range(reps)] if texts_first else []
        for round_ in range(reps):
            text = made[round_] if texts_first else prose_slice(round_ + 1, rng)
            if timed_pair(lambda: handle.encode(text), lambda: sp.encode(text), ours, theirs, ratios) is None:
                print(f"{key}: ids differ from sentencepiece's", file=sys.stderr)
                return 1
        print(f"{PRESETS[key]:<11} {min(ours):>11.4f}s {min(theirs):>10.4f}s {statistics.median(ratios):>14.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
