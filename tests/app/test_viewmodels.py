"""Traces to view objects: hues, whitespace marks, hex, character groups, trees, training rows."""

from __future__ import annotations

import re

from webapp import PROJECT_ROOT
from webapp import tokenizer as tk
from webapp.web.common import train_views as tv
from webapp.web.common import trace_views
from webapp.web.common import viewmodels as vm


def test_hue_depends_on_the_id_only_and_neighbouring_ids_differ():
    # The palette repeats every HUE_COUNT ids; any HUE_COUNT consecutive ids use all of it.
    assert vm.hue_class(257) == vm.hue_class(257 + vm.HUE_COUNT) != vm.hue_class(258)
    assert len({vm.hue_class(i) for i in range(256, 268)}) == vm.HUE_COUNT
    assert vm.hue_class(None) == "hue-none"


def test_every_hue_class_has_a_color_in_the_stylesheet():
    css = (PROJECT_ROOT / "static" / "app.css").read_text()
    for name in {vm.hue_class(i) for i in range(vm.HUE_COUNT)} | {vm.hue_class(None)}:
        assert re.search(rf"^\.{name} {{ --h: \d+; }}$", css, re.M), name


def test_whitespace_is_marked_and_newlines_kept_apart():
    segs = vm.text_segments("a b\tc\nd\x00")
    assert [(s.kind, s.text) for s in segs] == [
        ("text", "a"), ("ws", "·"), ("text", "b"), ("ws", "→"), ("text", "c"), ("nl", "↵"), ("text", "d"), ("ctrl", "␀"),
    ]


def test_bytes_that_are_not_utf8_alone_show_as_hex():
    segs, valid = vm.byte_segments(b"f\xc3")
    assert not valid
    assert [(s.kind, s.text) for s in segs] == [("text", "f"), ("hex", "C3")]
    segs, valid = vm.byte_segments("é".encode())
    assert valid and segs[0].text == "é"


def test_tokens_that_split_a_character_are_grouped():
    text = "café"
    merges = [[102, 195, 256]]  # "f" + first byte of "é"
    trace = tk.encode_trace(text, merges)
    groups = vm.byte_token_views(trace, text)
    grouped = [g for g in groups if g.grouped]
    assert len(grouped) == 1
    assert [t.id for t in grouped[0].tokens] == [256, 169]
    assert grouped[0].chars == "fé"
    assert grouped[0].tokens[0].hex == "66 C3" and not grouped[0].tokens[0].valid


def test_merge_tree_as_text():
    trace = tk.encode_trace("low", [[108, 111, 256], [256, 119, 257]])
    views = vm.byte_token_views(trace, "low")
    tree = views[0].tokens[0].tree.splitlines()
    assert tree[0] == '257  "low"  rule 2'
    assert tree[1] == '├ 256  "lo"  rule 1'
    assert tree[-1] == '└ 119  "w"'
    assert views[0].tokens[0].position == "token 1 · bytes 0–3"


def test_stats():
    stats = {s.key: s.value for s in vm.encode_stats("héllo", [1, 2], 3, 5)}
    assert stats == {"tokens": "2", "chars": "5", "bytes": "6", "bytes-per-token": "3.00", "rules-fired": "3 of 5"}


def test_trace_rows_show_start_and_each_pass():
    trace = tk.encode_trace("aaa", [[97, 97, 256], [1, 2, 300]])
    rows = trace_views.byte_trace_rows(trace)
    assert [r.label for r in rows] == ["start", "pass 1"]
    assert rows[1].rule == "rule 1: 97 97 → 256" and rows[1].matches == 1
    assert [c.text for c in rows[1].chips] == ["aa", "a"]


def test_training_rows_explain_ties():
    words = ["ab", "ba"]  # (a,b) and (b,a) tie at 1; (a,b) is smaller
    trace = tk.train_trace(words, 1)
    rows = tv.train_rows(trace, tk.training_vocab(words, trace.pairs))
    assert rows[0].tie
    assert 'tie at 1: ("a", "b") comes first' in rows[0].why
    assert rows[0].runners_up == [("b", "a", 1)]


def test_chart_has_one_bar_per_step_scaled_to_the_max():
    words = ["low", "lower", "lowest"]
    trace = tk.train_trace(words, 2)
    rows = tv.train_rows(trace, tk.training_vocab(words, trace.pairs))
    chart = tv.count_chart(rows)
    assert [b.count for b in chart.bars] == [3, 3]
    assert chart.bars[0].height == chart.bars[1].height > 0
    assert tv.count_chart([]) is None


def test_segmented_words_keep_first_seen_order_and_counts():
    pairs = [("l", "o")]
    views, distinct = tv.segmented_words(["low", "ox", "low"], pairs, {"lo": 5}, tk.char_tokens, 10)
    assert distinct == 2
    assert [(w.word, w.count, [c.text for c in w.tokens]) for w in views] == [("low", 2, ["lo", "w"]), ("ox", 1, ["o", "x"])]
