"""GGUF metadata (webapp/tokenizer/formats/gguf.py): files from the gguf package's own writer read back,
and every hostile header refused with the offset it names.

The oracle is `gguf.GGUFWriter` (vocab-only files, as llama.cpp's converter writes with --vocab-only)
and, on files it can read, `gguf.GGUFReader`. Hostile files are built here byte by byte.
"""

from __future__ import annotations

import struct
import tempfile
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

gguf = pytest.importorskip("gguf")
from gguf import GGUFValueType as T, Keys, TokenType  # noqa: E402
from tests.gguf_files import write_gguf as gguf_file  # noqa: E402

from webapp.tokenizer import TokenizerError  # noqa: E402
from webapp.tokenizer.formats import gguf as reader  # noqa: E402
from webapp.tokenizer.formats.gguf import read_metadata  # noqa: E402

INT_BOUNDS = {
    T.UINT8: (0, 2**8 - 1), T.INT8: (-(2**7), 2**7 - 1), T.UINT16: (0, 2**16 - 1), T.INT16: (-(2**15), 2**15 - 1),
    T.UINT32: (0, 2**32 - 1), T.INT32: (-(2**31), 2**31 - 1), T.UINT64: (0, 2**64 - 1), T.INT64: (-(2**63), 2**63 - 1),
}
NUMPY_NAMES = {T.UINT8: "uint8", T.INT8: "int8", T.UINT16: "uint16", T.INT16: "int16", T.UINT32: "uint32",
               T.INT32: "int32", T.UINT64: "uint64", T.INT64: "int64", T.FLOAT32: "float32", T.FLOAT64: "float64"}
SCALAR_TYPES = [*INT_BOUNDS, T.FLOAT32, T.FLOAT64, T.BOOL, T.STRING]


def write_gguf(path: Path, add: Any, arch: str = "llama") -> bytes:
    """The bytes of a vocab-only file the gguf package writes after `add(writer)`, also kept at `path`."""
    data = gguf_file(add, arch)
    path.write_bytes(data)
    return data


def tagged(value: Any) -> Any:
    """A value with its Python (or numpy) type beside it, so 1, 1.0 and True compare unequal."""
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.name, value.tolist())
    if isinstance(value, list):
        return [tagged(item) for item in value]
    return (type(value).__name__, value)


def plain(meta: reader.GgufMetadata) -> tuple[Any, ...]:
    """`meta` in a form that compares with == (numpy arrays do not)."""
    return (meta.version, meta.tensor_count, meta.metadata_bytes, {k: tagged(v) for k, v in meta.values.items()})


# --- files written by the gguf package ---------------------------------------------------------

TOKENS = ["<unk>", "<s>", "</s>", "a", "b", "ab", "Ġthe", "漢字", b"\xff\xfe", b"\xe6\xbc"]  # the last two not UTF-8
SCORES = [0.0, 0.0, 0.0, -1.0, -2.0, -3.5, -4.25, -5.0, -6.0, -7.0]
TYPES = [TokenType.UNKNOWN, TokenType.CONTROL, TokenType.CONTROL] + [TokenType.NORMAL] * 5 + [TokenType.BYTE] * 2
MERGES = ["a b", "Ġ the", "漢 字"]
TEMPLATE = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}"


def add_tokenizer(writer: Any) -> None:
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("llama-bpe")
    writer.add_token_list(TOKENS)
    writer.add_token_scores(SCORES)
    writer.add_token_types(TYPES)
    writer.add_token_merges(MERGES)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)
    writer.add_chat_template(TEMPLATE)
    for vtype, (low, high) in INT_BOUNDS.items():
        writer.add_key_value(f"test.{vtype.name.lower()}.low", low, vtype)
        writer.add_key_value(f"test.{vtype.name.lower()}.high", high, vtype)
    writer.add_float32("test.float32", 0.1)
    writer.add_float64("test.float64", 0.1)
    writer.add_key_value("test.string.empty", "", T.STRING)
    writer.add_array("test.nested", [[1, 2, 3], [[True, False], [False]], ["x", "yz"], [0.5]])
    writer.add_key_value("test.uint64s", [0, 2**64 - 1], T.ARRAY, sub_type=T.UINT64)
    writer.add_key_value("test.bools", [True, False, True], T.ARRAY, sub_type=T.BOOL)


