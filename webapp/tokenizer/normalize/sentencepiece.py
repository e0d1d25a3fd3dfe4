"""A SentencePiece model's normalizer and decoder, done as the `sentencepiece` library does them.

What it does not do: the BPE (models/library.py with core/library_order/score_order.py), reading
the .model file (formats/sentencepiece.py), offsets back into the raw text.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import base64
import codecs
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import regex

from webapp.tokenizer.normalize.charsmap import Charsmap, CharsmapError
from webapp.tokenizer.reading.longest_match import Keys, Scanner
from webapp.tokenizer.reading.text import bounded, check_growth_bytes, growth_cap_bytes, time_left

SPACE_SYMBOL = "\u2581"
DEFAULT_UNK_SURFACE = " \u2047 "
_BYTE_PIECE = regex.compile(r"<0x([0-9A-F]{2})>")
WALKS_PER_CHECK = 2_048  # (trie walks between two checks of the encode's time budget)


def _spm_bytes(error: UnicodeError) -> tuple[str, int]:
    # sentencepiece replaces an invalid byte by U+FFFD and goes on at the next byte
    assert isinstance(error, UnicodeDecodeError)
    return "\ufffd", error.start + 1


codecs.register_error("spm-byte-replace", _spm_bytes)


def decode_spm_bytes(data: bytes) -> str:
    """Bytes as sentencepiece decodes a run of byte pieces: one U+FFFD per invalid byte."""
    return data.decode("utf-8", "spm-byte-replace")


def _char_len(data: bytes, i: int) -> int:
    """The length of the UTF-8 character at i (input text is valid UTF-8: Python encoded it)."""
    lead = data[i]
    return 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4


@dataclass(frozen=True)
class SpmOptions:
    charsmap: bytes
    add_dummy_prefix: bool
    remove_extra_whitespaces: bool
    escape_whitespaces: bool
    treat_whitespace_as_suffix: bool
    user_defined: tuple[str, ...]


def describe_spm_normalizer(options: SpmOptions) -> dict[str, Any]:
    """The pipeline's JSON description of the normalizer (canonical, stored with the tokenizer)."""
    return {
        "type": "SentencePiece",
        "charsmap": base64.b64encode(options.charsmap).decode("ascii"),
        "add_dummy_prefix": options.add_dummy_prefix,
        "remove_extra_whitespaces": options.remove_extra_whitespaces,
        "escape_whitespaces": options.escape_whitespaces,
        "treat_whitespace_as_suffix": options.treat_whitespace_as_suffix,
        "user_defined": list(options.user_defined),
    }


def options_from_description(desc: Mapping[str, Any]) -> SpmOptions:
    return SpmOptions(
        base64.b64decode(desc["charsmap"]), bool(desc["add_dummy_prefix"]), bool(desc["remove_extra_whitespaces"]),
        bool(desc["escape_whitespaces"]), bool(desc["treat_whitespace_as_suffix"]), tuple(desc["user_defined"]),
    )


