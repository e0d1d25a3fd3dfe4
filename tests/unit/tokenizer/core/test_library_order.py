"""The library-order engine (core/library_order/merges.py) against its literal statement and the library itself.

`reference.library_order_merge` is the order written literally (lowest rank
present fires, leftmost among equals, one occurrence at a time). The engine
must equal it on any rule list: out-of-order rules, rules listed twice,
rules whose new id equals an operand, long words (the heap path) and short
ones (the scan). Then small files built from such lists must give the ids
`tokenizers` gives.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples
from tokenizers import Tokenizer

from webapp.tokenizer import reference
import numpy as np

from webapp.tokenizer.core.library_order.merges import SHORT_WORD, LibraryMerges
from webapp.tokenizer.core.alphabet import model_piece, model_pieces
from webapp.tokenizer.models.library import BATCH_MERGE, LibraryModel, read_model_options

ids = st.integers(min_value=0, max_value=7)
rule_lists = st.lists(st.tuples(ids, ids, st.integers(min_value=0, max_value=12)), max_size=25)
words = st.lists(ids, max_size=3 * SHORT_WORD)


@settings(max_examples=examples(50), deadline=None)
@given(rule_lists.filter(bool))
def test_pair_keys_are_the_pair_maps_keys_and_a_stored_table_gives_them_without_it(rules):
    plain = LibraryMerges(rules)
    assert sorted(plain.pair_keys().tolist()) == sorted(plain.ranks)
    stored = LibraryMerges(np.array(rules, dtype=np.int64), plain.pair_table())  # (as a preset's stored form)
    assert sorted(stored.pair_keys().tolist()) == sorted(plain.ranks)
    assert stored._ranks is None  # (the pair map is still not made: reading the keys stays cheap)


@settings(max_examples=examples(400), deadline=None)
@given(rule_lists, words)
def test_engine_equals_the_literal_order(rules, word):
    merges = LibraryMerges(rules)
    expected = reference.library_order_merge(word, rules)
    assert merges.merge(word) == expected
    firings: list[tuple[int, int, int]] = []
    assert merges.merge(word, firings) == expected  # the heap path, whatever the length
    assert len(firings) == len(word) - len(expected)
    assert [r for r, _, _ in firings] == _fired_ranks(word, rules)


def _fired_ranks(word, rules):
    """The literal order once more, recording the rank of each merge."""
    rank = {(a, b): i for i, (a, b, _) in enumerate(rules)}
    seq, out = list(word), []
    while True:
        present = [(rank[p], i) for i, p in enumerate(zip(seq, seq[1:])) if p in rank]
        if not present:
            return out
        best, i = min(present)
        out.append(best)
        seq[i : i + 2] = [rules[best][2]]


def test_worked_examples():
    # rule 0 needs "bb", made only by rule 1: the seed order never fires it, the library's does
    rules = [(10, 10, 11), (1, 1, 10)]
    assert LibraryMerges(rules).merge([1, 1, 1, 1]) == [11]
    assert reference.encode(bytes([1, 1, 1, 1]).decode(), [[10, 10, 11], [1, 1, 10]]) == [10, 10]
    # a pair listed twice: the last listing's rank and new id
    assert LibraryMerges([(1, 2, 5), (3, 3, 6), (1, 2, 7)]).merge([3, 3, 1, 2]) == [6, 7]
    # one occurrence at a time: a lower rule made meanwhile fires before the next occurrence
    rules = [(4, 1, 5), (1, 2, 4)]  # (ab, a) before (a, b)
    assert LibraryMerges(rules).merge([1, 2, 1, 2]) == [5, 2]


@settings(max_examples=examples(300), deadline=None)
@given(rule_lists, st.lists(st.lists(ids, min_size=1, max_size=SHORT_WORD + 12), max_size=12))
def test_many_words_at_once_equal_the_literal_order(rules, word_list):
    """`merge_many` (first pair ranks looked up with numpy) gives each word's literal merge."""
    merges = LibraryMerges(rules)
    word_list = [w for w in word_list if max(w) < merges.shift]  # (its precondition: ids below the shift)
    flat = np.array([s for w in word_list for s in w], dtype=np.int64)
    ends = np.cumsum([len(w) for w in word_list]).tolist()
    assert merges.merge_many(flat, ends) == [reference.library_order_merge(w, rules) for w in word_list]


