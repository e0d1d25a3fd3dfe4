"""Comparing two tokenizers over HTTP: POST /api/compare, the Bytes page's "Compare with…", share links.

Each side's ids must equal what that tokenizer gives alone (`get_tokenizer`,
whose ids the preset tests check against tiktoken; the byte-level engine for
typed merges; Hugging Face `tokenizers` for an opened file). The boundary
figures are recomputed here from each side's token lengths.
"""

from __future__ import annotations

import html
import re

import pytest
from tests.hf_samples import SAMPLE_CORPUS, byte_level_tokenizer, char_level_tokenizer

from webapp.opened import store as tokenizer_store
from webapp.tokenizer import encode, get_tokenizer
from webapp.tokenizer.pretokenize.pretokenized import pretokenized_encode

TEXT = "Unbelievably, the tokenizer grew: Привет, мир!"
MERGES = [[108, 111, 256], [256, 119, 257], [101, 114, 258]]


@pytest.fixture(autouse=True)
def _fresh_cache():
    tokenizer_store.LOADED.clear()
    yield
    tokenizer_store.LOADED.clear()


def _compare(client, a, b, text=TEXT):
    return client.post("/api/compare", json={"text": text, "a": a, "b": b})


def _cuts(tokens, length):
    """Inner boundaries from the tokens' byte lengths, laid end to end."""
    out, offset = set(), 0
    for token in tokens:
        offset += len(token["bytes"])
        out.add(offset)
    return {c for c in out if 0 < c < length}


def _check_boundaries(body, text):
    length = len(text.encode("utf-8"))
    cuts_a, cuts_b = _cuts(body["a"]["tokens"], length), _cuts(body["b"]["tokens"], length)
    bounds = body["boundaries"]
    assert set(bounds["shared"]) == cuts_a & cuts_b
    assert set(bounds["only_a"]) == cuts_a - cuts_b
    assert set(bounds["only_b"]) == cuts_b - cuts_a
    assert bounds["union_count"] == len(cuts_a | cuts_b)
    assert bounds["shared_ratio"] == pytest.approx(len(cuts_a & cuts_b) / len(cuts_a | cuts_b))
    for side, other in (("a", cuts_b), ("b", cuts_a)):
        for token in body[side]["tokens"]:
            inner = {e for e in (token["start"], token["end"]) if 0 < e < length}
            assert token["differs"] == (not inner <= other)


def test_two_presets_give_each_ones_own_ids_and_where_they_differ(client):
    response = _compare(client, {"tokenizer": "cl100k_base"}, {"tokenizer": "o200k_base"})
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    for side, name in (("a", "cl100k_base"), ("b", "o200k_base")):
        alone = get_tokenizer(name).encode(TEXT)
        assert body[side]["ids"] == alone
        assert body[side]["count"] == len(alone)
        assert [t["id"] for t in body[side]["tokens"]] == alone
        assert b"".join(bytes(t["bytes"]) for t in body[side]["tokens"]) == TEXT.encode("utf-8")
        # The preset's own encode route agrees, spans included.
        own = client.post(f"/api/tokenizers/{name}/encode", json={"text": TEXT}).get_json()
        assert [(t["start"], t["end"]) for t in own["tokens"]] == [(t["start"], t["end"]) for t in body[side]["tokens"]]
    assert body["a"]["count"] != body["b"]["count"]
    assert not body["identical"] and body["boundaries"]["only_a"] and body["boundaries"]["only_b"]
    _check_boundaries(body, TEXT)


def test_a_tokenizer_compared_with_itself_differs_nowhere(client):
    body = _compare(client, {"tokenizer": "o200k_base"}, {"tokenizer": "o200k_base"}).get_json()
    assert body["identical"] is True
    assert body["boundaries"]["shared_ratio"] == 1.0 and not body["boundaries"]["only_a"]
    assert not any(t["differs"] for side in ("a", "b") for t in body[side]["tokens"])
    assert body["a"] == body["b"]


def test_typed_merges_against_a_preset_with_patterns_and_special_tokens(client):
    text = "lower slower <|endoftext|> low"
    a = {"merges": "108 111 256\n256 119 257\n101 114 258", "pretokenize": "gpt2"}
    b = {"tokenizer": "gpt2", "allowed_special": "all"}
    body = _compare(client, a, b, text).get_json()
    assert body["a"]["ids"] == pretokenized_encode(text, MERGES, "gpt2")
    assert body["a"]["pretokenize"] == "gpt2" and body["a"]["tokenizer"] is None
    assert body["b"]["ids"] == get_tokenizer("gpt2").encode(text, allowed_special="all")
    assert [t.get("special", False) for t in body["b"]["tokens"]].count(True) == 1
    _check_boundaries(body, text)
    # Without a pattern the typed side is the specified algorithm.
    plain = _compare(client, {"merges": MERGES}, b, text).get_json()
    assert plain["a"]["ids"] == encode(text, MERGES) and plain["a"]["pretokenize"] == "none"


