"""Byte-level encode: the worked examples of docs/algorithms.md and every corner of the contract."""

from __future__ import annotations

import copy

import pytest

from webapp.tokenizer import reference
from webapp.tokenizer import TokenizerError, compile_byte_merges, encode, implied_byte_vocab
from webapp.tokenizer.core.list_order import engine

LOW = [[108, 111, 256], [256, 119, 257]]


def test_seed_low():
    assert encode("low", LOW) == [257]


def test_seed_aaa_leaves_the_last_a():
    assert encode("aaa", [[97, 97, 256]]) == [256, 97]


def test_seed_new_equal_to_operand_is_not_rescanned():
    assert encode("aaaa", [[97, 97, 97]]) == [97, 97]


def test_visit_output_is_not_rescanned_but_later_rules_see_it():
    # "abb": ab -> a in one visit; the new "a b" is left for a later visit.
    assert encode("abb", [[97, 98, 97]]) == [97, 98]
    assert encode("abb", [[97, 98, 97], [97, 98, 97]]) == [97]


def test_forward_reference_matches_nothing():
    # Rule 1 names 256, which only rule 2 makes: rule 1 never fires.
    assert encode("abc", [[256, 99, 257], [97, 98, 256]]) == [256, 99]


def test_duplicate_pair_is_applied_twice():
    assert encode("aaaa", [[97, 97, 97], [97, 97, 97]]) == [97]
    assert encode("aaaa", [[97, 97, 256]]) == [256, 256]


def test_new_below_256():
    assert encode("ab", [[97, 98, 99]]) == [99]
    assert encode("abc", [[97, 98, 99], [99, 99, 100]]) == [100]


def test_rules_in_list_order_not_by_id():
    merges = [[98, 99, 300], [97, 98, 256]]
    assert encode("abc", merges) == [97, 300]


def test_multibyte_text_starts_from_utf8_bytes():
    assert encode("é", []) == [0xC3, 0xA9]
    assert encode("é", [[0xC3, 0xA9, 256]]) == [256]
    assert encode("日本", [[0xE6, 0x97, 256], [256, 0xA5, 257]]) == [257, 0xE6, 0x9C, 0xAC]


def test_empty_inputs():
    assert encode("", LOW) == []
    assert encode("", []) == []
    assert encode("low", []) == [108, 111, 119]


def test_arguments_are_not_modified():
    merges = [[108, 111, 256], [256, 119, 257]]
    before = copy.deepcopy(merges)
    encode("low low", merges)
    assert merges == before


def test_tuples_work_where_lists_do():
    assert encode("low", ((108, 111, 256), (256, 119, 257))) == [257]
    assert encode("low", [(108, 111, 256), [256, 119, 257]]) == [257]


def test_compiled_merges_are_reusable_and_shared_by_content():
    compiled = compile_byte_merges(LOW)
    assert encode("low", compiled) == [257]
    assert encode("lowlow", compiled) == [257, 257]
    assert compile_byte_merges([list(r) for r in LOW]) is compiled
    assert compile_byte_merges(compiled) is compiled
    assert len(compiled) == 2


def test_segment_cache_is_bounded(monkeypatch):
    compiled = compile_byte_merges([[97, 98, 256], [256, 99, 257]])
    compiled.segment_cache.data.clear()
    monkeypatch.setattr(compiled.segment_cache, "max_entries", 10)
    text = " ".join(f"ab{i}c" for i in range(200))
    assert encode(text, compiled) == reference.encode(text, compiled.rules)
    assert len(compiled.segment_cache) <= 10


def test_cut_points_agree_with_the_whole_text():
    # Rules that join across a space and others that never do.
    merges = [[32, 97, 256], [98, 32, 257], [97, 98, 258], [256, 258, 259], [259, 257, 260]]
    for text in ["ab ab ab", " ab", "b a", "  aab b ", "xab abx"]:
        assert encode(text, merges) == reference.encode(text, merges)


