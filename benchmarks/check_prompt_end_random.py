"""Prompt-end claims on random texts: the presets' answers checked by encoding, and what stays undecided.

Usage (from the repository root):

    .venv/bin/python benchmarks/check_prompt_end_random.py [--presets cl100k_base,qwen3] [--texts 150]
        [--continuations 60] [--seed 1]

Per preset: random texts of up to 12 characters over a mixed alphabet, each answered by
`prompt_end` and checked with random continuations (a final token never changes, a witness
changes its token). Prints the counts and every undecided text; exits 1 if a claim broke.
"""

from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from webapp.tokenizer import is_installed, load_preset, tokenizer_of  # noqa: E402
from webapp.tokenizer.prompt import PromptEnd, prompt_end  # noqa: E402

PRESETS = ("r50k_base,p50k_base,cl100k_base,o200k_base,llama3,llama2,qwen3,deepseek_v3,gemma3,gpt_oss,"
           "mistral_tekken,mistral_v1,mistral_v3")

#: The mixed alphabet, by kind (each kind drawn equally often, so rare scripts still meet the others).
KINDS: tuple[str, ...] = (
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "0123456789",
    "  \n\n\t",
    ".,;:!?'\"-_/()[]{}#@&*+=<>",
    "\u0300\u0301\u0302\u0308\u0323\u0327\u0331",  # combining marks
    "あかがさざたはばぱのスズテトホボポ\u3099\u309a",  # kana, voiced-sound marks
    "日本語中文字漢",
    "\U0001F468\U0001F469\U0001F642\U0001F3FB\u2764\u200d\ufe0f\ufe0e",  # emoji, ZWJ, variation selectors
    "नमसतेदुनि\u094d\u093e\u0902",  # Devanagari
    "สวัดีครก\u0e31\u0e48",  # Thai
)


@dataclass
class Tally:
    texts: int = 0
    tokens: int = 0
    final: int = 0
    witnessed: int = 0
    undecided: int = 0
    broken: list[str] = field(default_factory=list)
    open_texts: list[tuple[str, list[int], str]] = field(default_factory=list)


def random_text(rng: random.Random, most: int = 12) -> str:
    return "".join(rng.choice(rng.choice(KINDS)) for _ in range(rng.randint(1, most)))


def continuations(rng: random.Random, text: str, count: int) -> list[str]:
    """`count` random continuations of one to four characters, from the alphabet and the text's own."""
    own = text or "a"
    return [
        "".join(rng.choice(own) if rng.random() < 0.25 else rng.choice(rng.choice(KINDS))
                for _ in range(rng.randint(1, 4)))
        for _ in range(count)
    ]


def broken_claims(answer: PromptEnd, text: str, encode: Callable[[str], list[int]], more: list[str]) -> list[str]:
    """Every claim of `answer` a continuation disproves (a final token changed, a witness that changes nothing)."""
    ids, out = answer.ids, []
    if ids != encode(text):
        out.append(f"{text!r}: ids differ from the encode")
    for typed in more:
        if encode(text + typed)[:answer.stable] != ids[:answer.stable]:
            out.append(f"{text!r} + {typed!r} changes a token called final (stable {answer.stable})")
    for index, witness in answer.unstable:
        if encode(text + witness)[:index + 1] == ids[:index + 1]:
            out.append(f"{text!r}: witness {witness!r} of token {index} changes nothing")
    return out


def check_preset(name: str, texts: int, count: int, seed: int) -> Tally:
    tokenizer = tokenizer_of(load_preset(name))
    encode: Callable[[str], list[int]] = lambda text: tokenizer.encode(text, frozenset())  # noqa: E731
    rng = random.Random(f"{seed}:{name}")
    tally = Tally()
    for _ in range(texts):
        text = random_text(rng)
        answer = prompt_end(tokenizer, text)
        tally.texts += 1
        tally.tokens += len(answer.ids)
        tally.final += answer.stable
        tally.witnessed += len(answer.unstable)
        tally.undecided += len(answer.undecided)
        if answer.undecided:
            tally.open_texts.append((text, answer.undecided, answer.note))
        tally.broken += broken_claims(answer, text, encode, continuations(rng, text, count))
    return tally


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presets", default=PRESETS)
    parser.add_argument("--texts", type=int, default=150)
    parser.add_argument("--continuations", type=int, default=60)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    broken = 0
    print(f"{'preset':14} {'texts':>5} {'tokens':>6} {'final':>6} {'witnessed':>9} {'undecided':>9} {'broken':>6}")
    for name in args.presets.split(","):
        if not is_installed(name):
            print(f"{name:14} not prepared on this machine")
            continue
        t = check_preset(name, args.texts, args.continuations, args.seed)
        print(f"{name:14} {t.texts:5} {t.tokens:6} {t.final:6} {t.witnessed:9} {t.undecided:9} {len(t.broken):6}")
        for text, undecided, note in t.open_texts:
            print(f"    undecided {undecided} in {text!r}" + (f" ({note})" if note else ""))
        for claim in t.broken:
            print(f"    BROKEN {claim}")
        broken += len(t.broken)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
