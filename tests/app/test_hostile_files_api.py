"""Hostile tokenizer files through the app (issue 44, rows 1, 2, 3, 6, 7): a 400 naming the field when the
file opens, or an encode that stays fast and bounded; never a 200 followed by 500s.

The files are made as in tests/unit/tokenizer/hf/test_hostile_files.py (a tiny trained .model, edited).
"""

from __future__ import annotations

import json
import time

import pytest

pytest.importorskip("sentencepiece")

from tests.unit.tokenizer.hf.test_hostile_files import _hf_file, _split, charsmap_of, edited, trained_model  # noqa: E402


def _import_model(client, data: bytes):
    return client.post("/api/import?filename=tokenizer.model", data=data, content_type="application/octet-stream")


def _error(answer) -> dict:
    body = answer.get_json()
    assert "Traceback" not in json.dumps(body)
    return body["error"]


@pytest.mark.alone
def test_a_split_bomb_is_a_400_naming_the_field(client):
    began = time.perf_counter()
    answer = client.post("/api/import", json={"content": _hf_file(_split("(?:(?:a{1000}){1000}){5}")),
                                               "format": "hf"})
    assert answer.status_code == 400 and time.perf_counter() - began < 2
    error = _error(answer)
    assert error["field"] == "pre_tokenizer" and "5,000,000 units" in error["message"]


def test_a_damaged_charsmap_is_a_400_at_open_not_500s_later(client):
    data = trained_model(name="nmt_nfkc")
    blob = charsmap_of(data)
    trie = int.from_bytes(blob[:4], "little")
    answer = _import_model(client, edited(data, charsmap=blob[:4 + trie + (len(blob) - 4 - trie) // 2]))
    assert answer.status_code == 400
    error = _error(answer)
    assert error["field"] == "normalizer_spec" and "points past its replacement strings" in error["message"]


@pytest.mark.alone
def test_a_long_user_defined_symbol_encodes_in_linear_time(client):
    answer = _import_model(client, edited(trained_model(), [("a" * 19_999 + "b", 4)]))
    assert answer.status_code == 200, answer.get_json()
    ref = answer.get_json()["tokenizer"]
    began = time.perf_counter()
    encoded = client.post(f"/api/tokenizers/{ref}/encode", json={"text": "a" * 12_000})
    # (done, or on a loaded machine stopped by the encode's time budget: bounded either way)
    assert time.perf_counter() - began < 5
    assert encoded.status_code == 200 or "took over" in _error(encoded)["message"]
    counted = client.post("/api/counts", json={"text": "a" * 12_000, "tokenizers": [ref]})
    assert counted.status_code in (200, 400, 503)


def test_normalized_output_over_the_cap_is_a_400_before_it_is_built(client):
    answer = _import_model(client, trained_model("61\t" + " ".join(["62"] * 1_000) + "\n"))  # a -> 1,000 b
    assert answer.status_code == 200, answer.get_json()
    ref = answer.get_json()["tokenizer"]
    encoded = client.post(f"/api/tokenizers/{ref}/encode", json={"text": "a" * 100_000})
    assert encoded.status_code == 400
    error = _error(encoded)
    assert error["field"] == "text" and "over 400,000 characters" in error["message"]


def test_the_issues_replacement_of_100000_characters_is_refused_at_open(client):
    answer = _import_model(client, trained_model("61\t" + " ".join(["62"] * 100_000) + "\n"))
    assert answer.status_code == 400 and _error(answer)["field"] == "normalizer_spec"


@pytest.mark.alone
def test_a_long_piece_opens_fast(client):
    began = time.perf_counter()
    answer = _import_model(client, edited(trained_model(), [("q" * 60_000 + "r", 1), ("q" * 60_000 + "s", 1)]))
    assert answer.status_code == 200 and time.perf_counter() - began < 5


def test_a_damaged_charsmap_stored_before_the_check_answers_400_not_500(app, client, monkeypatch):
    # (a file opened before charsmaps were checked at open is still in storage: reading it must not 500)
    import base64
    from dataclasses import replace

    from webapp.opened.store import LOADED, store_tokenizer
    from webapp.tokenizer import import_tokenizer

    data = trained_model(name="nmt_nfkc")
    tok = import_tokenizer(data, filename="tokenizer.model")
    blob = charsmap_of(data)
    trie = int.from_bytes(blob[:4], "little")
    pipeline = json.loads(tok.pipeline)
    pipeline["normalizer"]["charsmap"] = base64.b64encode(blob[:4 + trie + 10]).decode("ascii")
    damaged = replace(tok, pipeline=json.dumps(pipeline, ensure_ascii=False, sort_keys=True, separators=(",", ":")))
    damaged.contents.set("merges", tok.merges)
    damaged.contents.set("vocab", tok.vocab)
    with app.app_context(), monkeypatch.context() as patch:
        try:  # (stored as the code before this series stored it: no check at open)
            patch.setattr("webapp.tokenizer.normalize.charsmap.check_rules", lambda *args: None)
        except (ImportError, AttributeError):
            pass  # (that code itself)
        ref = store_tokenizer(damaged).id
        LOADED.clear()
    # (a rule past the cut is a 400 naming the charsmap; one rebuilt from storage is refused whole)
    answer = client.post(f"/api/tokenizers/{ref}/encode", json={"text": "ｶタカナ ①"})
    assert answer.status_code == 400 and _error(answer)["field"] == "normalizer_spec"
    assert client.post(f"/api/tokenizers/{ref}/encode", json={"text": "abc"}).status_code in (200, 400)
