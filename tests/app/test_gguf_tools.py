"""Every tool on a GGUF file opened through `POST /api/import`: encode and decode, the Trace, explanations,
Compare beside the preset the file was exported from, Counts, the Vocabulary, the prompt's end.

Two files: r50k_base's and mistral_v1's exports (`export_gguf`: a byte-level "gpt2" file and a
SentencePiece "llama" one). On the texts here llama.cpp gives the preset's own ids
(tests/unit/tokenizer/formats/test_gguf_llama_cpp.py), so the preset is the oracle. The Languages job
on an opened GGUF file is in test_languages_api.py (it needs a job worker).
"""

from __future__ import annotations

import io
from functools import lru_cache

import pytest

from webapp.tokenizer import is_installed
from webapp.tokenizer.formats.gguf_export import export_gguf
from webapp.tokenizer.presets import catalog

TEXT = "Hello  world! It's 1234567 naïve 東京 \U0001f44d\n\tdone"
NAMES = ["r50k_base", "mistral_v1"]
#: A text with each file's special tokens (llama.cpp's ids for it, special tokens parsed: measured there).
SPECIAL = {"r50k_base": "a<|endoftext|> b <|endoftext|>", "mistral_v1": "<s>hi </s> x</s>\n<s>"}
IDS = {"r50k_base": [64, 50256, 275, 220, 50256], "mistral_v1": [1, 12014, 28705, 2, 28705, 1318, 2, 28705, 13, 1]}


@pytest.fixture
def client(inline_client):
    """The files are over JOB_IMPORT_BYTES: opened inline here (the job path runs the same import)."""
    return inline_client


@lru_cache(maxsize=None)
def gguf_bytes(name: str) -> bytes:
    if not is_installed(name):
        pytest.skip(f"{name} is not installed (make setup)")
    return export_gguf(catalog.load_preset(name))


def opened(client, name: str) -> str:
    answer = client.post("/api/import?include=summary", data={"file": (io.BytesIO(gguf_bytes(name)), "model.gguf")},
                         content_type="multipart/form-data")
    assert answer.status_code == 200, answer.get_json()
    body = answer.get_json()
    assert body["source"] == "gguf"
    return str(body["tokenizer"])


def encoded(client, ref: str, text: str = TEXT, **more: object) -> dict:
    answer = client.post(f"/api/tokenizers/{ref}/encode", json={"text": text, **more})
    assert answer.status_code == 200, answer.get_json()
    return answer.get_json()


@pytest.mark.parametrize("name", NAMES)
def test_encode_and_decode(client, name):
    ref = opened(client, name)
    ids = encoded(client, ref)["ids"]
    assert ids == encoded(client, name, allowed_special="none")["ids"]
    assert encoded(client, ref, SPECIAL[name], allowed_special="all")["ids"] == IDS[name]
    decoded = client.post(f"/api/tokenizers/{ref}/decode", json={"ids": ids})
    assert decoded.status_code == 200 and decoded.get_json()["text"] == TEXT


@pytest.mark.parametrize("name", NAMES)
def test_the_trace(client, name):
    ref = opened(client, name)
    page = client.post("/fragments/bytes", data={"text": TEXT, "tokenizer": ref, "view": "trace"},
                       headers={"HX-Request": "true"})
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "view-trace" in html and "world" in html and 'class="error' not in html
    special = client.post("/fragments/bytes", data={"text": SPECIAL[name], "tokenizer": ref, "view": "trace",
                                                    "special": "all"}, headers={"HX-Request": "true"})
    assert special.status_code == 200 and "view-trace" in special.get_data(as_text=True)
    ids = client.post("/bytes/ids.txt", data={"tokenizer": ref, "text": TEXT})
    assert [int(i) for i in ids.get_data(as_text=True).split()] == encoded(client, ref)["ids"]


@pytest.mark.parametrize("name", NAMES)
def test_explanations(client, name):
    ref = opened(client, name)
    answer = client.post(f"/api/tokenizers/{ref}/explain", json={"text": TEXT})
    assert answer.status_code == 200, answer.get_json()
    explained = answer.get_json()
    plain = encoded(client, ref)
    assert explained["ids"] == plain["ids"]
    # (the encode route names a byte-level file's tokens with their offsets, a SentencePiece one's by their text)
    assert [t["text"] for t in explained["tokens"]] == [t if isinstance(t, str) else t["text"] for t in plain["tokens"]]
    assert len(explained["boundaries"]) == len(plain["ids"]) - 1
    assert all(b["cause"] for b in explained["boundaries"])
    # (special tokens cut out as llama.cpp cuts them, each stretch after one with its own dummy prefix)
    special = SPECIAL[name]
    answer = client.post(f"/api/tokenizers/{ref}/explain", json={"text": special, "allowed_special": "all"})
    assert answer.status_code == 200, answer.get_json()
    assert answer.get_json()["ids"] == encoded(client, ref, special, allowed_special="all")["ids"]


@pytest.mark.parametrize("name", NAMES)
def test_compare_beside_its_preset(client, name):
    ref = opened(client, name)
    answer = client.post("/api/compare", json={"text": TEXT, "a": {"tokenizer": ref}, "b": {"tokenizer": name}})
    assert answer.status_code == 200, answer.get_json()
    body = answer.get_json()
    assert body["a"]["ids"] == body["b"]["ids"] == encoded(client, name, allowed_special="none")["ids"]


@pytest.mark.parametrize("name", NAMES)
def test_counts(client, name):
    ref = opened(client, name)
    answer = client.post("/api/counts", json={"text": TEXT, "tokenizers": [ref, name]})
    assert answer.status_code == 200, answer.get_json()
    rows = answer.get_json()["counts"]
    assert [row["tokenizer"] for row in rows] == [ref, name]
    assert rows[0]["tokens"] == rows[1]["tokens"] == len(encoded(client, ref)["ids"])


@pytest.mark.parametrize("name", NAMES)
def test_the_vocabulary(client, name):
    ref = opened(client, name)
    listing = client.get(f"/api/tokenizers/{ref}/vocab?q=world&limit=5")
    assert listing.status_code == 200, listing.get_json()
    tokens = listing.get_json()["tokens"]
    assert tokens and all("world" in t["text"] for t in tokens)
    token = tokens[0]["id"]
    card = client.get(f"/api/tokenizers/{ref}/vocab/{token}")
    assert card.status_code == 200, card.get_json()
    assert card.get_json()["text"] == tokens[0]["text"]
    page = client.get(f"/vocab?tokenizer={ref}&q=world")
    assert page.status_code == 200 and f'data-id="{token}"' in page.get_data(as_text=True)


@pytest.mark.parametrize("name", NAMES)
def test_the_prompts_end(client, name):
    ref = opened(client, name)
    text = "The quick brown fox jumps over the la"
    answer = client.post(f"/api/tokenizers/{ref}/prompt", json={"text": text})
    assert answer.status_code == 200, answer.get_json()
    body = answer.get_json()
    assert body["ids"] == encoded(client, ref, text)["ids"]
    for item in body["unstable"]:
        changed = encoded(client, ref, text + item["witness"])["ids"]
        assert changed[:item["index"] + 1] != body["ids"][:item["index"] + 1]
    for more in ["zy", " dog", "."]:
        assert encoded(client, ref, text + more)["ids"][:body["stable"]] == body["ids"][:body["stable"]]
