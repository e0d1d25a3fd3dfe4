"""Import / export over HTTP: the JSON API and the page controls (Flask test client).

Tokenizers are trained with Hugging Face `tokenizers` inside the tests; ids
the app gives must equal the library's.
"""

from __future__ import annotations

import io
import json
import re

import pytest
from tests.hf_samples import SAMPLE_CORPUS, byte_level_tokenizer, char_level_tokenizer
from tokenizers import Tokenizer, models

from webapp.opened import store as tokenizer_store
from webapp.tokenizer import TraceLimits
from webapp.tokenizer import formats as tokfiles

TEXT = "Hello there, the lowest newer München 東京"


@pytest.fixture(scope="module")
def byte_tok() -> Tokenizer:
    return byte_level_tokenizer(SAMPLE_CORPUS)


@pytest.fixture(scope="module")
def char_tok() -> Tokenizer:
    return char_level_tokenizer(SAMPLE_CORPUS)


@pytest.fixture(autouse=True)
def _fresh_cache():
    tokenizer_store.LOADED.clear()
    yield
    tokenizer_store.LOADED.clear()


def _import(client, content: str, **extra) -> dict:
    response = client.post("/api/import", json={"content": content, **extra})
    assert response.status_code == 200, response.get_json()
    return response.get_json()


# --- /api/import -------------------------------------------------------------------


def test_import_json_body_then_encode_gives_library_ids(client, byte_tok):
    body = _import(client, byte_tok.to_str())
    assert body["level"] == "bytes" and body["source"] == "hf" and body["pretokenize"] == "gpt2"
    assert body["rules"] == len(body["merges"]) > 100
    assert len(body["id_map"]) == 256  # GPT-2's alphabet numbers the bytes in its own order
    response = client.post(f"/api/tokenizers/{body['tokenizer']}/encode", json={"text": TEXT})
    assert response.status_code == 200
    data = response.get_json()
    assert data["ids"] == byte_tok.encode(TEXT).ids
    assert [t["id"] for t in data["tokens"]] == data["ids"]
    assert b"".join(bytes(t["bytes"]) for t in data["tokens"]) == TEXT.encode("utf-8")
    assert data["pieces"][0] == [0, 5] and data["pretokenize"] == "gpt2"


def test_import_is_content_addressed_and_stored(app, client, byte_tok):
    first = _import(client, byte_tok.to_str())["tokenizer"]
    upload = client.post(
        "/api/import",
        data={"file": (io.BytesIO(byte_tok.to_str().encode("utf-8")), "tokenizer.json")},
        content_type="multipart/form-data",
    )
    raw = client.post("/api/import?format=hf", data=byte_tok.to_str().encode("utf-8"),
                      content_type="application/octet-stream")
    assert upload.get_json()["tokenizer"] == raw.get_json()["tokenizer"] == first
    with app.app_context():
        from webapp.infra.storage import get_blob

        assert get_blob("tokenizer", first) is not None
    tokenizer_store.LOADED.clear()  # another process: only the database has it
    again = client.get(f"/api/tokenizers/{first}?include=summary").get_json()
    assert again["tokenizer"] == first and "merges" not in again


def test_import_vocab_merges_pair_upload(client, byte_tok, tmp_path):
    byte_tok.model.save(str(tmp_path))
    response = client.post(
        "/api/import",
        data={
            "file": (io.BytesIO((tmp_path / "vocab.json").read_bytes()), "vocab.json"),
            "merges_file": (io.BytesIO((tmp_path / "merges.txt").read_bytes()), "merges.txt"),
        },
        content_type="multipart/form-data",
    )
    body = response.get_json()
    assert response.status_code == 200 and body["source"] == "vocab-merges"
    ids = client.post(f"/api/tokenizers/{body['tokenizer']}/encode", json={"text": TEXT, "pretokenize": "gpt2"})
    assert ids.get_json()["ids"] == byte_tok.encode(TEXT).ids


def test_import_char_level_and_encode(client, char_tok):
    body = _import(client, char_tok.to_str())
    assert body["level"] == "chars" and body["merges"][0] == list(json.loads(char_tok.to_str())["model"]["merges"][0])
    text = "the lowest newer"
    data = client.post(f"/api/tokenizers/{body['tokenizer']}/encode", json={"text": text}).get_json()
    assert data["ids"] == char_tok.encode(text).ids


