"""A SentencePiece .model opened in the app: import, the API's ids, Trace, Compare, Counts, Chat, export.

The oracle is the `sentencepiece` library on the same file (mistral-common's
wheel, downloaded by set-up); export is checked with `tokenizers` loading the
written tokenizer.json.
"""

from __future__ import annotations

import json
import re
import zipfile
from functools import lru_cache

import pytest

spm = pytest.importorskip("sentencepiece")

from webapp.tokenizer.presets.open_models import pypi_dir  # noqa: E402

WHEEL = "mistral_common-1.13.1-py3-none-any.whl"
V3 = "mistral_instruct_tokenizer_240323.model.v3"
TEXT = "Hello  world!\tTiếng Việt 東京 👨‍👩‍👧 [INST] x   1234 ꙮ"
TEMPLATE = ("{{ bos_token }}{% for m in messages %}{% if m.role == 'user' %}[INST] {{ m.content }} [/INST]"
            "{% else %}{{ m.content }}{{ eos_token }}{% endif %}{% endfor %}")
MESSAGES = [{"role": "user", "content": "Hi there"}, {"role": "assistant", "content": "Hello!"},
            {"role": "user", "content": "Count  to 3"}]


@pytest.fixture
def client(inline_client):
    """The .model files are over JOB_IMPORT_BYTES: opened inline here (the job path runs the same import)."""
    return inline_client


@lru_cache(maxsize=None)
def model_bytes(name: str = V3) -> bytes:
    path = pypi_dir() / WHEEL
    if not path.exists():
        pytest.skip(f"{path} is missing: run make setup")
    with zipfile.ZipFile(path) as wheel:
        return wheel.read(f"mistral_common/data/{name}")


@lru_cache(maxsize=None)
def oracle(name: str = V3) -> object:
    return spm.SentencePieceProcessor(model_proto=model_bytes(name))


def opened(client, config: str | None = None) -> str:
    data = {"file": (__import__("io").BytesIO(model_bytes()), "tokenizer.model")}
    if config is not None:
        data["config"] = config
    answer = client.post("/api/import?include=summary", data=data, content_type="multipart/form-data")
    assert answer.status_code == 200, answer.get_json()
    body = answer.get_json()
    assert body["source"] == "sentencepiece" and body["merge_order"] == "library"
    return str(body["tokenizer"])


def test_import_and_encode_give_sentencepieces_ids(client):
    ref = opened(client)
    answer = client.post(f"/api/tokenizers/{ref}/encode", json={"text": TEXT})
    assert answer.status_code == 200
    assert answer.get_json()["ids"] == oracle().encode(TEXT)  # ([INST] typed as text is plain text by default)
    added = client.post(f"/api/tokenizers/{ref}/encode", json={"text": TEXT, "add_special_tokens": True})
    assert added.get_json()["ids"] == [oracle().bos_id(), *oracle().encode(TEXT)]
    recognised = client.post(f"/api/tokenizers/{ref}/encode", json={"text": TEXT, "allowed_special": "all"})
    assert oracle().piece_to_id("[INST]") in recognised.get_json()["ids"]
    ids = oracle().encode(TEXT) + [0, 1, oracle().piece_to_id("<0xF0>")]
    decoded = client.post(f"/api/tokenizers/{ref}/decode", json={"ids": ids})
    assert decoded.status_code == 200 and decoded.get_json()["text"] == oracle().decode(ids)


def test_raw_body_import_and_refusals(client):
    answer = client.post("/api/import?filename=tokenizer.model", data=model_bytes(),
                         content_type="application/octet-stream")
    assert answer.status_code == 200, answer.get_json()
    broken = client.post("/api/import?format=sentencepiece", data=model_bytes()[:5000],
                         content_type="application/octet-stream")
    assert broken.status_code == 400 and "not a SentencePiece .model file" in broken.get_json()["error"]["message"]


def test_a_unigram_model_is_a_clear_400(client, tmp_path):
    import io

    corpus = tmp_path / "c.txt"
    corpus.write_text("the quick brown fox jumps over the lazy dog\n" * 50, encoding="utf-8")
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(input=str(corpus), model_type="unigram", vocab_size=40, model_writer=model,
                                   hard_vocab_limit=False, minloglevel=2, num_threads=1)
    answer = client.post("/api/import", data={"file": (io.BytesIO(model.getvalue()), "tokenizer.model")},
                         content_type="multipart/form-data")
    assert answer.status_code == 400
    assert answer.get_json()["error"]["message"] == (
        "file: this is a Unigram model; the playground opens BPE tokenizers")


def test_the_bytes_page_and_its_trace(client):
    ref = opened(client)
    page = client.post("/fragments/bytes", data={"text": TEXT, "tokenizer": ref, "view": "trace"},
                       headers={"HX-Request": "true"})
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "view-trace" in html and "\u2581world" in html
    ids = client.post("/bytes/ids.txt", data={"tokenizer": ref, "text": TEXT})
    assert [int(i) for i in ids.get_data(as_text=True).split()] == oracle().encode(TEXT)


def test_compare_with_a_preset(client):
    ref = opened(client)
    answer = client.post("/api/compare", json={"text": TEXT, "a": {"tokenizer": ref},
                                               "b": {"tokenizer": "mistral_v1"}})
    assert answer.status_code == 200, answer.get_json()
    body = answer.get_json()
    assert body["a"]["ids"] == oracle().encode(TEXT)
    assert body["b"]["ids"] == oracle("tokenizer.model.v1").encode(TEXT)


