"""core/int_pool.py: one shared int object per number, the same values, nothing interned past the limit."""

from __future__ import annotations

from webapp.tokenizer.core.int_pool import POOL_LIMIT, interned, shared_range


def test_interned_values_are_equal_and_one_object_per_number():
    values = [int(str(v)) for v in (5, 300_000, 70_000, 300_000, 0)]  # fresh objects
    out = interned(values)
    assert out == tuple(values)
    assert out[1] is out[3] is interned([int("300000")])[0]
    assert list(shared_range(4)) == [0, 1, 2, 3]
    assert next(iter(shared_range(70_001)), None) == 0 and list(shared_range(70_001))[70_000] is out[2]


def test_values_past_the_limit_or_negative_are_left_alone():
    big = [1, int(str(POOL_LIMIT))]
    assert interned(big) == tuple(big) and interned(big)[1] is big[1]  # (its own objects)
    negative = [3, -1]
    assert interned(negative) == tuple(negative)
    assert interned([]) == ()
    assert list(shared_range(POOL_LIMIT + 2))[-1] == POOL_LIMIT + 1
