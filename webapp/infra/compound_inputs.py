"""Inputs checked as a whole: a tokenizer spec (one side of a comparison), the corpus options, an opened file's counts.

Each field is read by webapp/infra/inputs.py's readers, against the same
limits; an error names the field inside the compound ("a.merges").

What it does not do: parse a single field (inputs.py), encode or train.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping

from webapp import tokenizer as tk
from webapp.infra.inputs import (
    Limits,
    collect,
    over_limit,
    read_allowed_special,
    read_byte_merges,
    read_num_merges,
    read_pretokenize,
    wrong_type,
)
from webapp.tokenizer import TokenizerError
from webapp.tokenizer.errors import json_type
from webapp.tokenizer.training.corpus import LEVELS as CORPUS_LEVELS, SCHEMES as CORPUS_SCHEMES


# --- a tokenizer spec (one side of a comparison) -----------------------------

SPEC_FIELDS = ("tokenizer", "merges", "pretokenize", "allowed_special")


@dataclass(frozen=True)
class TokenizerSpec:
    """Which tokenizer encodes: a preset / stored file by name, or typed byte-level merges."""

    tokenizer: str  # a preset's name or an opened file's id; "" for typed merges
    merges: Any  # the compiled typed merges (None with a tokenizer)
    pretokenize: str | None  # a scheme; None: the tokenizer's own (typed merges: "none")
    special: Any  # allowed special tokens: () plain text, "all", a tuple of them; None: the tokenizer's default


def within(prefix: str, exc: TokenizerError) -> TokenizerError:
    """The same error, its field and message put under `prefix` ("merges: ..." -> "b.merges: ...")."""
    message = exc.message
    if message.startswith(exc.field + ":"):
        message = f"{prefix}.{message}"
    else:
        message = f"{prefix}.{exc.field}: {message}"
    # The same class (a missing preset stays a PresetMissing, which answers 503).
    return type(exc)(message, field=f"{prefix}.{exc.field}", location=exc.location)


def read_tokenizer_spec(value: Any, field: str, limits: Limits) -> TokenizerSpec:
    """One tokenizer spec: {"tokenizer": name or id} or {"merges": ...}, with optional
    "pretokenize" and "allowed_special". Errors name the field inside it ("a.merges").
    """
    if not isinstance(value, dict):
        raise TokenizerError(
            f'{field}: expected an object such as {{"tokenizer": "cl100k_base"}} or '
            f'{{"merges": [[108, 111, 256]]}}, got {json_type(value)}',
            field=field,
        )
    unknown = [key for key in value if key not in SPEC_FIELDS]
    if unknown:
        name = str(unknown[0])[:60]
        raise TokenizerError(
            f"{field}.{name}: unknown field; a tokenizer spec takes {', '.join(SPEC_FIELDS)}", field=f"{field}.{name}"
        )
    ref = value.get("tokenizer")
    merges = value.get("merges")
    try:
        if ref is not None and not isinstance(ref, str):
            raise wrong_type("tokenizer", "a preset name or an opened tokenizer's id (a string)", ref)
        if ref and merges is not None:
            raise TokenizerError("merges: give either tokenizer or merges, not both", field="merges")
        if not ref and merges is None:
            raise TokenizerError(
                'tokenizer: missing; give a preset name or an opened tokenizer\'s id ("tokenizer"), '
                'or byte-level merges ("merges")',
                field="tokenizer",
            )
        scheme = value.get("pretokenize")
        return TokenizerSpec(
            tokenizer=ref or "",
            merges=None if ref else read_byte_merges(merges, limits),
            pretokenize=None if scheme is None or scheme == "" else read_pretokenize(scheme),
            special=None if value.get("allowed_special") is None else read_allowed_special(value["allowed_special"]),
        )
    except TokenizerError as exc:
        raise within(field, exc) from None


# --- the corpus training options ---------------------------------------------


@dataclass(frozen=True)
class CorpusOptions:
    """How to train on a corpus (the text itself comes as files or a paste, see webapp.web.corpus.routes)."""

    pretokenize: str
    level: str
    num_merges: int
    held_out: str


def _choice(value: Any, field: str, choices: tuple[str, ...], default: str) -> str:
    if value is None or value == "":
        return default
    if not isinstance(value, str) or value not in choices:
        shown = json.dumps(value) if isinstance(value, (str, int, float, bool)) else json_type(value)
        raise TokenizerError(f"{field}: expected one of {', '.join(choices)}, got {shown}", field=field)
    return value


def read_corpus_options(values: Mapping[str, Any], limits: Limits) -> tuple[CorpusOptions | None, dict[str, TokenizerError]]:
    """The corpus form's / API's options, checked against the limits; every field's error at once."""
    found, errors = collect({
        "pretokenize": lambda: _choice(values.get("pretokenize"), "pretokenize", CORPUS_SCHEMES, "gpt2"),
        "level": lambda: _choice(values.get("level"), "level", CORPUS_LEVELS, "bytes"),
        "num_merges": lambda: read_num_merges(values.get("num_merges", ""), limits),
        "held_out": lambda: _held_out(values.get("held_out"), limits),
    })
    if errors:
        return None, errors
    return CorpusOptions(**found), {}


def _held_out(value: Any, limits: Limits) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise wrong_type("held_out", "a string", value)
    if len(value) > limits.corpus_held_out_chars:
        raise over_limit("held_out", "characters", len(value), limits.corpus_held_out_chars,
                    "LIMIT_CORPUS_HELD_OUT_CHARS")
    return tk.validate_text(value, field="held_out")


# --- an opened tokenizer's size ------------------------------------------------


def check_loaded_limits(merges: int, vocab: int, limits: Limits) -> None:
    """An opened tokenizer's rule and vocab counts against LIMIT_FILE_RULES / LIMIT_VOCAB
    (inline opens and import jobs check the same way)."""
    if merges > limits.file_rules:
        raise TokenizerError(
            f"merges: {merges:,} rules is over the limit of {limits.file_rules:,} rules for an opened file "
            "(setting LIMIT_FILE_RULES)",
            field="merges",
            location={"limit": limits.file_rules},
        )
    if vocab > limits.vocab:
        raise TokenizerError(
            f"vocab: {vocab:,} entries is over the limit of {limits.vocab:,} (setting LIMIT_VOCAB)",
            field="vocab",
            location={"limit": limits.vocab},
        )
