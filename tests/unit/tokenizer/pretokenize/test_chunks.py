"""Fast pre-tokenized encoding: chunk cuts, the ASCII split forms, caches, the whole-token table.

Oracles: the published patterns run by the `regex` package over the whole
text (for the split), and the literal algorithm (webapp/tokenizer/reference.py) run on
every pre-token of that split, concatenated (for the ids).
"""

from __future__ import annotations

from contextlib import contextmanager

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from webapp.tokenizer import reference
from webapp.tokenizer import compile_byte_merges
from webapp.tokenizer.core.list_order import batch, precompiled
from webapp.tokenizer.pretokenize import chunks, textencode
from webapp.tokenizer.pretokenize.class_split import TEKKEN_PATTERN
from webapp.tokenizer.pretokenize.patterns import _COMPILED
from webapp.tokenizer.pretokenize.pretokenized import pretokenized_encode

SCHEMES = ("gpt2", "cl100k", "o200k")
SPLIT_SCHEMES = (*SCHEMES, "tekken")  # with the class splits chunks.py cuts (Tekken's pattern: as o200k)
_PUBLISHED = {**_COMPILED, "tekken": regex.compile(TEKKEN_PATTERN)}
# Heavy on what the patterns treat specially: whitespace runs and newlines
# (\r, \v, \f, NEL, NBSP, line separator), "/" after punctuation (o200k),
# apostrophes of contractions, digits, case changes, marks and non-Latin letters.
TRICKY = " \n\n\n\r\t\x0b\x0c\x85\xa0\u2028/;.,!'sdtmlvreSDTMLVRE aZ09²Ⅻé\u0301中ǅ🙂_-"
tricky_texts = st.text(TRICKY, max_size=40) | st.text(max_size=30)
ascii_texts = st.text(st.characters(max_codepoint=127), max_size=60) | st.text(" \n\r\t/';.aAzZ09sStT", max_size=60)


def whole_split(text: str, scheme: str) -> list[str]:
    return _PUBLISHED[scheme].findall(text)


@settings(max_examples=examples(600), deadline=None)
@given(text=tricky_texts, scheme=st.sampled_from(SPLIT_SCHEMES))
def test_chunked_split_is_the_whole_text_split(text, scheme):
    bounds = chunks.chunk_bounds(text, scheme)
    assert bounds[0] == 0 and bounds[-1] == len(text)
    assert bounds == sorted(set(bounds)) or text == ""
    pretokens = [pretoken for a, b in zip(bounds, bounds[1:]) for pretoken in whole_split(text[a:b], scheme)]
    assert pretokens == whole_split(text, scheme)
    assert chunks.split_text(text, scheme) == whole_split(text, scheme)


@settings(max_examples=examples(600), deadline=None)
@given(text=tricky_texts | ascii_texts | st.lists(tricky_texts | ascii_texts, max_size=5).map("".join),
       scheme=st.sampled_from(SPLIT_SCHEMES), stride=st.integers(1, 12))
def test_strided_split_is_the_whole_text_split(text, scheme, stride):
    # Small strides: many stretches, ASCII and not, each ending at the first cut after the stride.
    assert chunks.split_strided(text, scheme, stride) == whole_split(text, scheme)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_texts_with_many_lines_are_cut(scheme):
    text = "def f(x):\n    return x\n\nclass A:\n    pass\nprint(1)\n// c\n"
    bounds = chunks.chunk_bounds(text, scheme)
    assert len(bounds) > 3  # several chunks, not one
    assert [p for a, b in zip(bounds, bounds[1:]) for p in whole_split(text[a:b], scheme)] == whole_split(text, scheme)


def test_a_text_without_a_newline_is_one_chunk_as_every_cut_needs_one():
    # (chunk_bounds returns at once for a text with no newline: exact only while every cut pattern starts with one)
    for scheme, (finder, _after) in chunks._CUTS.items():
        assert finder.pattern.startswith("\\n") and chunks._ASCII_CUTS[scheme].pattern.startswith("\\n"), scheme
        text = "a b\tc 日本 /x"
        assert chunks.chunk_bounds(text, scheme) == [0, len(text)]


@pytest.mark.parametrize("scheme", SCHEMES)
def test_every_ascii_character_splits_as_the_published_pattern(scheme):
    for code in range(128):
        for text in (chr(code), f"a{chr(code)}b", f" {chr(code)}{chr(code)}\n", f"'{chr(code)}"):
            assert chunks.ASCII_PATTERNS[scheme].findall(text) == whole_split(text, scheme), repr(text)


@settings(max_examples=examples(500), deadline=None)
@given(text=ascii_texts, scheme=st.sampled_from(SCHEMES))
def test_ascii_form_matches_the_published_pattern(text, scheme):
    assert chunks.ASCII_PATTERNS[scheme].findall(text) == whole_split(text, scheme)


