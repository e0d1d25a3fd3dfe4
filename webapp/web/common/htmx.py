"""What the page controls (open / close a tokenizer file, choose a preset) answer, shared by the features.

What it does not do: open or store anything (webapp.opened.store), or render
the tool page.

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

from flask import render_template, request

from webapp.opened import store as tokenizer_store


def is_htmx() -> bool:
    """Did htmx send this request (it then swaps the fragment answered into the page)?"""
    return request.headers.get("HX-Request") == "true"


def page_state(tool: str, tokenizer_id: str) -> dict[str, str]:
    """The page's own fields from the posted form, with the opened tokenizer's id."""
    state = {k: v for k, v in request.form.items() if not k.startswith("tokenizer_")}
    state["tokenizer"] = tokenizer_id
    return state


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
