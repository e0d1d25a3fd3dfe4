"""The cyclic garbage collector paused while one bounded piece of work builds many objects.

Reading a file's rules or deciding every token's reachability makes hundreds of thousands
of containers that live to the end of the work; each full collection their allocation
triggers walks all of them again (gpt_oss's reachability pass: 12.2 s with the collector,
6.1 s without; gemma3's GGUF import 4.7 s and 2.6 s); a long text's new segments are a smaller
such batch (models/library.py). Reference counting still frees what the work drops; only
cycles wait for the collector's next run.
What it does not do: pause across processes, or stay paused after the last pause ends.
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

_lock = threading.Lock()
_depth = 0  # (pauses under way in this process, any thread)
_was_on = False  # (whether the collector ran before the first of them)


@contextmanager
def collector_paused(collect: bool = False) -> Iterator[None]:
    """The collector off inside; on again when the process's last pause ends, if it was on before
    the first, and then one full collection if `collect` (so that the objects just made do not
    trigger one in the next request's first encode)."""
    global _depth, _was_on
    with _lock:
        if _depth == 0:
            _was_on = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            resume = _depth == 0 and _was_on
            if resume:
                gc.enable()
        if resume and collect:
            gc.collect()


__all__ = ["collector_paused"]
