"""What each trace step changed, and the window of a long sequence, against a literal replay.

The oracle applies the rules one pass each, literally (every rule visited once
in order, non-overlapping matches left to right), and notes after every pass
that matched something: the new sequence, the text offset where each symbol
starts, and the indices of the symbols the pass made. `encode_trace` must mark
exactly those (`changed`) while it records the whole sequence, and cut the
same window around the first match when it does not.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from webapp.tokenizer import TraceLimits, encode_trace
from webapp.tokenizer.core.list_order.tracing import WINDOW_RADIUS


def literal_passes(data: bytes, merges: list[list[int]]) -> list[tuple[int, list[int], list[int], list[int]]]:
    seq, offsets = list(data), list(range(len(data)))
    out = []
    for rule, (left, right, new) in enumerate(merges):
        nseq: list[int] = []
        noffs: list[int] = []
        made: list[int] = []
        k = 0
        while k < len(seq):
            if k + 1 < len(seq) and seq[k] == left and seq[k + 1] == right:
                made.append(len(nseq))
                nseq.append(new)
                noffs.append(offsets[k])
                k += 2
            else:
                nseq.append(seq[k])
                noffs.append(offsets[k])
                k += 1
        if made:
            out.append((rule, nseq, noffs, made))
        seq, offsets = nseq, noffs
    return out


def check(text: str, merges: list[list[int]]) -> None:
    passes = literal_passes(text.encode(), merges)
    whole = encode_trace(text, merges, limits=TraceLimits(max_steps=1000, max_sequence=10_000))
    assert [s.rule for s in whole.steps] == [p[0] for p in passes]
    for step, (_rule, seq, _offs, made) in zip(whole.steps, passes):
        assert step.sequence == tuple(seq)
        assert step.changed == tuple(made)
        assert step.window is None
    windowed = encode_trace(text, merges, limits=TraceLimits(max_steps=1000, max_sequence=0))
    for step, (_rule, seq, offs, made) in zip(windowed.steps, passes):
        assert step.sequence is None
        lo = max(0, made[0] - WINDOW_RADIUS)
        hi = min(len(seq), made[0] + WINDOW_RADIUS + 1)
        assert step.window == tuple(seq[lo:hi])
        assert step.window_start == offs[lo]
        assert step.changed == tuple(m - lo for m in made if lo <= m < hi)
        assert step.window_more == (lo > 0, hi < len(seq))


def test_seed_and_a_long_text():
    check("low", [[108, 111, 256], [256, 119, 257]])
    check("lower lowest slow " * 40, [[108, 111, 256], [256, 119, 257], [101, 114, 258], [257, 258, 259], [32, 259, 260]])


@settings(max_examples=examples(150), deadline=None)
@given(
    text=st.text(alphabet="abc ", max_size=80),
    rules=st.lists(st.tuples(st.sampled_from([97, 98, 99, 32, 256, 257, 258]), st.sampled_from([97, 98, 99, 32, 256, 257, 258])), max_size=6),
)
def test_changes_and_windows_match_the_literal_replay(text: str, rules: list[tuple[int, int]]) -> None:
    merges = [[a, b, 256 + i] for i, (a, b) in enumerate(rules)]
    check(text, merges)
