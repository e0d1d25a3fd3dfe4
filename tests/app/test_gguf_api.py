"""A GGUF file opened in the app: multipart and raw-body import, then the API's ids; a prefix of a file that
holds its metadata opens as the whole file does; a short prefix and other tokenizer types are a 400.

The oracle is `tokenizers` on the tokenizer.json the GGUF file was written from (tests/gguf_files.py).
"""

from __future__ import annotations

import io
import struct
import tracemalloc
from functools import lru_cache
from typing import Any

import pytest

gguf = pytest.importorskip("gguf")

from gguf import GGUFValueType  # noqa: E402

from tests.gguf_files import gguf_from_tokenizer_json, write_gguf  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402
from webapp.tokenizer.formats.gguf import read_metadata  # noqa: E402
from webapp.tokenizer.presets import open_models  # noqa: E402

TEXT = "Hello  world!\tTiếng Việt 東京 👨‍👩‍👧 x   1234567 <|begin_of_text|>it's"


@pytest.fixture
def client(inline_client):
    """The llama3 GGUF file is over JOB_IMPORT_BYTES: opened inline here (the job path runs the same import)."""
    return inline_client


@lru_cache(maxsize=None)
def llama3() -> tuple[bytes, Tokenizer]:
    if not open_models.is_installed("llama3"):
        pytest.skip("llama3 is not installed (npm ci)")
    path = open_models.OPEN_MODELS["llama3"].file_path()
    data = gguf_from_tokenizer_json(path.read_text(encoding="utf-8"), "llama-bpe", bos=128000, add_bos=True)
    return data, Tokenizer.from_file(str(path))


def encode(client, ref: str, **body: object) -> list[int]:
    answer = client.post(f"/api/tokenizers/{ref}/encode", json={"text": TEXT, **body})
    assert answer.status_code == 200, answer.get_json()
    return list(answer.get_json()["ids"])


def check_opened(client, answer) -> str:
    assert answer.status_code == 200, answer.get_json()
    body = answer.get_json()
    assert body["source"] == "gguf" and body["merge_order"] == "library"
    ref = str(body["tokenizer"])
    data, library = llama3()
    library.encode_special_tokens = True  # (the special tokens' text is text, as the library's option says)
    try:
        expected = library.encode(TEXT, add_special_tokens=False).ids
    finally:
        library.encode_special_tokens = False
    assert encode(client, ref) == expected  # (special tokens are text by default, as llama.cpp's)
    assert encode(client, ref, add_special_tokens=True) == [128000, *expected]
    assert encode(client, ref, allowed_special="all") == library.encode(TEXT, add_special_tokens=False).ids
    return ref


@pytest.mark.slow
def test_multipart_and_raw_body_imports_give_llama_cpps_ids(client):
    data, _ = llama3()
    multipart = client.post("/api/import?include=summary", data={"file": (io.BytesIO(data), "model.gguf")},
                            content_type="multipart/form-data")
    raw = client.post("/api/import?include=summary&filename=model.gguf", data=data,
                      content_type="application/octet-stream")
    assert check_opened(client, multipart) == check_opened(client, raw)


@pytest.mark.slow
def test_a_prefix_holding_the_metadata_opens_and_a_shorter_one_says_what_it_needs(client):
    data, _ = llama3()
    end = read_metadata(data).metadata_bytes
    with_tensors = data + b"\0" * 4096  # (what follows the metadata is never read)
    prefix = client.post("/api/import?include=summary&filename=model.gguf", data=with_tensors[:end],
                         content_type="application/octet-stream")
    check_opened(client, prefix)
    short = client.post("/api/import?filename=model.gguf", data=data[:end // 2],
                        content_type="application/octet-stream")
    assert short.status_code == 400
    error = short.get_json()["error"]
    assert "the metadata needs at least" in error["message"] and error["location"]["needed"] > end // 2


@pytest.mark.parametrize("model", ["bert", "t5"])
def test_other_tokenizer_types_are_a_400_naming_the_type(client, model):
    def add(writer):
        writer.add_tokenizer_model(model)
        writer.add_token_list(["[UNK]", "a"])

    answer = client.post("/api/import?filename=model.gguf", data=write_gguf(add),
                         content_type="application/octet-stream")
    assert answer.status_code == 400
    assert f"'{model}'" in answer.get_json()["error"]["message"]


def _u32(n: int) -> bytes:
    return struct.pack("<I", n)


def _u64(n: int) -> bytes:
    return struct.pack("<Q", n)


def _header(keys: int, version: int = 3) -> bytes:
    return b"GGUF" + _u32(version) + _u64(0) + _u64(keys)


def _first_value(vtype: int, payload: bytes) -> bytes:
    """A header of one key "k" whose value (at byte 37) has type `vtype` and then `payload`."""
    return _header(1) + _u64(1) + b"k" + _u32(vtype) + payload


def _nested(levels: int) -> bytes:
    inner = _u32(GGUFValueType.UINT8) + _u64(1) + b"\x07"
    for _ in range(levels - 1):
        inner = _u32(GGUFValueType.ARRAY) + _u64(1) + inner
    return _first_value(GGUFValueType.ARRAY, inner)


#: Tiny bodies that describe huge or broken headers, and the byte offset each answer must name.
HOSTILE_HEADERS = {
    "2**62 keys": (_header(2**62), 16),
    "a 2**60-byte string": (_first_value(GGUFValueType.STRING, _u64(2**60) + b"abc"), 37),
    "a 2**40-element array": (_first_value(GGUFValueType.ARRAY, _u32(GGUFValueType.UINT32) + _u64(2**40)), 37),
    "arrays nested 10,000 deep": (_nested(10_000), 37 + 4 * 12),
    "bad magic": (b"GGUG" + bytes(40), 0),
    "an unknown version": (_header(0, version=9), 4),
    "truncation inside a key": (_header(1) + _u64(5) + b"ab", 16),  # (the count's pair needs 37 bytes)
}


@pytest.mark.parametrize("name", list(HOSTILE_HEADERS))
def test_a_hostile_header_is_a_400_naming_its_byte_offset_without_growing_memory(client, name):
    body, offset = HOSTILE_HEADERS[name]

    def post() -> Any:
        return client.post("/api/import?filename=model.gguf", data=body, content_type="application/octet-stream")

    post()  # (the first request of a test app builds what every request shares: not measured)
    tracemalloc.start()
    try:
        answer = post()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert answer.status_code == 400, answer.get_json()
    error = answer.get_json()["error"]
    assert error["field"] == "file" and error["location"]["offset"] == offset, error
    assert f"offset {offset:,}" in error["message"], error["message"]
    # what the whole request allocated stays far below any object the header describes
    assert peak < 2_000_000, peak
