"""The chat API (blueprint `chat`): `POST /api/tokenizers/<name>/chat`.

What it does not do: render or encode (webapp.web.chat.chatting), the page's
Chat view (the Bytes page, webapp.web.playground).

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

from flask import Blueprint, Response, jsonify

from webapp.infra import inputs, ratelimit
from webapp.infra.body import read_json_object
from webapp.infra.errors import ApiError
from webapp.opened.store import Loaded, load_tokenizer
from webapp.web.chat.chatting import render_and_count, work_of
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
    data = read_json_object(("messages", "tools", "add_generation_prompt"), ("messages",))
    limits = inputs.current_limits()
    messages = inputs.read_messages(data["messages"], limits)
    tools = inputs.read_tools(data.get("tools"), limits)
    prompt = inputs.read_flag(data.get("add_generation_prompt"), "add_generation_prompt", False)
    ratelimit.charge_work(*work_of(messages, tools))
    counted = render_and_count(entry, messages, prompt, limits, tools)
    answer: dict[str, object] = {"text": counted.text, "ids": counted.ids, "count": counted.count}
    if counted.without_tools is not None:
        answer.update(count_without_tools=counted.without_tools, tools_tokens=counted.tools_tokens)
    return jsonify(answer)