class SpmNormalizer:
    """sentencepiece's `Normalizer::Normalize` (see the module doc) as a text -> text function."""

    #: Added tokens (user-defined and control pieces) are matched by their own text in the normalized
    #: text, as sentencepiece matches them: hf/pipeline.py does not normalize their contents.
    added_verbatim = True

    def __init__(self, options: SpmOptions) -> None:
        self.options = options
        self.charsmap = Charsmap(options.charsmap) if options.charsmap else None
        # (matched longest first at a position, in time linear in the text: reading/longest_match.py)
        self.user = Keys((key, None) for key in (s.encode("utf-8") for s in options.user_defined if s))
        starts = set(self.charsmap.starts) if self.charsmap is not None else set()
        starts.update(self.user.first_items())
        self._plain = not starts
        # (a run of bytes none of which starts a rule or a user-defined symbol: characters copied as they are)
        self._special = regex.compile(b"[" + b"".join(regex.escape(bytes([b])) for b in sorted(starts)) + b"]"
                                      ) if starts else None
        # (when every such byte is ASCII, the same search over the text itself: a text with none of them
        # is all plain characters, the case of `_whitespace_only`, without a trip through its UTF-8 bytes)
        self._special_text = regex.compile("[" + "".join(regex.escape(chr(b)) for b in sorted(starts)) + "]"
                                           ) if starts and max(starts) < 0x80 else None

    def __call__(self, text: str) -> str:
        if not text:
            return text
        if self._plain or (self._special_text is not None and self._special_text.search(text) is None):
            return self._whitespace_only(text)
        return self._general(text.encode("utf-8", "surrogatepass")).decode("utf-8", "surrogatepass")

    def alignment(self, text: str) -> tuple[str, list[int]]:
        """(normalized text, for each of its UTF-8 byte offsets and its end the byte offset in `text`
        it comes from): sentencepiece's `norm_to_orig`, step by step (no shortcut: for spans, not speed)."""
        data = text.encode("utf-8", "surrogatepass")
        user = self.user.scanner(data)
        opts = self.options
        remove = opts.remove_extra_whitespaces
        i = self._leading_spaces(data, user) if remove else 0
        if i >= len(data):
            return "", [len(data)]
        space = SPACE_SYMBOL.encode("utf-8") if opts.escape_whitespaces else b" "
        out = bytearray()
        where: list[int] = []
        if opts.add_dummy_prefix and not opts.treat_whitespace_as_suffix:
            out += space
            where += [i] * len(space)
        is_prev_space = remove
        cap = growth_cap_bytes()
        walks = 0
        while i < len(data):
            sp, used = self._prefix(data, i, user)
            walks += 1
            if not walks % WALKS_PER_CHECK:
                time_left()  # (as in _general)
            while is_prev_space and sp.startswith(b" "):
                sp = sp[1:]
            if sp:
                piece = sp.replace(b" ", space) if opts.escape_whitespaces else sp
                out += piece
                where += [i] * len(piece)
                if len(out) > cap:  # (measured while it is built: refused before it grows further)
                    check_growth_bytes(len(out))
                is_prev_space = sp.endswith(b" ")
            i += used
            if not remove:
                is_prev_space = False
        consumed = i
        if remove:
            while out.endswith(space):
                del out[len(out) - len(space):]
                consumed = where[len(out)]
                del where[len(out):]
        if opts.add_dummy_prefix and opts.treat_whitespace_as_suffix:
            out += space
            where += [consumed] * len(space)
        where.append(consumed)
        return bytes(out).decode("utf-8", "surrogatepass"), where

    def _whitespace_only(self, text: str) -> str:
        """The same steps when every character is its own prefix (no rules, no user-defined symbols)."""
        opts = self.options
        if opts.remove_extra_whitespaces:
            text = text.lstrip(" ")
            if not text:
                return ""
            text = regex.sub(" {2,}", " ", text)
        space = SPACE_SYMBOL if opts.escape_whitespaces else " "
        if opts.escape_whitespaces:
            text = text.replace(" ", SPACE_SYMBOL)
        if opts.add_dummy_prefix and not opts.treat_whitespace_as_suffix:
            text = space + text
        if opts.remove_extra_whitespaces:
            text = text.rstrip(space)
        if opts.add_dummy_prefix and opts.treat_whitespace_as_suffix:
            text = text + space
        return text

    def _leading_spaces(self, data: bytes, user: Scanner) -> int:
        """Where the text starts once the prefixes that normalize to a space are skipped."""
        i = 0
        while i < len(data):
            sp, used = self._prefix(data, i, user)
            if sp != b" ":
                break
            i += used
        return i

    def _prefix(self, data: bytes, i: int, user: Scanner) -> tuple[bytes, int]:
        """(what the prefix at i normalizes to, bytes consumed): sentencepiece's NormalizePrefix."""
        if self.user:
            found = user.longest(i)
            if found is not None:
                return data[i:i + found[0]], found[0]
        if self.charsmap is not None:
            found = self.charsmap.longest(data, i)
            if found is not None:
                return found[1], found[0]
        size = _char_len(data, i)
        return data[i:i + size], size

    def _general(self, data: bytes) -> bytes:
        opts = self.options
        user = self.user.scanner(data)
        remove = opts.remove_extra_whitespaces
        i = self._leading_spaces(data, user) if remove else 0
        if i >= len(data):
            return b""
        space = SPACE_SYMBOL.encode("utf-8") if opts.escape_whitespaces else b" "
        out = bytearray()
        if opts.add_dummy_prefix and not opts.treat_whitespace_as_suffix:
            out += space
        is_prev_space = remove
        special = self._special
        assert special is not None
        cap = growth_cap_bytes()
        walks = 0
        while i < len(data):
            if len(out) > cap:  # (measured while it is built: refused before it grows further)
                check_growth_bytes(len(out))
            found = special.search(data, i)
            stop = found.start() if found is not None else len(data)
            if stop > i:  # (plain characters: each its own prefix)
                run = data[i:stop]
                if remove:
                    if is_prev_space:
                        run = run.lstrip(b" ")
                    if run:
                        run = regex.sub(b" {2,}", b" ", run)
                if run:
                    out += run.replace(b" ", space) if opts.escape_whitespaces else run
                    is_prev_space = run.endswith(b" ")
                if not remove:
                    is_prev_space = False
                i = stop
                continue
            sp, used = self._prefix(data, i, user)
            walks += 1
            if not walks % WALKS_PER_CHECK:
                time_left()  # (each walk is at most MAX_RULE_BYTES steps: the encode's budget bounds them all)
            while is_prev_space and sp.startswith(b" "):
                sp = sp[1:]
            if sp:
                out += sp.replace(b" ", space) if opts.escape_whitespaces else sp
                is_prev_space = sp.endswith(b" ")
            i += used
            if not remove:
                is_prev_space = False
        if remove:
            while out.endswith(space):
                del out[len(out) - len(space):]
        if opts.add_dummy_prefix and opts.treat_whitespace_as_suffix:
            out += space
        return bytes(out)


