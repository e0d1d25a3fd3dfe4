"""core/collector.py: the collector is off inside every pause and back as it was after the last one."""

from __future__ import annotations

import gc
import threading
from typing import Any

import pytest

from webapp.tokenizer.core.collector import collector_paused

pytestmark = pytest.mark.usefixtures("collector_on")  # (tests/conftest.py)


def test_off_inside_and_on_after() -> None:
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_an_inner_pause_ending_leaves_the_outer_one_paused() -> None:
    with collector_paused():
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    with collector_paused(collect=True):
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_an_error_inside_still_turns_it_back_on() -> None:
    with pytest.raises(ValueError):
        with collector_paused():
            raise ValueError("inside")
    assert gc.isenabled()


def test_collect_runs_one_full_collection_when_the_pause_ends() -> None:
    full: list[int] = []

    def count(phase: str, info: dict[str, Any]) -> None:
        if phase == "stop" and info["generation"] == 2:
            full.append(1)
    gc.callbacks.append(count)
    try:
        with collector_paused():
            pass
        assert full == []
        with collector_paused(collect=True):
            assert full == []
        assert full == [1]
    finally:
        gc.callbacks.remove(count)


def test_pauses_in_two_threads_overlapping_end_with_the_collector_on() -> None:
    # Thread A pauses first and ends first, while B's pause (begun inside A's) still runs: the collector
    # must stay off until B ends, then be on again (B alone would think it had been off before).
    a_paused, b_paused, a_done = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def a() -> None:
        with collector_paused():
            a_paused.set()
            b_paused.wait(5)
        a_done.set()

    def b() -> None:
        a_paused.wait(5)
        with collector_paused():
            b_paused.set()
            a_done.wait(5)
            seen["after A ended, inside B"] = gc.isenabled()
    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen == {"after A ended, inside B": False}
    assert gc.isenabled()