def test_an_opened_file_against_a_preset(client):
    hf = byte_level_tokenizer(SAMPLE_CORPUS)
    opened = client.post("/api/import", json={"content": hf.to_str()}).get_json()["tokenizer"]
    text = "the lowest newer München"
    body = _compare(client, {"tokenizer": opened}, {"tokenizer": "r50k_base"}, text).get_json()
    assert body["a"]["ids"] == hf.encode(text).ids
    assert body["b"]["ids"] == get_tokenizer("r50k_base").encode(text)
    _check_boundaries(body, text)


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"text": "x", "a": {"merges": "108 111 256\n1 2"}, "b": {"tokenizer": "gpt2"}}, "a.merges", "a.merges: line 2"),
        ({"text": "x", "a": {"tokenizer": "gpt2"}, "b": {"tokenizer": "gpt5"}}, "b.tokenizer", "b.tokenizer: no tokenizer is stored"),
        ({"text": "x", "a": {"tokenizer": "gpt2"}, "b": {"tokenizer": 5}}, "b.tokenizer", "b.tokenizer: expected"),
        ({"text": "x", "a": {"tokenizer": "gpt2"}, "b": {}}, "b.tokenizer", "b.tokenizer: missing"),
        ({"text": "x", "a": {"tokenizer": "gpt2", "merges": []}, "b": {"tokenizer": "gpt2"}}, "a.merges",
         "a.merges: give either tokenizer or merges, not both"),
        ({"text": "x", "a": {"tokenizer": "gpt2", "colour": 1}, "b": {"tokenizer": "gpt2"}}, "a.colour", "a.colour: unknown field"),
        ({"text": "x", "a": {"tokenizer": "gpt2", "pretokenize": "bert"}, "b": {"tokenizer": "gpt2"}}, "a.pretokenize", "a.pretokenize: expected one of"),
        ({"text": "x", "a": {"tokenizer": "gpt2"}, "b": {"tokenizer": "gpt2", "allowed_special": ["<|nope|>"]}},
         "b.allowed_special", "b.allowed_special: item 1"),
        ({"text": "x", "a": "cl100k_base", "b": {"tokenizer": "gpt2"}}, "a", "a: expected an object"),
        ({"text": "x", "a": {"tokenizer": "gpt2"}}, "b", "b: missing"),
        ({"text": 5, "a": {"tokenizer": "gpt2"}, "b": {"tokenizer": "gpt2"}}, "text", "text: expected a string"),
        ({"text": "x", "a": {"merges": [[1, 2]]}, "b": {"tokenizer": "gpt2"}}, "a.merges", "a.merges: rule 1"),
    ],
)
def test_errors_name_the_field_inside_the_spec(client, body, field, message):
    response = client.post("/api/compare", json=body)
    assert response.status_code == 400
    error = response.get_json()["error"]
    assert error["field"] == field
    # the message names the field first, then says what is wrong there
    assert error["message"].startswith(f"{field}: ") and error["message"].startswith(message), error
    if field == "a.merges" and "line" in message:
        assert error["location"]["line"] == 2


def test_a_character_level_file_is_refused_on_its_side(client):
    # (a character-level tokenizer.json compares: its merges follow the library, with byte offsets)
    hf_id = client.post("/api/import", json={"content": char_level_tokenizer(SAMPLE_CORPUS).to_str()}).get_json()["tokenizer"]
    assert _compare(client, {"tokenizer": "gpt2"}, {"tokenizer": hf_id}, "low").status_code == 200
    playground = client.post("/api/export?format=playground",
                             json={"level": "chars", "merges": [["l", "o"]], "vocab": {"l": 0, "o": 1, "lo": 2}}).get_data(as_text=True)
    char_id = client.post("/api/import", json={"content": playground}).get_json()["tokenizer"]
    response = _compare(client, {"tokenizer": "gpt2"}, {"tokenizer": char_id}, "low")
    assert response.status_code == 400
    assert response.get_json()["error"]["field"] == "b.tokenizer"
    assert "character-level" in response.get_json()["error"]["message"]


