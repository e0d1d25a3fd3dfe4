"""Giving freed heap back to the system after a big request.

What it does not do: bound memory (the limits in webapp.infra.inputs and
the job budgets do), or anything on libcs without malloc_trim.

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import ctypes
import ctypes.util
from typing import Any

from flask import Flask, request

_LIBC: Any = None
TRIM_AFTER_BYTES = 1024 * 1024


def malloc_trim() -> bool:
    """glibc's malloc_trim(0): return free heap pages to the system. False where there is none."""
    global _LIBC
    if _LIBC is None:
        name = ctypes.util.find_library("c")
        try:
            _LIBC = ctypes.CDLL(name) if name else False
        except OSError:
            _LIBC = False
    trim = getattr(_LIBC, "malloc_trim", None) if _LIBC else None
    if trim is None:
        return False  # musl, macOS: nothing to call
    trim(0)
    return True


def _trim_after_big_request(_exc: BaseException | None) -> None:
    if (request.content_length or 0) >= TRIM_AFTER_BYTES:
        malloc_trim()


def init_app(app: Flask) -> None:
    app.teardown_request(_trim_after_big_request)
