"""The presets over HTTP: listing, encode, the Bytes page, share links, decode, import's vocab size.

The oracle is tiktoken built from what `GET /api/tokenizers` lists (pattern
and special tokens) over the checked ranks, so the listing itself is tested
to be the real thing, and every id the app gives must equal tiktoken's.
"""

from __future__ import annotations

import html
import re

import pytest

from webapp.opened import store as tokenizer_store
from webapp.tokenizer.caches import BoundedCache
from webapp.tokenizer.presets.openai import load_ranks
from webapp.tokenizer.presets import catalog, open_models
from webapp.tokenizer.presets import openai as presets

tiktoken = pytest.importorskip("tiktoken")

TEXT = "Hello world! It's 2026: naïve café, 東京 😀 <|endoftext|> def f(x):\n    return x  "
PAGE_TEXT = "Hi<|endoftext|>there <|endofprompt|> end"


def _listing(client) -> dict[str, dict]:
    response = client.get("/api/tokenizers")
    assert response.status_code == 200
    return {item["name"]: item for item in response.get_json()["presets"]}


@pytest.fixture(scope="module")
def oracles() -> dict:
    cache: dict = {}

    def build(item: dict):
        if item["name"] not in cache:
            cache[item["name"]] = tiktoken.Encoding(
                name=f"web-{item['name']}",
                pat_str=item["pattern"],
                mergeable_ranks=load_ranks(item["name"]),
                special_tokens=item["special_tokens"],
            )
        return cache[item["name"]]

    return build


def test_listing_names_patterns_and_special_tokens(client, oracles):
    listing = _listing(client)
    assert sorted(listing) == sorted(catalog.PRESET_NAMES)
    assert listing["r50k_base"]["aliases"] == ["gpt2"]
    assert listing["cl100k_base"]["special_tokens"]["<|fim_prefix|>"] == 100258
    for name in open_models.OPEN_MODELS:  # (their oracle is the tokenizers library: tests/unit/tokenizer/presets/test_open_presets.py)
        item = listing.pop(name)
        kind = open_models.OPEN_MODELS[name].kind
        assert item["installed"] is True and item["vendor"]
        assert item["merge_order"] == ("list" if kind == "tekken" else "library")
        assert item["sha256"] == open_models.OPEN_MODELS[name].sha256
    for item in listing.values():
        assert item["installed"] is True
        assert item["n_vocab"] == oracles(item).n_vocab
        assert item["vocab_size"] == len(load_ranks(item["name"])) + len(item["special_tokens"])


@pytest.mark.parametrize("name", ["gpt2", "p50k_base", "cl100k_base", "o200k_base"])
def test_encode_route_gives_tiktoken_ids(client, oracles, name):
    item = _listing(client)[presets.get_preset(name).name]
    enc = oracles(item)
    plain = client.post(f"/api/tokenizers/{name}/encode", json={"text": TEXT}).get_json()
    assert plain["ids"] == enc.encode_ordinary(TEXT)
    assert not any(t.get("special") for t in plain["tokens"])
    special = client.post(f"/api/tokenizers/{name}/encode", json={"text": TEXT, "allowed_special": "all"}).get_json()
    assert special["ids"] == enc.encode(TEXT, allowed_special="all")
    marked = [t for t in special["tokens"] if t.get("special")]
    assert [t["id"] for t in marked] == [item["special_tokens"]["<|endoftext|>"]]
    start = len(TEXT.encode("utf-8").split(b"<|endoftext|>")[0])
    assert (marked[0]["start"], marked[0]["end"]) == (start, start + len("<|endoftext|>"))
    # every token's bytes are where it says in the text
    data = TEXT.encode("utf-8")
    assert all(bytes(t["bytes"]) == data[t["start"] : t["end"]] for t in special["tokens"])