@pytest.fixture(scope="module")
def tokenizer_file(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return write_gguf(tmp_path_factory.mktemp("gguf") / "vocab.gguf", add_tokenizer)


def test_a_vocab_only_file_reads_back_every_value_written(tokenizer_file: bytes) -> None:
    meta = read_metadata(tokenizer_file)
    values = meta.values
    assert (meta.version, meta.tensor_count, meta.metadata_bytes) == (3, 0, len(tokenizer_file))
    assert values[Keys.General.ARCHITECTURE] == "llama"
    assert values[Keys.Tokenizer.MODEL] == "gpt2" and values[Keys.Tokenizer.PRE] == "llama-bpe"
    tokens = values[Keys.Tokenizer.LIST]
    assert tokens[:8] == TOKENS[:8]
    # Tokens that are not UTF-8 are kept: surrogateescape gives their bytes back.
    assert [t.encode("utf-8", "surrogateescape") for t in tokens[8:]] == TOKENS[8:]
    assert tagged(values[Keys.Tokenizer.SCORES]) == ("array", "float32", SCORES)
    assert tagged(values[Keys.Tokenizer.TOKEN_TYPE]) == ("array", "int32", [int(t) for t in TYPES])
    assert values[Keys.Tokenizer.MERGES] == MERGES
    assert tagged(values[Keys.Tokenizer.BOS_ID]) == ("int", 1) and values[Keys.Tokenizer.EOS_ID] == 2
    assert tagged(values[Keys.Tokenizer.ADD_BOS]) == ("bool", True)
    assert tagged(values[Keys.Tokenizer.ADD_EOS]) == ("bool", False)
    assert values[Keys.Tokenizer.CHAT_TEMPLATE] == TEMPLATE
    for vtype, (low, high) in INT_BOUNDS.items():
        assert tagged(values[f"test.{vtype.name.lower()}.low"]) == ("int", low)
        assert tagged(values[f"test.{vtype.name.lower()}.high"]) == ("int", high)
    assert values["test.float32"] == float(np.float32(0.1)) and values["test.float64"] == 0.1
    assert values["test.string.empty"] == ""
    assert tagged(values["test.nested"]) == [
        ("array", "int32", [1, 2, 3]), [[("bool", True), ("bool", False)], [("bool", False)]],
        [("str", "x"), ("str", "yz")], ("array", "float32", [0.5]),
    ]
    assert tagged(values["test.uint64s"]) == ("array", "uint64", [0, 2**64 - 1])
    assert tagged(values["test.bools"]) == [("bool", True), ("bool", False), ("bool", True)]


def test_numeric_arrays_are_read_only_copies(tokenizer_file: bytes) -> None:
    data = bytearray(tokenizer_file)
    scores = read_metadata(data).values[Keys.Tokenizer.SCORES]
    assert not scores.flags.writeable
    data[:] = bytes(len(data))  # the caller's buffer changed: the array holds its own copy
    assert scores.tolist() == SCORES


def test_the_gguf_packages_own_reader_agrees(tmp_path: Path) -> None:
    def add(writer: Any) -> None:
        add_tokenizer(writer)
        writer.add_token_list(TOKENS[:8])  # (GGUFReader decodes strictly: UTF-8 tokens only)

    path = tmp_path / "vocab.gguf"
    ours = read_metadata(write_gguf(path, add)).values
    theirs = {name: field for name, field in gguf.GGUFReader(path).fields.items() if not name.startswith("GGUF.")}
    assert list(ours) == list(theirs)
    for name, field in theirs.items():
        if name != "test.nested":  # (its contents() does not read arrays of arrays)
            value = ours[name]
            assert (value.tolist() if isinstance(value, np.ndarray) else value) == field.contents(), name


def test_a_prefix_holding_the_metadata_is_enough_and_what_follows_is_never_read(tmp_path: Path) -> None:
    def add(writer: Any) -> None:
        add_tokenizer(writer)
        writer.add_tensor("t", np.arange(6, dtype=np.float32).reshape(2, 3))

    writer = gguf.GGUFWriter(tmp_path / "model.gguf", "llama")
    add(writer)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()  # (the tensor infos, then the data)
    writer.close()
    data = (tmp_path / "model.gguf").read_bytes()
    meta = read_metadata(data)
    assert meta.tensor_count == 1
    # The tensor infos start where the metadata ends: the first is the name "t".
    assert data[meta.metadata_bytes:meta.metadata_bytes + 9] == struct.pack("<Q", 1) + b"t"
    for same in (data[:meta.metadata_bytes], memoryview(data), data[:meta.metadata_bytes] + b"\xff" * 1000):
        assert plain(read_metadata(same)) == plain(meta)


def test_a_caller_asking_for_the_bytes_it_is_told_reaches_the_whole_metadata(tokenizer_file: bytes) -> None:
    sent, asks = 0, 0
    while True:
        try:
            meta = read_metadata(tokenizer_file[:sent])
            break
        except TokenizerError as exc:
            assert exc.location["needed"] > sent
            sent, asks = exc.location["needed"], asks + 1
    assert meta.metadata_bytes == len(tokenizer_file)
    assert asks <= 3 * len(meta.values)  # (a few asks a key: its length, its bytes, its value)


# --- the property: random key/value sets -------------------------------------------------------

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)  # (UTF-8 encodable)


