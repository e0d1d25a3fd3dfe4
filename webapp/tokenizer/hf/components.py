"""A tokenizer.json's normalizer, pre-tokenizer and decoder, as `tokenizers` applies them.

Each `read_*` function takes the JSON object from the file and returns a
callable plus notes: the callable does what the library does with that
component; a part the playground does not have is left out and named in a
note (the caller then says the ids may differ). `describe_*` keeps only the
fields that matter, so the stored form is small and canonical.

- Normalizer: text -> text (NFC, NFD, NFKC, NFKD, Lowercase, Strip,
  StripAccents, Replace, Prepend, Sequence; and a SentencePiece model's own,
  hf/sentencepiece.py, which only a .model file's pipeline names).
- Pre-tokenizer: list of pieces -> list of pieces. A piece is (text, origin):
  `origin` says the piece starts at offset 0 of the original text, which
  Metaspace's prepend_scheme "first" asks. ByteLevel, Split, Whitespace,
  WhitespaceSplit, Digits, Punctuation, Metaspace, BertPreTokenizer,
  CharDelimiterSplit, Sequence. An Isolated Split regex (or a run of them at
  the start of a Sequence) that pretokenize/class_split.py knows is done in
  one pass over character classes, with the same pieces.
- Decoder: list of token strings -> list of strings (ByteLevel, Metaspace,
  Replace, Strip, Fuse, ByteFallback, Sequence; SentencePiece's for a .model).

What it does not do: added tokens, the BPE model, or reading whole files
(pipeline.py); offsets (only the pieces' text matters for ids).
"""

from __future__ import annotations

import unicodedata
from itertools import repeat
from typing import Any, Callable, cast

import regex

from webapp.tokenizer.hf import text as ht
from webapp.tokenizer.hf.sentencepiece import SpmNormalizer, options_from_description, spm_decoder
from webapp.tokenizer.hf.alphabet import bytes_to_token, token_to_bytes
from webapp.tokenizer.pretokenize.class_split import ClassSplit, known_split

Piece = tuple[str, bool]
Normalizer = Callable[[str], str]
PreTokenizer = Callable[[list[Piece]], list[Piece]]
Decoder = Callable[[list[str]], list[str]]

# The regex the ByteLevel pre-tokenizer splits with (GPT-2's).
BYTE_LEVEL_PATTERN = regex.compile(
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
)
_WHITESPACE_WORDS = regex.compile(r"\w+|[^\w\s]+")


def compile_file_regex(pattern: str) -> regex.Pattern[str]:
    """A tokenizer.json regex the way the library's engine (Oniguruma, Ruby syntax) reads it:
    there `^` and `$` match at every line start / end, as Python's MULTILINE makes them."""
    return regex.compile(pattern, regex.MULTILINE)


class Unsupported(Exception):
    """A component the playground cannot apply (the message names it)."""


MAX_DEPTH = 8  # Sequences inside Sequences
MAX_CONTENT = 16  # characters a Replace / Prepend may insert (bounds how much longer text gets)
MAX_PATTERN = 5_000  # characters of a regex


def _type(node: Any, what: str) -> str:
    if not isinstance(node, dict) or not isinstance(node.get("type"), str):
        raise Unsupported(f"a {what} without a type")
    return str(node["type"])


def _pattern(node: Any, what: str) -> tuple[str, str]:
    """{"String": s} or {"Regex": r} -> ("String"|"Regex", text)."""
    if isinstance(node, dict) and len(node) == 1:
        (kind, value), = node.items()
        if kind in ("String", "Regex") and isinstance(value, str):
            if len(value) > MAX_PATTERN:
                raise Unsupported(f"{what} pattern of {len(value):,} characters (over {MAX_PATTERN:,})")
            if kind == "Regex":
                try:
                    compile_file_regex(value)
                except (regex.error, RecursionError, OverflowError) as exc:
                    raise Unsupported(f"{what} regex {value[:40]!r} does not compile here ({exc})") from None
            return kind, value
    raise Unsupported(f"{what} with a pattern that is not {{String}} or {{Regex}}")


def _finder(kind: str, value: str) -> ht.Finder:
    return ht.regex_finder(compile_file_regex(value)) if kind == "Regex" else ht.string_finder(value)


def _bool(node: dict[str, Any], key: str, default: bool) -> bool:
    value = node.get(key, default)
    return default if value is None else bool(value)


# --------------------------------------------------------------------------
# Normalizers


