"""pretokenize/class_split.py against the published patterns applied step by step with the `regex` package.

A ClassSplit must give exactly the pieces of its Isolated Split regexes done
one after another (each on every piece of the one before), as reading/text.py's
`isolated_pieces` does them: on hypothesis texts drawn from characters of
every class the patterns tell apart (numbers of several scripts, the CJK
ranges with their punctuation, marks and unassigned code points, every kind
of whitespace, ASCII punctuation, letters of each case, marks, controls,
emoji), and on every code point of the BMP and beyond in order and shuffled.
"""

from __future__ import annotations

import json
import random

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from webapp.tokenizer.reading import text as ht
from webapp.tokenizer.reading.fields import compile_file_regex
from webapp.tokenizer.pretokenize.pre_tokenizers import build_pre_tokenizer, describe_pre_tokenizer
from webapp.tokenizer.presets import open_models
from webapp.tokenizer.pretokenize import class_split as cs
from webapp.tokenizer.pretokenize.patterns import CL100K_PATTERN, O200K_PATTERN

ALPHABET = (
    "aZzé漢字東京はカ・゠゛゙\u3040\u3097ーヿ龥一\u9fa6 1٣²Ⅻ〇\t\n\r\x0b\x0c\x85\u3000\xa0\u2028!/.,'\"-_$€+<`~"
    "😀\u200d\x00\x1f\u0301ǅʰªΣσ\U0001d400\U000e0001\uffff\ud800"
    "'''sStTrReEvVmMlLdDſ\u212aK"  # contractions (and the letters that case-fold to theirs)
)


def stepwise(patterns: tuple[str, ...], text: str) -> list[str]:
    pieces = [text]
    for pattern in patterns:
        compiled = compile_file_regex(pattern)
        pieces = [part for piece in pieces for part in ht.isolated_pieces(compiled, piece)]
    return pieces


@pytest.mark.parametrize("split", cs.KNOWN, ids=lambda s: s.name)
@settings(max_examples=examples(600), deadline=None)
@given(text=st.text(alphabet=st.sampled_from(ALPHABET), max_size=40), numpy_cut=st.sampled_from([0, 10**9]))
def test_a_known_split_gives_the_published_patterns_pieces(split, text, numpy_cut):
    # (short texts are sliced, long ones cut with numpy: both ways on every kind of text)
    old, cs.NUMPY_CUT = cs.NUMPY_CUT, numpy_cut
    try:
        assert split.pieces(text) == stepwise(split.published, text)
        parts = [text[:7], "", text[7:]]
        assert split.pieces_of(parts) == [stepwise(split.published, part) for part in parts]
    finally:
        cs.NUMPY_CUT = old


@pytest.mark.parametrize("split", cs.KNOWN, ids=lambda s: s.name)
def test_every_code_point_in_order_and_shuffled(split):
    codes = [c for c in range(0x30000) if not 0xD800 <= c < 0xE000] + list(range(0xE0000, 0xE0080))
    text = "".join(map(chr, codes))
    assert split.pieces(text) == stepwise(split.published, text)
    rng = random.Random(7)
    chars = list(text[:60000])
    rng.shuffle(chars)
    mixed = "".join(ch + rng.choice([" ", "a", "1", "\n", "東", "、", "'s", "'LL", "A"]) for ch in chars)
    assert split.pieces(mixed) == stepwise(split.published, mixed)


def test_the_class_table_stays_bounded():
    table = cs.ClassTable(cs.TEKKEN.classes)
    for code in range(cs.MAX_CLASSIFIED + 1000):
        table[code]
    assert len(table) == cs.MAX_CLASSIFIED
    assert chr(cs.MAX_CLASSIFIED + 500).translate(table) == chr(cs.MAX_CLASSIFIED + 500).translate(
        cs.ClassTable(cs.TEKKEN.classes))


@pytest.mark.slow
def test_the_presets_files_hold_the_known_patterns():
    """The known patterns are the files' own (else the fast path would never be taken)."""
    if not (open_models.is_installed("deepseek_v3") and open_models.is_installed("mistral_tekken")):
        pytest.skip("presets not installed")
    deepseek = json.loads(open_models.file_bytes("deepseek_v3"))
    patterns = [step["pattern"]["Regex"] for step in deepseek["pre_tokenizer"]["pretokenizers"][:3]]
    assert tuple(patterns) == cs.DEEPSEEK_V3_PATTERNS
    assert json.loads(open_models.file_bytes("mistral_tekken"))["config"]["pattern"] == cs.TEKKEN_PATTERN
    for name, split in (("llama3", cs.CL100K), ("qwen3", cs.QWEN), ("gpt_oss", cs.O200K)):
        if open_models.is_installed(name):
            steps = json.loads(open_models.file_bytes(name))["pre_tokenizer"]["pretokenizers"]
            assert (steps[0]["pattern"]["Regex"],) == split.published, name


def test_the_patterns_are_the_published_ones_and_contraction_letters_are_letters():
    assert (cs.CL100K_PATTERN, cs.O200K_PATTERN) == (CL100K_PATTERN, O200K_PATTERN)
    every = "".join(map(chr, range(0x110000)))
    for x in "strevmld":
        folded = regex.findall(f"(?i:{x})", every)
        assert len(folded) >= 2 and all(regex.match(r"\p{L}", ch) for ch in folded), x


def test_a_sequence_starting_with_the_known_run_is_fused_and_the_rest_still_runs():
    steps = [{"type": "Split", "pattern": {"Regex": p}, "behavior": "Isolated", "invert": False}
             for p in cs.DEEPSEEK_V3_PATTERNS]
    tail = {"type": "Split", "pattern": {"String": "x"}, "behavior": "Isolated", "invert": False}
    for extra in ([], [tail]):
        desc = describe_pre_tokenizer({"type": "Sequence", "pretokenizers": steps + extra})
        fused = build_pre_tokenizer(desc)
        text = "ab1234 東京・カ xx  \n\n y"
        expected = stepwise(cs.DEEPSEEK_V3_PATTERNS, text)
        if extra:
            expected = [part for piece in expected for part in stepwise((r"x",), piece)]
        with ht.bounded(len(text)):
            assert [p for p, _ in fused([(text, True)])] == expected
    # Two of the three are not a known run: done step by step.
    assert build_pre_tokenizer(describe_pre_tokenizer({"type": "Sequence", "pretokenizers": steps[:2]}))


@settings(max_examples=examples(50), deadline=None)
@given(st.text(min_size=cs.NUMPY_CLASSES, max_size=3 * cs.NUMPY_CLASSES))
def test_long_texts_get_the_same_class_letters_from_the_numpy_copy(text):
    for split in cs.KNOWN:
        table = split.table()
        assert table.classes(text) == text.translate(table)