def scalar(vtype: T) -> st.SearchStrategy[tuple[Any, Any]]:
    """(what is written, what reading gives, tagged) for one value of `vtype`."""
    if vtype in INT_BOUNDS:
        return st.integers(*INT_BOUNDS[vtype]).map(lambda v: (v, ("int", v)))
    if vtype in (T.FLOAT32, T.FLOAT64):
        return st.floats(width=32 if vtype is T.FLOAT32 else 64, allow_nan=False).map(lambda v: (v, ("float", v)))
    if vtype is T.BOOL:
        return st.booleans().map(lambda v: (v, ("bool", v)))
    return st.one_of(TEXT.map(lambda v: (v, ("str", v))),
                     st.binary(max_size=12).map(lambda v: (v, ("str", v.decode("utf-8", "surrogateescape")))))


def typed_array(vtype: T) -> st.SearchStrategy[tuple[Any, Any]]:
    items = st.lists(scalar(vtype), min_size=1, max_size=6)  # (the writer refuses empty arrays)
    if vtype in NUMPY_NAMES:
        return items.map(lambda pairs: ([w for w, _ in pairs], ("array", NUMPY_NAMES[vtype], [e[1] for _, e in pairs])))
    return items.map(lambda pairs: ([w for w, _ in pairs], [e for _, e in pairs]))


def inferred_array(levels: int) -> st.SearchStrategy[tuple[Any, Any]]:
    """An array whose item type the writer infers (int32, float32, string, bool, or arrays), `levels` deep."""
    flat = st.one_of(typed_array(T.INT32), typed_array(T.FLOAT32), typed_array(T.BOOL),
                     st.lists(TEXT, min_size=1, max_size=4).map(lambda v: (v, [("str", s) for s in v])))
    if levels == 1:
        return flat
    nested = st.lists(inferred_array(levels - 1), min_size=1, max_size=3).map(
        lambda pairs: ([w for w, _ in pairs], [e for _, e in pairs]))
    return st.one_of(flat, nested)


