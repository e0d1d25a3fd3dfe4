"""The batch encoder (webapp/tokenizer/core/list_order/batch.py) and ids given in a file's own numbering.

Oracles: the literal algorithm on every pre-token (as in test_chunks.py),
a plain binary search for the pair lookup, and tiktoken on a real vocabulary.
Each path that only big inputs take (the hash table, the engine finishing the
last segments) is forced here on small ones, so the property tests reach it.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from webapp.tokenizer.core.list_order import batch, precompiled
from webapp.tokenizer import compile_byte_merges
from webapp.tokenizer.presets import openai as presets
from webapp.tokenizer.pretokenize import textencode
from webapp.tokenizer.core.ranks import INF
from webapp.tokenizer.pretokenize.patterns import PATTERNS
from webapp.tokenizer.pretokenize.pretokenized import pretokenized_encode
from tests.unit.tokenizer.pretokenize.test_chunks import SCHEMES, by_pretokens, texts, well_formed_merges
from webapp import PROJECT_ROOT

ROOT = PROJECT_ROOT


@contextmanager
def hash_always(compiled) -> Iterator[None]:
    """Every pair lookup of `compiled` goes through the hash table, however few keys it has."""
    old = batch.HASH_MIN_KEYS
    batch.HASH_MIN_KEYS = 1
    lookup = batch.pair_ranks(compiled)
    saved = lookup._search_budget
    lookup._search_budget = 0
    try:
        yield
    finally:
        batch.HASH_MIN_KEYS = old
        lookup._search_budget = saved


@settings(max_examples=examples(150), deadline=None)
@given(
    keys=st.lists(st.integers(0, 1 << 40), min_size=1, max_size=600, unique=True),
    probes=st.sampled_from([0, 1, 2, 5]),
    asked=st.lists(st.integers(0, 1 << 40), max_size=200),
)
def test_hash_lookups_equal_the_search(keys, probes, asked):
    keys = np.array(sorted(keys), dtype=np.int64)
    ranks = np.arange(len(keys), dtype=np.int64) * 3 + 1
    lookup = batch.PairRanks(np.append(keys, np.iinfo(np.int64).max), np.append(ranks, INF))
    # Half the questions are keys that exist, half (mostly) keys that do not.
    question = np.array(list(keys[: len(asked)]) + asked, dtype=np.int64)
    expected = [dict(zip(keys.tolist(), ranks.tolist())).get(k, INF) for k in question.tolist()]
    old = batch.HASH_PROBES
    batch.HASH_PROBES = probes
    try:
        assert lookup._hashed(question).tolist() == expected
        assert lookup._searched(question).tolist() == expected
    finally:
        batch.HASH_PROBES = old


def test_the_hash_table_is_built_only_once_searching_has_cost_as_much():
    keys = np.append(np.arange(0, 4000, 2, dtype=np.int64), np.iinfo(np.int64).max)
    lookup = batch.PairRanks(keys, np.append(np.arange(2000, dtype=np.int64), INF))
    big = np.arange(0, 4000, dtype=np.int64)[: batch.HASH_MIN_KEYS]
    lookup.ranks_of(big)  # 1,024 keys searched of the 2,000 it may search first
    assert lookup._table is None
    lookup.ranks_of(big)
    assert lookup._table is None  # budget spent now: the next big lookup builds the table
    lookup.ranks_of(big)
    assert lookup._table is not None
    eager = batch.PairRanks(keys, lookup.ranks, eager=True)
    eager.ranks_of(big)
    assert eager._table is not None


@pytest.mark.parametrize("few_left", [0, batch.BATCH_FEW_LEFT], ids=["all-rounds", "few-to-engine"])
@pytest.mark.parametrize("big", [0, 10**9], ids=["big-batch", "lean-batch"])
@settings(max_examples=examples(150), deadline=None)
@given(text=texts, merges=well_formed_merges(), scheme=st.sampled_from(SCHEMES), rounds=st.sampled_from([None, 1, 3]))
def test_hashed_rounds_match_the_oracle(few_left, big, text, merges, scheme, rounds):
    compiled = compile_byte_merges(merges)
    compiled.table.first  # the engine's indexes, for the hand-over
    textencode.clear_text_caches(compiled)
    old = batch.BATCH_FEW_LEFT, batch.BIG_BATCH, textencode.BATCH_ROUNDS, textencode.ENGINE_MAX_BYTES
    batch.BATCH_FEW_LEFT, batch.BIG_BATCH, textencode.BATCH_ROUNDS, textencode.ENGINE_MAX_BYTES = few_left, big, rounds, 0
    try:
        with hash_always(compiled):
            assert pretokenized_encode(text, compiled, scheme) == by_pretokens(text, merges, scheme)
    finally:
        batch.BATCH_FEW_LEFT, batch.BIG_BATCH, textencode.BATCH_ROUNDS, textencode.ENGINE_MAX_BYTES = old


@st.composite
def id_maps(draw, merges):
    """A map of some playground ids to other ids: bytes only (a real file's usual map) or merged ids too."""
    made = [rule[2] for rule in merges]
    pool = list(range(256)) + (made if draw(st.booleans()) else [])
    chosen = draw(st.lists(st.sampled_from(pool), unique=True, max_size=20))
    return {i: 100_000 + draw(st.integers(0, 50)) for i in chosen}


@pytest.mark.slow
@settings(max_examples=examples(200), deadline=None)
@given(data=st.data(), text=texts, merges=well_formed_merges(), scheme=st.sampled_from(SCHEMES), whole=st.booleans())
def test_ids_in_a_files_numbering_equal_the_map_applied_after(data, text, merges, scheme, whole):
    compiled = compile_byte_merges(merges)
    textencode.clear_text_caches(compiled)
    compiled.whole = None
    if whole:
        precompiled.find_whole_tokens(compiled)
    mapping = data.draw(id_maps(merges))
    engine = data.draw(st.booleans())  # new pre-tokens through the engine one by one, or the batch
    if engine:
        compiled.table.first
    old = textencode.ENGINE_MAX_BYTES, batch.BIG_BATCH
    textencode.ENGINE_MAX_BYTES = 10**9 if engine else 0
    batch.BIG_BATCH = data.draw(st.sampled_from([0, 10**9]))
    try:
        plain = pretokenized_encode(text, compiled, scheme)
        assert plain == by_pretokens(text, merges, scheme)
        mapped = [mapping.get(i, i) for i in plain]
        assert pretokenized_encode(text, compiled, scheme, mapping) == mapped
        assert pretokenized_encode(text, compiled, scheme, mapping) == mapped  # now from its own caches
        assert pretokenized_encode(text, compiled, scheme) == plain  # the plain caches are not the mapped ones
    finally:
        textencode.ENGINE_MAX_BYTES, batch.BIG_BATCH = old


@pytest.mark.slow
def test_a_real_vocabulary_over_long_texts_equals_tiktoken(tmp_path):
    """cl100k on 20,000+ characters of multilingual text and code: the hash table, the packing, the hand-over."""
    tiktoken = pytest.importorskip("tiktoken")
    ranks = presets.load_ranks("cl100k_base")
    presets.clear_caches()  # a list precompiled into tmp_path, not one another test compiled
    compiled = presets.load_compiled("cl100k_base", tmp_path)
    tok = presets.load_preset("cl100k_base", tmp_path)
    scheme = presets.get_preset("cl100k_base").scheme
    theirs = tiktoken.Encoding("oracle", pat_str=PATTERNS[scheme], mergeable_ranks=ranks, special_tokens={})
    multilingual = (ROOT / "benchmarks" / "data" / "non_latin.txt").read_text(encoding="utf-8")
    code = (ROOT / "webapp" / "tokenizer" / "core" / "list_order" / "batch.py").read_text(encoding="utf-8")
    for text in (multilingual * 3, code * 2, (multilingual + code)[::-1]):
        textencode.clear_text_caches(compiled)
        compiled.segment_cache.clear()
        assert pretokenized_encode(text, compiled, scheme, tok.id_map) == theirs.encode_ordinary(text)
    assert batch.pair_ranks(compiled)._table is not None  # precompiled: the hash table was used

