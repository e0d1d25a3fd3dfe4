"""The Vocabulary (blueprint `vocab`): the vocab API and the Vocabulary page.

What it does not do: compute (webapp.tokenizer.vocab via kinds.py and views.py).

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

from typing import Any, Mapping
from urllib.parse import urlencode

from flask import Blueprint, Response, jsonify, render_template, request
from markupsafe import Markup

from webapp.infra import inputs, vocab_inputs
from webapp.infra.body import read_json_object
from webapp.infra.errors import ApiError
from webapp.jobs import queue, views as jobs
from webapp.jobs.registry import done_view
from webapp.jobs.store import Job
from webapp.opened.store import Loaded, load_tokenizer
from webapp.tokenizer import PRESET_NAMES, PresetMissing, TokenizerError, is_installed, is_preset
from webapp.tokenizer.vocab.reach import typed_reach
from webapp.web.vocab import kinds
from webapp.web.vocab.views import (
    card_json, card_view, find_token, listing_view, reach_view, search_json, stats_view,
)

bp = Blueprint("vocab", __name__)

#: The card links back to the Bytes page with the text in the URL up to this many characters.
LINK_TEXT_CHARS = 2000


def _entry(tokenizer_id: str) -> Loaded:
    try:
        return load_tokenizer(tokenizer_id)
    except TokenizerError as exc:
        raise ApiError.from_tokenizer(exc, 503 if isinstance(exc, PresetMissing) else 404) from None


@bp.get("/api/tokenizers/<tokenizer_id>/vocab")
def api_vocab(tokenizer_id: str) -> Response:
    q = vocab_inputs.read_vocab_query(request.args.get("q"))
    offset, limit = vocab_inputs.read_vocab_page(request.args.get("offset"), request.args.get("limit"))
    entry = _entry(tokenizer_id)
    return jsonify(search_json(kinds.index_of(entry), q, offset, limit))


@bp.get("/api/tokenizers/<tokenizer_id>/vocab/<token_id>")
def api_vocab_token(tokenizer_id: str, token_id: str) -> Response:
    entry = _entry(tokenizer_id)
    index = kinds.index_of(entry)
    try:
        found = find_token(index, token_id)
    except TokenizerError as exc:
        raise ApiError.from_tokenizer(exc, 404) from None
    return jsonify(card_json(entry, index, found, kinds.decider_of(entry)))


@bp.post("/api/unreachable")
def api_typed_unreachable() -> Response:
    """The same answer for typed byte rules (`{"merges"[, "pretokenize"]}`), always inline."""
    data = read_json_object(("merges", "pretokenize"), ("merges",))
    limits = inputs.current_limits()
    values, errors = inputs.collect({
        "merges": lambda: inputs.read_byte_merges(data["merges"], limits),
        "pretokenize": lambda: inputs.read_pretokenize(data.get("pretokenize", "none")),
    })
    if errors:
        raise next(iter(errors.values()))
    most = queue.threshold("JOB_VOCAB_TOKENS")  # (inline only: a longer list is opened as a file, a job)
    if len(values["merges"].rules) > most:
        raise ApiError(f"merges: at most {most:,} rules are decided here; open them as a file for a job",
                       field="merges")
    return jsonify(typed_reach(values["merges"], values["pretokenize"]).as_json())


@bp.get("/api/tokenizers/<tokenizer_id>/unreachable")
def api_unreachable(tokenizer_id: str) -> Response:
    answer = kinds.unreachable_of(_entry(tokenizer_id))
    if isinstance(answer, Job):
        return jobs.accepted(answer)
    return jsonify(answer)


# --- the page ---------------------------------------------------------------------------


def default_tokenizer() -> str:
    return next((n for n in PRESET_NAMES if is_installed(n)), PRESET_NAMES[0])


def page_url(state: Mapping[str, Any], **changes: Any) -> str:
    """/vocab with the page's state, some fields changed (None drops one)."""
    merged = {**state, **changes}
    return "/vocab?" + urlencode({k: v for k, v in merged.items() if v not in (None, "")})


def _reach_html(entry: Loaded, state: Mapping[str, str]) -> str:
    answer = kinds.unreachable_of(entry)
    if isinstance(answer, Job):
        return jobs.render_panel(answer, "vocab-unreachable")
    return render_template("partials/vocab_reach.html", reach=reach_view(entry.id, kinds.index_of(entry), answer),
                           state=state, page_url=page_url)


@done_view("vocab-unreachable", kinds=(kinds.KIND,), back=("vocab.vocab_page", "Vocabulary"))
def _reach_done(job: Job, result: Any, params: dict[str, Any]) -> str:
    entry = load_tokenizer(params["tokenizer"])
    kinds.REACH.put(entry.id, result)
    state = {"tokenizer": entry.id}
    return render_template("partials/vocab_reach.html", reach=reach_view(entry.id, kinds.index_of(entry), result),
                           state=state, page_url=page_url)


def _text_ids(entry: Loaded, text: str) -> list[int] | None:
    """The page's text encoded as the card's own `self_ids` are (no special tokens)."""
    if not text:
        return None
    return kinds.decider_of(entry).encode(text)


def _context(args: Mapping[str, str]) -> dict[str, Any]:
    ref = (args.get("tokenizer") or "").strip() or default_tokenizer()
    raw_q = args.get("q", "")
    text = args.get("text", "")
    state = {"tokenizer": ref, "q": raw_q, "text": text, "token": args.get("token", ""),
             "offset": args.get("offset", "")}
    errors: dict[str, str] = {}
    out: dict[str, Any] = {"tool": "vocab", "title": "Vocabulary", "state": state, "errors": errors,
                           "page_url": page_url, "presets": PRESET_NAMES, "is_preset": is_preset,
                           "entry": None, "listing": None, "card": None, "stats": None, "reach_html": ""}
    q: bytes | None = None
    offset = 0
    try:
        q = vocab_inputs.read_vocab_query(raw_q) if raw_q else None
    except TokenizerError as exc:
        errors["q"] = exc.message
    try:
        offset, _ = vocab_inputs.read_vocab_page(args.get("offset"), None)
    except TokenizerError as exc:
        errors["offset"] = exc.message
    try:
        inputs.read_text(text, inputs.current_limits(), form=True)
    except TokenizerError as exc:
        errors["text"] = exc.message
        text = ""
    try:
        entry = load_tokenizer(ref)
    except TokenizerError as exc:
        errors["tokenizer"] = exc.message
        return out
    index = kinds.index_of(entry)
    out["entry"] = entry
    out["size"] = len(index)
    out["order"] = index.order
    if "q" not in errors:
        out["listing"] = listing_view(index, q, offset, vocab_inputs.VOCAB_PAGE_DEFAULT)
    if state["token"]:
        try:
            token_id = find_token(index, state["token"])
            out["card"] = card_view(entry, index, token_id, text, _text_ids(entry, text), kinds.decider_of(entry))
        except TokenizerError as exc:
            errors["token"] = exc.message
    linked = text and len(text) <= LINK_TEXT_CHARS
    out["bytes_url"] = "/bytes?" + urlencode({"tokenizer": entry.id, **({"text": text} if linked else {})})
    out["stats"] = stats_view(entry.id, index)
    out["reach_html"] = Markup(_reach_html(entry, state))  # (rendered by our own templates)
    return out


@bp.get("/vocab")
def vocab_page() -> str:
    return render_template("vocab.html", **_context(request.args))