def any_value() -> st.SearchStrategy[tuple[T, T | None, Any, Any]]:
    """(value type, item type, written, expected tagged)."""
    scalars = st.sampled_from(SCALAR_TYPES).flatmap(lambda t: scalar(t).map(lambda p: (t, None, *p)))
    arrays = st.sampled_from(SCALAR_TYPES).flatmap(lambda t: typed_array(t).map(lambda p: (T.ARRAY, t, *p)))
    # An array of arrays, MAX_ARRAY_DEPTH levels at most.
    nested = st.lists(inferred_array(reader.MAX_ARRAY_DEPTH - 1), min_size=1, max_size=3).map(
        lambda pairs: (T.ARRAY, T.ARRAY, [w for w, _ in pairs], [e for _, e in pairs]))
    return st.one_of(scalars, arrays, nested)


@settings(max_examples=examples(50), deadline=None)
@given(st.dictionaries(TEXT.filter(lambda k: k != "general.architecture"), any_value(), max_size=6))
def test_random_key_values_read_back_as_written(pairs: dict[str, tuple[T, T | None, Any, Any]]) -> None:
    def add(writer: Any) -> None:
        for key, (vtype, sub_type, written, _) in pairs.items():
            writer.add_key_value(key, written, vtype, sub_type=sub_type)

    with tempfile.TemporaryDirectory() as folder:
        data = write_gguf(Path(folder) / "random.gguf", add, arch="test")
    meta = read_metadata(data)
    assert meta.metadata_bytes == len(data)
    assert list(meta.values) == ["general.architecture", *pairs]
    for key, (_, _, _, expected) in pairs.items():
        assert tagged(meta.values[key]) == expected, key


# --- hostile bytes -----------------------------------------------------------------------------


def u32(n: int) -> bytes:
    return struct.pack("<I", n)


def u64(n: int) -> bytes:
    return struct.pack("<Q", n)


def header(keys: int, version: int = 3) -> bytes:
    return b"GGUF" + u32(version) + u64(0) + u64(keys)


def gstring(raw: bytes) -> bytes:
    return u64(len(raw)) + raw


def pair(key: bytes, vtype: int, payload: bytes) -> bytes:
    return gstring(key) + u32(vtype) + payload


#: Where the value of the first key starts, after the header, the key "k" and its value type.
VALUE_AT = 24 + 8 + 1 + 4


def refused(data: bytes | bytearray, offset: int, *words: str) -> TokenizerError:
    """The TokenizerError reading `data` gives: field "file", at `offset`, its message naming `words`."""
    with pytest.raises(TokenizerError) as info:
        read_metadata(data)
    error = info.value
    assert error.field == "file" and error.location["offset"] == offset, error.to_dict()
    assert f"offset {offset:,}" in error.message, error.message
    for word in words:
        assert word in error.message, (word, error.message)
    return error


#: Bytes a string array's items are drawn from: ASCII, UTF-8 of two to four bytes, their pieces alone
#: (a lead byte, a continuation byte), an encoded surrogate, and bytes UTF-8 never has.
STRING_PARTS = st.lists(st.sampled_from([b"a", b" ", "\u0120".encode(), "\u4e00".encode(), "\U0001F600".encode(),
                                         b"\xc4", b"\x80", b"\xed\xa0\x80", b"\xff", b""]), max_size=5).map(b"".join)


@st.composite
def utf8_cut_anywhere(draw: st.DrawFn) -> list[bytes]:
    """UTF-8 text cut into strings at any bytes, inside characters too: the strings together are UTF-8."""
    data = draw(st.text(alphabet="a\u0120\u4e00\U0001F600", max_size=30)).encode()
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=8)))
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)])]


@settings(max_examples=examples(200), deadline=None)
@given(st.one_of(st.lists(STRING_PARTS, max_size=30), utf8_cut_anywhere()))
def test_string_arrays_read_as_each_string_alone_decodes(raws: list[bytes]) -> None:
    """Each string of an array is its own bytes decoded (surrogateescape), UTF-8 or not, also where
    strings together are UTF-8 but one starts inside a character."""
    payload = u32(T.STRING) + u64(len(raws)) + b"".join(map(gstring, raws))
    got = read_metadata(header(1) + pair(b"k", T.ARRAY, payload)).values["k"]
    assert got == [raw.decode("utf-8", "surrogateescape") for raw in raws]