def test_text_over_the_limit_is_refused_before_encoding(tmp_path):
    from tests.conftest import make_app

    small = make_app(tmp_path, LIMIT_TEXT_CHARS=10).test_client()
    response = small.post("/api/compare", json={"text": "x" * 11, "a": {"tokenizer": "gpt2"}, "b": {"merges": []}})
    assert response.status_code == 400 and response.get_json()["error"]["field"] == "text"
    assert "LIMIT_TEXT_CHARS" in response.get_json()["error"]["message"]


# --- the Bytes page -----------------------------------------------------------------------------


def _side_counts(page: str) -> dict[str, int]:
    return {side: int(count) for side, count in re.findall(
        r'data-side="(\w)".*?class="compare-tokens" data-count="(\d+)"', page, re.S)}


def _side_ids(page: str, side: str) -> list[int]:
    """Side B's tokens in the comparison card; side A's are the page's own Tokens view (#tokens)."""
    start = page.index(f'id="compare-tokens-{side}"' if side == "b" else 'id="tokens"')
    end = page.index("</section>" if side == "b" else 'class="details"', start)
    return [int(i) for i in re.findall(r'data-token-id="(\d+)"', page[start:end])]


def _marked(page: str, side: str) -> int:
    start = page.index(f'id="compare-tokens-{side}"' if side == "b" else 'id="tokens"')
    end = page.index("</section>" if side == "b" else 'class="details"', start)
    return page[start:end].count("tok-differs")


PAGE = {"text": TEXT, "tokenizer": "cl100k_base", "pretokenize": "cl100k", "compare": "o200k_base"}


def test_page_compare_without_javascript_shows_both_sides(client):
    page = client.post("/bytes", data=PAGE).get_data(as_text=True)
    api = _compare(client, {"tokenizer": "cl100k_base"}, {"tokenizer": "o200k_base"}).get_json()
    assert _side_counts(page) == {"a": api["a"]["count"], "b": api["b"]["count"]}
    assert _side_ids(page, "a") == get_tokenizer("cl100k_base").encode(TEXT)
    assert _side_ids(page, "b") == get_tokenizer("o200k_base").encode(TEXT)
    for side in ("a", "b"):
        assert _marked(page, side) == sum(t["differs"] for t in api[side]["tokens"])
    shared, union = api["boundaries"]["shared_count"], api["boundaries"]["union_count"]
    assert f'data-shared="{shared}" data-union="{union}"' in page
    assert f"{100 * shared / union:.1f}%" in page
    assert 'selected>o200k_base</option>' in page  # the choice is kept


def test_page_fragment_carries_the_comparison(client):
    fragment = client.post("/fragments/bytes", data=PAGE, headers={"HX-Request": "true"}).get_data(as_text=True)
    assert _side_ids(fragment, "b") == get_tokenizer("o200k_base").encode(TEXT)


def test_page_typed_merges_as_b_and_errors_beside_the_b_field(client):
    state = {"text": "lower", "merges": "", "compare": "merges", "compare_merges": "108 111 256\n256 119 257"}
    page = client.post("/bytes", data=state).get_data(as_text=True)
    assert _side_ids(page, "a") == list(b"lower")
    assert _side_ids(page, "b") == encode("lower", [[108, 111, 256], [256, 119, 257]])
    bad = dict(state, compare_merges="108 111 256\n256 119")
    page = client.post("/bytes", data=bad).get_data(as_text=True)
    slot = re.search(r'id="error-compare_merges"[^>]*>(.*?)</p>', page, re.S).group(1)
    assert "line 2" in slot and not slot.startswith("b.")
    assert "256 119</textarea>" in page  # what was typed stays
    assert "Tokenizer B:" in page and 'id="compare-tokens-a"' not in page
    # A's own result is still there.
    assert 'id="tokens"' in page


def test_page_unknown_b_tokenizer_is_an_inline_error(client):
    page = client.post("/bytes", data=dict(PAGE, compare="zzzzzzzzzzzzzzzz")).get_data(as_text=True)
    slot = re.search(r'id="error-compare"[^>]*>(.*?)</p>', page, re.S).group(1)
    assert "no tokenizer is stored" in html.unescape(slot)


