"""A tokenizer.json's normalizer (text -> text), as `tokenizers` applies it.

What it does not do: offsets (only the text matters for ids), pre-tokenizing,
or reading whole files (hf/pipeline.py).

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import unicodedata
from typing import Any, Callable

from webapp.tokenizer.reading import text as ht
from webapp.tokenizer.reading.fields import (
    Unsupported,
    compile_file_regex,
    deeper,
    flag,
    inserted,
    node_type,
    pattern_field,
)
from webapp.tokenizer.normalize.sentencepiece import SpmNormalizer, options_from_description

Normalizer = Callable[[str], str]


def describe_normalizer(node: Any, depth: int = 0) -> Any:
    """The normalizer as stored: only the fields the playground reads. Raises Unsupported."""
    kind = node_type(node, "normalizer")
    if kind in ("NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents"):
        return {"type": kind}
    if kind == "Strip":
        return {"type": kind, "strip_left": flag(node, "strip_left", True), "strip_right": flag(node, "strip_right", True)}
    if kind == "Replace":
        content = inserted(node.get("content"), "Replace normalizer")
        return {"type": kind, "pattern": dict([pattern_field(node.get("pattern"), "a Replace normalizer")]), "content": content}
    if kind == "Prepend":
        return {"type": kind, "prepend": inserted(node.get("prepend"), "Prepend normalizer")}
    if kind == "Sequence":
        parts = node.get("normalizers")
        if not isinstance(parts, list):
            raise Unsupported("a normalizer Sequence without a list")
        return {"type": kind, "normalizers": [describe_normalizer(p, deeper(depth)) for p in parts]}
    raise Unsupported(f"the {kind} normalizer")


def _lowercase(text: str) -> str:
    # Per character, as the library does: str.lower() would give a final
    # sigma its word-final form (ς), the library keeps σ.
    return "".join(ch.lower() for ch in text) if "Σ" in text else text.lower()


_STRIP = "".join(sorted(ht.WHITE_SPACE))


def build_normalizer(desc: Any) -> Normalizer:
    """A described normalizer as a function (see describe_normalizer)."""
    kind = desc["type"]
    if kind in ("NFC", "NFD", "NFKC", "NFKD"):
        return lambda text: unicodedata.normalize(kind, text)
    if kind == "Lowercase":
        return _lowercase
    if kind == "StripAccents":
        return lambda text: "".join(ch for ch in text if unicodedata.category(ch) not in ("Mn", "Mc", "Me"))
    if kind == "Strip":
        left, right = desc["strip_left"], desc["strip_right"]

        def strip(text: str) -> str:
            if left:
                text = text.lstrip(_STRIP)
            return text.rstrip(_STRIP) if right else text

        return strip
    if kind == "Replace":
        (pkind, value), = desc["pattern"].items()
        content = desc["content"]
        if pkind == "String":
            return (lambda text: text.replace(value, content)) if value else (lambda text: text)
        compiled = compile_file_regex(value)
        return lambda text: _replace_spans(text, ht.regex_spans(compiled, text), content)
    if kind == "Prepend":
        prefix = desc["prepend"]
        return lambda text: prefix + text if text else text
    if kind == "SentencePiece":  # (a .model file's: formats/sentencepiece.py)
        return SpmNormalizer(options_from_description(desc))
    steps = [build_normalizer(p) for p in desc["normalizers"]]

    def sequence(text: str) -> str:
        for step in steps:
            text = step(text)
            ht.check_growth(len(text))  # (before the next step can make it longer still)
        return text

    return sequence


def _replace_spans(text: str, spans: Any, content: str) -> str:
    out: list[str] = []
    done = 0
    for start, end in spans:
        out.append(text[done:start])
        out.append(content)
        done = end
    out.append(text[done:])
    return "".join(out)


def keeps_start(desc: Any, text: str) -> bool:
    """Does the normalized text's first character come from `text`'s first character?"""
    if desc is None or not text:
        return True
    kind = desc["type"]
    if kind == "Sequence":
        for part in desc["normalizers"]:
            if not keeps_start(part, text):
                return False
            text = build_normalizer(part)(text)
        return True
    if kind == "Strip":
        return not (desc["strip_left"] and text[0] in ht.WHITE_SPACE)
    if kind == "StripAccents":
        return unicodedata.category(text[0]) not in ("Mn", "Mc", "Me")
    if kind == "Replace" and desc["content"] == "":
        (pkind, value), = desc["pattern"].items()
        if pkind == "String":
            return not (value and text.startswith(value))
        first = next(iter(ht.regex_spans(compile_file_regex(value), text)), None)
        return not (first is not None and first[0] == 0 and first[1] > 0)
    return True