@pytest.mark.parametrize("small", [0, 1000])
def test_both_engine_paths(monkeypatch, small):
    """The list-rebuild path (short pieces) and the heap path (long ones) agree with the oracle."""
    monkeypatch.setattr(engine, "SMALL_SEGMENT", small)
    merges = [[97, 97, 256], [256, 97, 257], [97, 97, 97], [257, 256, 258], [97, 98, 256], [256, 256, 259]]
    for text in ["a" * n + "b" + "a" * (n // 2) for n in range(0, 60, 7)]:
        compiled = compile_byte_merges(merges)
        compiled.segment_cache.data.clear()
        assert encode(text, compiled) == reference.encode(text, merges)


def test_long_text_without_cut_points():
    merges = [[97, 97, 256], [256, 256, 257], [257, 257, 258], [258, 97, 259]]
    text = "a" * 5001
    assert encode(text, merges) == reference.encode(text, merges)


def test_lone_surrogate_is_an_error():
    with pytest.raises(TokenizerError) as info:
        encode("ab\ud800c", LOW)
    assert info.value.field == "text"
    assert info.value.location == {"position": 3, "offset": 2}
    assert "surrogate" in info.value.message


def test_invalid_merges_are_reported():
    with pytest.raises(TokenizerError) as info:
        encode("low", [[108, 111, 256], [108, "o", 256]])
    assert info.value.location == {"rule": 2}


def test_implied_vocab_well_formed():
    vocab = implied_byte_vocab(LOW)
    assert vocab[256] == b"lo" and vocab[257] == b"low"
    assert all(vocab[b] == bytes([b]) for b in range(256))
    assert len(vocab) == 258


def test_implied_vocab_odd_lists():
    # First definition wins; bytes keep their meaning; forward references define nothing.
    vocab = implied_byte_vocab([[97, 98, 256], [99, 100, 256], [97, 97, 97], [300, 97, 301], [1, 2, 300]])
    assert vocab[256] == b"ab"
    assert vocab[97] == b"a"
    assert 301 not in vocab
    assert vocab[300] == b"\x01\x02"


def test_edge_bytes_fixpoint_handles_forward_references():
    from webapp.tokenizer.core.list_order.byte_splits import edge_bytes, split_table

    rules = ((256, 99, 257), (97, 98, 256))
    first, last, one_pass = edge_bytes(rules)
    assert one_pass is None  # rule 1 read 256 before rule 2 defined it
    assert first[257] == 1 << 97 and last[257] == 1 << 99
    table = split_table(rules)
    assert not table[97, 98] and not table[98, 99]  # a|b and (ab)|c can be joined
    assert table[99, 97] and table[97, 99]


def test_split_table_of_a_well_formed_list():
    from webapp.tokenizer.core.list_order.byte_splits import split_table

    table = split_table(((108, 111, 256), (256, 119, 257)))
    assert not table[108, 111] and not table[111, 119]
    assert table[119, 108] and table.sum() == 256 * 256 - 2


def test_threads_share_a_compiled_list_safely(monkeypatch):
    import threading

    merges = [[97, 98, 256], [256, 99, 257], [32, 257, 258]]
    compiled = compile_byte_merges(merges)
    monkeypatch.setattr(compiled.segment_cache, "max_entries", 8)
    texts = [" ".join(f"abc{i}x{j}" for j in range(60)) for i in range(6)]
    expected = [reference.encode(text, merges) for text in texts]
    failures: list[str] = []

    def work(i: int) -> None:
        for _ in range(15):
            if encode(texts[i], compiled) != expected[i]:
                failures.append(texts[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert len(compiled.segment_cache) <= 8 + len(threads)  # a racing store may pass the cap by one per thread


def test_huge_ids_are_taken_literally():
    merges = [[97, 98, 2**70], [2**70, 99, 5], [99, 99, 2**40], [97, 98, 2**31 + 5]]
    for text in ["abc abcc ab", "cccc", "", "a", "abab"]:
        assert encode(text, merges) == reference.encode(text, merges)
    assert implied_byte_vocab(merges)[2**70] == b"ab"


def test_segment_cache_bounds_total_segment_length(monkeypatch):
    compiled = compile_byte_merges([[97, 98, 256], [256, 256, 257]])
    compiled.segment_cache.clear()
    monkeypatch.setattr(compiled.segment_cache, "max_weight", 100)
    text = " ".join("ab" * (i % 7 + 1) + "x" * (i % 5) for i in range(300))
    assert encode(text, compiled) == reference.encode(text, compiled.rules)
    weight = sum(len(piece) for piece in compiled.segment_cache.data)
    assert weight == compiled.segment_cache.weight
    assert weight <= 100 + 16  # at most one piece past the cap


def test_long_text_with_many_pieces():
    # Over 32 KiB: pair ranks are converted per missing piece instead of per text.
    merges = [[116, 104, 256], [256, 101, 257], [32, 257, 258], [97, 110, 259], [259, 100, 260], [111, 102, 261]]
    words = ["the", "and", "of", "theory", "band", "often", "ab", "x", "thethe", "andand"]
    text = " ".join(words[(i * 7) % len(words)] + str(i % 13) for i in range(8000))
    assert len(text.encode()) > 40_000
    compiled = compile_byte_merges(merges)
    compiled.segment_cache.clear()
    assert encode(text, compiled) == reference.encode(text, merges)