def test_swap_exchanges_the_sides_without_javascript(client):
    state = dict(PAGE, merges="108 111 256", compare_special="all")
    page = client.post("/bytes", data=dict(state, action="compare-swap")).get_data(as_text=True)
    assert _side_ids(page, "a") == get_tokenizer("o200k_base").encode(TEXT)
    assert _side_ids(page, "b") == get_tokenizer("cl100k_base").encode(TEXT)
    assert 'name="tokenizer" value="o200k_base"' in page
    assert 'selected>cl100k_base</option>' in page
    assert re.search(r'name="special" value="all" checked', page)  # B's option went to A
    # Typed merges on A become B's typed merges.
    typed = {"text": "lower", "merges": "108 111 256", "compare": "gpt2", "pretokenize": "none"}
    page = client.post("/bytes", data=dict(typed, action="compare-swap")).get_data(as_text=True)
    assert _side_ids(page, "a") == get_tokenizer("gpt2").encode("lower")
    assert _side_ids(page, "b") == encode("lower", [[108, 111, 256]])
    assert 'value="merges" selected' in page


def test_share_link_reopens_the_comparison(client):
    state = dict(PAGE, tool="bytes", compare_pretokenize="gpt2")
    response = client.post("/share", data=state)
    assert response.status_code == 303
    link = response.headers["Location"]
    page = client.get(link).get_data(as_text=True)
    direct = client.post("/bytes", data=state).get_data(as_text=True)
    assert _side_ids(page, "a") == _side_ids(direct, "a")
    assert _side_ids(page, "b") == _side_ids(direct, "b") != []
    saved = client.get("/api/share/" + link.rsplit("/", 1)[1]).get_json()["state"]
    assert {k: saved[k] for k in ("compare", "compare_pretokenize")} == {"compare": "o200k_base", "compare_pretokenize": "gpt2"}
    # The JSON share API takes the same fields.
    created = client.post("/api/share", json={"tool": "bytes", "text": TEXT, "compare": "o200k_base", "compare_merges": ""})
    assert created.status_code in (200, 201)
    page = client.get(created.get_json()["path"]).get_data(as_text=True)
    assert _side_ids(page, "b") == get_tokenizer("o200k_base").encode(TEXT)


def test_a_comparison_opens_from_the_url(client):
    page = client.get("/bytes?text=" + TEXT + "&tokenizer=cl100k_base&compare=o200k_base").get_data(as_text=True)
    assert _side_ids(page, "b") == get_tokenizer("o200k_base").encode(TEXT)


def test_counts_and_marks_cover_every_token_beyond_the_render_cap(tmp_path):
    """The page draws RENDER_MAX_TOKENS spans per side; the figures still count them all."""
    from tests.conftest import make_app

    capped = make_app(tmp_path, RENDER_MAX_TOKENS=3).test_client()
    page = capped.post("/bytes", data=PAGE).get_data(as_text=True)
    api = _compare(capped, {"tokenizer": "cl100k_base"}, {"tokenizer": "o200k_base"}).get_json()
    assert len(_side_ids(page, "a")) == 3
    assert _side_counts(page) == {"a": api["a"]["count"], "b": api["b"]["count"]}
    for side in ("a", "b"):
        differing = sum(t["differs"] for t in api[side]["tokens"])
        assert re.search(rf'data-side="{side}".*?data-differing="{differing}"', page, re.S)
    assert f'data-shared="{api["boundaries"]["shared_count"]}" data-union="{api["boundaries"]["union_count"]}"' in page


def test_an_id_defined_twice_still_gets_the_right_spans(tmp_path):
    """Rule 2 redefines id 256 as "c" + "ab": the ids' bytes (first definition) do not spell the text,
    so the spans beyond the render cap come from the engine, not from the ids' lengths."""
    from tests.conftest import make_app

    capped = make_app(tmp_path, RENDER_MAX_TOKENS=1).test_client()
    rules = "97 98 256\n99 256 256"
    state = {"text": "cabx", "merges": "", "compare": "merges", "compare_merges": rules}
    page = capped.post("/bytes", data=state).get_data(as_text=True)
    # A is bytes (cuts 1, 2, 3); B is "cab" | "x" (cut 3): 1 of 3 cuts shared.
    assert 'data-shared="1" data-union="3"' in page
    body = _compare(capped, {"merges": []}, {"merges": rules}, "cabx").get_json()
    assert [(t["start"], t["end"]) for t in body["b"]["tokens"]] == [(0, 3), (3, 4)]
    assert body["b"]["ids"] == encode("cabx", [[97, 98, 256], [99, 256, 256]])