def test_import_minbpe_and_tiktoken(client):
    body = _import(client, "minbpe v1\n\n0\n104 101\n256 108\n", format="minbpe")
    assert body["merges"] == [[104, 101, 256], [256, 108, 257]]
    ranks = tokfiles.export_tiktoken(tokfiles.parse_minbpe("minbpe v1\n\n0\n104 101\n256 108\n"))
    again = _import(client, ranks)
    assert again["source"] == "tiktoken" and again["merges"] == body["merges"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"content": '{"model": {"type": "WordPiece", "vocab": {}}}'}, "holds a WordPiece model"),
        ({"content": '{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": ["a b"]}}'},
         'joins "a" and "b" into "ab", which is not in the vocab'),
        ({"content": "hello"}, "not a tokenizer file this playground knows"),
        ({"content": ""}, "content: the tokenizer file's text is missing"),
        ({"content": "x", "extra": 1}, "extra: unknown field"),
        ({"content": "x", "format": "spm"}, "format: expected one of"),
    ],
)
def test_import_errors_are_400_with_a_message(client, body, message):
    response = client.post("/api/import", json=body)
    assert response.status_code == 400
    assert message in response.get_json()["error"]["message"]


def test_import_empty_raw_body(client):
    response = client.post("/api/import", data=b"", content_type="text/plain")
    assert response.status_code == 400
    assert response.get_json()["error"]["message"] == "file: the request body is empty; send the tokenizer file"


def test_import_over_the_rule_limit(tmp_path, byte_tok):
    from tests.conftest import make_app

    app = make_app(tmp_path, LIMIT_FILE_RULES=10)
    response = app.test_client().post("/api/import", json={"content": byte_tok.to_str()})
    assert response.status_code == 400
    assert "is over the limit of 10 rules for an opened file (setting LIMIT_FILE_RULES)" in (
        response.get_json()["error"]["message"])


def test_the_open_models_files_are_within_the_file_limits():
    from webapp.infra import compound_inputs, inputs
    from webapp.tokenizer.presets import open_models

    limits = inputs.Limits()
    for preset in open_models.OPEN_MODEL_LIST:  # gemma3: 514,906 merges, 262,144 vocab entries
        compound_inputs.check_loaded_limits(preset.rules, preset.n_vocab, limits)


def test_unknown_tokenizer_id_is_404(client):
    for tid in ("aaaaaaaaaaaaaaaa", "not-an-id"):
        response = client.get(f"/api/tokenizers/{tid}")
        assert response.status_code == 404
        assert "no tokenizer is stored with id" in response.get_json()["error"]["message"]


# --- /api/export -------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["playground", "seed", "hf", "minbpe", "tiktoken"])
def test_export_stored_tokenizer_round_trips(client, byte_tok, fmt):
    body = _import(client, byte_tok.to_str())
    response = client.get(f"/api/export?format={fmt}&tokenizer={body['tokenizer']}")
    assert response.status_code == 200
    assert response.headers["Content-Disposition"].startswith("attachment; filename=")
    back = tokfiles.import_tokenizer(response.get_data(as_text=True))
    if fmt == "minbpe":
        # minbpe numbers merged ids itself; the rules are the same bytes joined
        assert len(back.merges) == len(body["merges"])
    else:
        assert [list(r) for r in back.merges] == body["merges"]
    if fmt == "hf":
        library = Tokenizer.from_str(response.get_data(as_text=True))
        assert library.encode(TEXT).ids == byte_tok.encode(TEXT).ids


def test_export_learned_merges_loads_in_tokenizers(client):
    response = client.post("/api/export?format=hf", json={"words": "low lower lowest newer newest", "num_merges": 6})
    assert response.status_code == 200
    library = Tokenizer.from_str(response.get_data(as_text=True))
    exported = client.post("/api/export?format=playground", json={"words": "low lower lowest newer newest", "num_merges": 6})
    loaded = tokfiles.import_tokenizer(exported.get_data())
    from webapp.tokenizer import bpe_encode_text

    for word in ["lowest", "newer", "low"]:
        assert library.encode(word).ids == bpe_encode_text(word, loaded.vocab, list(loaded.merges))