def test_encode_route_refuses_bad_allowed_special(client):
    response = client.post("/api/tokenizers/cl100k_base/encode", json={"text": "x", "allowed_special": 7})
    assert response.status_code == 400 and response.get_json()["error"]["field"] == "allowed_special"
    response = client.post(
        "/api/tokenizers/cl100k_base/encode", json={"text": "x", "allowed_special": ["<|endoftext|>", "<|im_start|>"]}
    )
    error = response.get_json()["error"]
    assert response.status_code == 400 and error["location"] == {"index": 2} and "<|im_start|>" in error["message"]


def test_preset_summary_and_full_on_request(client):
    summary = client.get("/api/tokenizers/o200k_base").get_json()
    assert summary["tokenizer"] == "o200k_base" and summary["pretokenize"] == "o200k"
    assert summary["vocab_size"] == 200_000 and "merges" not in summary
    full = client.get("/api/tokenizers/gpt2?include=full").get_json()
    assert len(full["merges"]) == full["rules"] == 50_000


def _page_ids(page: str) -> list[int]:
    """The ids of the token spans on a page."""
    return [int(i) for i in re.findall(r'<span class="tok [^"]*"[^>]*data-token-id="(\d+)"', page)]


def test_bytes_page_with_a_preset_from_the_url(client, oracles):
    enc = oracles(_listing(client)["o200k_base"])
    page = client.get("/bytes", query_string={"tokenizer": "o200k_base", "text": PAGE_TEXT}).get_data(as_text=True)
    assert re.search(r'<option value="o200k" selected', page)  # the preset's own pattern is chosen
    assert _page_ids(page) == enc.encode_ordinary(PAGE_TEXT)
    assert "tok-special" not in page
    page = client.get(
        "/bytes", query_string={"tokenizer": "o200k_base", "text": PAGE_TEXT, "special": "all"}
    ).get_data(as_text=True)
    assert _page_ids(page) == enc.encode(PAGE_TEXT, allowed_special="all")
    specials = re.findall(r'class="tok [^"]*tok-special[^"]*"[^>]*data-token-id="(\d+)"', page)
    assert specials == ["199999", "200018"]
    assert 'name="special" value="all" checked' in page


def test_choosing_a_preset_on_the_page(client):
    response = client.post(
        "/files/preset/bytes", data={"tokenizer_preset": "cl100k_base", "text": "abc"}, headers={"HX-Request": "true"}
    )
    fragment = response.get_data(as_text=True)
    assert '<input type="hidden" name="tokenizer" value="cl100k_base">' in fragment
    assert 'data-pretokenize="cl100k"' in fragment and "data-refresh" in fragment
    # without JavaScript: the whole page, computed with the preset
    page = client.post("/files/preset/bytes", data={"tokenizer_preset": "gpt2", "text": "hello world"}).get_data(as_text=True)
    assert _page_ids(page) == [31373, 995]
    bad = client.post("/files/preset/bytes", data={"tokenizer_preset": "llama", "text": "x"}, headers={"HX-Request": "true"})
    assert "no preset is called 'llama'" in html.unescape(bad.get_data(as_text=True))


def test_share_link_carries_the_preset_and_special_option(client):
    state = {"tool": "bytes", "tokenizer": "cl100k_base", "text": PAGE_TEXT, "special": "all"}
    created = client.post("/api/share", json=state)
    assert created.status_code in (200, 201)
    page = client.get(created.get_json()["path"]).get_data(as_text=True)
    assert '<input type="hidden" name="tokenizer" value="cl100k_base">' in page
    assert re.findall(r'tok-special[^"]*"[^>]*data-token-id="(\d+)"', page) == ["100257", "100276"]


def test_decode_panel_uses_the_preset_vocab(client, oracles):
    enc = oracles(_listing(client)["cl100k_base"])
    ids = enc.encode("<|endoftext|>Grüße,東京", allowed_special="all")
    page = client.get(
        "/bytes", query_string={"tokenizer": "cl100k_base", "text": "x", "ids": " ".join(map(str, ids))}
    ).get_data(as_text=True)
    decoded = re.search(r'<output class="decoded-text"[^>]*>(.*?)</output>', page, re.S)
    assert decoded is not None
    assert html.unescape(re.sub(r"<[^>]+>", "", decoded.group(1))) == enc.decode(ids) == "<|endoftext|>Grüße,東京"