# --------------------------------------------------------------------------
# Decoding


def describe_spm_decoder(*, controls: Sequence[str], unk: str, unk_surface: str, byte_fallback: bool,
                         add_dummy_prefix: bool, remove_extra_whitespaces: bool,
                         denormalizer: SpmOptions | None = None) -> dict[str, Any]:
    """`denormalizer`: the model's denormalizer spec, when it has rules (the key is left out otherwise, so
    that the description of a model without one is what it always was)."""
    desc = {
        "type": "SentencePiece", "controls": sorted(controls), "unk": unk, "unk_surface": unk_surface,
        "byte_fallback": byte_fallback, "add_dummy_prefix": add_dummy_prefix,
        "remove_extra_whitespaces": remove_extra_whitespaces,
    }
    if denormalizer is not None:
        desc["denormalizer"] = describe_spm_normalizer(denormalizer)
    return desc


def spm_decoder(desc: Mapping[str, Any]) -> Any:
    """The decoder of a description (`describe_spm_decoder`): piece strings -> [text]."""
    controls = frozenset(desc["controls"])
    unk, surface, fallback = desc["unk"], desc["unk_surface"], bool(desc["byte_fallback"])
    strip_first = bool(desc["add_dummy_prefix"]) or bool(desc["remove_extra_whitespaces"])
    strip_all = bool(desc["remove_extra_whitespaces"])
    # (sentencepiece runs the decoded text through the denormalizer, a normalizer of its own spec: its
    # rules and flags, no user-defined symbols, the space symbol never moved to the end)
    denormalize = SpmNormalizer(options_from_description(desc["denormalizer"])) if desc.get("denormalizer") else None

    def decode(tokens: list[str]) -> list[str]:
        text = spm_decode(tokens, controls, unk, surface, fallback, strip_first, strip_all)
        if denormalize is None:
            return [text]
        with bounded(len(text)):  # (its rules may make the text longer: measured as it is built)
            return [denormalize(text)]

    return decode


def spm_decode(tokens: Sequence[str], controls: frozenset[str], unk: str, unk_surface: str, byte_fallback: bool,
               strip_first: bool, strip_all: bool) -> str:
    """sentencepiece's `Decode` over piece strings (see the module doc)."""
    text: list[str] = []
    run = bytearray()
    is_bos_ws = True
    bos_ws_seen = False
    for piece in tokens:
        byte = _BYTE_PIECE.fullmatch(piece) if byte_fallback and len(piece) == 6 else None
        if byte is not None:
            run.append(int(byte.group(1), 16))
            continue
        if run:
            text.append(decode_spm_bytes(bytes(run)))
            run.clear()
        if is_bos_ws and (bos_ws_seen or any(text)):
            is_bos_ws = False
        bos_ws_seen = False
        if piece in controls:
            continue
        if piece == unk:
            text.append(unk_surface)
            continue
        if is_bos_ws and strip_first and piece.startswith(SPACE_SYMBOL):
            piece = piece[1:]
            bos_ws_seen = not strip_all
        text.append(piece.replace(SPACE_SYMBOL, " "))
    if run:
        text.append(decode_spm_bytes(bytes(run)))
    return "".join(text)


__all__ = [
    "Charsmap", "CharsmapError", "DEFAULT_UNK_SURFACE", "SPACE_SYMBOL", "SpmNormalizer", "SpmOptions",
    "decode_spm_bytes", "describe_spm_decoder", "describe_spm_normalizer", "options_from_description",
    "spm_decoder", "spm_decode",
]