def test_old_format_name_seed_gives_the_same_file_as_playground(client):
    """`format=seed` is the playground JSON's old name: old links get the very same download."""
    form = {"merges": "l o\nlo w", "vocab": '{"l": 0, "o": 1, "w": 2, "lo": 3, "low": 4}'}
    new = client.post("/api/export?format=playground", data=form)
    old = client.post("/api/export?format=seed", data=form)
    assert new.status_code == old.status_code == 200
    assert old.get_data() == new.get_data()
    assert old.headers["Content-Disposition"] == new.headers["Content-Disposition"]
    page_new = client.post("/files/export/chars?format=playground", data=form)
    page_old = client.post("/files/export/chars?format=seed", data=form)
    assert page_new.status_code == page_old.status_code == 200
    assert page_old.get_data() == page_new.get_data() == new.get_data()
    imported = client.post("/api/import", json={"content": new.get_data(as_text=True), "format": "seed"})
    assert imported.status_code == 200
    assert imported.get_json()["merges"] == [["l", "o"], ["lo", "w"]]


def test_export_merges_of_both_levels(client):
    byte = client.post("/api/export?format=minbpe", json={"merges": [[104, 101, 256], [256, 108, 257]]})
    assert byte.get_data(as_text=True) == "minbpe v1\n\n0\n104 101\n256 108\n"
    chars = client.post(
        "/api/export?format=playground",
        data={"merges": "l o\nlo w", "vocab": '{"l": 0, "o": 1, "w": 2, "lo": 3, "low": 4}'},
    )
    assert json.loads(chars.get_data())["merges"] == [["l", "o"], ["lo", "w"]]


@pytest.mark.parametrize(
    ("query", "body", "status", "message"),
    [
        ("format=pdf", {"merges": []}, 400, "format: expected one of playground, hf, minbpe, tiktoken"),
        ("format=hf", {"merges": [[97, 97, 97]]}, 400, "rule 1 makes id 97, a byte id"),
        ("format=hf", {}, 400, "merges: missing"),
        ("format=hf", {"tokenizer": "aaaaaaaaaaaaaaaa"}, 404, "no tokenizer is stored"),
        ("format=hf", {"merges": [["a", "b"]], "vocab": {"a": 0}}, 400, "vocab: rule 1 uses \"b\""),
        # (a level that is not a string, even one no table could hold as a key, is a 400 naming the field)
        ("format=hf", {"merges": [[97, 98, 256]], "level": ["bytes"]}, 400, 'level: expected "bytes" or "chars"'),
        ("format=hf", {"merges": [[97, 98, 256]], "level": "words"}, 400, 'level: expected "bytes" or "chars"'),
    ],
)
def test_export_errors(client, query, body, status, message):
    response = client.post(f"/api/export?{query}", json=body)
    assert response.status_code == status
    assert message in response.get_json()["error"]["message"]


# --- page controls -----------------------------------------------------------------


def _token_ids(html: str) -> list[int]:
    """Ids of the rendered token spans (not the chips of the trace tables)."""
    return [int(x) for x in re.findall(r'<span class="tok [^"]*"[^>]*?data-token-id="(\d+)"', html)]


def test_open_on_bytes_page_without_javascript(client, byte_tok):
    response = client.post(
        "/files/open/bytes",
        data={"text": TEXT, "merges": "", "pretokenize": "none",
              "tokenizer_file": (io.BytesIO(byte_tok.to_str().encode()), "tokenizer.json")},
        content_type="multipart/form-data",
    )
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    tid = re.search(r'name="tokenizer" value="([a-z2-7]{16})"', html).group(1)
    assert "Using a Hugging Face tokenizer.json" in html
    # the page switched to the file's own pre-tokenization and shows the library's ids
    assert re.search(r'<option value="gpt2" selected>', html)
    assert _token_ids(html) == byte_tok.encode(TEXT).ids
    # later keystrokes send only the id
    fragment = client.post("/fragments/bytes", data={"text": "the lowest", "merges": "", "pretokenize": "gpt2", "tokenizer": tid})
    assert _token_ids(fragment.get_data(as_text=True)) == byte_tok.encode("the lowest").ids


