"""Where a prompt ends (webapp.tokenizer.prompt), checked against brute force.

- typed merge lists (random, plain and odd) with and without GPT-2's split: every string up to
  two characters over the texts' alphabet, plus drawn ones, is appended and encoded by the
  literal seed reference; none changes a token called final, and every witness changes its
  token (and every token after it);
- the presets, on texts ending mid-word, mid-number, in whitespace, after marks, in emoji, URLs,
  code, and random texts that once left tokens undecided: about a hundred and fifty continuations
  each never change a final token, every witness changes its token, and nothing is undecided;
- the healing count against a scan of the whole vocabulary; a held-back starter's futures against NFC.
"""

from __future__ import annotations

import random
import re
import unicodedata
from itertools import product
from typing import Callable

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from webapp.tokenizer import compile_byte_merges, is_installed, load_preset, reference, tokenizer_of
from webapp.tokenizer.pretokenize.patterns import PATTERNS
from webapp.tokenizer.prompt import PromptEnd, prompt_end, typed_tokenizer
from webapp.tokenizer.prompt.normalizers import futures, mark_after, normalizer_reach
from webapp.tokenizer.stages.tokenizer import Tokenizer

ALPHABET = "ab .'\n1é"


def seed_encode(rules: list[list[int]], scheme: str) -> Callable[[str], list[int]]:
    """The literal reference; with a pattern, each piece `regex` finds encoded alone."""
    if scheme == "none":
        return lambda text: reference.encode(text, rules)
    return lambda text: [i for piece in regex.findall(PATTERNS[scheme], text) for i in reference.encode(piece, rules)]


def check_claims(answer: PromptEnd, text: str, encode: Callable[[str], list[int]], continuations: list[str]) -> None:
    """Every continuation keeps the final tokens; every witness changes its token."""
    ids = answer.ids
    assert ids == encode(text)
    assert answer.stable + len(answer.undecided) + len(answer.unstable) == len(ids)
    for more in continuations:
        assert encode(text + more)[:answer.stable] == ids[:answer.stable], (text, more)
    for index, witness in answer.unstable:
        assert encode(text + witness)[:index + 1] != ids[:index + 1], (text, index, witness)


@st.composite
def rule_lists(draw: st.DrawFn) -> list[list[int]]:
    """Random rules over the alphabet's bytes and what earlier rules make (some odd: repeats, late names)."""
    base = sorted(set(ALPHABET.encode()))
    made: list[int] = []
    rules = []
    for new in range(256, 256 + draw(st.integers(0, 14))):
        pool = base + made + ([new + 1] if draw(st.booleans()) and made else [])
        rules.append([draw(st.sampled_from(pool)), draw(st.sampled_from(pool)), new])
        made.append(new)
    return rules


SHORT = ["".join(p) for n in (1, 2) for p in product(ALPHABET, repeat=n)]


@settings(max_examples=examples(120), deadline=None)
@given(rule_lists(), st.text(ALPHABET, max_size=8), st.sampled_from(["none", "gpt2"]),
       st.lists(st.text(ALPHABET, min_size=3, max_size=6), max_size=6))
def test_typed_rules_claims_hold_for_every_short_continuation(rules: list[list[int]], text: str, scheme: str,
                                                               drawn: list[str]) -> None:
    answer = prompt_end(typed_tokenizer(compile_byte_merges(rules), scheme), text)
    check_claims(answer, text, seed_encode(rules, scheme), SHORT + drawn)


def test_typed_rules_example() -> None:
    # "lo" + "w": rule 1 makes "lo", rule 2 "low"; "lo" at the end may still become "low".
    rules = [[108, 111, 256], [256, 119, 257]]
    answer = prompt_end(typed_tokenizer(compile_byte_merges(rules), "gpt2"), "a lo")
    assert answer.ids == [97, 32, 256]
    assert answer.stable == 2 and answer.undecided == []
    assert answer.unstable == [(2, "w")]
    assert answer.end == "changeable"
    assert answer.answer()["healing"]["candidates"] == 2  # ("lo" itself and "low")


def test_a_text_whose_end_is_final() -> None:
    # No rule takes "o" from the left or "l" from the right: nothing appended reaches back.
    answer = prompt_end(typed_tokenizer(compile_byte_merges([[104, 105, 256]]), "none"), "hi lo")
    assert answer.stable == len(answer.ids) and answer.end == "final"
    assert answer.unstable == [] and answer.undecided == []