def test_ids_download_with_special_tokens(client, oracles):
    enc = oracles(_listing(client)["r50k_base"])
    body = client.post("/bytes/ids.txt", data={"tokenizer": "gpt2", "pretokenize": "gpt2", "text": PAGE_TEXT, "special": "all"})
    assert [int(i) for i in body.get_data(as_text=True).split()] == enc.encode(PAGE_TEXT, allowed_special="all")


def test_import_always_gives_the_vocab_size(client):
    content = "".join(f"{__import__('base64').b64encode(bytes([b])).decode()} {b}\n" for b in range(256)) + "YWI= 256\n"
    for query in ("", "?include=summary"):
        body = client.post(f"/api/import{query}", json={"content": content, "format": "tiktoken"}).get_json()
        assert body["vocab_size"] == 257, query


def test_missing_preset_says_how_to_install(client, monkeypatch, tmp_path):
    monkeypatch.setenv("PLAYGROUND_JS_TIKTOKEN_RANKS", str(tmp_path / "none"))
    monkeypatch.setenv("PLAYGROUND_NODE_MODULES", str(tmp_path / "none"))
    monkeypatch.setenv("PLAYGROUND_PYPI_DIR", str(tmp_path / "none"))
    monkeypatch.setattr(open_models, "_LOADED", BoundedCache(8, 10**7, weigh=open_models._LOADED.weigh))
    monkeypatch.setattr(tokenizer_store, "PRESET_ENTRIES", BoundedCache(8, 10**7, weigh=tokenizer_store.PRESET_ENTRIES.weigh))
    for name in ("_LOADED", "_RANKS"):
        cache = getattr(presets, name)
        monkeypatch.setattr(presets, name, BoundedCache(cache.max_entries, cache.max_weight, weigh=cache.weigh))
    from webapp.tokenizer.presets import cache as preset_cache

    monkeypatch.setattr(preset_cache, "_CHOSEN", [None])  # no folder chosen, and none by default: memory only
    monkeypatch.setenv(preset_cache.CACHE_ENV, "")
    for name in ("p50k_base", "gemma3"):
        response = client.post(f"/api/tokenizers/{name}/encode", json={"text": "x"})
        assert response.status_code == 503
        assert "make setup" in response.get_json()["error"]["message"]
    assert all(not item["installed"] for item in _listing(client).values())


def test_get_tokenizer_opens_a_stored_file_by_id(app, client):
    from webapp.tokenizer import TokenizerError, get_tokenizer

    base64 = __import__("base64")
    content = "".join(f"{base64.b64encode(bytes([b])).decode()} {b}\n" for b in range(256)) + "YWI= 256\nYWJj 257\n"
    body = client.post("/api/import", json={"content": content, "format": "tiktoken"}).get_json()
    ranks = {base64.b64decode(line.split()[0]): int(line.split()[1]) for line in content.splitlines()}
    enc = tiktoken.Encoding("stored", pat_str=r"[\s\S]+", mergeable_ranks=ranks, special_tokens={})
    with app.app_context():
        handle = get_tokenizer(body["tokenizer"])
        assert handle.pattern is None and handle.special_tokens == {}
        assert handle.encode("abcab abc") == enc.encode("abcab abc")
        assert handle.decode(handle.encode("abcab abc")) == "abcab abc"
    with pytest.raises(TokenizerError):
        get_tokenizer(body["tokenizer"])  # outside the app there is no storage to look in


def test_a_preset_under_another_split_says_its_ids_are_not_the_presets(client):
    """Issue #20, item 5: without JavaScript too, the page says plainly what changed."""
    page = client.get("/bytes?tokenizer=cl100k_base&pretokenize=none&text=1234567").get_data(as_text=True)
    assert "These are not cl100k_base&#39;s ids" in page or "These are not cl100k_base's ids" in page
    own = client.get("/bytes?tokenizer=cl100k_base&pretokenize=cl100k&text=1234567").get_data(as_text=True)
    assert "foreign-split" not in own
