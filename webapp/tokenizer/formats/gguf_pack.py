"""The `gguf` package's writer, with the vocabulary's arrays packed in one go: the same bytes.

`GGUFWriter._pack_val` packs an array one item at a time, with a struct call, a bytearray and a type
check per item: most of the time of writing a 200,000-token vocabulary. `ArrayPackingWriter` packs a
non-empty list whose items are all exactly `str`, `int` or `float` (what `GGUFValueType.get_type` calls
STRING, INT32 and FLOAT32) with one call per array, little-endian as the package writes by default;
anything else is left to the package.
"""

from __future__ import annotations

import struct
from itertools import chain
from typing import Any

import gguf
from gguf import GGUFEndian, GGUFValueType

_LENGTH = struct.Struct("<Q")
#: The item type of a list whose items are all of exactly this Python type, as `get_type` names it.
_ITEM_TYPES = {str: GGUFValueType.STRING, int: GGUFValueType.INT32, float: GGUFValueType.FLOAT32}
_FORMATS = {GGUFValueType.INT32: "i", GGUFValueType.FLOAT32: "f"}


def packed_array(values: list[Any]) -> bytes | None:
    """An array's item type, length and items as `GGUFWriter._pack_val` writes them (little-endian), or
    None for a list it is left to (empty, mixed, or of other types)."""
    kinds = set(map(type, values))
    if len(kinds) != 1:
        return None
    item_type = _ITEM_TYPES.get(kinds.pop())
    if item_type is None:
        return None
    head = struct.pack("<IQ", item_type, len(values))
    if item_type == GGUFValueType.STRING:
        data = [value.encode("utf-8") for value in values]
        return head + b"".join(chain.from_iterable(zip(map(_LENGTH.pack, map(len, data)), data)))
    return head + struct.pack(f"<{len(values)}{_FORMATS[item_type]}", *values)


class ArrayPackingWriter(gguf.GGUFWriter):
    """`gguf.GGUFWriter` with `packed_array` for the arrays it can pack (see the module docstring)."""

    def _pack_val(self, val: Any, vtype: GGUFValueType, add_vtype: bool,
                  sub_type: GGUFValueType | None = None) -> bytes:
        fast = (vtype == GGUFValueType.ARRAY and sub_type is None and self.endianess == GGUFEndian.LITTLE
                and isinstance(val, list))
        packed = packed_array(val) if fast else None
        if packed is None:
            return bytes(super()._pack_val(val, vtype, add_vtype, sub_type))
        return (struct.pack("<I", vtype) if add_vtype else b"") + packed