def test_many_words_without_a_pair_table_go_one_by_one():
    merges = LibraryMerges([(1, 2, 1 << 40), (1 << 40, 3, 5)])  # (keys past int64: no numpy table)
    assert merges.pair_table() is None
    assert merges.merge_many(np.array([1, 2, 3, 1, 2], dtype=np.int64), [3, 5]) == [[5], [1 << 40]]


def test_a_stored_pair_table_that_does_not_match_is_refused():
    merges = LibraryMerges([(1, 2, 3), (3, 3, 4)])
    keys, ranks = merges.pair_table()
    with pytest.raises(ValueError):
        merges.set_pair_table(keys[::-1].copy(), ranks)
    with pytest.raises(ValueError):
        merges.set_pair_table(keys[:1], ranks[:1])


# --- small files against the library ------------------------------------------------------

LETTERS = "abcd"


def _file(rules: list[tuple[str, str]]) -> str:
    vocab: dict[str, int] = {}
    for ch in LETTERS:
        vocab.setdefault(ch, len(vocab))
    kept = []
    for a, b in rules:
        if a in vocab and b in vocab:
            vocab.setdefault(a + b, len(vocab))
            kept.append([a, b])
    doc = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": None, "post_processor": None, "decoder": None,
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": False, "vocab": vocab, "merges": kept},
    }
    return json.dumps(doc)


tokens = st.text(alphabet=LETTERS, min_size=1, max_size=3)


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(st.tuples(tokens, tokens), max_size=20), st.text(alphabet=LETTERS, max_size=40))
def test_small_files_follow_the_library(rules, text):
    content = _file(rules)
    doc = json.loads(content)
    library = Tokenizer.from_str(content)
    vocab = doc["model"]["vocab"]
    merges = LibraryMerges([(vocab[a], vocab[b], vocab[a + b]) for a, b in doc["model"]["merges"]])
    expected = library.encode(text, add_special_tokens=False).ids if text else []
    assert merges.merge([vocab[ch] for ch in text]) == expected


@pytest.mark.parametrize("size", [2, SHORT_WORD, SHORT_WORD + 1, 500])
def test_runs_of_one_symbol(size):
    rules = [(0, 0, 1), (1, 1, 2), (2, 2, 3)]
    expected = reference.library_order_merge([0] * size, rules)
    assert LibraryMerges(rules).merge([0] * size) == expected


@settings(max_examples=examples(300), deadline=None)
@given(rule_lists, st.lists(st.integers(min_value=0, max_value=40), max_size=SHORT_WORD))
def test_symbols_no_rule_knows(rules, word):
    """Ids above every rule's ids (a character no rule uses, an unknown token) take the checked scan."""
    assert LibraryMerges(rules).merge(word) == reference.library_order_merge(word, rules)


# --- the model: whole tokens and pieces in a row ---------------------------------------------


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(st.tuples(tokens, tokens), max_size=20), st.lists(st.text(alphabet=LETTERS + "e", max_size=12),
                                                                  max_size=12))
def test_whole_tokens_are_what_the_model_gives(rules, pieces):
    """`find_whole` marks exactly the tokens whose own text encodes to them; the table changes no answer."""
    doc = json.loads(_file(rules))
    vocab = doc["model"]["vocab"]
    options, _ = read_model_options(doc["model"])
    rule_ids = [(vocab[a], vocab[b], vocab[a + b]) for a, b in doc["model"]["merges"]]
    plain = LibraryModel(vocab, rule_ids, options, None)
    fast = LibraryModel(vocab, rule_ids, options, None)
    fast.whole = fast.find_whole()
    for token, token_id in vocab.items():
        assert fast.whole[token_id] == (plain.tokenize(token) == (token_id,))
    expected = [i for piece in pieces for i in plain.tokenize(piece)]
    assert fast.encode_pieces(list(pieces)) == expected
    assert fast.encode_pieces(list(pieces)) == expected  # (now from the cache)


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(st.tuples(tokens, tokens), max_size=20),
       st.lists(st.text(alphabet=LETTERS + "e\u00e9", min_size=1, max_size=70), min_size=BATCH_MERGE, max_size=40),
       st.booleans())
