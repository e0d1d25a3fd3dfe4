"""GGUF files (llama.cpp): the metadata key/values, read safely from untrusted bytes (`read_metadata`).

Reads the header and the key/value pairs of a file, or of any prefix that holds them; never the tensor
infos or data after them (`tensor_count` is reported as read). Bounds, each checked before anything is
allocated or looped: METADATA_LIMIT_BYTES read at all, MAX_KEYS keys of MAX_KEY_BYTES each, arrays
nested MAX_ARRAY_DEPTH deep, MAX_LIST_ITEMS list items built in all, and every count or length against
the fewest bytes its items take. Strings are UTF-8 decoded with "surrogateescape" (bytes that are not
UTF-8 come back with `.encode("utf-8", "surrogateescape")`); keys must be UTF-8. Arrays of numbers are
read-only numpy arrays, other arrays lists. Not read: version 1 and big-endian files.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np
from gguf.constants import GGUF_MAGIC, GGUFValueType

from webapp.tokenizer.errors import TokenizerError, short_repr
from webapp.tokenizer.formats.common import file_error

#: Bytes of a file read at all: the metadata must end within them (200,000 tokens and merges: 13 MB).
METADATA_LIMIT_BYTES = 64 * 1024 * 1024
#: Key/value pairs (real files have a few dozen).
MAX_KEYS = 65_536
#: UTF-8 bytes of one key (the GGUF spec's own bound: 2**16 - 1).
MAX_KEY_BYTES = 65_535
#: Levels of arrays, the outermost counted as 1: enough for any real file, and the parser's recursion stays short.
MAX_ARRAY_DEPTH = 4
#: Items of all lists built (strings, bools, nested arrays; numeric arrays are numpy, one object each):
#: 200,000 tokens and 200,000 merges are 400,000 items, 43 MB read, so the lists stay near 220 MB.
MAX_LIST_ITEMS = 2_000_000
#: llama.cpp reads these; version 1 (2023, 32-bit counts) is laid out differently.
SUPPORTED_VERSIONS = (2, 3)
#: Magic, version, tensor count, key/value count.
HEADER_BYTES = 24

MAGIC = struct.pack("<I", GGUF_MAGIC)  # b"GGUF"
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_SCALARS: dict[GGUFValueType, struct.Struct] = {
    GGUFValueType.UINT8: struct.Struct("<B"), GGUFValueType.INT8: struct.Struct("<b"),
    GGUFValueType.UINT16: struct.Struct("<H"), GGUFValueType.INT16: struct.Struct("<h"),
    GGUFValueType.UINT32: struct.Struct("<I"), GGUFValueType.INT32: struct.Struct("<i"),
    GGUFValueType.UINT64: struct.Struct("<Q"), GGUFValueType.INT64: struct.Struct("<q"),
    GGUFValueType.FLOAT32: struct.Struct("<f"), GGUFValueType.FLOAT64: struct.Struct("<d"),
    GGUFValueType.BOOL: struct.Struct("<B"),  # (one byte, 0 or 1: checked, not struct's "?")
}
_NUMPY_TYPES: dict[GGUFValueType, str] = {
    GGUFValueType.UINT8: "<u1", GGUFValueType.INT8: "<i1", GGUFValueType.UINT16: "<u2",
    GGUFValueType.INT16: "<i2", GGUFValueType.UINT32: "<u4", GGUFValueType.INT32: "<i4",
    GGUFValueType.UINT64: "<u8", GGUFValueType.INT64: "<i8", GGUFValueType.FLOAT32: "<f4",
    GGUFValueType.FLOAT64: "<f8",
}
#: The fewest bytes one value of each type takes: a string its length (u64), an array its type and count.
_SMALLEST: dict[GGUFValueType, int] = {
    **{vtype: form.size for vtype, form in _SCALARS.items()}, GGUFValueType.STRING: 8, GGUFValueType.ARRAY: 12,
}
#: The fewest bytes one key/value pair takes: an empty key (u64 length), the value type (u32), one byte.
_SMALLEST_PAIR = 8 + 4 + 1


@dataclass(frozen=True)
class GgufMetadata:
    """What `read_metadata` found: the version, the tensor count (unchecked), the values by key,
    and `metadata_bytes`, the offset where the metadata ends (the tensor infos start)."""

    version: int
    tensor_count: int
    values: dict[str, Any]
    metadata_bytes: int


@dataclass
class _Source:
    """The bytes being read, where reading must stop, and what is left of the list-item budget."""

    data: bytes | bytearray
    end: int  # min(bytes sent, METADATA_LIMIT_BYTES): nothing at or past it is read
    sent: int
    items_left: int


def read_metadata(data: bytes | bytearray | memoryview) -> GgufMetadata:
    """The metadata of a GGUF file from its bytes (the whole file or a prefix holding the metadata).

    Every problem is a `TokenizerError` with field "file" and location {"offset": where}; a prefix that
    stops inside the metadata also gives {"needed": the fewest bytes the metadata takes, as far as read}.
    """
    src = _source(data)
    version = _check_start(src)
    tensor_count = _u64(src, 8, "the tensor count", HEADER_BYTES - 16)
    key_count = _key_count(src)
    values: dict[str, Any] = {}
    seen_at: dict[str, int] = {}
    pos = HEADER_BYTES
    for index in range(key_count):
        tail = _SMALLEST_PAIR * (key_count - index - 1)  # the pairs still to come
        key_at = pos
        key, pos = _read_key(src, pos, tail)
        if key in seen_at:
            _fail(f"the key {short_repr(key)} at offset {key_at:,} was already given at offset {seen_at[key]:,}",
                  key_at)
        seen_at[key] = key_at
        values[key], pos = _read_keyed_value(src, pos, key, tail)
    return GgufMetadata(version=version, tensor_count=tensor_count, values=values, metadata_bytes=pos)


def _source(data: bytes | bytearray | memoryview) -> _Source:
    if isinstance(data, memoryview):  # (a copy of at most the limit: slicing bytes is what reads fast)
        data = data.cast("B")[:METADATA_LIMIT_BYTES].tobytes()
    return _Source(data=data, end=min(len(data), METADATA_LIMIT_BYTES), sent=len(data), items_left=MAX_LIST_ITEMS)


def _check_start(src: _Source) -> int:
    """The magic and the version, checked on whatever part of them was sent; the version."""
    start = bytes(src.data[:4])
    if start != MAGIC[: len(start)]:
        _fail(f"not a GGUF file: the bytes at offset 0 are {short_repr(start)}, not {MAGIC!r}", 0)
    version = _u32(src, 4, "the version", 0)  # (checked as soon as it is there: a short prefix may be no GGUF)
    if version in SUPPORTED_VERSIONS:
        return version
    if version == 1:
        _fail("GGUF version 1 at offset 4 (the first, from 2023) is not read; llama.cpp reads versions 2 and 3", 4)
    swapped = int.from_bytes(version.to_bytes(4, "little"), "big")
    if swapped in SUPPORTED_VERSIONS:
        _fail(f"a big-endian GGUF file (at offset 4, version {swapped} with its bytes swapped); "
              "only little-endian ones are read", 4)
    _fail(f"unknown GGUF version {version:,} at offset 4; versions 2 and 3 are read", 4)


def _key_count(src: _Source) -> int:
    count = _u64(src, 16, "the key/value count", 0)
    if count > MAX_KEYS:
        _fail(f"the key/value count at offset 16 is {count:,}; at most {MAX_KEYS:,} keys are read", 16)
    _need(src, 16, HEADER_BYTES + count * _SMALLEST_PAIR, f"the key/value count {count:,}")
    return count


def _read_key(src: _Source, pos: int, tail: int) -> tuple[str, int]:
    """One key at `pos` (its length, then UTF-8 bytes); `tail` is the fewest bytes needed after its value."""
    length = _u64(src, pos, "the key's length", tail + 4 + 1)
    if length > MAX_KEY_BYTES:
        _fail(f"the key at offset {pos:,} is {length:,} bytes long; keys are at most {MAX_KEY_BYTES:,}", pos)
    start = pos + 8
    _need(src, pos, start + length + 4 + 1 + tail, f"the key of {length:,} bytes")
    try:
        return src.data[start:start + length].decode("utf-8"), start + length
    except UnicodeDecodeError as exc:
        _fail(f"the key at offset {pos:,} is not UTF-8 (byte {src.data[start + exc.start]:#04x} "
              f"at offset {start + exc.start:,})", pos)


def _read_keyed_value(src: _Source, pos: int, key: str, tail: int) -> tuple[Any, int]:
    """The value of `key` at `pos` (its type, then the value); its errors also name the key."""
    try:
        vtype = _value_type(src, pos, tail + 1)
        return _read_value(src, vtype, pos + 4, 0, tail)
    except TokenizerError as exc:
        raise TokenizerError(f"{exc.message}, in the value of the key {short_repr(key)}",
                             field=exc.field, location=exc.location) from None


def _value_type(src: _Source, pos: int, after: int) -> GGUFValueType:
    number = _u32(src, pos, "the value type", after)
    try:
        return GGUFValueType(number)
    except ValueError:
        _fail(f"unknown value type {number:,} at offset {pos:,} (0 to {max(GGUFValueType):,} are defined)", pos)


def _read_value(src: _Source, vtype: GGUFValueType, pos: int, depth: int, tail: int) -> tuple[Any, int]:
    """A value of type `vtype` at `pos`, inside `depth` arrays; `tail` bytes at least follow it."""
    if vtype is GGUFValueType.STRING:
        return _read_string(src, pos, tail)
    if vtype is GGUFValueType.ARRAY:
        return _read_array(src, pos, depth + 1, tail)
    form = _SCALARS[vtype]
    _need(src, pos, pos + form.size + tail, f"the {vtype.name} value")
    (value,) = form.unpack_from(src.data, pos)
    if vtype is GGUFValueType.BOOL:
        return _as_bool(value, pos), pos + 1
    return value, pos + form.size


def _as_bool(byte: int, pos: int) -> bool:
    if byte > 1:
        _fail(f"the BOOL at offset {pos:,} is {byte:,}; a BOOL is 0 or 1", pos)
    return byte == 1


def _read_string(src: _Source, pos: int, tail: int) -> tuple[str, int]:
    length = _u64(src, pos, "the string's length", tail)
    start = pos + 8
    _need(src, pos, start + length + tail, f"the string of {length:,} bytes")
    return src.data[start:start + length].decode("utf-8", "surrogateescape"), start + length


def _read_array(src: _Source, pos: int, depth: int, tail: int) -> tuple[Any, int]:
    """An array at `pos` (element type, count, elements), the `depth`-th level of arrays."""
    if depth > MAX_ARRAY_DEPTH:
        _fail(f"the array at offset {pos:,} is nested {depth:,} deep; arrays nest at most {MAX_ARRAY_DEPTH} deep",
              pos)
    etype = _value_type(src, pos, 8 + tail)
    count = _u64(src, pos + 4, "the array's count", tail)
    start = pos + 12
    # Checked before any item is read or any list made: a count of 2**40 ends here.
    _need(src, pos, start + count * _SMALLEST[etype] + tail, f"the array of {count:,} {etype.name} items")
    if etype in _NUMPY_TYPES:
        return _numbers(src, start, count, etype), start + count * _SMALLEST[etype]
    _take_items(src, pos, count)
    if etype is GGUFValueType.STRING:
        return _read_strings(src, start, count, tail)
    if etype is GGUFValueType.BOOL:
        return [_as_bool(byte, start + i) for i, byte in enumerate(src.data[start:start + count])], start + count
    return _read_arrays(src, start, count, depth, tail)


def _numbers(src: _Source, start: int, count: int, etype: GGUFValueType) -> np.ndarray[Any, Any]:
    # A copy, so the array does not keep the caller's (possibly file-sized) bytes alive; read-only, as
    # the metadata is frozen.
    array = np.frombuffer(src.data, dtype=_NUMPY_TYPES[etype], count=count, offset=start).copy()
    array.flags.writeable = False
    return array


def _take_items(src: _Source, pos: int, count: int) -> None:
    if count > src.items_left:
        _fail(f"the array at offset {pos:,} has {count:,} items, over what is left of the "
              f"{MAX_LIST_ITEMS:,} list items read from one file ({src.items_left:,})", pos)
    src.items_left -= count


def _read_strings(src: _Source, pos: int, count: int, tail: int) -> tuple[list[str], int]:
    """`count` strings from `pos`: the hot loop of a vocabulary (tokens, merges), so written flat."""
    data, end, unpack = src.data, src.end, _U64.unpack_from
    out: list[str] = []
    append = out.append
    index = item = 0
    try:
        for index in range(count):
            item = pos
            start = pos + 8
            pos = start + unpack(data, item)[0]  # (past the bytes sent: struct.error)
            if pos > end:
                break
            append(data[start:pos].decode("utf-8", "surrogateescape"))
        else:
            return out, pos
    except struct.error:
        pass
    _read_string(src, item, tail + 8 * (count - index - 1))  # (raises, naming what is missing)
    raise AssertionError("unreachable")  # pragma: no cover


def _read_arrays(src: _Source, pos: int, count: int, depth: int, tail: int) -> tuple[list[Any], int]:
    out: list[Any] = []
    for index in range(count):
        item, pos = _read_array(src, pos, depth + 1, tail + _SMALLEST[GGUFValueType.ARRAY] * (count - index - 1))
        out.append(item)
    return out, pos


def _u32(src: _Source, pos: int, what: str, after: int) -> int:
    """The u32 at `pos` (`what` it is); `after` bytes at least follow it."""
    _need(src, pos, pos + 4 + after, what)
    return int(_U32.unpack_from(src.data, pos)[0])


def _u64(src: _Source, pos: int, what: str, after: int) -> int:
    _need(src, pos, pos + 8 + after, what)
    return int(_U64.unpack_from(src.data, pos)[0])


def _need(src: _Source, pos: int, needed: int, what: str) -> None:
    """Refuse, naming `what` at `pos`, unless the first `needed` bytes were sent and are within the limit."""
    if needed <= src.end:
        return
    if needed > METADATA_LIMIT_BYTES:
        _fail(f"{what} at offset {pos:,}: the metadata would need at least {needed:,} bytes, over the limit "
              f"of {_size(METADATA_LIMIT_BYTES)} read from a GGUF file", pos, needed=needed)
    _fail(f"{what} at offset {pos:,}: the metadata needs at least {needed:,} bytes; only {src.sent:,} were sent",
          pos, needed=needed)


def _size(count: int) -> str:
    """A byte count as messages give it: "67,108,864 bytes (64 MiB)"."""
    mib = f" ({count >> 20:,} MiB)" if count and count % (1 << 20) == 0 else ""
    return f"{count:,} bytes{mib}"


def _fail(message: str, offset: int, **more: int) -> NoReturn:
    raise file_error(message, offset=offset, **more)
