"""The parity check for the web: texts and specs read and bounded, both sides built, the check run.

A spec is read by compare's reader (`read_tokenizer_spec`) and loaded as a comparison loads it
(`load_side`), so `/api/parity` takes exactly what `/api/compare` takes. The texts are bounded by
LIMIT_PARITY_TEXTS and LIMIT_PARITY_BYTES (docs/limits.md), the work by the request's time budget.

What it does not do: attribute anything (webapp.tokenizer.parity), routes or pages (routes.py, page.py).
"""

from __future__ import annotations

from typing import Any, Mapping

from flask import current_app

from webapp.infra import compound_inputs, inputs, ratelimit
from webapp.infra.errors import ApiError
from webapp.tokenizer import OutOfTime, TokenizerError
from webapp.tokenizer.errors import json_type
from webapp.tokenizer.parity import PROBE_TEXTS, Side, check_parity, side_of_merges, side_of_tokenizer
from webapp.tokenizer.validation import validate_text
from webapp.web.compare.comparing import load_side

#: The defaults of LIMIT_PARITY_TEXTS and LIMIT_PARITY_BYTES (docs/limits.md).
DEFAULT_TEXTS = 100
DEFAULT_BYTES = 65_536


def bounds() -> tuple[int, int]:
    """(texts, UTF-8 bytes of all texts) one check takes."""
    config = current_app.config
    return (int(config.get("LIMIT_PARITY_TEXTS", DEFAULT_TEXTS)),
            int(config.get("LIMIT_PARITY_BYTES", DEFAULT_BYTES)))


def read_texts(value: Any) -> list[str] | None:
    """The `texts` field: a list of strings within the bounds; None (absent) means the built-in probes."""
    if value is None:
        return None
    most, most_bytes = bounds()
    if not isinstance(value, list):
        raise TokenizerError(f"texts: expected a list of strings, got {json_type(value)}", field="texts")
    if len(value) > most:
        raise inputs.over_limit("texts", "texts", len(value), most, "LIMIT_PARITY_TEXTS")
    size = 0
    for index, text in enumerate(value):
        field = f"texts[{index}]"
        if not isinstance(text, str):
            raise TokenizerError(f"{field}: expected a string, got {json_type(text)}", field=field)
        size += len(text.encode("utf-8", "surrogatepass"))
        if size > most_bytes:
            raise TokenizerError(
                f"texts: the texts up to {field} are {size:,} bytes of UTF-8, over the limit of {most_bytes:,} "
                "bytes for one parity check (setting LIMIT_PARITY_BYTES)", field="texts", location={"limit": most_bytes})
        validate_text(text, field=field)
    return value


def side_of_spec(spec: compound_inputs.TokenizerSpec) -> Side:
    """A spec as a parity side: a preset or opened file as a comparison loads it, or typed merges."""
    if spec.tokenizer:
        loaded = load_side(spec)
        return side_of_tokenizer(loaded.stages, loaded.allowed, loaded.label)
    return side_of_merges(spec.merges, spec.pretokenize or "none")


def sides_of(data: Mapping[str, Any], limits: inputs.Limits) -> tuple[Side, Side]:
    """Both sides of a body holding `a` and `b`; errors name the field inside a spec (`b.tokenizer`)."""
    built = []
    for name in ("a", "b"):
        spec = compound_inputs.read_tokenizer_spec(data[name], name, limits)
        try:
            built.append(side_of_spec(spec))
        except TokenizerError as exc:
            raise compound_inputs.within(name, exc) from None
    return built[0], built[1]


def run_check(a: Side, b: Side, texts: list[str] | None) -> dict[str, Any]:
    """The check, charged to the client's work (characters x 2) and bounded by the request's time budget."""
    ratelimit.charge_work(sum(map(len, PROBE_TEXTS if texts is None else texts)), 2)
    try:
        return check_parity(a, b, texts)
    except OutOfTime as exc:
        raise ApiError(
            f"texts: this request's time budget of {exc.seconds:g} s (setting LIMIT_REQUEST_SECONDS) ran out "
            "before every text was checked: send fewer or shorter texts", field="texts", status=503) from None


def parity_json(data: Mapping[str, Any], limits: inputs.Limits) -> dict[str, Any]:
    """The /api/parity answer for a body already checked to hold a and b."""
    texts = read_texts(data.get("texts"))
    a, b = sides_of(data, limits)
    return run_check(a, b, texts)


__all__ = ["bounds", "parity_json", "read_texts", "run_check", "side_of_spec", "sides_of"]
