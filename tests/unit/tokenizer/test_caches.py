"""The one cache class and its bounds: the policy, every named cache filled past its bounds, and RSS."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from webapp.infra import inputs
from webapp.opened import store as tokenizer_store
from webapp.web.common import viewmodels
from webapp.tokenizer.core.list_order import byte_level, char_level
from webapp.tokenizer.caches import NAMED, BoundedCache, estimated_bytes
from webapp import PROJECT_ROOT

ROOT = str(PROJECT_ROOT)


def _exact_weight(cache: BoundedCache) -> int:
    return sum(cache.weigh(k, v) for k, v in cache.data.items())


def test_the_least_recently_used_goes_first():
    cache: BoundedCache[str, str] = BoundedCache(3)
    for key in "abc":
        cache.put(key, key.upper())
    assert cache.get("a") == "A"  # now the most recently used
    cache.put("d", "D")
    assert set(cache.data) == {"a", "c", "d"}


def test_an_entry_heavier_than_the_whole_cache_is_not_stored():
    cache: BoundedCache[str, str] = BoundedCache(4, 10)
    cache.put("x" * 11, "big")
    cache.put_many([("y" * 11, "big")])
    assert len(cache) == 0 and cache.weight == 0
    cache.put("x" * 10, "fits")
    assert cache.weight == 10


def test_put_and_put_many_keep_both_bounds_and_an_exact_weight():
    cache: BoundedCache[str, int] = BoundedCache(50, 400)
    for round_ in range(30):
        cache.put_many([(f"{round_}-{i}-" + "z" * (i % 9), i) for i in range(7)])
        cache.put(f"single-{round_}-" + "q" * round_, round_)
        cache.put(f"single-{round_}-" + "q" * round_, round_ + 1)  # the same key again: weighed once
        assert len(cache) <= 50
        assert cache.weight == _exact_weight(cache) <= 400


def test_a_small_cache_loses_one_entry_at_a_time():
    cache: BoundedCache[int, int] = BoundedCache(4)
    for i in range(4):
        cache.put(i, i)
    cache.put(4, 4)
    assert list(cache.data) == [1, 2, 3, 4]


# --- every named cache, through its own entry point, past its bounds ---------

def test_every_cache_of_the_app_is_named_with_both_bounds():
    assert set(NAMED) >= {
        "byte_level.compiled", "char_level.compiled", "inputs.merges_keys", "tokenizer_store.loaded",
        "presets.ranks", "presets.loaded", "presets.compiled", "api.encodings", "special.regexes",
        "textencode.relabels", "tokenizer_store.presets", "tokenizer_store.fallback_blobs", "viewmodels.printable",
        "viewmodels.printable_bytes", "vocab.atom_runs",
    }
    for name, cache in NAMED.items():
        assert cache.max_entries > 0 and cache.max_weight is not None, name


def test_compiled_byte_lists_stay_within_their_bounds(monkeypatch):
    cache = NAMED["byte_level.compiled"]
    bound = 2 * byte_level.FIXED_BYTES + 20 * byte_level.RULE_BYTES  # (bytes: about two small lists)
    monkeypatch.setattr(cache, "max_weight", bound)
    cache.clear()
    for n in range(1, 30):
        compiled = byte_level.compile_byte_merges([[97, 98 + i, 256 + i] for i in range(n % 13 + 1)])
        assert compiled.estimated_bytes() == (n % 13 + 1) * byte_level.RULE_BYTES + byte_level.FIXED_BYTES
        assert len(cache) <= cache.max_entries
        assert cache.weight == _exact_weight(cache) <= bound
    cache.clear()


def test_compiled_char_lists_stay_within_their_bounds(monkeypatch):
    cache = NAMED["char_level.compiled"]
    bound = 2 * char_level.FIXED_BYTES + 15 * char_level.RULE_BYTES
    monkeypatch.setattr(cache, "max_weight", bound)
    cache.clear()
    for n in range(1, 30):
        char_level.compile_char_merges([["a", chr(98 + i)] for i in range(n % 11 + 1)])
        assert len(cache) <= cache.max_entries
        assert cache.weight == _exact_weight(cache) <= bound
    cache.clear()


def test_a_list_over_the_old_rule_bound_is_kept_and_the_byte_bound_still_evicts(monkeypatch):
    """The compiled-list caches are bounded by bytes, not rules: a list of 300,304 rules (over the
    300,000 rules the character-level cache once held; a gemma3-sized upload has 514,906) is
    compiled once and reused; a budget smaller than two lists still drops the older one."""
    cache = NAMED["char_level.compiled"]
    cache.clear()
    letters = [chr(0x4E00 + i) for i in range(548)]
    big = [[a, b] for a in letters for b in letters]
    assert len(big) > 300_000
    compiled = char_level.compile_char_merges(big)
    assert char_level.compile_char_merges(big) is compiled  # kept: not compiled again on the next use
    assert compiled.estimated_bytes() == len(big) * char_level.RULE_BYTES + char_level.FIXED_BYTES
    assert cache.weight == compiled.estimated_bytes() <= cache.max_weight
    monkeypatch.setattr(cache, "max_weight", compiled.estimated_bytes() + char_level.FIXED_BYTES)
    small = char_level.compile_char_merges([["a", "b"], ["ab", "c"]])  # does not fit beside it
    assert list(cache.data.values()) == [small]
    assert cache.weight == _exact_weight(cache) == small.estimated_bytes()
    assert char_level.compile_char_merges(big) is not compiled  # the byte bound evicted it
    cache.clear()


def test_request_merges_keep_keys_within_bounds_and_still_reuse(monkeypatch):
    cache = NAMED["inputs.merges_keys"]
    monkeypatch.setattr(cache, "max_weight", 50 * 24)  # (bytes: 50 rules' int64 triples)
    cache.clear()
    limits = inputs.Limits()
    for n in range(1, 40):
        text = "\n".join(f"97 {98 + i} {256 + i}" for i in range(n % 17 + 1))
        compiled = inputs.read_byte_merges(text, limits)
        assert inputs.read_byte_merges(text, limits) is compiled  # the key finds the same compiled list
        assert len(cache) <= cache.max_entries
        assert cache.weight == _exact_weight(cache) <= 50 * 24
    # A key whose compiled list the engine's cache has dropped is compiled again, equal.
    text = "97 98 256\n256 99 257"
    first = inputs.read_byte_merges(text, limits)
    byte_level.clear_caches()
    again = inputs.read_byte_merges(text, limits)
    assert again is not first and again.rules == first.rules
    cache.clear()


def test_opened_tokenizers_stay_within_their_bounds(monkeypatch):
    from webapp.tokenizer import formats

    cache = NAMED["tokenizer_store.loaded"]
    bound = 25 * tokenizer_store.LOADED_RULE_BYTES
    monkeypatch.setattr(cache, "max_weight", bound)
    cache.clear()
    for n in range(1, 30):
        tok = formats.from_playground(level="bytes", merges=[[97, 98 + i, 256 + i] for i in range(n % 9 + 1)])
        entry = tokenizer_store.make_entry(f"id{n}", tok)
        cache.put(entry.id, entry)
        assert len(cache) <= cache.max_entries
        assert cache.weight == _exact_weight(cache) <= bound
    cache.clear()


def test_a_segment_cache_stays_within_its_bounds_through_encoding(monkeypatch):
    compiled = byte_level.compile_byte_merges([[97, 98, 256], [256, 99, 257]])
    cache = compiled.segment_cache
    monkeypatch.setattr(cache, "max_entries", 64)
    monkeypatch.setattr(cache, "max_weight", 300)
    cache.clear()
    for round_ in range(20):
        text = " ".join(f"abc{round_ * 1000 + i}" + "ab" * (i % 5) for i in range(150))
        byte_level.encode(text, compiled)
        assert len(cache) <= 64
        assert cache.weight == _exact_weight(cache) <= 300
    assert estimated_bytes("k", compiled) == 2 * byte_level.RULE_BYTES + byte_level.FIXED_BYTES


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="RSS is read from /proc")
def test_a_full_segment_cache_costs_what_the_readme_says():
    """Filled far past its bounds with its worst entries, one list's piece cache grows RSS by under 40 MB."""
    script = textwrap.dedent(
        """
        import random
        from webapp.tokenizer.core.list_order import byte_level

        def rss():
            with open("/proc/self/status") as status:
                return next(int(l.split()[1]) for l in status if l.startswith("VmRSS:")) / 1024

        cache = byte_level.compile_byte_merges([[97, 98, 256]]).segment_cache
        rng = random.Random(1)
        before = rss()
        for _ in range(200):  # 200,000 pieces of 15 bytes, 7 fresh ids each: 3 times the entry bound
            cache.put_many([(rng.randbytes(15), tuple(rng.randrange(256, 1 << 20) for _ in range(7)) + (97,))
                            for _ in range(1000)])
        print(len(cache), cache.weight, rss() - before)
        """
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": ROOT}, timeout=120)
    entries, weight, grown = run.stdout.split()
    assert int(entries) <= byte_level.SEGMENT_CACHE_ENTRIES
    assert int(weight) <= byte_level.SEGMENT_CACHE_WEIGHT
    assert float(grown) < 40


def test_pretoken_and_chunk_caches_stay_within_their_bounds(monkeypatch):
    from webapp.tokenizer.pretokenize import textencode

    compiled = byte_level.compile_byte_merges([[97, 98, 256], [256, 99, 257]])
    textencode.clear_text_caches(compiled)
    monkeypatch.setattr(textencode, "PRETOKEN_CACHE_ENTRIES", 40)
    monkeypatch.setattr(textencode, "PRETOKEN_CACHE_WEIGHT", 200)
    monkeypatch.setattr(textencode, "CHUNK_ENTRIES", 12)
    monkeypatch.setattr(textencode, "CHUNK_WEIGHT", 300)
    for round_ in range(15):
        lines = [f"abc{round_}x{i} ab{i}c" for i in range(30)]
        text = "\n".join(lines)
        textencode.encode_split(compiled, text, "cl100k")  # (ids: test_chunks.py checks them; here the bounds)
        pretokens, chunks = textencode._caches(compiled, "cl100k")
        assert len(pretokens) <= 40 and pretokens.weight == _exact_weight(pretokens) <= 200
        assert len(chunks) <= 12 and chunks.weight == _exact_weight(chunks) <= 300
    textencode.clear_text_caches(compiled)


def test_the_preset_caches_hold_every_preset_once(monkeypatch):
    """One entry per preset and every preset's ranks in weight: all four stay, none is converted twice."""
    from webapp.tokenizer import get_tokenizer
    from webapp.tokenizer.presets import catalog, open_models, openai as presets, prepare

    names = presets.PRESET_NAMES
    caches = [NAMED[name] for name in ("presets.ranks", "presets.loaded", "presets.compiled")]
    for cache in caches:
        assert cache.max_entries == len(names) == 4
        assert cache.max_weight == presets.PRESET_RANKS == sum(presets.get_preset(n).n_ranks for n in names) == 400_790
    handles = NAMED["api.encodings"]  # every preset under both defaults, and tiktoken's other names
    assert handles.max_entries == handles.max_weight == 64 >= 2 * len(catalog.PRESET_NAMES) + 3
    if not all(presets.is_installed(n) and presets.is_prepared(prepare.DEFAULT_CACHE_DIR, n) for n in names):
        pytest.skip("the presets are not installed and prepared (make setup)")
    from webapp.tokenizer.presets import cache as preset_cache

    monkeypatch.setattr(preset_cache, "_CHOSEN", [prepare.DEFAULT_CACHE_DIR])
    for name in presets.PRESETS:  # aliases too: they share their preset's entries
        presets.load_ranks(name)
        presets.load_compiled(name)
        get_tokenizer(name).decode([0])
    for cache in caches:
        assert sorted(cache.data) == sorted(names)
        assert cache.weight == _exact_weight(cache) <= cache.max_weight
    assert {(name, "playground") for name in names} <= set(handles.data)
    assert {(name, "library") for name in names} <= set(handles.data)  # whose stages the playground's share
    assert all(handles.data[(n, "playground")].tokenizer is handles.data[(n, "library")].tokenizer for n in names)
    assert handles.weight == _exact_weight(handles) <= handles.max_weight


def test_special_token_regexes_stay_within_their_bounds(monkeypatch):
    from webapp.tokenizer.stages import special as real

    cache = NAMED["special.regexes"]
    assert (cache.max_entries, cache.max_weight) == (real.SPECIAL_RE_ENTRIES, real.SPECIAL_RE_CHARS) == (64, 4_000_000)
    monkeypatch.setattr(cache, "max_weight", 400)
    cache.clear()
    for n in range(100):
        allowed = frozenset(f"<|s{n}-{i}|>" for i in range(n % 7 + 1))
        text = "a" + "b".join(sorted(allowed)) + "c"
        assert [part for part, special in real.split_special(text, allowed) if special] == sorted(allowed)
        assert len(cache) <= 64
        assert cache.weight == _exact_weight(cache) <= 400
    huge = frozenset(f"<|{'x' * 50}{i}|>" for i in range(10))  # 560 characters: never kept
    assert len(real.split_special("".join(sorted(huge)), huge)) == 10
    assert huge not in cache.data
    cache.clear()


def test_id_map_relabels_stay_within_their_bounds(monkeypatch):
    from webapp.tokenizer.pretokenize import textencode

    cache = NAMED["textencode.relabels"]
    assert (cache.max_entries, cache.max_weight) == (textencode.RELABEL_ENTRIES, textencode.RELABEL_WEIGHT)
    monkeypatch.setattr(cache, "max_weight", 300)
    cache.clear()
    compiled = byte_level.compile_byte_merges([[97, 98, 256], [256, 99, 257]])
    maps = [{97: 1000 + n, 257: 2000 + n, **{300 + j: j for j in range(n % 30)}} for n in range(100)]
    for mapping in maps:  # up to 32 entries each: ids in the file's numbering, the Relabel made once
        assert textencode.relabel_for(mapping) is textencode.relabel_for(mapping)
        ids = textencode.encode_split(compiled, "abc ab a", "gpt2", mapping)
        assert ids == [mapping[257], 32, 256, 32, mapping[97]]
        assert len(cache) <= 64
        assert cache.weight == _exact_weight(cache) <= 300
    big = {b: 10_000 + b for b in range(400)}  # heavier than the cache: a new Relabel each time, same ids
    assert textencode.relabel_for(big) is not textencode.relabel_for(big)
    assert textencode.encode_split(compiled, "abc a", "gpt2", big) == [big[257], big[32], big[97]]
    cache.clear()


def test_character_class_runs_stay_within_their_bounds(monkeypatch):
    from webapp.tokenizer.vocab import char_kinds

    cache = NAMED["vocab.atom_runs"]
    assert (cache.max_entries, cache.max_weight) == (256, 16 * 2**20)
    monkeypatch.setattr(cache, "max_entries", 8)
    monkeypatch.setattr(cache, "max_weight", 100)  # (bytes: six one-character classes of two int64 bounds each)
    cache.clear()
    codes, _ = char_kinds.code_points()
    for i in range(20):  # (CJK ideographs: one code point each, at its own place among the code points)
        at = int(codes.searchsorted(0x4E00 + i))
        assert char_kinds._atom_runs(chr(0x4E00 + i), False).tolist() == [at, at + 1]
        assert len(cache) <= 6
        assert cache.weight == _exact_weight(cache) <= 100
    wide = char_kinds._atom_runs(r"\p{Ll}", False)  # (hundreds of runs: heavier than the whole cache, not kept)
    assert len(wide) > 100 and (r"\p{Ll}", False) not in cache.data
    cache.clear()


# --- the worker-wide budget of the caches inside compiled lists -------------

def test_a_budget_sheds_the_least_recently_used_cache_first():
    from webapp.tokenizer.caches import CacheBudget

    budget = CacheBudget(80)
    old: BoundedCache[str, int] = BoundedCache(100, 60, budget=budget)
    new: BoundedCache[str, int] = BoundedCache(100, 60, budget=budget)
    for i in range(5):
        old.put(f"old{i:03d}" + "x" * 2, i)  # 8 units each: 40
    for i in range(4):
        new.put(f"new{i:03d}" + "y" * 2, i)  # 32: 72 in all, within 80
    assert budget.total == 72 and len(old) == 5
    new.put("new-last", 9)  # 80: at the limit, nothing goes
    new.put("new-over!", 9)  # 89 > 80: down to 70 (7/8), the old cache's oldest first
    assert budget.total == old.weight + new.weight <= 70
    assert len(new) == 6  # the cache in use lost nothing
    assert list(old.data) == [f"old{i:03d}xx" for i in range(5 - len(old), 5)]  # the oldest went
    del old
    new.put("z", 1)  # a dead cache's weight leaves the total
    assert budget.total == new.weight and len(budget.caches()) == 1


def test_the_budget_counts_what_put_many_adds_exactly():
    """A batch stored into a cache that already holds entries adds its own weight to the budget, no more."""
    from webapp.tokenizer.caches import CacheBudget

    budget = CacheBudget(10_000)  # (far above the weights: no rebalance sums the total afresh)
    cache: BoundedCache[str, int] = BoundedCache(100, 1_000, budget=budget)
    cache.put_many([(f"first{i}", i) for i in range(10)])  # 6 units each
    cache.put_many([(f"second{i}", i) for i in range(5)])  # 7 units each
    assert cache.weight == 60 + 35
    assert budget.total == cache.weight
    cache.put_many([("first0", 0), ("third", 3)])  # one key there already: the weight is summed afresh
    assert budget.total == cache.weight == 95 + 5
    for round_ in range(3):  # (the third batch passes 100 entries: the oldest quarters go first)
        cache.put_many([(f"more{round_}-{i:02d}", i) for i in range(40)])
        assert len(cache) <= 100 and budget.total == cache.weight
    assert "first1" not in cache.data


def _fill_lists(count: int, rounds: int, budget_limit: int) -> list[int]:
    """Encode distinct text through `count` compiled lists (pieces, text pieces, two schemes' chunks); the totals seen."""
    from webapp.tokenizer import caches
    from webapp.tokenizer.pretokenize import textencode

    budget = caches.LIST_BUDGET
    lists = [byte_level.compile_byte_merges([[97, 98 + n, 256], [256, 99 + n, 257]]) for n in range(count)]
    char_lists = [char_level.compile_char_merges([["a", chr(98 + n)], ["a" + chr(98 + n), "c"]]) for n in range(count)]
    seen = []
    for round_ in range(rounds):
        for n, (compiled, chars) in enumerate(zip(lists, char_lists)):
            text = "\n".join(f"abc{n}x{round_}y{i} ab{i}c {i * 7919}" for i in range(60))
            expected = byte_level.encode(text, compiled)  # the piece cache of the list
            assert textencode.encode_split(compiled, text, "none") == expected  # unchanged by any eviction
            textencode.encode_split(compiled, text, "cl100k")
            assert "".join(chars.tokens(text)) == text  # the character-level list's piece cache
            seen.append(budget.total)
            assert budget.total == sum(cache.weight for cache in budget.caches()) <= budget_limit
    return seen


def test_many_compiled_lists_stay_within_the_worker_budget(monkeypatch):
    from webapp.tokenizer import caches

    budget = caches.LIST_BUDGET
    monkeypatch.setattr(budget, "limit", 20_000)
    evictions = budget.evictions
    seen = _fill_lists(count=14, rounds=6, budget_limit=20_000)
    assert max(seen) > 15_000  # the budget was reached ...
    assert budget.evictions > evictions  # ... and held by evicting


def test_the_app_sets_the_budget_from_its_setting(tmp_path):
    from tests.conftest import make_app
    from webapp.tokenizer import caches

    before = caches.LIST_BUDGET.limit
    try:
        make_app(tmp_path, CACHE_BUDGET_MB=3)
        assert caches.LIST_BUDGET.limit == 3 * 2**20 // caches.BUDGET_BYTES_PER_UNIT
    finally:
        caches.LIST_BUDGET.limit = before


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="RSS is read from /proc")
def test_the_worker_budget_holds_rss_as_the_readme_says():
    """8 lists offered 4x a 600,000-unit budget of worst-case pieces grow RSS by under the budget x 100 bytes."""
    script = textwrap.dedent(
        """
        import random
        from webapp.tokenizer import caches
        from webapp.tokenizer.core.list_order import byte_level

        def rss():
            with open("/proc/self/status") as status:
                return next(int(l.split()[1]) for l in status if l.startswith("VmRSS:")) / 1024

        caches.LIST_BUDGET.limit = 600_000
        lists = [byte_level.compile_byte_merges([[97, 98 + n, 256]]) for n in range(8)]
        rng = random.Random(1)
        before = rss()
        for compiled in lists:  # 8 x 20,000 pieces of 15 bytes: 2.4 M units offered
            for _ in range(20):
                compiled.segment_cache.put_many([(rng.randbytes(15), tuple(rng.randrange(256, 1 << 20) for _ in range(7)) + (97,))
                                          for _ in range(1000)])
        print(caches.LIST_BUDGET.total, rss() - before)
        """
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": ROOT}, timeout=120)
    total, grown = run.stdout.split()
    assert int(total) <= 600_000
    from webapp.tokenizer import caches

    print("budget RSS growth MB", grown)
    assert float(grown) < 600_000 * caches.BUDGET_BYTES_PER_UNIT / 2**20  # 57 MB


def test_the_in_process_tokenizer_store_keeps_its_bounds():
    # Without blob storage, opened files live in FALLBACK_BLOBS: 16 of them, 64 MiB in all.
    cache = tokenizer_store.FALLBACK_BLOBS
    for i in range(40):
        cache.put(f"id{i}", bytes(1000))
    assert len(cache.data) <= cache.max_entries == 16
    cache.put("huge", bytes(cache.max_weight + 1))  # heavier than the whole cache: never kept
    assert cache.get("huge") is None
    assert cache.weight <= cache.max_weight


@pytest.mark.slow
def test_printable_token_texts_are_cached_within_their_bounds():
    long_token = "x" * 65_536  # the longest token LIMIT_TOKEN_BYTES allows
    for i in range(200):
        assert viewmodels.printable(long_token + str(i)).startswith("xxx")
    assert viewmodels.PRINTABLE_TEXT.weight <= viewmodels.PRINTABLE_TEXT.max_weight
    assert viewmodels.printable_bytes(b"a\xff") == "a<FF>"
    assert viewmodels.PRINTABLE_BYTES.get(b"a\xff") == "a<FF>"
