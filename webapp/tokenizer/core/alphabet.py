"""GPT-2's byte <-> character alphabet: how byte-level files write bytes as text.

Hugging Face tokenizer.json and vocab.json + merges.txt files write every byte
as one printable character; this module holds that table and the two
conversions (long inputs spelt with numpy), and a pipeline's pieces spelt as its model
reads them (`model_pieces`). What it does not do: read or write any file.

Details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from itertools import accumulate
from operator import methodcaller
from typing import Collection, Iterable

import numpy as np


def _build_byte_alphabet() -> list[str]:
    """GPT-2's printable stand-in character for each byte value."""
    visible = set(range(0x21, 0x7F)) | set(range(0xA1, 0xAD)) | set(range(0xAE, 0x100))
    alphabet: list[str] = []
    shifted = 0
    for byte in range(256):
        if byte in visible:
            alphabet.append(chr(byte))
        else:
            alphabet.append(chr(0x100 + shifted))
            shifted += 1
    return alphabet


BYTE_ALPHABET: tuple[str, ...] = tuple(_build_byte_alphabet())
#: Each alphabet character's byte.
ALPHABET_BYTE: dict[str, int] = {ch: b for b, ch in enumerate(BYTE_ALPHABET)}
# str.translate tables: alphabet char -> the Latin-1 char of its byte (then
# .encode("latin-1") gives the bytes). Code points below 256 that are NOT in
# the alphabet map to U+FFFF so that encoding fails instead of passing through.
_TO_LATIN1 = {ord(ch): chr(b) for ch, b in ALPHABET_BYTE.items()}
for _cp in range(256):
    _TO_LATIN1.setdefault(_cp, "\uffff")
_FROM_LATIN1 = {b: ch for b, ch in enumerate(BYTE_ALPHABET)}


def token_to_bytes(token: str) -> bytes | None:
    """The bytes a byte-level token string stands for, or None if it is not one."""
    try:
        return token.translate(_TO_LATIN1).encode("latin-1")
    except UnicodeEncodeError:
        return None


def tokens_to_bytes(tokens: Collection[str]) -> list[bytes] | None:
    """`token_to_bytes` of every token, or None if any is not a byte-level token: one translate and one
    encode for all of them (a character is one byte), then the bytes cut at the tokens' lengths."""
    try:
        joined = "".join(tokens).translate(_TO_LATIN1).encode("latin-1")
    except UnicodeEncodeError:
        return None
    ends = list(accumulate(map(len, tokens)))
    return list(map(joined.__getitem__, map(slice, [0, *ends[:-1]], ends)))


#: From this many bytes, `bytes_to_token` looks the characters up with numpy (str.translate with a
#: dict costs about 13 ns a byte; the numpy lookup 1.5 us a call, then about 1 ns a byte).
NUMPY_SPELL = 128
_ALPHABET_CODES = np.array([ord(ch) for ch in BYTE_ALPHABET], dtype=np.uint32)


def bytes_to_token(data: bytes) -> str:
    """The byte-level token string for some bytes (inverse of `token_to_bytes`)."""
    if len(data) >= NUMPY_SPELL:
        return _ALPHABET_CODES.take(np.frombuffer(data, dtype=np.uint8)).tobytes().decode("utf-32-le")
    return data.decode("latin-1").translate(_FROM_LATIN1)


def model_piece(piece: str, byte_level: bool, spelt_in_alphabet: bool) -> str:
    """A pre-tokenizer's piece as the model reads it: in the byte alphabet for a byte-level pipeline."""
    if byte_level and not spelt_in_alphabet:
        return bytes_to_token(piece.encode("utf-8", "surrogatepass"))
    return piece


def model_pieces(pieces: list[str], byte_level: bool, spelt_in_alphabet: bool) -> list[str]:
    """`model_piece` of every piece, with one translation of their joined text (then cut at each piece's bytes)."""
    if not byte_level or spelt_in_alphabet or len(pieces) < 2:
        return [model_piece(piece, byte_level, spelt_in_alphabet) for piece in pieces]
    joined = "".join(pieces)
    if joined.isascii():
        lengths: Iterable[int] = map(len, pieces)
    else:
        lengths = map(len, map(methodcaller("encode", "utf-8", "surrogatepass"), pieces))
    spelt = bytes_to_token(joined.encode("utf-8", "surrogatepass"))
    ends = list(accumulate(lengths))
    return list(map(spelt.__getitem__, map(slice, [0, *ends[:-1]], ends)))