def test_open_with_htmx_returns_status_and_refresh(client, byte_tok):
    response = client.post(
        "/files/open/bytes",
        data={"text": "x", "tokenizer_paste": byte_tok.to_str()},
        headers={"HX-Request": "true"},
    )
    html = response.get_data(as_text=True)
    assert "data-refresh" in html  # files.js re-encodes the page after the swap
    assert 'type="hidden" name="tokenizer"' in html
    assert 'data-pretokenize="gpt2"' in html
    assert 'id="f-tokenizer-paste"' in html and 'hx-swap-oob="true"' in html  # the paste box is emptied


def test_open_errors_are_shown_in_place(client, char_tok):
    htmx = client.post("/files/open/bytes", data={"tokenizer_paste": char_tok.to_str()}, headers={"HX-Request": "true"})
    assert "this is a character-level tokenizer; open it on the Characters page" in htmx.get_data(as_text=True)
    page = client.post("/files/open/chars", data={"text": "abc", "tokenizer_paste": '{"model": {"type": "Unigram"}}'})
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and "holds a Unigram model" in html
    nothing = client.post("/files/open/chars", data={}, headers={"HX-Request": "true"})
    assert "choose a tokenizer file to upload or paste its content" in nothing.get_data(as_text=True)


def test_open_char_level_on_characters_page(client, char_tok):
    text = "the lowest newer"
    page = client.post("/files/open/chars", data={"text": text, "tokenizer_paste": char_tok.to_str()})
    html = page.get_data(as_text=True)
    assert _token_ids(html) == char_tok.encode(text).ids


def test_close_forgets_the_file(client, byte_tok):
    body = _import(client, byte_tok.to_str())
    response = client.post("/files/close/bytes", data={"tokenizer": body["tokenizer"]}, headers={"HX-Request": "true"})
    assert 'name="tokenizer"' not in response.get_data(as_text=True)
    page = client.post("/files/close/bytes", data={"text": "ab", "merges": "97 98 256", "tokenizer": body["tokenizer"]})
    assert _token_ids(page.get_data(as_text=True)) == [256]


def test_decode_panel_uses_the_file_vocab(client, byte_tok):
    body = _import(client, byte_tok.to_str())
    ids = " ".join(str(i) for i in byte_tok.encode("Hello there").ids)
    page = client.post("/bytes", data={"text": "Hello there", "tokenizer": body["tokenizer"], "ids": ids, "pretokenize": "gpt2"})
    html = page.get_data(as_text=True)
    assert "Hello" in html and "gives the text back" in html


def test_ids_download_uses_the_opened_file(client, byte_tok):
    body = _import(client, byte_tok.to_str())
    form = {"text": TEXT, "tokenizer": body["tokenizer"], "pretokenize": "gpt2"}
    download = client.post("/bytes/ids.txt", data=form)
    assert download.status_code == 200
    assert [int(i) for i in download.get_data(as_text=True).split()] == byte_tok.encode(TEXT).ids


def test_unknown_tokenizer_on_the_page_is_an_inline_error(client):
    page = client.post("/fragments/bytes", data={"text": "ab", "tokenizer": "aaaaaaaaaaaaaaaa"})
    assert page.status_code == 200
    assert "no tokenizer is stored with id" in page.get_data(as_text=True)


@pytest.mark.parametrize("fmt", ["playground", "seed", "hf", "minbpe"])
def test_download_from_train_page(client, fmt):
    response = client.post(f"/files/export/train?format={fmt}", data={"words": "low lower lowest", "num_merges": "3"})
    assert response.status_code == 200
    assert "attachment" in response.headers["Content-Disposition"]
    loaded = tokfiles.import_tokenizer(response.get_data())
    assert len(loaded.merges) >= 3


def test_download_from_characters_page_and_error(client):
    ok = client.post("/files/export/chars?format=hf",
                     data={"merges": "l o", "vocab": '{"l": 0, "o": 1, "lo": 2}', "text": "lo"})
    assert Tokenizer.from_str(ok.get_data(as_text=True)).encode("lo").ids == [2]
    bad = client.post("/files/export/chars?format=hf", data={"merges": "l o", "vocab": '{"l": 0}'})
    assert bad.status_code == 400 and bad.get_data(as_text=True).startswith("Cannot export: vocab: rule 1")


