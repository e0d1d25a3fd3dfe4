"""The JSON API for the engine: encode, decode, encode-text, train.

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

from typing import Any, Callable

from flask import Blueprint, Response, jsonify

from webapp.infra import inputs, ratelimit
from webapp.jobs import views as jobs
from webapp.web.api import kinds
from webapp.web.api.answers import byte_tokens
from webapp import tokenizer as tk
from webapp.infra.body import read_json_object
from webapp.tokenizer import pretokenized_encode

bp = Blueprint("api", __name__, url_prefix="/api")


def _handle(
    allowed: tuple[str, ...], required: tuple[str, ...], work: Callable[[dict[str, Any], inputs.Limits], Any]
) -> Response:
    """Read the body (webapp.infra.errors: 413, 415, bad JSON, unknown or missing fields), run `work`.

    `work` answers a dict (sent as JSON) or a ready Response (a job's 202).
    Problems propagate as ApiError / TokenizerError to the app-wide handlers.
    """
    data = read_json_object(allowed, required)
    answer = work(data, inputs.current_limits())
    return answer if isinstance(answer, Response) else jsonify(answer)


@bp.post("/encode")
def encode() -> Response:
    def work(data: dict[str, Any], limits: inputs.Limits) -> Any:
        job = kinds.encode_job(data)  # a long text or merge list: 202 and a job
        if job is not None:
            return jobs.accepted(job)
        values, errors = inputs.collect(
            {
                "text": lambda: inputs.read_text(data["text"], limits),
                "merges": lambda: inputs.read_byte_merges(data["merges"], limits),
                "pretokenize": lambda: inputs.read_pretokenize(data.get("pretokenize", "none")),
            }
        )
        if errors:
            raise next(iter(errors.values()))
        text, merges, scheme = values["text"], values["merges"], values["pretokenize"]
        ratelimit.charge_work(len(text))
        ids = pretokenized_encode(text, merges, scheme)  # scheme "none" is the specified encode
        return {"ids": ids, "tokens": byte_tokens(text, ids, merges)}

    return _handle(("text", "merges", "pretokenize"), ("text", "merges"), work)


@bp.post("/decode")
def decode() -> Response:
    def work(data: dict[str, Any], limits: inputs.Limits) -> dict[str, Any]:
        ids = inputs.read_ids(data["ids"], limits)
        vocab = inputs.read_byte_vocab(data.get("vocab", {}), limits)
        return {"text": tk.decode(ids, vocab, max_bytes=limits.decode_bytes)}

    return _handle(("ids", "vocab"), ("ids",), work)


@bp.post("/encode-text")
def encode_text() -> Response:
    def work(data: dict[str, Any], limits: inputs.Limits) -> Any:
        job = kinds.encode_text_job(data)  # a long text, merge list or vocab: 202 and a job
        if job is not None:
            return jobs.accepted(job)
        text = inputs.read_text(data["text"], limits)
        vocab = inputs.read_char_vocab(data["vocab"], limits)
        merges = inputs.read_char_merges(data["merges"], limits)
        ids = tk.bpe_encode_text(text, vocab, merges)
        return {"ids": ids, "tokens": tk.char_tokens(text, merges)}

    return _handle(("text", "vocab", "merges"), ("text", "vocab", "merges"), work)


@bp.post("/train")
def train() -> Response:
    def work(data: dict[str, Any], limits: inputs.Limits) -> Any:
        job = kinds.train_job(data["words"], data["num_merges"])  # large: 202 and a job
        if job is not None:
            return jobs.accepted(job)
        words = inputs.read_words(data["words"], limits)
        num_merges = inputs.read_num_merges(data["num_merges"], limits)
        trace = tk.train_trace(words, num_merges, runners_up=0, max_steps=0, max_token_chars=limits.vocab_bytes)
        return {"merges": trace.merges, "pairs": [list(p) for p in trace.pairs]}

    return _handle(("words", "num_merges"), ("words", "num_merges"), work)
