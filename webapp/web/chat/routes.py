"""The chat API (blueprint `chat`): `POST /api/tokenizers/<name>/chat`.

`{"messages": [{"role", "content"}, ...], "add_generation_prompt": false}` ->
`{"text", "ids", "count"}`: the conversation rendered with the tokenizer's
chat template (a preset's own, or the tokenizer_config.json opened with a
file; webapp.web.chat.chatting) and its ids as transformers'
`apply_chat_template(messages, tokenize=True)` gives them. `<name>` is a
preset name or an opened tokenizer's id. The messages are checked (a list of
role/content strings, their count and size) before anything is rendered.

What it does not do: render or encode (webapp.web.chat.chatting), the page's
Chat view (the Bytes page, webapp.web.playground).
"""

from __future__ import annotations

from flask import Blueprint, Response, jsonify

from webapp.infra import inputs, ratelimit
from webapp.infra.body import read_json_object
from webapp.infra.errors import ApiError
from webapp.opened.store import Loaded, load_tokenizer
from webapp.web.chat.chatting import render_and_count
from webapp.tokenizer import PresetMissing, TokenizerError

bp = Blueprint("chat", __name__)


def load_or_status(ref: str) -> Loaded:
    """A preset or opened tokenizer; 404 for an unknown one, 503 for a preset this installation lacks."""
    try:
        return load_tokenizer(ref)
    except TokenizerError as exc:
        raise ApiError.from_tokenizer(exc, 503 if isinstance(exc, PresetMissing) else 404) from None


@bp.post("/api/tokenizers/<tokenizer_id>/chat")
def api_chat(tokenizer_id: str) -> Response:
    entry = load_or_status(tokenizer_id)
    data = read_json_object(("messages", "add_generation_prompt"), ("messages",))
    limits = inputs.current_limits()
    messages = inputs.read_messages(data["messages"], limits)
    prompt = inputs.read_flag(data.get("add_generation_prompt"), "add_generation_prompt", False)
    ratelimit.charge_work(sum(len(m["role"]) + len(m["content"]) for m in messages))
    counted = render_and_count(entry, messages, prompt, limits)
    return jsonify({"text": counted.text, "ids": counted.ids, "count": counted.count})