@settings(max_examples=examples(400), deadline=None)
@given(text=ascii_texts | st.text(" \n\t\r\x0b\x0c/a(", max_size=60), scheme=st.sampled_from(SCHEMES))
def test_ascii_cuts_are_the_published_cuts(text, scheme):
    finder, after = chunks._CUTS[scheme]
    fast = chunks._ASCII_CUTS[scheme]
    assert [m.span() for m in fast.finditer(text)] == [m.span() for m in finder.finditer(text)]


def by_pretokens(text: str, merges, scheme: str) -> list[int]:
    """The oracle: the literal algorithm on every pre-token of the whole-text split."""
    return [i for pretoken in whole_split(text, scheme) for i in reference.encode(pretoken, merges)]


ALPHABET = "ab é日\n/'"
BYTES = sorted(set(ALPHABET.encode()))
IDS = BYTES + [256, 257, 258, 259, 260]
odd_rules = st.lists(st.tuples(st.sampled_from(IDS), st.sampled_from(IDS), st.sampled_from(IDS)), max_size=30)


@st.composite
def well_formed_merges(draw, max_rules: int = 40):
    """Rules whose operands exist before them and whose new ids are fresh (>= 256); pairs may repeat."""
    hot = BYTES[:]
    rules = []
    for new in range(256, 256 + draw(st.integers(1, max_rules))):
        rules.append([draw(st.sampled_from(hot)), draw(st.sampled_from(hot)), new])
        hot.append(new)
    return rules


texts = st.text(ALPHABET, max_size=60) | st.text(ALPHABET, min_size=60, max_size=160)


# Which path new pre-tokens take: the numpy batch with every round in numpy and everything a big
# batch does (short segments first, safe pairs, packing: "all-rounds"), the lean batch that small
# inputs take, handing its last few segments to the engine ("few-to-engine"), or - for a few
# hundred bytes, once the engine's indexes exist, as when typing - the engine alone ("engine").
# Small test texts would otherwise nearly always take the last, so each test runs all three.
FEW_LEFT = pytest.mark.parametrize(
    "few_left", [0, batch.BATCH_FEW_LEFT, -1], ids=["all-rounds", "few-to-engine", "engine"]
)


@contextmanager
def batch_few_left(value: int, compiled):
    """`value` segments left go to the engine; -1: small sets of new pre-tokens skip the batch."""
    old = batch.BATCH_FEW_LEFT, textencode.ENGINE_MAX_BYTES, batch.BIG_BATCH
    batch.BATCH_FEW_LEFT = max(value, 0)
    textencode.ENGINE_MAX_BYTES = 10**9 if value < 0 else 0
    batch.BIG_BATCH = 0 if value == 0 else 10**9
    if value:
        compiled.table.first  # both hand-overs happen only once the engine's indexes exist
    try:
        yield
    finally:
        batch.BATCH_FEW_LEFT, textencode.ENGINE_MAX_BYTES, batch.BIG_BATCH = old


@pytest.mark.slow
@FEW_LEFT
@settings(max_examples=examples(300), deadline=None)
@given(text=texts, merges=well_formed_merges(), scheme=st.sampled_from(SCHEMES), whole=st.booleans())
def test_well_formed_lists_match_the_oracle(few_left, text, merges, scheme, whole):
    compiled = compile_byte_merges(merges)
    textencode.clear_text_caches(compiled)
    compiled.whole = None
    with batch_few_left(few_left, compiled):
        if whole:
            precompiled.find_whole_tokens(compiled)
        expected = by_pretokens(text, merges, scheme)
        assert pretokenized_encode(text, compiled, scheme) == expected
        # Again: now from the chunk cache; and a longer text mixing cached and new chunks.
        assert pretokenized_encode(text, compiled, scheme) == expected
        longer = text + "\nb" + text[::-1]
        assert pretokenized_encode(longer, compiled, scheme) == by_pretokens(longer, merges, scheme)


@FEW_LEFT
@settings(max_examples=examples(150), deadline=None)
@given(text=texts, merges=well_formed_merges(), scheme=st.sampled_from(SCHEMES), rounds=st.integers(1, 3))
def test_capped_batch_rounds_finish_exactly_in_the_engine(few_left, text, merges, scheme, rounds):
    compiled = compile_byte_merges(merges)
    textencode.clear_text_caches(compiled)
    old = textencode.BATCH_ROUNDS
    textencode.BATCH_ROUNDS = rounds
    try:
        with batch_few_left(few_left, compiled):
            assert pretokenized_encode(text, compiled, scheme) == by_pretokens(text, merges, scheme)
    finally:
        textencode.BATCH_ROUNDS = old


