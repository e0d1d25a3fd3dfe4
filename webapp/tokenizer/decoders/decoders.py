"""A tokenizer.json's decoder (token strings -> strings), as `tokenizers` applies it.

ByteLevel, Metaspace, Replace, Strip, Fuse, ByteFallback, Sequence; and
SentencePiece's for a .model file (normalize/sentencepiece.py). `describe_decoder`
keeps only the fields that matter and raises `Unsupported` for a part the
playground does not have; `build_decoder` turns a description into a function.

What it does not do: ids to token strings (the caller looks them up), or
reading whole files (hf/pipeline.py).
"""

from __future__ import annotations

from typing import Any, Callable, cast

import regex

from webapp.tokenizer.core.alphabet import token_to_bytes
from webapp.tokenizer.reading.fields import (
    Unsupported,
    compile_file_regex,
    deeper,
    inserted,
    node_type,
    one_char,
    pattern_field,
    prepend_scheme,
)
from webapp.tokenizer.normalize.sentencepiece import spm_decoder

Decoder = Callable[[list[str]], list[str]]


def describe_decoder(node: Any, depth: int = 0) -> Any:
    """The decoder as stored (only what the playground reads). Raises Unsupported."""
    kind = node_type(node, "decoder")
    if kind in ("ByteLevel", "Fuse", "ByteFallback"):
        return {"type": kind}
    if kind == "Metaspace":
        return {"type": kind, "replacement": one_char(node, "replacement", "▁", "Metaspace decoder"),
                "prepend_scheme": prepend_scheme(node)}
    if kind == "Replace":
        content = inserted(node.get("content"), "Replace decoder")
        return {"type": kind, "pattern": dict([pattern_field(node.get("pattern"), "a Replace decoder")]), "content": content}
    if kind == "Strip":
        content = one_char(node, "content", None, "Strip decoder")
        start, stop = node.get("start", 0), node.get("stop", 0)
        if not all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= 1000 for n in (start, stop)):
            raise Unsupported("a Strip decoder whose start / stop are not small counts")
        return {"type": kind, "content": content, "start": start, "stop": stop}
    if kind == "Sequence":
        parts = node.get("decoders")
        if not isinstance(parts, list):
            raise Unsupported("a decoder Sequence without a list")
        return {"type": kind, "decoders": [describe_decoder(p, deeper(depth)) for p in parts]}
    raise Unsupported(f"the {kind} decoder")


def _byte_level_decode(tokens: list[str]) -> list[str]:
    data = bytearray()
    for token in tokens:
        raw = token_to_bytes(token)
        # a token with a character outside the alphabet is taken as its UTF-8
        data += raw if raw is not None else token.encode("utf-8", "surrogatepass")
    return [data.decode("utf-8", "replace")]


_BYTE_TOKEN = regex.compile(r"<0x([0-9A-F]{2})>")


def _byte_fallback_decode(tokens: list[str]) -> list[str]:
    """Runs of <0xXX> tokens become the text of their bytes, or one U+FFFD per byte if not UTF-8."""
    out: list[str] = []
    run = bytearray()

    def flush() -> None:
        if run:
            try:
                out.append(run.decode("utf-8"))
            except UnicodeDecodeError:
                out.extend("\ufffd" for _ in run)
            run.clear()

    for token in tokens:
        found = _BYTE_TOKEN.fullmatch(token) if len(token) == 6 else None
        if found:
            run.append(int(found.group(1), 16))
        else:
            flush()
            out.append(token)
    flush()
    return out


def build_decoder(desc: Any) -> Decoder:
    kind = desc["type"]
    if kind == "ByteLevel":
        return _byte_level_decode
    if kind == "Fuse":
        return lambda tokens: ["".join(tokens)]
    if kind == "ByteFallback":
        return _byte_fallback_decode
    if kind == "SentencePiece":
        return cast(Decoder, spm_decoder(desc))
    if kind == "Metaspace":
        rep, keep_first = desc["replacement"], desc["prepend_scheme"] == "never"
        # The first token loses every replacement character (not only a leading one), as in the library.
        return lambda tokens: [
            t.replace(rep, " " if (i or keep_first) else "") for i, t in enumerate(tokens)
        ]
    if kind == "Replace":
        (pkind, value), = desc["pattern"].items()
        content = desc["content"]
        if pkind == "String":
            return lambda tokens: [t.replace(value, content) if value else t for t in tokens]
        compiled = compile_file_regex(value)
        return lambda tokens: [compiled.sub(lambda _m: content, t) for t in tokens]
    if kind == "Strip":
        ch, start, stop = desc["content"], desc["start"], desc["stop"]
        return lambda tokens: [_strip_token(t, ch, start, stop) for t in tokens]
    steps = [build_decoder(p) for p in desc["decoders"]]

    def sequence(tokens: list[str]) -> list[str]:
        for step in steps:
            tokens = step(tokens)
        return tokens

    return sequence


def _strip_token(token: str, ch: str, start: int, stop: int) -> str:
    """At most `start` leading and `stop` trailing `ch` removed."""
    left = 0
    while left < min(start, len(token)) and token[left] == ch:
        left += 1
    right = len(token)
    while len(token) - right < stop and right > left and token[right - 1] == ch:
        right -= 1
    return token[left:right]
