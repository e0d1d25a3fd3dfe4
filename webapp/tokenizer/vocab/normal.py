"""Text a file's NFC or NFKC normalizer never leaves in place: `never_normalized(form)(data)`.

Normalized text is stable (normalizing it again changes nothing), so it never holds a character
whose own normalization differs (Unicode's quick check "No": a singleton, an excluded or
compatibility form), nor a starter right before a character it composes with (they would
be joined, nothing between them blocks it). A token whose bytes hold either can come from no
piece of the normalized text. For half a character at the end, every completion must hold one.
"""

from __future__ import annotations

import json
import unicodedata
from itertools import product
from typing import Callable, Literal

Form = Literal["NFC", "NFKC"]

_CONT = range(0x80, 0xC0)


def normal_form(pipeline: str) -> Form | None:
    """"NFC" or "NFKC" when that is the file's whole normalizer (or a sequence's last step), else None."""
    desc = json.loads(pipeline).get("normalizer") if pipeline else None
    if isinstance(desc, dict) and desc.get("type") == "Sequence":
        steps = desc.get("normalizers") or []
        desc = steps[-1] if steps else None
    kind = desc.get("type") if isinstance(desc, dict) else None
    return "NFC" if kind == "NFC" else "NFKC" if kind == "NFKC" else None


def _never(form: Form, text: str) -> bool:
    for i, ch in enumerate(text):
        if unicodedata.normalize(form, ch) != ch:
            return True
        if i and unicodedata.combining(text[i - 1]) == 0 and len(unicodedata.normalize(form, text[i - 1] + ch)) == 1:
            return True
    return False


def never_normalized(form: Form) -> Callable[[bytes], bool]:
    """`data` -> is it never inside the UTF-8 of `form`-normalized text (see the module docstring)?"""
    def check(data: bytes) -> bool:
        try:
            return _never(form, data.decode("utf-8"))
        except UnicodeDecodeError:
            pass
        cut = max(i for i, b in enumerate(data) if not 0x80 <= b < 0xC0) if any(
            not 0x80 <= b < 0xC0 for b in data) else -1
        if cut < 0 or data[cut] < 0xC2:
            return False  # (only the end of a character is held: its start could be anything)
        head = data[:cut]
        lead = data[cut]
        size = 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
        missing = size - (len(data) - cut)
        if missing <= 0 or missing > 2:
            return False
        try:
            before = head.decode("utf-8")
        except UnicodeDecodeError:
            return False
        for tail in product(_CONT, repeat=missing):
            try:
                whole = (data[cut:] + bytes(tail)).decode("utf-8")
            except UnicodeDecodeError:
                continue
            if not _never(form, before + whole):
                return False
        return True
    return check
