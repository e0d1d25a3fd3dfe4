"""Choosing the format: `import_tokenizer` and `export_tokenizer` by format name.

What it does not do: parse or write (each format's module does).

Details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import dataclasses
import logging

from webapp.tokenizer.chat.templates import DEFAULT_CHAT_LIMITS, ChatLimits, parse_chat_config
from webapp.tokenizer.core.collector import collector_paused
from webapp.tokenizer.errors import TokenizerError, short_repr
from webapp.tokenizer.formats.common import file_error
from webapp.tokenizer.formats.detect import detect_format
from webapp.tokenizer.formats.gguf_export import export_gguf
from webapp.tokenizer.formats.gguf_tokenizer import parse_gguf
from webapp.tokenizer.formats.hf_json import export_hf, parse_hf_tokenizer_json
from webapp.tokenizer.formats.minbpe import export_minbpe, parse_minbpe
from webapp.tokenizer.formats.playground import export_playground_json, parse_playground_json
from webapp.tokenizer.formats.sentencepiece import export_sentencepiece_hf, is_sentencepiece, parse_sentencepiece
from webapp.tokenizer.formats.tekken import export_note, parse_tekken
from webapp.tokenizer.formats.tiktoken_ranks import export_tiktoken, parse_tiktoken
from webapp.tokenizer.formats.vocab_merges import parse_vocab_merges
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.stages.models import LIBRARY_MODEL
from webapp.tokenizer.core.token_sizes import DEFAULT_SIZE_LIMITS, SizeLimits

log = logging.getLogger(__name__)

FORMATS: tuple[str, ...] = (
    "auto", "hf", "vocab-merges", "tiktoken", "minbpe", "playground", "tekken", "sentencepiece", "gguf",
)
EXPORT_FORMATS: tuple[str, ...] = ("playground", "hf", "minbpe", "tiktoken", "gguf")
#: Old format names still accepted: "seed" was the playground JSON's name
#: before it was renamed, and links carrying it keep working.
FORMAT_ALIASES: dict[str, str] = {"seed": "playground"}


def canonical_format(fmt: str) -> str:
    """The current name of a format (an old alias becomes its new name; anything else is returned as is)."""
    alias = FORMAT_ALIASES.get(fmt) if isinstance(fmt, str) else None
    return alias or fmt


def import_tokenizer(
    content: str | bytes,
    *,
    fmt: str = "auto",
    merges_txt: str | bytes | None = None,
    filename: str | None = None,
    limits: SizeLimits = DEFAULT_SIZE_LIMITS,
    config: str | bytes | None = None,
    chat_limits: ChatLimits = DEFAULT_CHAT_LIMITS,
) -> LoadedTokenizer:
    """Parse a tokenizer file of the given format (or detect it).

    `limits` bound the bytes the merges may make tokens stand for (formats that
    derive token bytes from the merges: minbpe, playground JSON) and the bytes one
    listed token may stand for (tiktoken ranks, tokenizer.json, vocab.json).

    `config`, a tokenizer_config.json opened beside the file, gives the
    tokenizer its chat template (`LoadedTokenizer.chat`; webapp/tokenizer/chat/templates.py).
    """
    fmt = canonical_format(fmt)
    if fmt not in FORMATS:
        raise TokenizerError(
            f"format: expected one of {', '.join(FORMATS)}, got {short_repr(fmt)}", field="format"
        )
    template = parse_chat_config(config, chat_limits) if config is not None else None
    if fmt == "auto":
        fmt = "vocab-merges" if merges_txt is not None else detect_format(content, filename)
    try:
        with collector_paused():  # (a big file's tables are hundreds of thousands of new objects)
            tok = _import_as(fmt, content, merges_txt, limits, chat_limits)
        if template is None:
            return tok
        with_chat = dataclasses.replace(tok, chat=template.to_json())
        with_chat.built.carry(tok.built, LIBRARY_MODEL)
        return with_chat
    except (TypeError, AttributeError, KeyError, IndexError, UnicodeError):
        # A file's structure the parsers did not foresee (a number where a list
        # belongs, deep inside): still the file's fault, said as such, never a 500;
        # Python's own words are logged, not shown (they name our code, not the file).
        log.warning("an unforeseen %s file structure", fmt, exc_info=True)
        raise file_error(
            f"this {fmt} file has an unexpected structure: a value deep inside it is not of the kind the "
            f"{fmt} format has there"
        ) from None


def _import_as(fmt: str, content: str | bytes, merges_txt: str | bytes | None, limits: SizeLimits,
               chat_limits: ChatLimits) -> LoadedTokenizer:
    if fmt == "hf":
        return parse_hf_tokenizer_json(content, limits)
    if fmt == "vocab-merges":
        if merges_txt is None:
            raise file_error("the vocab.json + merges.txt format needs both files; merges.txt is missing")
        return parse_vocab_merges(content, merges_txt, limits=limits)
    if fmt == "tiktoken":
        return parse_tiktoken(content, limits=limits)
    if fmt == "minbpe":
        return parse_minbpe(content, limits=limits)
    if fmt == "tekken":
        return parse_tekken(content)
    if fmt == "sentencepiece":
        return parse_sentencepiece(content)
    if fmt == "gguf":  # (its own chat template, unless a tokenizer_config.json beside it gives one)
        return parse_gguf(content, limits, chat_limits)
    return parse_playground_json(content, limits=limits)


def export_tokenizer(tok: LoadedTokenizer, fmt: str, pretokenize: str | None = None) -> tuple[str | bytes, str, str]:
    """(content, file name, media type) for an export format; the content is bytes for a binary format (gguf)."""
    fmt = canonical_format(fmt)
    if fmt == "gguf":  # (llama.cpp's own file: Tekken's pattern and SentencePiece models have names there)
        if pretokenize is not None and pretokenize != tok.pretokenize:
            raise TokenizerError("export: a GGUF file is written with the tokenizer's own pre-tokenizer; "
                                 "leave pretokenize out", field="pretokenize")
        return export_gguf(tok), "tokenizer.gguf", "application/octet-stream"
    refused = export_note(tok) if fmt in EXPORT_FORMATS else None
    if refused is not None:
        raise TokenizerError(refused, field="format")
    if is_sentencepiece(tok):  # (a file or a preset; its own pipeline: only a tokenizer.json can hold it)
        if fmt != "hf":
            raise TokenizerError("export: a SentencePiece model exports as a tokenizer.json (format hf) only; "
                                 "the other formats have no normalizer or score order", field="format")
        return export_sentencepiece_hf(tok), "tokenizer.json", "application/json"
    if fmt == "playground":
        return export_playground_json(tok), "tokenizer.playground.json", "application/json"
    if fmt == "hf":
        return export_hf(tok, pretokenize), "tokenizer.json", "application/json"
    if fmt == "minbpe":
        return export_minbpe(tok, pretokenize), "tokenizer.model", "text/plain; charset=utf-8"
    if fmt == "tiktoken":
        return export_tiktoken(tok), "tokenizer.tiktoken", "text/plain; charset=utf-8"
    raise TokenizerError(
        f"format: expected one of {', '.join(EXPORT_FORMATS)}, got {short_repr(fmt)}", field="format"
    )