def test_the_magic_and_the_version() -> None:
    refused(b"PK\x03\x04" + bytes(40), 0, "not a GGUF file", "b'PK\\x03\\x04'")
    with pytest.raises(TokenizerError, match="not a GGUF file"):
        read_metadata(b"GX")  # (a short prefix is already not GGUF)
    refused(header(0, version=1), 4, "version 1", "versions 2 and 3")
    refused(header(0, version=7), 4, "unknown GGUF version 7", "versions 2 and 3")
    refused(b"GGUF" + struct.pack(">I", 3) + bytes(16), 4, "big-endian", "version 3")
    assert read_metadata(header(0, version=2)).version == 2
    assert read_metadata(header(0)).values == {} and read_metadata(header(0)).metadata_bytes == 24


def test_a_huge_key_count_is_refused_before_any_key_is_read() -> None:
    refused(header(2**62), 16, "4,611,686,018,427,387,904", "at most 65,536 keys")
    refused(header(reader.MAX_KEYS + 1), 16, "65,537", "at most 65,536 keys")
    # 65,536 keys take at least 13 bytes each: the header alone says how many bytes to send.
    error = refused(header(reader.MAX_KEYS), 16, "needs at least 851,992 bytes; only 24 were sent")
    assert error.location["needed"] == 24 + 13 * reader.MAX_KEYS


def test_a_huge_string_is_refused_before_it_is_read() -> None:
    data = header(1) + pair(b"k", T.STRING, u64(2**60) + b"abc")
    refused(data, VALUE_AT, "string of 1,152,921,504,606,846,976 bytes", "over the limit of 67,108,864 bytes (64 MiB)",
            "in the value of the key 'k'")
    refused(header(1) + pair(b"k", T.STRING, u64(100) + b"abc"), VALUE_AT,
            "needs at least 145 bytes; only 48 were sent")


def test_a_huge_key_is_refused() -> None:
    refused(header(1) + u64(2**60) + b"k" * 9, 24, "1,152,921,504,606,846,976 bytes long", "at most 65,535")
    refused(header(1) + u64(reader.MAX_KEY_BYTES) + b"k" * 9, 24, "needs at least 65,572 bytes; only 41 were sent")


@pytest.mark.parametrize("etype, name", [(T.UINT32, "UINT32"), (T.STRING, "STRING"), (T.ARRAY, "ARRAY"),
                                         (T.BOOL, "BOOL")])
def test_a_huge_array_is_refused_before_any_item_is_read(etype: int, name: str) -> None:
    data = header(1) + pair(b"k", T.ARRAY, u32(etype) + u64(2**40) + bytes(64))
    refused(data, VALUE_AT, f"the array of 1,099,511,627,776 {name} items", "over the limit of 67,108,864 bytes")


