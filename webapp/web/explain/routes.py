"""The explain routes: every boundary of a text's tokens explained (docs/explain.md).

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

from typing import Any, Callable

from flask import Blueprint, Response, jsonify, request

from webapp import tokenizer as tk
from webapp.infra import inputs
from webapp.infra.body import read_json_object
from webapp.infra.errors import ApiError, json_error
from webapp.opened import active as act
from webapp.web.explain.explaining import check_size, check_story, explain_active, read_bytes_form, read_story

bp = Blueprint("explain", __name__)
# (every error as JSON, /fragments/explain's too: the page's script shows its message where the box was)
bp.register_error_handler(ApiError, json_error)
bp.register_error_handler(tk.TokenizerError, json_error)


@bp.post("/api/tokenizers/<tokenizer_id>/explain")
def api_tokenizer_explain(tokenizer_id: str) -> Response:
    data = read_json_object(("text", "pretokenize", "allowed_special", "story"), ("text",))
    limits = inputs.current_limits()
    text = inputs.read_text(data["text"], limits)
    story = read_story(data.get("story"))
    check_size(text)
    active = act.of_ref(tokenizer_id)
    if active.entry is None:
        error = active.error or tk.TokenizerError("tokenizer: unknown", field="tokenizer")
        raise ApiError.from_tokenizer(error, 503 if isinstance(error, tk.PresetMissing) else 404)
    tok = active.entry.tok
    scheme = inputs.read_pretokenize(data["pretokenize"]) if data.get("pretokenize") else None
    raw = data.get("allowed_special")
    if raw is None and tok.pipeline and (scheme is None or scheme == tok.pretokenize):
        raw = "all"  # a tokenizer.json's default, as the library encodes (and /encode answers)
    allowed = inputs.read_allowed_special(raw)
    return jsonify(explain_active(active, text, scheme, story, allowed=allowed))


@bp.post("/api/explain")
def api_explain() -> Response:
    data = read_json_object(("text", "merges", "pretokenize", "level", "vocab", "story"), ("text", "merges"))
    limits = inputs.current_limits()
    text = inputs.read_text(data["text"], limits)
    story = read_story(data.get("story"))
    level = data.get("level", "bytes")
    explain_level = _EXPLAIN_BY_LEVEL.get(level) if isinstance(level, str) else None
    if explain_level is None:
        raise ApiError('level: expected "bytes" or "chars"', field="level")
    check_size(text)
    return jsonify(explain_level(data, text, story, limits))


def _explain_char_rules(data: dict[str, Any], text: str, story: int | None, limits: Any) -> dict[str, Any]:
    if "pretokenize" in data:
        raise ApiError("pretokenize: character-level rules are not pre-tokenized", field="pretokenize")
    values, errors = inputs.collect({
        "merges": lambda: inputs.read_char_merges(data["merges"], limits),
        "vocab": lambda: inputs.read_char_vocab(data.get("vocab"), limits),
    })
    if errors:
        raise next(iter(errors.values()))
    answer = tk.explain_chars(text, values["vocab"], values["merges"], story=story)
    check_story(answer, story)
    return answer


def _explain_byte_rules(data: dict[str, Any], text: str, story: int | None, limits: Any) -> dict[str, Any]:
    if "vocab" in data:
        raise ApiError('vocab: only character-level rules ("level": "chars") take a vocab', field="vocab")
    values, errors = inputs.collect({
        "merges": lambda: inputs.read_byte_merges(data["merges"], limits),
        "pretokenize": lambda: inputs.read_pretokenize(data.get("pretokenize", "none")),
    })
    if errors:
        raise next(iter(errors.values()))
    return explain_active(act.of_typed(values["merges"]), text, values["pretokenize"], story)


#: The `level` field's readers: the typed rules, read and explained at that level.
_EXPLAIN_BY_LEVEL: dict[str, Callable[[dict[str, Any], str, int | None, Any], dict[str, Any]]] = {
    "bytes": _explain_byte_rules, "chars": _explain_char_rules}


@bp.post("/fragments/explain")
def page_explain() -> Response:
    """The Bytes page's state (the posted form) explained as the page encodes it."""
    form = request.form
    active, values = read_bytes_form(form, story=lambda: read_story(form.get("story")))
    scheme = values["pretokenize"]
    answer = explain_active(active, values["text"], scheme, values["story"])
    return jsonify({k: answer[k] for k in ("boundaries", "unit", "order", "story") if k in answer}
                   | {"tokens": [{"start": t["start"], "end": t["end"]} for t in answer["tokens"]]})
