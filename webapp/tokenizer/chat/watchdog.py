"""The chat templates' time limit: one watchdog thread per process that stops a rendering past its deadline.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import time
from dataclasses import dataclass

import jinja2

#: The file name Jinja gives the code of a template made from a string.
TEMPLATE_FILE = "<template>"


class Timeout(BaseException):
    """Raised inside a rendering that passed its deadline (a BaseException: no template code can catch it)."""


@dataclass
class _Watch:
    thread_id: int
    deadline: float
    done: bool = False
    fired: bool = False


class _Watchdog:
    """One thread per process that stops renderings past their deadline."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.watches: list[_Watch] = []
        self.pid = 0
        # When the thread wakes next on its own (monotonic time; set under the lock before it waits).
        self.wake_at = 0.0

    def reset_after_fork(self) -> None:
        """In a forked child: a new lock and no watches (the parent's thread may have held the lock at the
        fork, and it does not run here); the next `watch` starts this process's own thread."""
        self.cond = threading.Condition()
        self.watches = []
        self.pid = 0
        self.wake_at = 0.0

    def watch(self, deadline: float) -> _Watch:
        item = _Watch(threading.get_ident(), deadline)
        with self.cond:
            if self.pid != os.getpid():  # first use in this process (a forked worker has no thread yet)
                self.pid = os.getpid()
                self.watches = []
                self.wake_at = 0.0
                threading.Thread(target=self._run, name="chat-template-watchdog", daemon=True).start()
            self.watches.append(item)
            # Woken only when it would otherwise sleep past this deadline: under steady use it wakes
            # about once per deadline, not once per rendering (waking it, it then wants the GIL in the
            # middle of the request's encode: about 6% of a chat count, bench_chat_counts.py).
            if deadline < self.wake_at or not self.wake_at:
                self.cond.notify()
        return item

    def release(self, item: _Watch) -> bool:
        """Stop watching; True when the deadline fired (the rendering is then refused)."""
        with self.cond:
            item.done = True
            if item in self.watches:
                self.watches.remove(item)
        if item.fired:
            try:
                for _ in range(1000):  # a pending Timeout is delivered here, within a few bytecodes
                    pass
            except Timeout:
                pass
            _set_async_exc(item.thread_id, None)
        return item.fired

    def _run(self) -> None:
        with self.cond:
            while True:
                now = time.monotonic()
                frames = sys._current_frames() if any(w.deadline <= now for w in self.watches) else {}
                for item in [w for w in self.watches if w.deadline <= now and not w.done]:
                    frame = frames.get(item.thread_id)
                    if frame is None or frame.f_code.co_filename != TEMPLATE_FILE:
                        item.deadline = now + 0.001  # only while template code runs (no lock is held there)
                        continue
                    item.fired = True
                    self.watches.remove(item)
                    _set_async_exc(item.thread_id, Timeout)
                wait = max(min((w.deadline for w in self.watches), default=now + 60) - now, 0.0005)
                self.wake_at = now + wait
                self.cond.wait(timeout=wait)


def _set_async_exc(thread_id: int, exc: type[BaseException] | None) -> None:
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(exc) if exc else None)


WATCHDOG = _Watchdog()


def raw_template_line(exc: BaseException, compiled: jinja2.Template | None) -> int | None:
    """The template line of an exception Jinja did not rewrite (a Timeout): from the generated code's line."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        # (an exception delivered asynchronously can land on an instruction with no line: tb_lineno is None)
        if tb.tb_frame.f_code.co_filename == TEMPLATE_FILE and compiled is not None and tb.tb_lineno is not None:
            line = compiled.get_corresponding_lineno(tb.tb_lineno)
        tb = tb.tb_next
    return line
