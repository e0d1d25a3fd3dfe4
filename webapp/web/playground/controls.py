"""What the page controls (open / close a tokenizer file, choose a preset) answer.

An htmx request gets the status fragment (partials/open_tokenizer_status.html),
a plain form post the whole tool page with the page's fields kept. Used by
webapp.web.files.routes, webapp.web.presets.routes and webapp.jobs.thresholds (a finished open job).
What it does not do: open or store anything.
"""

from __future__ import annotations

from typing import Mapping

from flask import render_template, request

from webapp.web.playground import pages
from webapp.opened import store as tokenizer_store


def is_htmx() -> bool:
    return request.headers.get("HX-Request") == "true"


def page_state(tool: str, tokenizer_id: str) -> dict[str, str]:
    """The page's own fields from the posted form, with the opened tokenizer's id."""
    state = {k: v for k, v in request.form.items() if not k.startswith("tokenizer_")}
    state["tokenizer"] = tokenizer_id
    return state


def full_page(tool: str, state: Mapping[str, str], *, open_error: str | None = None, open_job: str | None = None,
              open_elsewhere: str | None = None) -> str:
    """The whole page, with why opening failed (and where it opens) or the panel of the job opening a big file."""
    return pages.render_tool_page(tool, state, pages.PageExtras(open_error=open_error, open_job=open_job,
                                                                open_elsewhere=open_elsewhere))


def status(
    tool: str, tokenizer_id: str, error: str | None, *, reset_inputs: bool, refresh: bool = False, special: str = "",
    elsewhere: str | None = None,
) -> str:
    """The status fragment: the opened tokenizer (or none); why it could not be opened goes out of
    band beside the drop zone (with `elsewhere`, a link that opens the file on the other page)."""
    return render_template(
        "partials/open_tokenizer_status.html",
        tool=tool,
        state={"tokenizer": tokenizer_id, "special": special},
        opened=tokenizer_store.opened_status(tokenizer_id),
        open_error=error,
        open_elsewhere=elsewhere,
        error_oob=True,
        reset_inputs=reset_inputs,
        refresh=refresh,
    )