@FEW_LEFT
@settings(max_examples=examples(150), deadline=None)
@given(text=texts | tricky_texts, merges=well_formed_merges(), whole=st.booleans())
def test_a_class_split_scheme_encodes_as_its_published_pattern(few_left, text, merges, whole):
    """The split-text encoder with Tekken's pattern (what a Tekken file's encode takes), from empty
    caches, again from them, and on a longer text mixing both; without and with a whole-token table."""
    compiled = compile_byte_merges(merges)
    textencode.clear_text_caches(compiled)
    compiled.whole = None
    with batch_few_left(few_left, compiled):
        if whole:
            precompiled.find_whole_tokens(compiled)
        expected = by_pretokens(text, merges, "tekken")
        assert textencode.encode_split(compiled, text, "tekken") == expected
        assert textencode.encode_split(compiled, text, "tekken") == expected
        longer = text + "\nb" + text[::-1]
        assert textencode.encode_split(compiled, longer, "tekken") == by_pretokens(longer, merges, "tekken")


@settings(max_examples=examples(200), deadline=None)
@given(text=texts, merges=odd_rules, scheme=st.sampled_from(SCHEMES))
def test_odd_lists_match_the_oracle(text, merges, scheme):
    assert pretokenized_encode(text, merges, scheme) == by_pretokens(text, merges, scheme)


@settings(max_examples=examples(100), deadline=None)
@given(
    text=st.text(ALPHABET, min_size=1, max_size=120),
    merges=well_formed_merges(),
    scheme=st.sampled_from(SCHEMES),
    edits=st.lists(st.tuples(st.integers(0, 200), st.sampled_from(list(ALPHABET))), min_size=1, max_size=5),
)
def test_typing_into_a_cached_text_stays_exact(text, merges, scheme, edits):
    compiled = compile_byte_merges(merges)
    pretokenized_encode(text, compiled, scheme)
    for at, char in edits:
        at %= len(text) + 1
        text = text[:at] + char + text[at:]
        assert pretokenized_encode(text, compiled, scheme) == by_pretokens(text, merges, scheme)


def test_long_pretokens_are_cut_and_batched_exactly():
    merges = [[229, 149, 256], [256, 134, 257], [257, 257, 258], [97, 97, 259], [259, 259, 260], [260, 260, 261]]
    text = "日" * 50 + " " + "a" * 77 + "\n" + "é日a" * 30
    compiled = compile_byte_merges(merges)
    for scheme in SCHEMES:
        textencode.clear_text_caches(compiled)
        assert pretokenized_encode(text, compiled, scheme) == by_pretokens(text, merges, scheme)


def test_whole_tokens_encode_to_themselves_and_survive_the_precompiled_form():
    merges = [[104, 101, 256], [256, 108, 257], [108, 111, 258], [257, 258, 259], [32, 259, 260], [101, 108, 261]]
    compiled = compile_byte_merges(merges)
    whole = precompiled.find_whole_tokens(compiled)
    assert whole["hello"] == (259,) and whole[" hello"] == (260,)
    for text, ids in whole.items():
        assert reference.encode(text, merges) == list(ids)
    back = precompiled.loads_precompiled(precompiled.dumps_precompiled(compiled))
    assert back.whole == whole
    assert back.rules == compiled.rules
    text = "hello hel el hello\n\nhe"
    for scheme in SCHEMES:
        assert pretokenized_encode(text, back, scheme) == by_pretokens(text, merges, scheme)


def test_a_token_that_does_not_encode_to_itself_is_not_whole():
    # (a, b) fires first on "abc", so the token made by (a, (b, c)) is never reached from its own bytes.
    merges = [[97, 98, 256], [98, 99, 257], [97, 257, 258]]
    whole = precompiled.find_whole_tokens(compile_byte_merges(merges))
    assert "abc" not in whole
    assert "ab" in whole and "bc" in whole
    assert reference.encode("abc", merges) == [256, 99]


def test_a_damaged_precompiled_blob_is_refused():
    compiled = compile_byte_merges([[97, 98, 256]])
    blob = precompiled.dumps_precompiled(compiled)
    with pytest.raises(ValueError):
        precompiled.loads_precompiled(blob[: len(blob) // 2])
    with pytest.raises(ValueError):
        precompiled.dumps_precompiled(compile_byte_merges([[97, 98, 97]]))  # not well-formed


def test_caches_are_bounded():
    compiled = compile_byte_merges([[97, 98, 256]])
    textencode.clear_text_caches(compiled)
    text = "\n".join(f"ab{i}" for i in range(3000))
    pretokenized_encode(text, compiled, "cl100k")
    pretokens, chunk_cache = textencode._caches(compiled, "cl100k")
    assert len(chunk_cache) <= textencode.CHUNK_ENTRIES
    assert chunk_cache.weight <= textencode.CHUNK_WEIGHT
    assert len(pretokens) <= textencode.PRETOKEN_CACHE_ENTRIES