PRESET_TEXTS = [
    "The quick brown fox jumps over the la",  # mid-word
    "It costs 12345",  # mid-number
    "The price is 3.1",
    "Hello world  ",  # in whitespace
    "first line\n\n",
    "a :\n  ",  # (gemma3: "▁▁" is an added token's id the model also makes: not a split)
    "tab\t",
    "cafe\u0301",  # after a combining mark (decomposed é)
    "dy; \u094d",  # a mark after a space (appended marks may reorder before it)
    "nai\u0308ve and a\u0301",
    "family: \U0001F468\u200d\U0001F469\u200d",  # inside an emoji sequence
    "flag \U0001F1FA",
    "see https://exa",  # a URL cut short
    "def f(x):\n    return x.appe",  # code
    "नमस्ते दुनि",  # Devanagari mid-word
    "สวัสดีครั",  # Thai
    "日本語のテキス",
    "it'",
    " internationalization",
    # Found by benchmarks/check_prompt_end_random.py (each once undecided, or a broken claim, for some preset):
    "\u0308",  # NFC, no starter at all: an appended U+3099 is put before the mark (it was called final)
    "\u0301\n", "\u0e31+",  # the first alternative that matches stops reading; a later one would not
    "テB", "7\tあ'",  # the match ends before the kept text does: what follows it is known
    "中Q",  # ignore_merges: the piece may become one token only over what follows
    "漢", "3gz中\u0331",  # deepseek_v3: the piece lies in an earlier split's match, or in a stretch between
    "た<", "द\ufe0f[",  # the last character may begin an added token, yet it is there in every longer text
    "ざ本\n\u0323", ":\u0941た6\u093f\u3099\u2764",  # a token ending inside a character needs a next one
    "あ\u0323", "\u0928", "0\u309a",  # NFC holds back marks: a mark follows the kept text; or a witness
    "トวสY\u0e48", "4\u0e48j\u0327",  # NFC holds back a starter and marks: what the starter may become
    "9&\n\t",  # the run of spaces may give its last one to the next piece, which starts with it
    " naïve speci",  # qwen3 (a bench_prompt keystroke): the witness runs over the held-back "i" itself
    "\u3070_\U0001F469\u304b\u309a",  # qwen3: U+309A blocks every U+3099 appended from composing with か
    "M\U0001F469.\ufe0e\ufe0e\u200d\u306e\u2764\ufe0f+<\u0302",  # qwen3: "<" may become "≮", a mark after it
    "\u0300\n097+\u03019\u0331\U0001F3FB3<",  # deepseek_v3: "<" as text, or an added token's start
]

CONTINUATIONS = [
    "", "a", "s", "e", "zy", "ing", "ed", "n", "ly", "ation", "A", "Z", "0", "1", "9", "42", ".", ",", "!", "?",
    ":", ";", "-", "_", "/", "\\", "(", ")", "[", "]", "{", "}", "'", "'s", "'t", "'re", "\"", "`", "#", "@", "&",
    " ", "  ", "\n", "\n\n", "\t", "\r\n", " a", " the", " 1", "\u00a0", "\x85", "\u3000", "\u0301", "\u0308",
    "\u0323", "\u200d", "\U0001F469", "\U0001F3FB", "\U0001F1F8", "é", "ü", "中", "文", "の", "す", "ト",
    "ि", "्", "ा", "ं", "ย", "ั", "่", "ก", "ม", "\u00ad", "\ufeff", "\x00", "m", "mple", "com", ".com", "nd",
    "x", "é!", "a b", "end.", "<|endoftext|>", "<s>", "[INST]", "\u2581", "\u3099", "\u093c", "\u0338",
    "\u0334", "\u309a\u3099",
]


def preset_continuations(tokenizer: Tokenizer, text: str, seed: int) -> list[str]:
    """CONTINUATIONS, and random strings drawn from them and from the text's own characters."""
    rng = random.Random(seed)
    pool = CONTINUATIONS + list(set(text))
    return CONTINUATIONS + ["".join(rng.choice(pool) for _ in range(rng.randint(2, 4))) for _ in range(50)]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["r50k_base", "p50k_base", "cl100k_base", "o200k_base", "llama3", "llama2", "qwen3",
                                  "deepseek_v3", "gemma3", "gpt_oss", "mistral_tekken", "mistral_v1", "mistral_v3"])