def test_pages_include_the_controls(client):
    assert "Open tokenizer file" in client.get("/bytes").get_data(as_text=True)
    chars = client.get("/chars").get_data(as_text=True)
    assert "Open tokenizer file" in chars and "/files/export/chars?format=hf" in chars


def test_share_link_points_at_the_opened_tokenizer(client, byte_tok):
    body = _import(client, byte_tok.to_str())
    shared = client.post(
        "/api/share",
        json={"tool": "bytes", "text": TEXT, "pretokenize": "gpt2", "tokenizer": body["tokenizer"]},
    )
    assert shared.status_code in (200, 201)
    info = shared.get_json()
    tokenizer_store.LOADED.clear()  # the link is opened by another server process
    page = client.get(info.get("url") or f"/s/{info['id']}")
    html = page.get_data(as_text=True)
    assert page.status_code == 200
    assert f'name="tokenizer" value="{body["tokenizer"]}"' in html
    assert _token_ids(html) == byte_tok.encode(TEXT).ids


def test_without_blob_storage_a_bounded_in_process_store_is_used(app, byte_tok):
    from webapp.infra import storage

    with app.test_request_context():
        saved = app.extensions.pop(storage.EXTENSION_KEY)
        try:
            entry = tokenizer_store.store_tokenizer(tokfiles.import_tokenizer(byte_tok.to_str()))
            tokenizer_store.LOADED.clear()
            assert tokenizer_store.load_tokenizer(entry.id).tok.merges == entry.tok.merges
            assert entry.id == storage.content_id("tokenizer", tokenizer_store.FALLBACK_BLOBS.get(entry.id))
        finally:
            app.extensions[storage.EXTENSION_KEY] = saved


def test_blob_over_the_storage_limit(tmp_path, byte_tok):
    from tests.conftest import make_app

    app = make_app(tmp_path, LIMIT_BLOB_BYTES=1000)
    response = app.test_client().post("/api/import", json={"content": byte_tok.to_str()})
    assert response.status_code == 400
    message = response.get_json()["error"]["message"]
    assert message.startswith("file: stored compressed, this tokenizer takes ")
    assert message.endswith("bytes, over the storage limit of 1,000 bytes (setting LIMIT_BLOB_BYTES)")


def test_damaged_stored_tokenizer(app):
    from webapp.infra import storage

    with app.app_context():
        blob_id = storage.put_blob("tokenizer", b"not zlib")
    response = app.test_client().get(f"/api/tokenizers/{blob_id}")
    assert response.get_json()["error"]["message"] == "tokenizer: the stored tokenizer is damaged"


def test_page_hooks_refuse_the_other_level(app, byte_tok, char_tok):
    from webapp.tokenizer import TokenizerError
    from webapp.opened import active as act

    with app.app_context():
        chars = tokenizer_store.store_tokenizer(
            tokfiles.from_playground(level="chars", merges=[["l", "o"]], vocab={"l": 0, "o": 1, "lo": 2})).id
        bytes_id = tokenizer_store.store_tokenizer(tokfiles.import_tokenizer(byte_tok.to_str())).id
        with pytest.raises(TokenizerError, match="this is a character-level tokenizer; open it on the Characters page"):
            act.byte_trace(act.of_ref(chars), "x", "none", limits=TraceLimits.tokens_only(5))
        # a character-level tokenizer.json (merges in the library's order) shows on the Bytes page too
        hf_chars = tokenizer_store.store_tokenizer(tokfiles.import_tokenizer(char_tok.to_str())).id
        trace, _vocab, _special = act.byte_trace(act.of_ref(hf_chars), "lower", "none",
                                                 limits=TraceLimits(max_steps=5, max_tokens=5, max_sequence=10))
        assert trace.ids == char_tok.encode("lower").ids
        with pytest.raises(TokenizerError, match="this is a byte-level tokenizer; open it on the Bytes page"):
            act.char_parts(act.of_ref(bytes_id, "chars"))