def test_nothing_large_is_allocated_for_a_huge_string_or_array() -> None:
    huge_string = header(1) + pair(b"k", T.STRING, u64(2**60) + b"abc")
    huge_array = header(1) + pair(b"k", T.ARRAY, u32(T.UINT32) + u64(2**40) + bytes(64))
    huge_strings = header(1) + pair(b"k", T.ARRAY, u32(T.STRING) + u64(2**40) + bytes(64))
    tracemalloc.start()
    try:
        for data in (huge_string, huge_array, huge_strings):
            with pytest.raises(TokenizerError):
                read_metadata(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000


def nested(levels: int) -> bytes:
    """A key "k" whose value is `levels` arrays, each holding the next, the innermost one UINT8."""
    inner = u32(T.UINT8) + u64(1) + b"\x07"
    for _ in range(levels - 1):
        inner = u32(T.ARRAY) + u64(1) + inner
    return header(1) + pair(b"k", T.ARRAY, inner)


def test_arrays_nest_at_most_max_array_depth_levels() -> None:
    assert reader.MAX_ARRAY_DEPTH == 4
    assert tagged(read_metadata(nested(4)).values["k"]) == [[[("array", "uint8", [7])]]]
    fifth = VALUE_AT + 4 * 12  # (each array's type and count take 12 bytes)
    refused(nested(5), fifth, "nested 5 deep; arrays nest at most 4 deep")
    refused(nested(10_000), fifth, "nested 5 deep")


def test_unknown_value_types() -> None:
    refused(header(1) + pair(b"k", 13, bytes(8)), 24 + 9, "unknown value type 13", "in the value of the key 'k'")
    refused(header(1) + pair(b"k", 2**32 - 1, bytes(8)), 24 + 9, "unknown value type 4,294,967,295")
    refused(header(1) + pair(b"k", T.ARRAY, u32(99) + u64(1) + bytes(8)), VALUE_AT, "unknown value type 99")


def test_keys_must_be_utf8_and_given_once() -> None:
    refused(header(1) + pair(b"ab\xff", T.UINT8, b"\x01"), 24, "not UTF-8", "byte 0xff at offset 34")
    first = pair(b"k", T.UINT8, b"\x01")
    refused(header(2) + first + pair(b"k", T.UINT8, b"\x02"), 24 + len(first), "'k'", "already given at offset 24")


def test_a_bool_is_zero_or_one() -> None:
    assert read_metadata(header(1) + pair(b"k", T.BOOL, b"\x01")).values == {"k": True}
    refused(header(1) + pair(b"k", T.BOOL, b"\x02"), VALUE_AT, "is 2; a BOOL is 0 or 1")
    refused(header(1) + pair(b"k", T.ARRAY, u32(T.BOOL) + u64(3) + b"\x00\x01\xff"), VALUE_AT + 12 + 2, "is 255")


def test_empty_arrays_of_every_type() -> None:
    for etype in T:
        value = read_metadata(header(1) + pair(b"k", T.ARRAY, u32(etype) + u64(0))).values["k"]
        assert len(value) == 0 and (isinstance(value, list) or value.dtype.name == NUMPY_NAMES[etype])


def test_the_list_items_built_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader, "MAX_LIST_ITEMS", 10)
    six = u32(T.STRING) + u64(6) + gstring(b"x") * 6
    first = pair(b"a", T.ARRAY, six)
    assert read_metadata(header(1) + first).values["a"] == ["x"] * 6
    refused(header(2) + first + pair(b"b", T.ARRAY, six), 24 + len(first) + 13, "6 items",
            "10 list items read from one file (4)")
    numbers = pair(b"b", T.ARRAY, u32(T.UINT8) + u64(100) + bytes(100))  # (numpy arrays are not list items)
    assert len(read_metadata(header(2) + first + numbers).values["b"]) == 100


def test_metadata_past_the_limit_is_refused_even_when_sent(monkeypatch: pytest.MonkeyPatch,
                                                            tokenizer_file: bytes) -> None:
    size = read_metadata(tokenizer_file).metadata_bytes
    monkeypatch.setattr(reader, "METADATA_LIMIT_BYTES", size)
    assert read_metadata(tokenizer_file + bytes(100)).metadata_bytes == size  # (bytes past the limit unread)
    monkeypatch.setattr(reader, "METADATA_LIMIT_BYTES", size - 1)
    with pytest.raises(TokenizerError) as info:
        read_metadata(tokenizer_file + bytes(100))
    assert f"over the limit of {size - 1:,} bytes read from a GGUF file" in info.value.message


def test_every_truncation_is_a_tokenizer_error_saying_how_much_to_send(tokenizer_file: bytes) -> None:
    size = len(tokenizer_file)
    for cut in range(size):
        with pytest.raises(TokenizerError) as info:
            read_metadata(tokenizer_file[:cut])
        error = info.value
        assert error.field == "file" and f"only {cut:,} were sent" in error.message, (cut, error.message)
        # A true lower bound: more than was sent, never more than the metadata takes.
        assert cut < error.location["needed"] <= size, (cut, error.location)
        assert error.location["offset"] <= max(cut, 4) and f"offset {error.location['offset']:,}" in error.message
