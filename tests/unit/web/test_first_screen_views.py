"""View helpers behind the first screen: neighbour hues, chart ticks, code spans in errors."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from webapp.web.common import train_views as tv
from webapp.web.common import viewmodels as vm
from webapp.web.playground.pages import code_spans
from webapp.tokenizer import encode_trace


@given(st.lists(st.integers(0, 2000), max_size=60))
def test_neighbours_never_share_a_hue_and_colors_are_deterministic(ids):
    previous = None
    hues = []
    for token_id in ids:
        hue = vm.neighbour_hue(previous, token_id)
        assert hue != previous
        # a token keeps its own id's hue unless the left neighbour already has it
        assert hue == vm.hue_class(token_id) or previous == vm.hue_class(token_id)
        hues.append(hue)
        previous = hue
    again, previous = [], None
    for token_id in ids:
        previous = vm.neighbour_hue(previous, token_id)
        again.append(previous)
    assert again == hues


def test_t_and_space_differ_on_the_page():
    # ids 116 ("t") and 32 (" ") are both hue 8 by id
    assert vm.hue_class(116) == vm.hue_class(32)
    groups = vm.byte_token_views(encode_trace("t t", []), "t t")
    hues = [t.hue for g in groups for t in g.tokens]
    assert all(a != b for a, b in zip(hues, hues[1:]))


@given(st.integers(0, 10**7))
def test_chart_ticks_are_nice_integers_covering_the_maximum(top):
    ticks = tv.nice_ticks(top)
    assert ticks[0] == 0 and ticks[-1] >= top
    steps = {b - a for a, b in zip(ticks, ticks[1:])}
    assert len(steps) == 1  # evenly spaced
    step = steps.pop()
    assert str(step).rstrip("0") in ("1", "2", "5")  # 1, 2, 5 times a power of ten
    assert len(ticks) <= 6


def test_tiny_chart_has_every_count_and_narrow_bars():
    assert tv.nice_ticks(3) == [0, 1, 2, 3]
    rows = [tv.TrainRow(1, "l", "o", "lo", 3, 0, "hue-0"), tv.TrainRow(2, "lo", "w", "low", 3, 1, "hue-1")]
    chart = tv.count_chart(rows)
    assert [t for _, t in chart.ticks] == [0, 1, 2, 3]
    assert all(b.width <= tv.CHART_MAX_BAR for b in chart.bars)


def test_backticks_in_messages_become_code_and_the_rest_stays_escaped():
    assert str(code_spans("use `a b` not <b>")) == "use <code>a b</code> not &lt;b&gt;"
    assert str(code_spans("`<x>`")) == "<code>&lt;x&gt;</code>"
    assert str(code_spans("one ` only")) == "one ` only"