def test_pieces_merged_in_a_batch_equal_one_by_one(rules, pieces, fallback):
    """`_merge_segments` (characters and first ranks looked up with numpy from BATCH_MERGE pieces) gives
    `_merge_segment` of each, with characters that are no token (left out, or their fallback bytes)."""
    doc = json.loads(_file(rules))
    vocab = doc["model"]["vocab"]
    if fallback:
        doc["model"]["byte_fallback"] = True
        for b in range(256):
            vocab.setdefault(f"<0x{b:02X}>", len(vocab))
    options, _ = read_model_options(doc["model"])
    rule_ids = [(vocab[a], vocab[b], vocab[a + b]) for a, b in doc["model"]["merges"]]
    model = LibraryModel(vocab, rule_ids, options, None)
    assert model._merge_segments(list(pieces)) == [model._merge_segment(p) for p in pieces]
    model.whole = model.find_whole()
    expected = [i for piece in pieces for i in LibraryModel(vocab, rule_ids, options, None).tokenize(piece)]
    assert model.encode_pieces(list(pieces)) == expected


def _model(rules: list[tuple[str, str]]) -> tuple[LibraryModel, dict[str, int]]:
    doc = json.loads(_file(rules))
    vocab = doc["model"]["vocab"]
    options, _ = read_model_options(doc["model"])
    return LibraryModel(vocab, [(vocab[a], vocab[b], vocab[a + b]) for a, b in doc["model"]["merges"]],
                        options, None), vocab


def _early_merged(model: LibraryModel, vocab: dict[str, int], word: str) -> list[int]:
    """The word's symbols after its early pairs (core/library_order/early_pairs.py) merged."""
    ids = np.array([vocab[ch] for ch in word], dtype=np.int64)
    if not len(model.merges.pair_table()[0]) or len(ids) < 2:
        return ids.tolist()
    rank = model.merges._first_ranks(ids, model.merges.pair_table())
    from_table = model.early_pairs().unit_pair_ranks(ids)  # (-1: a pair the table does not hold)
    assert all(t in (-1, r) for t, r in zip(from_table.tolist(), rank.tolist()))
    merged, _lengths = model.early_pairs().merge_early(ids, rank, np.array([len(ids)]))
    return merged.tolist()


def test_early_pairs_merge_first_only_when_nothing_can_take_their_symbols():
    # (a, b) and (c, d): nothing else takes b or c; what they make is used only later
    model, vocab = _model([("a", "b"), ("c", "d"), ("ab", "cd")])
    assert _early_merged(model, vocab, "abcd") == [vocab["ab"], vocab["cd"]]
    assert model._merge_segments(["abcd"] * BATCH_MERGE) == [(vocab["abcd"],)] * BATCH_MERGE
    # (b, c) comes first and takes b: (a, b) is not early, and "abc" merges to a, bc as in the library
    model, vocab = _model([("b", "c"), ("a", "b")])
    assert _early_merged(model, vocab, "abc") == [vocab["a"], vocab["bc"]]
    assert model._merge_segments(["abc"] * BATCH_MERGE) == [(vocab["a"], vocab["bc"])] * BATCH_MERGE
    # what (a, b) makes is an operand of a rule listed before it: not early
    vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4}
    model = LibraryModel(vocab, [(3, 2, 4), (0, 1, 3)], read_model_options({})[0], None)
    assert _early_merged(model, vocab, "abc") == [0, 1, 2]
    assert model._merge_segments(["abc"] * BATCH_MERGE) == [(4,)] * BATCH_MERGE


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.tuples(tokens, tokens), max_size=24),
       st.lists(st.text(alphabet=LETTERS, min_size=1, max_size=SHORT_WORD + 8), min_size=1, max_size=8))
def test_early_pairs_change_no_answer(rules, words):
    """Early pairs merged first, then the rest: the literal order's answer, and the library's."""
    model, vocab = _model(rules)
    content = _file(rules)
    library = Tokenizer.from_str(content)
    rule_ids = [(vocab[a], vocab[b], vocab[a + b]) for a, b in json.loads(content)["model"]["merges"]]
    for word in words:
        expected = reference.library_order_merge([vocab[ch] for ch in word], rule_ids)
        assert model.merges.merge(_early_merged(model, vocab, word)) == expected
        assert expected == library.encode(word, add_special_tokens=False).ids
    assert model._merge_segments(list(words) * BATCH_MERGE) == [model._merge_segment(w) for w in words] * BATCH_MERGE


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.text(max_size=6), max_size=8), st.booleans(), st.booleans())
def test_model_pieces_spell_each_piece(pieces, byte_level, spelt):
    assert model_pieces(pieces, byte_level, spelt) == [model_piece(p, byte_level, spelt) for p in pieces]
