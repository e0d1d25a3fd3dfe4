"""The prompt routes: which tokens of a text are final, witnesses for the others, token healing.

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations


from flask import Blueprint, Response, jsonify, request

from webapp import tokenizer as tk
from webapp.infra import inputs
from webapp.infra.body import read_json_object
from webapp.infra.errors import ApiError, json_error
from webapp.opened import active as act
from webapp.tokenizer.prompt import PromptEnd, prompt_end
from webapp.web.explain.explaining import check_size, read_bytes_form

bp = Blueprint("prompt", __name__)
bp.register_error_handler(ApiError, json_error)
bp.register_error_handler(tk.TokenizerError, json_error)


@bp.post("/api/tokenizers/<tokenizer_id>/prompt")
def api_tokenizer_prompt(tokenizer_id: str) -> Response:
    data = read_json_object(("text", "pretokenize"), ("text",))
    text = inputs.read_text(data["text"], inputs.current_limits())
    check_size(text)
    active = act.of_ref(tokenizer_id)
    if active.entry is None:
        error = active.error or tk.TokenizerError("tokenizer: unknown", field="tokenizer")
        raise ApiError.from_tokenizer(error, 503 if isinstance(error, tk.PresetMissing) else 404)
    entry = active.loaded()
    # (as /encode: the file's own scheme when it takes one, which is the pipeline's split made fast)
    own = entry.tok.pretokenize if entry.stages().takes_page_scheme else None
    given = data.get("pretokenize") or own
    scheme = inputs.read_pretokenize(given) if given else None
    return jsonify(_answer(active, text, scheme).answer())


@bp.post("/api/prompt")
def api_prompt() -> Response:
    data = read_json_object(("text", "merges", "pretokenize"), ("text", "merges"))
    limits = inputs.current_limits()
    values, errors = inputs.collect({
        "text": lambda: inputs.read_text(data["text"], limits),
        "merges": lambda: inputs.read_byte_merges(data["merges"], limits),
        "pretokenize": lambda: inputs.read_pretokenize(data.get("pretokenize", "none")),
    })
    if errors:
        raise next(iter(errors.values()))
    check_size(values["text"])
    return jsonify(_answer(act.of_typed(values["merges"]), values["text"], values["pretokenize"]).answer())


@bp.post("/fragments/prompt")
def page_prompt() -> Response:
    """The Bytes page's state (the posted form), with each token's span for the page to mark."""
    active, values = read_bytes_form(request.form)
    # the page's own pre-tokenize choice, a preset's or file's too: the tokens the page shows (compute.py)
    found = _answer(active, values["text"], values["pretokenize"])
    return jsonify(found.answer() | {"tokens": [{"start": s, "end": e} for s, e in found.spans]})


def _answer(active: act.ActiveTokenizer, text: str, scheme: str | None) -> PromptEnd:
    tokenizer = active.loaded().stages(scheme)
    if not tokenizer.on_bytes_page:
        raise ApiError("tokenizer: a character-level file's prompt end is not shown (its rules merge "
                       "characters, not bytes)", field="tokenizer")
    return prompt_end(tokenizer, text)