def test_export_with_an_unknown_level_and_import_with_bad_merges_txt(client):
    response = client.post("/api/export?format=playground", json={"merges": [], "level": "words"})
    assert response.get_json()["error"]["message"] == "level: expected \"bytes\" or \"chars\", got 'words'"
    response = client.post("/api/import", json={"content": "{}", "merges_txt": 5})
    assert response.get_json()["error"]["message"] == "merges_txt: should be the text of merges.txt"


# --- a tokenizer.json's own pipeline on the web path ----------------------------------

PIPELINE_TEXTS = ["ﬁne café<|end|> ２０２４", "  Hello   THERE  ", "x<|end|>y", "東京 🙂 e\u0301"]


@pytest.fixture(scope="module")
def nfkc_tok() -> Tokenizer:
    from tokenizers import decoders, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=["<|end|>"], show_progress=False)
    tok.train_from_iterator(SAMPLE_CORPUS * 3, trainer=trainer)
    return tok


@pytest.fixture(scope="module")
def metaspace_tok() -> Tokenizer:
    from tokenizers import decoders, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="first")
    tok.decoder = decoders.Metaspace(prepend_scheme="first")
    tok.train_from_iterator(SAMPLE_CORPUS * 3, trainer=trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<unk>", "<|end|>"], show_progress=False))
    return tok


def test_api_encode_applies_the_files_pipeline(client, nfkc_tok, metaspace_tok):
    for tok in (nfkc_tok, metaspace_tok):
        body = _import(client, tok.to_str())
        assert body["file_pipeline"]["added_tokens"] == 2 if tok is metaspace_tok else 1
        for text in PIPELINE_TEXTS:
            data = client.post(f"/api/tokenizers/{body['tokenizer']}/encode", json={"text": text}).get_json()
            assert data["ids"] == tok.encode(text).ids, text
            plain = Tokenizer.from_str(tok.to_str())
            plain.encode_special_tokens = True
            data = client.post(f"/api/tokenizers/{body['tokenizer']}/encode",
                               json={"text": text, "allowed_special": "none"}).get_json()
            assert data["ids"] == plain.encode(text).ids, text
    text = PIPELINE_TEXTS[0]
    body = _import(client, nfkc_tok.to_str())
    data = client.post(f"/api/tokenizers/{body['tokenizer']}/encode", json={"text": text}).get_json()
    assert data["model_text"] == " fine café<|end|> 2024"  # NFKC and the prefix space
    shown = data["model_text"].encode()
    assert [shown[t["start"]:t["end"]] for t in data["tokens"]] == [bytes(t["bytes"]) for t in data["tokens"]]


def test_pages_apply_the_files_pipeline(client, nfkc_tok, metaspace_tok):
    text = PIPELINE_TEXTS[0]
    page = client.post("/files/open/bytes", data={"text": text, "tokenizer_paste": nfkc_tok.to_str()})
    html = page.get_data(as_text=True)
    unspecial = Tokenizer.from_str(nfkc_tok.to_str())
    unspecial.encode_special_tokens = True
    assert _token_ids(html) == unspecial.encode(text).ids
    assert ("normalizer NFKC; pre-tokenizer ByteLevel; 1 added token split out; decoder ByteLevel"
            in " ".join(html.split()))
    tid = re.search(r'name="tokenizer" value="([a-z2-7]{16})"', html).group(1)
    # it opened with its special tokens as plain text, like a preset (issue #20); the box recognises them
    assert re.search(r'<input type="checkbox" name="special" value="all">', html)
    form = {"text": text, "tokenizer": tid, "pretokenize": "gpt2", "special": "all"}
    download = client.post("/bytes/ids.txt", data=form)
    assert [int(i) for i in download.get_data(as_text=True).split()] == nfkc_tok.encode(text).ids
    # unchecked: the special token is text, as with the library's encode_special_tokens
    plain = Tokenizer.from_str(nfkc_tok.to_str())
    plain.encode_special_tokens = True
    fragment = client.post("/fragments/bytes", data={**form, "special": ""})
    assert _token_ids(fragment.get_data(as_text=True)) == plain.encode(text).ids != nfkc_tok.encode(text).ids
    for text in PIPELINE_TEXTS:
        page = client.post("/files/open/chars", data={"text": text, "tokenizer_paste": metaspace_tok.to_str()})
        assert _token_ids(page.get_data(as_text=True)) == metaspace_tok.encode(text).ids, text
    tid = re.search(r'name="tokenizer" value="([a-z2-7]{16})"', page.get_data(as_text=True)).group(1)
    download = client.post("/chars/ids.txt", data={"text": text, "tokenizer": tid})
    assert [int(i) for i in download.get_data(as_text=True).split()] == metaspace_tok.encode(text).ids


def test_api_decode_uses_the_files_decoder(client, nfkc_tok, metaspace_tok, byte_tok, tmp_path):
    for tok in (nfkc_tok, metaspace_tok):
        tid = _import(client, tok.to_str())["tokenizer"]
        for text in PIPELINE_TEXTS:
            ids = tok.encode(text).ids
            for skip in (True, False):
                response = client.post(f"/api/tokenizers/{tid}/decode", json={"ids": ids, "skip_special_tokens": skip})
                assert response.get_json() == {"text": tok.decode(ids, skip_special_tokens=skip)}, text
    bad = client.post(f"/api/tokenizers/{tid}/decode", json={"ids": [1], "skip_special_tokens": "yes"})
    assert bad.status_code == 400 and bad.get_json()["error"]["field"] == "skip_special_tokens"
    # a file without a tokenizer.json pipeline (vocab.json + merges.txt): the tokens' bytes
    byte_tok.model.save(str(tmp_path))
    pair = client.post("/api/import", data={
        "file": (io.BytesIO((tmp_path / "vocab.json").read_bytes()), "vocab.json"),
        "merges_file": (io.BytesIO((tmp_path / "merges.txt").read_bytes()), "merges.txt"),
    }, content_type="multipart/form-data").get_json()
    ids = byte_tok.encode(TEXT).ids
    assert client.post(f"/api/tokenizers/{pair['tokenizer']}/decode", json={"ids": ids}).get_json() == {"text": TEXT}


def test_export_format_that_is_not_a_string_is_a_400(client):
    response = client.post("/api/export", json={"merges": [], "format": [[1]]})
    assert response.status_code == 400
    assert response.get_json()["error"]["message"].startswith("format: expected one of playground, hf, minbpe, tiktoken")


# --- GGUF (llama.cpp): a binary download; what it cannot write is a 400 saying why


def test_export_gguf_of_a_preset_is_a_binary_download(client):
    from webapp.tokenizer.formats.gguf import read_metadata
    from webapp.tokenizer.presets import catalog

    if not catalog.is_installed("r50k_base"):
        pytest.skip("r50k_base is not installed (make setup)")
    response = client.get("/api/export?format=gguf&tokenizer=r50k_base")
    assert response.status_code == 200
    assert response.headers["Content-Disposition"] == 'attachment; filename="tokenizer.gguf"'
    assert response.mimetype == "application/octet-stream"
    values = read_metadata(response.get_data()).values
    assert values["tokenizer.ggml.model"] == "gpt2" and values["tokenizer.ggml.pre"] == "gpt-2"
    assert values["tokenizer.ggml.tokens"][50256] == "<|endoftext|>"


def test_export_gguf_of_typed_byte_merges_needs_a_split(client):
    from webapp.tokenizer.formats.gguf import read_metadata

    merges = [[104, 101, 256], [256, 108, 257]]
    refused = client.post("/api/export?format=gguf", json={"merges": merges})
    assert refused.status_code == 400
    error = refused.get_json()["error"]
    assert error["field"] == "format" and "does not split text" in error["message"]
    written = client.post("/api/export?format=gguf", json={"merges": merges, "pretokenize": "gpt2"})
    assert written.status_code == 200
    values = read_metadata(written.get_data()).values
    assert values["tokenizer.ggml.merges"] == ["h e", "he l"] and values["tokenizer.ggml.tokens"][257] == "hel"


def test_export_gguf_of_character_rules_is_a_400_naming_why(client):
    response = client.post("/api/export?format=gguf", json={"merges": "l o\nlo w", "level": "chars"})
    assert response.status_code == 400
    assert "character-level" in response.get_json()["error"]["message"]
    page = client.post("/files/export/chars?format=gguf", data={"merges": "l o\nlo w"})
    assert page.status_code == 400 and "character-level" in page.get_data(as_text=True)