def _inserted(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise Unsupported(f"a {what} without a string to insert")
    if len(value) > MAX_CONTENT:
        raise Unsupported(f"a {what} inserting {len(value)} characters (over {MAX_CONTENT})")
    return value


def _deeper(depth: int) -> int:
    if depth >= MAX_DEPTH:
        raise Unsupported(f"a Sequence nested more than {MAX_DEPTH} deep")
    return depth + 1


def describe_normalizer(node: Any, depth: int = 0) -> Any:
    """The normalizer as stored: only the fields the playground reads. Raises Unsupported."""
    kind = _type(node, "normalizer")
    if kind in ("NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents"):
        return {"type": kind}
    if kind == "Strip":
        return {"type": kind, "strip_left": _bool(node, "strip_left", True), "strip_right": _bool(node, "strip_right", True)}
    if kind == "Replace":
        content = _inserted(node.get("content"), "Replace normalizer")
        return {"type": kind, "pattern": dict([_pattern(node.get("pattern"), "a Replace normalizer")]), "content": content}
    if kind == "Prepend":
        return {"type": kind, "prepend": _inserted(node.get("prepend"), "Prepend normalizer")}
    if kind == "Sequence":
        parts = node.get("normalizers")
        if not isinstance(parts, list):
            raise Unsupported("a normalizer Sequence without a list")
        return {"type": kind, "normalizers": [describe_normalizer(p, _deeper(depth)) for p in parts]}
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
    """Does the normalized text's first character come from `text`'s first character?

    The library tracks where each normalized character came from; Metaspace's
    prepend_scheme "first" asks whether a piece starts at original offset 0,
    which is false once a normalizer (Strip, StripAccents, Replace with "")
    removed the text's first characters.
    """
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


# --------------------------------------------------------------------------
# Pre-tokenizers


def _behavior(node: dict[str, Any], default: str) -> str:
    value = node.get("behavior", default)
    if value not in ht.BEHAVIORS:
        raise Unsupported(f"the split behavior {str(value)[:30]!r}")
    return str(value)


def _prepend_scheme(node: dict[str, Any]) -> str:
    scheme = node.get("prepend_scheme")
    if scheme is None:  # files from before prepend_scheme say add_prefix_space
        return "always" if _bool(node, "add_prefix_space", True) else "never"
    if scheme not in ("always", "first", "never"):
        raise Unsupported(f"the Metaspace prepend_scheme {str(scheme)[:20]!r}")
    return str(scheme)


def _one_char(node: dict[str, Any], key: str, default: str | None, what: str) -> str:
    value = node.get(key, default)
    if not isinstance(value, str) or len(value) != 1:
        raise Unsupported(f"a {what} whose {key} is not one character")
    return value


def describe_pre_tokenizer(node: Any, depth: int = 0) -> Any:
    """The pre-tokenizer as stored (only what the playground reads). Raises Unsupported."""
    kind = _type(node, "pre-tokenizer")
    if kind == "ByteLevel":
        return {"type": kind, "add_prefix_space": _bool(node, "add_prefix_space", True),
                "use_regex": _bool(node, "use_regex", True)}
    if kind == "Split":
        return {"type": kind, "pattern": dict([_pattern(node.get("pattern"), "a Split")]),
                "behavior": _behavior(node, "Isolated"), "invert": _bool(node, "invert", False)}
    if kind in ("Whitespace", "WhitespaceSplit", "BertPreTokenizer"):
        return {"type": kind}
    if kind == "Digits":
        return {"type": kind, "individual_digits": _bool(node, "individual_digits", False)}
    if kind == "Punctuation":
        return {"type": kind, "behavior": _behavior(node, "Isolated")}
    if kind == "CharDelimiterSplit":
        return {"type": kind, "delimiter": _one_char(node, "delimiter", None, "CharDelimiterSplit")}
    if kind == "Metaspace":
        return {"type": kind, "replacement": _one_char(node, "replacement", "▁", "Metaspace"),
                "prepend_scheme": _prepend_scheme(node), "split": _bool(node, "split", True)}
    if kind == "Sequence":
        parts = node.get("pretokenizers")
        if not isinstance(parts, list):
            raise Unsupported("a pre-tokenizer Sequence without a list")
        return {"type": kind, "pretokenizers": [describe_pre_tokenizer(p, _deeper(depth)) for p in parts]}
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
        find = _finder(pkind, value)
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


# --------------------------------------------------------------------------
# Decoders


def describe_decoder(node: Any, depth: int = 0) -> Any:
    """The decoder as stored (only what the playground reads). Raises Unsupported."""
    kind = _type(node, "decoder")
    if kind in ("ByteLevel", "Fuse", "ByteFallback"):
        return {"type": kind}
    if kind == "Metaspace":
        return {"type": kind, "replacement": _one_char(node, "replacement", "▁", "Metaspace decoder"),
                "prepend_scheme": _prepend_scheme(node)}
    if kind == "Replace":
        content = _inserted(node.get("content"), "Replace decoder")
        return {"type": kind, "pattern": dict([_pattern(node.get("pattern"), "a Replace decoder")]), "content": content}
    if kind == "Strip":
        content = _one_char(node, "content", None, "Strip decoder")
        start, stop = node.get("start", 0), node.get("stop", 0)
        if not all(isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= 1000 for n in (start, stop)):
            raise Unsupported("a Strip decoder whose start / stop are not small counts")
        return {"type": kind, "content": content, "start": start, "stop": stop}
    if kind == "Sequence":
        parts = node.get("decoders")
        if not isinstance(parts, list):
            raise Unsupported("a decoder Sequence without a list")
        return {"type": kind, "decoders": [describe_decoder(p, _deeper(depth)) for p in parts]}
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
