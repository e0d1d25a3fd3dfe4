"""One time budget per request (issue 28, row 7): LIMIT_REQUEST_SECONDS, shared by every tokenizer it uses.

What it does not do: bound the built-in engine's loops (they are linear and
bounded by the sizes), or jobs (they run under JOB_TIME_SECONDS).

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

from typing import Any

from flask import Flask, current_app, g

from webapp.infra.errors import ApiError
from webapp.tokenizer import OutOfTime
from webapp.tokenizer.reading.text import end_request_budget, start_request_budget


def seconds() -> float:
    return float(current_app.config.get("LIMIT_REQUEST_SECONDS", 10) or 0)


def out_of_time(exc: OutOfTime, tokenizer: str, index: int, total: int) -> ApiError:
    """The 503 that names the tokenizer that was running when the budget ran out."""
    return ApiError(
        f"tokenizers: this request's time budget of {exc.seconds:g} s (setting LIMIT_REQUEST_SECONDS) ran out "
        f"while {tokenizer} was encoding (tokenizer {index + 1:,} of {total:,}): use fewer tokenizers or a "
        f"shorter text",
        field="tokenizers", status=503, location={"tokenizer": tokenizer, "index": index})


def init_app(app: Flask) -> None:
    @app.before_request
    def _start() -> None:
        limit = seconds()
        if limit > 0:
            g.time_budget = start_request_budget(limit)

    @app.teardown_request
    def _end(_exc: Any = None) -> None:
        token = g.pop("time_budget", None)
        if token is not None:
            try:
                end_request_budget(token)
            except ValueError:  # (set in another context: nothing to reset here)
                pass