def test_a_tokenizer_json_that_changes_the_text_is_refused_on_its_side(client):
    from tokenizers import normalizers

    hf = byte_level_tokenizer(SAMPLE_CORPUS)
    hf.normalizer = normalizers.Lowercase()
    opened = client.post("/api/import", json={"content": hf.to_str()}).get_json()["tokenizer"]
    same = _compare(client, {"tokenizer": "gpt2"}, {"tokenizer": opened}, "the lowest newer")
    assert same.status_code == 200, same.get_json()
    assert same.get_json()["b"]["ids"] == hf.encode("the lowest newer").ids
    changed = _compare(client, {"tokenizer": "gpt2"}, {"tokenizer": opened}, "The Lowest")
    assert changed.status_code == 400
    error = changed.get_json()["error"]
    assert error["field"] == "b.tokenizer" and "changes the text" in error["message"]


def test_a_tokenizer_json_recognises_its_special_tokens_unless_told_otherwise(client):
    hf = byte_level_tokenizer(SAMPLE_CORPUS)
    hf.add_special_tokens(["<|sp|>"])
    opened = client.post("/api/import", json={"content": hf.to_str()}).get_json()["tokenizer"]
    text = "low<|sp|>er"
    body = _compare(client, {"tokenizer": opened}, {"tokenizer": opened, "allowed_special": "none"}, text).get_json()
    assert body["a"]["ids"] == hf.encode(text).ids  # the library's default: the special token is one token
    assert hf.token_to_id("<|sp|>") in body["a"]["ids"] and hf.token_to_id("<|sp|>") not in body["b"]["ids"]
    assert [t.get("special", False) for t in body["a"]["tokens"]].count(True) == 1
    _check_boundaries(body, text)


def test_page_says_when_side_a_cannot_be_compared(client):
    from tokenizers import normalizers

    hf = byte_level_tokenizer(SAMPLE_CORPUS)
    hf.normalizer = normalizers.Lowercase()
    imported = client.post("/api/import", json={"content": hf.to_str()}).get_json()
    state = {"text": "The Lowest", "tokenizer": imported["tokenizer"], "pretokenize": imported["pretokenize"],
             "compare": "gpt2"}  # as the page opens it: with its own pre-tokenization
    page = client.post("/bytes", data=state).get_data(as_text=True)
    message = re.search(r'class="compare-error" role="alert">(.*?)</p>', page, re.S).group(1)
    assert message.startswith("Tokenizer A: tokenizer: this tokenizer.json changes the text")
    assert 'id="tokens"' in page  # A's own result still shows


@pytest.mark.server
def test_a_long_text_is_a_job_with_the_inline_answer(tmp_path):
    """Over JOB_ENCODE_CHARS the comparison runs in a job (202), as /api/encode; its result is the inline one."""
    from jobhelpers import JobWorker, wait_job

    from tests.conftest import make_app

    settings = {"DATABASE_URL": f"sqlite:///{tmp_path / 'jobs.sqlite3'}",
                "QUEUE_URL": f"sqlite:///{tmp_path / 'queue.sqlite3'}",
                "JOB_ENCODE_CHARS": 20, "JOB_TIME_SECONDS": 60, "JOB_MEMORY_MB": 1024}
    app = make_app(tmp_path, **settings)
    client = app.test_client()
    body = {"text": TEXT, "a": {"tokenizer": "gpt2"}, "b": {"merges": MERGES, "pretokenize": "gpt2"}}
    worker = JobWorker(settings, tmp_path / "worker.log").start()
    try:
        response = client.post("/api/compare", json=body)
        assert response.status_code == 202, response.get_json()
        url = response.get_json()["url"]
        done = wait_job(lambda: client.get(url).get_json(), worker=worker)
        assert done["state"] == "done", done
        result = client.get(done["result_url"]).get_json()
    finally:
        worker.kill()
    inline = make_app(tmp_path / "inline").test_client().post("/api/compare", json=body)
    assert inline.status_code == 200 and inline.get_json() == result
    assert result["a"]["ids"] == get_tokenizer("gpt2").encode(TEXT)
    # Over LIMIT_TEXT_CHARS stays a 400, not a job.
    app.config["LIMIT_TEXT_CHARS"] = 30
    assert client.post("/api/compare", json=body).status_code == 400


def test_over_the_rule_limit_is_a_400_before_any_job(tmp_path):
    from tests.conftest import make_app

    client = make_app(tmp_path, JOB_ENCODE_RULES=2, LIMIT_RULES=3).test_client()
    rules = [[97, 97, 256 + i] for i in range(4)]
    response = client.post("/api/compare", json={"text": "aa", "a": {"tokenizer": "gpt2"}, "b": {"merges": rules}})
    assert response.status_code == 400
    assert response.get_json()["error"]["field"] == "b.merges" and "LIMIT_RULES" in response.get_json()["error"]["message"]
