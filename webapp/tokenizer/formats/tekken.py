"""Mistral's Tekken files (mistral-common's `tekken_*.json`): import, and why export refuses.

What it does not do: the file's image or audio settings, bos / eos (the
playground's `add_special_tokens` adds nothing for it).

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import replace
from typing import Any

import regex

from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.formats.building import build_byte_level
from webapp.tokenizer.formats.common import file_error, is_int, parse_json_file, shown_value
from webapp.tokenizer.formats.tiktoken_ranks import recover_rank_merges
from webapp.tokenizer.hf.pipeline import read_pipeline
from webapp.tokenizer.reading.regex_size import PatternTooLarge, compile_file_pattern
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.pretokenize.patterns import scheme_for_pattern

SPECIAL_TEMPLATE = "<SPECIAL_{id}>"
MAX_SPECIAL = 100_000


def looks_like_tekken(data: Any) -> bool:
    """A parsed JSON document with Tekken's shape (config with a pattern, a vocab list)."""
    return (isinstance(data, dict) and isinstance(data.get("config"), dict) and isinstance(data.get("vocab"), list)
            and "pattern" in data["config"])


def _config_int(config: dict[str, Any], key: str, default: int) -> int:
    value: Any = config.get(key, default)
    if not is_int(value) or value < 0:
        raise file_error(f"Tekken config: {key} should be a non-negative integer, got {shown_value(value)}")
    return int(value)


def parse_tekken(content: str | bytes) -> LoadedTokenizer:
    """A Tekken JSON file as mistral-common's Tekkenizer reads it (see the module doc)."""
    data = parse_json_file(content, "Tekken file")
    if not looks_like_tekken(data):
        raise file_error('this is not a Tekken file: expected "config" with a "pattern" and a "vocab" list')
    config = data["config"]
    pattern = config["pattern"]
    if not isinstance(pattern, str) or not pattern:
        raise file_error(f"Tekken config: pattern should be a regex string, got {shown_value(pattern)}")
    try:
        compile_file_pattern(pattern)
    except PatternTooLarge as exc:
        raise TokenizerError(f"config.pattern: {exc}", field="config.pattern") from None
    except (regex.error, RecursionError, OverflowError) as exc:
        raise file_error(f"Tekken config: the pattern does not compile ({shown_value(str(exc))})") from None
    vocab = data["vocab"]
    num_special = _config_int(config, "default_num_special_tokens", 0)
    size = _config_int(config, "default_vocab_size", len(vocab) + num_special)
    if num_special > MAX_SPECIAL:
        raise file_error(f"Tekken config: {num_special:,} special tokens is over {MAX_SPECIAL:,}")
    inner = size - num_special
    if inner < 256 or inner > len(vocab):
        raise file_error(
            f"Tekken config: default_vocab_size {size:,} with {num_special:,} special tokens needs "
            f"{inner:,} vocab entries (at least 256), and the file has {len(vocab):,}")
    ranks: dict[bytes, int] = {}
    for index, item in enumerate(vocab[:inner]):
        if not isinstance(item, dict) or item.get("rank") != index or not isinstance(item.get("token_bytes"), str):
            raise TokenizerError(f"vocab: entry {index + 1} should be {{rank: {index}, token_bytes: base64}}, "
                                 f"got {shown_value(item)}", field="vocab", location={"index": index + 1})
        try:
            token = base64.b64decode(item["token_bytes"], validate=True)
        except (binascii.Error, ValueError):
            raise TokenizerError(f"vocab: entry {index + 1} has token_bytes that are not base64",
                                 field="vocab", location={"index": index + 1}) from None
        if (index < 256 and token != bytes([index])) or not token or token in ranks:
            raise TokenizerError(f"vocab: entry {index + 1} ({shown_value(item['token_bytes'])}) is not a valid rank: "
                                 "ranks 0-255 are the single bytes, and every token appears once",
                                 field="vocab", location={"index": index + 1})
        ranks[token] = index
    special = _special_tokens(data.get("special_tokens"), num_special)
    triples = recover_rank_merges(ranks)
    rules = [(ranks[a] + num_special, ranks[b] + num_special, ranks[t] + num_special) for a, b, t in triples]
    file_bytes = {rank + num_special: token for token, rank in ranks.items()}
    pipeline, notes = read_pipeline({
        "normalizer": None, "added_tokens": [], "model": {},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]},
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
    })
    notes.append(f"Tekken: {inner:,} ranks, ids shifted by its {num_special:,} special tokens, which text never "
                 "becomes (as mistral-common's encode(text, bos=False, eos=False))")
    loaded = build_byte_level(file_bytes, rules, source="tekken", pretokenize=scheme_for_pattern(pattern) or "o200k",
                              notes=notes, special=special)
    return replace(loaded, pipeline=pipeline)


def _special_tokens(items: Any, count: int) -> dict[str, int]:
    """The special tokens by id 0..count-1: the file's names, `<SPECIAL_n>` for the rest."""
    named: dict[int, str] = {}
    if isinstance(items, list):
        for item in items:
            if isinstance(item, dict) and is_int(item.get("rank")) and isinstance(item.get("token_str"), str):
                if 0 <= item["rank"] < count:
                    named[item["rank"]] = item["token_str"]
    out: dict[str, int] = {}
    for i in range(count):
        out.setdefault(named.get(i, SPECIAL_TEMPLATE.format(id=i)), i)
    return out


def export_note(tok: LoadedTokenizer) -> str | None:
    """Why a tokenizer cannot be written faithfully, or None (a Tekken file's pattern has no format here).

    A Tekken file, or the preset made from one (source "preset"): its merges keep the list order
    and it brings a pipeline of its own, which no other list-order tokenizer has."""
    if tok.source == "tekken" or (bool(tok.pipeline) and not tok.library_order):
        return ("export: a Tekken tokenizer splits text with its own pattern, which none of the playground's "
                "export formats can hold (a tiktoken rank file has no pattern, and a tokenizer.json is written "
                "with the playground's schemes); keep the original Tekken file")
    return None


__all__ = ["export_note", "looks_like_tekken", "parse_tekken"]
