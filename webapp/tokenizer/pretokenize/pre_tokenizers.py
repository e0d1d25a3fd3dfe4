"""A tokenizer.json's pre-tokenizer (pieces -> pieces), as `tokenizers` applies it.

What it does not do: offsets (only the pieces' text matters for ids), the
steps run by runs (pre_runs.py), or reading whole files (hf/pipeline.py).

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from itertools import repeat
from typing import Any, Callable

import regex

from webapp.tokenizer.reading import text as ht
from webapp.tokenizer.core.alphabet import bytes_to_token
from webapp.tokenizer.reading.fields import (
    Unsupported,
    compile_file_regex,
    deeper,
    finder,
    flag,
    node_type,
    one_char,
    pattern_field,
    prepend_scheme,
)
from webapp.tokenizer.pretokenize.class_split import ClassSplit, known_split

Piece = tuple[str, bool]
PreTokenizer = Callable[[list[Piece]], list[Piece]]

# The regex the ByteLevel pre-tokenizer splits with (GPT-2's).
BYTE_LEVEL_PATTERN = regex.compile(
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
)
_WHITESPACE_WORDS = regex.compile(r"\w+|[^\w\s]+")


def _behavior(node: dict[str, Any], default: str) -> str:
    value = node.get("behavior", default)
    if value not in ht.BEHAVIORS:
        raise Unsupported(f"the split behavior {str(value)[:30]!r}")
    return str(value)


def describe_pre_tokenizer(node: Any, depth: int = 0) -> Any:
    """The pre-tokenizer as stored (only what the playground reads). Raises Unsupported."""
    kind = node_type(node, "pre-tokenizer")
    if kind == "ByteLevel":
        return {"type": kind, "add_prefix_space": flag(node, "add_prefix_space", True),
                "use_regex": flag(node, "use_regex", True)}
    if kind == "Split":
        return {"type": kind, "pattern": dict([pattern_field(node.get("pattern"), "a Split")]),
                "behavior": _behavior(node, "Isolated"), "invert": flag(node, "invert", False)}
    if kind in ("Whitespace", "WhitespaceSplit", "BertPreTokenizer"):
        return {"type": kind}
    if kind == "Digits":
        return {"type": kind, "individual_digits": flag(node, "individual_digits", False)}
    if kind == "Punctuation":
        return {"type": kind, "behavior": _behavior(node, "Isolated")}
    if kind == "CharDelimiterSplit":
        return {"type": kind, "delimiter": one_char(node, "delimiter", None, "CharDelimiterSplit")}
    if kind == "Metaspace":
        return {"type": kind, "replacement": one_char(node, "replacement", "▁", "Metaspace"),
                "prepend_scheme": prepend_scheme(node), "split": flag(node, "split", True)}
    if kind == "Sequence":
        parts = node.get("pretokenizers")
        if not isinstance(parts, list):
            raise Unsupported("a pre-tokenizer Sequence without a list")
        return {"type": kind, "pretokenizers": [describe_pre_tokenizer(p, deeper(depth)) for p in parts]}
    raise Unsupported(f"the {kind} pre-tokenizer")


def _isolated_regex(compiled: regex.Pattern[str]) -> PreTokenizer:
    """Split with a regex, every match and gap its own piece (the common case, kept fast)."""
    return _isolated(lambda text: ht.isolated_pieces(compiled, text))


def _isolated_known(split: ClassSplit) -> PreTokenizer:
    """A known pattern, or known run of Isolated Split regexes, done in one pass (pretokenize/class_split.py)."""

    def pieces(text: str) -> list[str]:
        ht.time_left()  # (the fixed known patterns match in linear time; the budget is only checked)
        return split.pieces(text)

    return _isolated(pieces)


def _isolated(split: Callable[[str], list[str]]) -> PreTokenizer:
    def apply(pieces: list[Piece]) -> list[Piece]:
        out: list[Piece] = []
        for text, origin in pieces:
            parts = split(text)
            if parts:
                # (in Isolated the first non-empty piece always starts at 0)
                out.append((parts[0], origin))
                out.extend(zip(parts[1:], repeat(False)))
        return out

    return apply


def _splitting(find: ht.Finder, behavior: str) -> PreTokenizer:
    def apply(pieces: list[Piece]) -> list[Piece]:
        out: list[Piece] = []
        for text, origin in pieces:
            for start, end in ht.split(text, find, behavior):
                out.append((text[start:end], origin and start == 0))
        return out

    return apply


def _byte_level(add_prefix_space: bool, use_regex: bool, map_bytes: bool) -> PreTokenizer:
    """Prefix space per piece, GPT-2's regex, then each piece in the byte alphabet.

    `map_bytes` False leaves the text as it is: the caller encodes it as UTF-8
    anyway, which is what the alphabet stands for (a later step would see it).
    """
    def apply(pieces: list[Piece]) -> list[Piece]:
        out: list[Piece] = []
        for text, origin in pieces:
            if add_prefix_space and not text.startswith(" "):
                text = " " + text
            if use_regex:
                parts = ht.isolated_pieces(BYTE_LEVEL_PATTERN, text)
                if parts:
                    out.append((parts[0], origin))
                    out.extend(zip(parts[1:], repeat(False)))
            elif text:
                out.append((text, origin))
        if map_bytes:
            out = [(bytes_to_token(t.encode("utf-8", "surrogatepass")), o) for t, o in out]
        return out

    return apply


def _metaspace(replacement: str, scheme: str, split: bool) -> PreTokenizer:
    find = ht.char_finder(lambda ch: ch == replacement)

    def apply(pieces: list[Piece]) -> list[Piece]:
        out: list[Piece] = []
        for text, origin in pieces:
            text = text.replace(" ", replacement)
            if not text.startswith(replacement) and (scheme == "always" or (scheme == "first" and origin)):
                text = replacement + text
            if split:
                out.extend((text[s:e], origin and s == 0) for s, e in ht.split(text, find, "MergedWithNext"))
            elif text:
                out.append((text, origin))
        return out

    return apply


def build_pre_tokenizer(desc: Any, *, final: bool = True) -> PreTokenizer:
    """A described pre-tokenizer as a function; `final`: nothing runs after it."""
    kind = desc["type"]
    if kind == "ByteLevel":
        return _byte_level(desc["add_prefix_space"], desc["use_regex"], map_bytes=not final)
    if kind == "Split":
        (pkind, value), = desc["pattern"].items()
        if pkind == "Regex" and desc["behavior"] == "Isolated" and not desc["invert"]:
            known = known_split((value,))
            return _isolated_known(known) if known is not None else _isolated_regex(compile_file_regex(value))
        find = finder(pkind, value)
        return _splitting(ht.inverted(find) if desc["invert"] else find, desc["behavior"])
    if kind == "Whitespace":
        return _splitting(ht.inverted(ht.regex_finder(_WHITESPACE_WORDS)), "Removed")
    if kind == "WhitespaceSplit":
        return _splitting(ht.char_finder(ht.is_whitespace), "Removed")
    if kind == "BertPreTokenizer":
        first = _splitting(ht.char_finder(ht.is_whitespace), "Removed")
        second = _splitting(ht.char_finder(ht.is_punctuation), "Isolated")
        return lambda pieces: second(first(pieces))
    if kind == "Digits":
        return _splitting(ht.char_finder(ht.is_numeric), "Isolated" if desc["individual_digits"] else "Contiguous")
    if kind == "Punctuation":
        return _splitting(ht.char_finder(ht.is_punctuation), desc["behavior"])
    if kind == "CharDelimiterSplit":
        delimiter = desc["delimiter"]
        return _splitting(ht.char_finder(lambda ch: ch == delimiter), "Removed")
    if kind == "Metaspace":
        return _metaspace(desc["replacement"], desc["prepend_scheme"], desc["split"])
    parts = desc["pretokenizers"]
    fused, count = known_run(parts)
    steps = [_isolated_known(fused)] if fused is not None else []
    steps += [build_pre_tokenizer(p, final=final and i == len(parts) - 1) for i, p in enumerate(parts) if i >= count]

    def sequence(pieces: list[Piece]) -> list[Piece]:
        for step in steps:
            pieces = step(pieces)
        return pieces

    return sequence


def isolated_split_regex(desc: Any) -> str | None:
    """The regex of an Isolated, not inverted Split step, else None."""
    if desc["type"] != "Split" or desc["behavior"] != "Isolated" or desc["invert"]:
        return None
    (pkind, value), = desc["pattern"].items()
    return value if pkind == "Regex" else None


def known_run(parts: list[Any]) -> tuple[ClassSplit | None, int]:
    """The longest run (two steps or more) of Isolated Split regexes at the start of a Sequence that
    class_split knows as one pass, and its length; (None, 0) if none."""
    patterns: list[str] = []
    for part in parts:
        pattern = isolated_split_regex(part)
        if pattern is None:
            break
        patterns.append(pattern)
    for count in range(len(patterns), 1, -1):
        found = known_split(patterns[:count])
        if found is not None:
            return found, count
    return None, 0


def plain_class_split(desc: Any) -> ClassSplit | None:
    """The known split when the pre-tokenizer is only that Split then ByteLevel without its regex or
    prefix space (Tekken's): its pieces are then the split's pieces, spelt in bytes; else None."""
    if desc is None or desc["type"] != "Sequence" or len(desc["pretokenizers"]) != 2:
        return None
    split, byte_level = desc["pretokenizers"]
    pattern = isolated_split_regex(split)
    if pattern is None or byte_level["type"] != "ByteLevel" or byte_level["add_prefix_space"] or byte_level["use_regex"]:
        return None
    return known_split((pattern,))


def split_then_bytes(desc: Any) -> ClassSplit | None:
    """The known split when the pre-tokenizer is a known run of Isolated Split regexes (or one) then,
    last, a ByteLevel step without its regex or prefix space (Llama 3's, Qwen's, DeepSeek-V3's): its
    pieces are then the split's pieces, spelt in bytes; else None."""
    if desc is None or desc["type"] != "Sequence" or len(desc["pretokenizers"]) < 2:
        return None
    *splits, last = desc["pretokenizers"]
    if last["type"] != "ByteLevel" or last["add_prefix_space"] or last["use_regex"]:
        return None
    if len(splits) == 1:
        pattern = isolated_split_regex(splits[0])
        return known_split((pattern,)) if pattern is not None else None
    fused, count = known_run(splits)
    return fused if count == len(splits) else None


def maps_bytes(desc: Any) -> bool:
    """Does the pre-tokenizer end in the byte alphabet (a ByteLevel step anywhere)?"""
    if desc is None:
        return False
    if desc["type"] == "ByteLevel":
        return True
    return desc["type"] == "Sequence" and any(maps_bytes(p) for p in desc["pretokenizers"])


def ends_with_byte_level(desc: Any) -> bool:
    """Is ByteLevel the last step (so its alphabet never needs to be spelt out)?"""
    if desc is None:
        return False
    if desc["type"] == "Sequence":
        return bool(desc["pretokenizers"]) and ends_with_byte_level(desc["pretokenizers"][-1])
    return bool(desc["type"] == "ByteLevel")