def test_presets_claims_hold_and_nothing_is_undecided(name: str) -> None:
    if not is_installed(name):
        pytest.skip(f"{name} is not prepared on this machine")
    tokenizer = tokenizer_of(load_preset(name))
    encode: Callable[[str], list[int]] = lambda text: tokenizer.encode(text, frozenset())  # noqa: E731
    for seed, text in enumerate(PRESET_TEXTS):
        answer = prompt_end(tokenizer, text)
        assert answer.undecided == [], (name, text, answer.note)
        check_claims(answer, text, encode, preset_continuations(tokenizer, text, seed))


def token_bytes(tokenizer: Tokenizer, token: int) -> bytes:
    """A token's bytes (a byte fallback token, <0xNN>, stands for its byte)."""
    data = tokenizer.ordinary_bytes()[token]
    found = re.fullmatch(rb"<0x([0-9A-F]{2})>", data)
    return bytes([int(found.group(1), 16)]) if found and tokenizer.model.kind == "library order" else data


@pytest.mark.parametrize("name", ["cl100k_base", "llama3", "mistral_v1", "gemma3"])
def test_healing_count_equals_a_scan_of_the_vocabulary(name: str) -> None:
    if not is_installed(name):
        pytest.skip(f"{name} is not prepared on this machine")
    tokenizer = tokenizer_of(load_preset(name))
    every = [token_bytes(tokenizer, token) for token in tokenizer.ordinary_bytes()]
    for text in ["The quick brown fox jumps over the la", "see https://exa", "x = 1", "日本語のテキス", "tab\t"]:
        answer = prompt_end(tokenizer, text)
        healing = answer.answer()["healing"]
        own = token_bytes(tokenizer, answer.ids[-1])
        assert healing["candidates"] == sum(1 for data in every if data.startswith(own)), (name, text)
        assert healing["examples"] and all(token_bytes(tokenizer, e["id"]).startswith(own) for e in healing["examples"])


@settings(max_examples=examples(60), deadline=None)
@given(rule_lists(), st.text(ALPHABET, min_size=1, max_size=8))
def test_typed_healing_count_equals_a_scan(rules: list[list[int]], text: str) -> None:
    tokenizer = typed_tokenizer(compile_byte_merges(rules), "none")
    answer = prompt_end(tokenizer, text)
    own = tokenizer.ordinary_bytes()[answer.ids[-1]]
    assert answer.candidates == sum(1 for data in tokenizer.ordinary_bytes().values() if data.startswith(own))


@pytest.mark.parametrize("name", ["cl100k_base", "llama3", "qwen3", "mistral_v3", "gemma3", "deepseek_v3"])
def test_spans_from_the_fast_encode_give_the_traced_answer(name: str) -> None:
    """The tokens' spans come from the fast encode when its bytes spell the text back: the same answer."""
    if not is_installed(name):
        pytest.skip(f"{name} is not prepared on this machine")
    tokenizer = tokenizer_of(load_preset(name))
    for text in [*PRESET_TEXTS, "a<|endoftext|>b <s>", "x\n\n\n"]:
        fast, traced = prompt_end(tokenizer, text), prompt_end(tokenizer, text, traced=True)
        assert (fast.ids, fast.stable, fast.unstable, fast.undecided, fast.candidates) == \
            (traced.ids, traced.stable, traced.unstable, traced.undecided, traced.candidates), (name, text)


def test_held_back_starters_become_only_their_futures() -> None:
    """Every starter + marks (up to two, NFC'd) and every appended mark pair: NFC's first character is one of
    `futures`, a mark follows it when `mark_after` says so, and a starter `normalizer_reach` keeps stays."""
    starters, marks = "か<eéaスu", ["", *"\u3099\u309a\u0301\u0302\u0323\u0338\u0334\u0308\u0304"]
    assert futures("か", "\u309a") == ["か"] and "≮" in futures("<", "\u0302")
    for first, m1, m2 in product(starters, marks, marks):
        raw = first + m1 + m2
        normal = unicodedata.normalize("NFC", raw)
        held = futures(normal[0], normal[1:])
        marked = mark_after(normal, 0, held)
        stays = normalizer_reach({"type": "NFC"}, "x" + raw) == len(raw) - 1
        for w1, w2 in product(marks, marks):
            longer = unicodedata.normalize("NFC", normal + w1 + w2)
            assert longer[0] in held, (raw, w1 + w2)
            assert not marked or unicodedata.combining(longer[1]), (raw, w1 + w2)
            whole = unicodedata.normalize("NFC", "x" + raw + w1 + w2)
            assert not stays or whole.startswith("x" + first), (raw, w1 + w2)