def test_counts_of_the_opened_model_and_the_presets(client):
    ref = opened(client)
    body = client.post("/api/counts", json={"text": TEXT, "tokenizers": [ref, "mistral_v1", "mistral_v3"]}).get_json()
    tokens = [row["tokens"] for row in body["counts"]]
    assert tokens == [len(oracle().encode(TEXT)), len(oracle("tokenizer.model.v1").encode(TEXT)),
                      len(oracle().encode(TEXT))]
    every = [row["tokenizer"] for row in client.post("/api/counts", json={"text": "x"}).get_json()["counts"]]
    assert "mistral_v1" in every and "mistral_v3" in every


def test_the_presets_are_in_the_picker_and_the_listing(client):
    page = client.get("/bytes").get_data(as_text=True)
    assert 'value="mistral_v1"' in page and 'value="mistral_v3"' in page
    listing = {p["name"]: p for p in client.get("/api/tokenizers").get_json()["presets"]}
    assert listing["mistral_v3"]["vendor"] == "Mistral" and "model.v3" in listing["mistral_v3"]["source"]


def test_chat_with_a_tokenizer_config_beside_it(client):
    config = json.dumps({"chat_template": TEMPLATE, "bos_token": "<s>", "eos_token": "</s>"})
    ref = opened(client, config)
    answer = client.post(f"/api/tokenizers/{ref}/chat", json={"messages": MESSAGES})
    assert answer.status_code == 200, answer.get_json()
    body = answer.get_json()
    assert body["text"] == "<s>[INST] Hi there [/INST]Hello!</s>[INST] Count  to 3 [/INST]"
    sp = oracle()
    # every control piece recognised; the stretches between them as sentencepiece's normalized text encodes them
    controls = [sp.bos_id(), sp.piece_to_id("[INST]"), sp.piece_to_id("[/INST]"), sp.eos_id()]
    found = [i for i in body["ids"] if i in controls]
    assert found == [controls[0], controls[1], controls[2], controls[3], controls[1], controls[2]]
    assert body["count"] == len(body["ids"])
    assert sp.decode(body["ids"]) == client.post(f"/api/tokenizers/{ref}/decode",
                                                 json={"ids": body["ids"]}).get_json()["text"]


TEXTS = ["Hello world", "  leading and   runs   ", "Tiếng Việt 東京 👨‍👩‍👧 ꙮ", "1234 5678", "a\tb\nc", "▁x ▁"]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["tokenizer.model.v1", V3])
def test_export_to_tokenizer_json_gives_the_same_ids_in_tokenizers(client, name):
    import io

    from tokenizers import Tokenizer

    answer = client.post("/api/import", data={"file": (io.BytesIO(model_bytes(name)), "tokenizer.model")},
                         content_type="multipart/form-data")
    ref = answer.get_json()["tokenizer"]
    exported = client.post("/api/export", json={"tokenizer": ref, "format": "hf"})
    assert exported.status_code == 200, exported.get_data(as_text=True)[:300]
    library = Tokenizer.from_str(exported.get_data(as_text=True))
    sp = oracle(name)
    for text in TEXTS + [TEXT.replace("[INST]", "INST")]:
        assert library.encode(text, add_special_tokens=False).ids == sp.encode(text), text
    refused = client.post("/api/export", json={"tokenizer": ref, "format": "minbpe"})
    assert refused.status_code == 400 and "tokenizer.json" in refused.get_json()["error"]["message"]


SYMBOL_TEXTS = ["[REFERENCE_DOC_1]", "[REFERENCE_DOC_1]Hello", "[REFERENCE_DOC_1] Hello", " [REFERENCE_DOC_10]",
                "▁[REFERENCE_DOC_1]", "▁Hello", "Hello[REFERENCE_DOC_1]world", "Hello [REFERENCE_DOC_19] world ",
                "a  [REFERENCE_DOC_0]  b", "[REFERENCE_DOC_1][REFERENCE_DOC_10]\n[REFERENCE_DOC_0]", "  x",
                "東京[REFERENCE_DOC_2]😀", "[REFERENCE_DOC_3]<0x41>", "[REFERENCE_DOC_3]<unk>"]


@pytest.mark.slow
def test_export_of_v3_gives_sentencepieces_ids_around_its_user_defined_pieces(client):
    # (v3's 20 user-defined [REFERENCE_DOC_n]: the dummy prefix only at the start of the text, as sentencepiece)
    import io

    from tokenizers import Tokenizer

    answer = client.post("/api/import", data={"file": (io.BytesIO(model_bytes()), "tokenizer.model")},
                         content_type="multipart/form-data")
    exported = client.get(f"/api/export?format=hf&tokenizer={answer.get_json()['tokenizer']}")
    assert exported.status_code == 200, exported.get_data(as_text=True)[:300]
    library = Tokenizer.from_str(exported.get_data(as_text=True))
    for text in SYMBOL_TEXTS:
        assert library.encode(text, add_special_tokens=False).ids == oracle().encode(text), text


def test_the_page_opens_a_model_file(client):
    page = client.post("/files/open/bytes", data={"tokenizer_file": (__import__("io").BytesIO(model_bytes()),
                                                                     "tokenizer.model"), "text": "Hello world"},
                       content_type="multipart/form-data")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert re.search(r'name="tokenizer" value="[a-z2-7]{16}"', html)
    assert 'name="special" value="all"' in html and "Recognize special tokens" in html  # (off: plain text)
