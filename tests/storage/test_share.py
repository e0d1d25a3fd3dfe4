"""Share links through the app: /api/share, /share (form and htmx), /s/<id>,
on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import re

import pytest

from webapp import create_app
from webapp.infra.errors import ApiError
from webapp.web.share.routes import encode_state, normalize_state
from webapp.infra.storage import ID_LENGTH, get_storage

SEED = {"tool": "bytes", "text": "hello world", "merges": "[[104, 101, 256], [108, 108, 257]]", "view": "tokens"}


@pytest.fixture
def share_app(db_url):
    app = create_app({"TESTING": True, "DATABASE_URL": db_url, "SERVER_NAME": "play.test", "RATE_LIMIT_WRITES": ""})
    yield app
    get_storage(app).dispose()


@pytest.fixture
def client(share_app):
    return share_app.test_client()


# ---------------------------------------------------------------- pure


def test_same_state_same_bytes_whatever_the_key_order():
    a = normalize_state({"tool": "chars", "text": "x", "merges": "a b"}, strict=True)
    b = normalize_state({"merges": "a b", "text": "x", "tool": "chars"}, strict=True)
    assert encode_state(a) == encode_state(b)


def test_api_values_become_the_text_the_page_parses():
    state = normalize_state(
        {"tool": "chars", "merges": [["l", "o"]], "vocab": {"lo": 0}, "num_merges": 3, "ids": [1, 2]},
        strict=True,
    )
    assert state == {"tool": "chars", "merges": '[["l","o"]]', "vocab": '{"lo":0}', "num_merges": "3", "ids": "[1,2]"}


@pytest.mark.parametrize(
    "raw, message",
    [
        ({}, "tool should be one of bytes, chars, train, got nothing"),
        ({"tool": "hack"}, 'tool should be one of bytes, chars, train, got "hack"'),
        ({"tool": "bytes", "evil": "1"}, 'unknown state field "evil"'),
        ({"tool": "bytes", "text": True}, "text should be a string, got a boolean"),
        ({"tool": "bytes", "text": ["a"]}, "text should be a string, got a list or object"),
        ({"tool": "bytes", "view": 3}, "view should be a string, got int"),
    ],
)
def test_bad_states_are_refused_with_a_message(raw, message):
    with pytest.raises(ApiError) as caught:
        normalize_state(raw, strict=True)
    assert message in caught.value.message


def test_form_path_ignores_extra_fields():
    assert normalize_state({"tool": "train", "words": "a b", "submit": "Go"}, strict=False) == {
        "tool": "train",
        "words": "a b",
    }


# ---------------------------------------------------------------- API


def test_api_share_round_trip_is_content_addressed(client):
    first = client.post("/api/share", json=SEED)
    assert first.status_code == 201
    body = first.get_json()
    assert re.fullmatch(r"[a-z2-7]{%d}" % ID_LENGTH, body["id"])
    assert body["path"] == f"/s/{body['id']}"
    assert body["url"] == f"http://play.test/s/{body['id']}"
    assert body["tool"] == "bytes"

    again = client.post("/api/share", json=dict(reversed(list(SEED.items()))))
    assert again.status_code == 200 and again.get_json()["id"] == body["id"]

    got = client.get(f"/api/share/{body['id']}")
    assert got.status_code == 200
    assert got.get_json()["state"] == SEED
    # What GET returns can be posted back unchanged: same link.
    assert client.post("/api/share", json=got.get_json()["state"]).get_json()["id"] == body["id"]

    changed = client.post("/api/share", json={**SEED, "text": "hello world!"})
    assert changed.status_code == 201 and changed.get_json()["id"] != body["id"]


def test_unicode_nul_and_astral_characters_survive(client):
    state = {"tool": "chars", "text": "naïve 日本 \x00 😀", "merges": "a b"}
    made = client.post("/api/share", data=json.dumps(state), content_type="application/json")
    assert made.status_code == 201
    assert client.get(f"/api/share/{made.get_json()['id']}").get_json()["state"] == state


def test_a_lone_surrogate_is_refused_at_write_time(client):
    state = {"tool": "chars", "text": "ab\ud800", "merges": "a b"}
    made = client.post("/api/share", data=json.dumps(state), content_type="application/json")
    assert made.status_code == 400
    error = made.get_json()["error"]
    assert error["field"] == "text" and error["location"] == {"position": 3}
    assert "lone surrogate (U+D800)" in error["message"]


def test_a_state_stored_with_a_lone_surrogate_still_opens(share_app, client):
    """Saved before write-time refusal existed: the page shows U+FFFD, never a 500."""
    with share_app.app_context():
        data = encode_state({"tool": "bytes", "text": "x\udc80y", "merges": "[[120, 65533, 300]]"})
        share_id, _ = get_storage().save_blob("state", data)
    page = client.get(f"/s/{share_id}")
    assert page.status_code == 200
    assert "x\ufffdy" in page.get_data(as_text=True)
    api = client.get(f"/api/share/{share_id}")
    assert api.status_code == 200 and api.get_json()["state"]["text"] == "x\udc80y"


@pytest.mark.parametrize(
    "body, status, field",
    [
        ("not json", 400, "body"),
        ("[1, 2]", 400, "body"),
        ("[" * 100_000 + "]" * 100_000, 400, "body"),
        ('{"tool": "nope"}', 400, "tool"),
        ('{"tool": "bytes", "shell": "rm"}', 400, "shell"),
    ],
)
def test_api_share_errors_are_json(client, body, status, field):
    response = client.post("/api/share", data=body, content_type="application/json")
    assert response.status_code == status
    error = response.get_json()["error"]
    assert error["field"] == field and error["message"]


def test_api_share_wants_json(client):
    response = client.post("/api/share", data={"tool": "bytes"})
    assert response.status_code == 415
    assert "Content-Type: application/json" in response.get_json()["error"]["message"]


def test_state_over_the_limit_is_refused_stating_the_limit(db_url):
    app = create_app({"TESTING": True, "DATABASE_URL": db_url, "LIMIT_SHARE_BYTES": 1000, "RATE_LIMIT_WRITES": ""})
    client = app.test_client()
    response = client.post("/api/share", json={"tool": "bytes", "text": "x" * 2000})
    assert response.status_code == 413
    message = response.get_json()["error"]["message"]
    assert "at most 1000 bytes" in message and "LIMIT_SHARE_BYTES" in message
    form = client.post("/share", data={"tool": "bytes", "text": "x" * 2000})
    assert form.status_code == 413
    assert "at most 1000 bytes" in form.get_data(as_text=True)
    htmx = client.post("/share", data={"tool": "bytes", "text": "x" * 2000}, headers={"HX-Request": "true"})
    assert "at most 1000 bytes" in htmx.get_data(as_text=True)
    get_storage(app).dispose()


@pytest.mark.parametrize("bad_id", ["aaaaaaaaaaaaaaaa", "short", "UPPERCASEUPPERCA", "x" * 5000, "a%00b", "%3Cb%3E"])
def test_unknown_or_malformed_ids_are_friendly_404s(client, bad_id):
    page = client.get(f"/s/{bad_id}")
    assert page.status_code == 404
    html = page.get_data(as_text=True)
    assert "This share link does not exist" in html and "Traceback" not in html
    api = client.get(f"/api/share/{bad_id}")
    assert api.status_code == 404
    assert api.get_json()["error"]["field"] == "id"


# ---------------------------------------------------------------- form + page


def test_form_share_redirects_to_the_link_and_the_page_is_computed(client):
    response = client.post("/share", data=SEED)
    assert response.status_code == 303
    path = response.headers["Location"].replace("http://play.test", "")
    assert re.fullmatch(r"/s/[a-z2-7]{%d}" % ID_LENGTH, path)

    page = client.get(path)
    assert page.status_code == 200
    assert page.headers["X-Robots-Tag"] == "noindex"
    html = page.get_data(as_text=True)
    # Filled in: the typed fields are in the form.
    assert "hello world" in html and "[[104, 101, 256], [108, 108, 257]]" in html
    # Computed: the token spans carry the ids the API gives for the same input.
    ids = client.post("/api/encode", json={"text": "hello world", "merges": [[104, 101, 256], [108, 108, 257]]}).get_json()["ids"]
    assert [int(i) for i in re.findall(r'data-token-id="(\d+)"', html)][: len(ids)] == ids
    # The page shows its own link, ready to copy.
    assert f'value="http://play.test{path}"' in html


def test_htmx_share_answers_the_link_fragment(client):
    response = client.post("/share", data=SEED, headers={"HX-Request": "true"})
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    share_id = client.post("/api/share", json=SEED).get_json()["id"]
    assert f'value="http://play.test/s/{share_id}"' in html
    assert "data-copy-target" in html
    assert "<html" not in html  # a fragment, not a page


@pytest.mark.parametrize("tool", ["bytes", "chars", "train"])
def test_every_tool_page_has_the_share_button(client, tool):
    html = client.get(f"/{tool}").get_data(as_text=True)
    assert 'formaction="/share"' in html
    assert f'name="tool" value="{tool}"' in html


def test_shared_page_reshared_unchanged_gives_the_same_link(client):
    first = client.post("/api/share", json={"tool": "train", "words": "low lower newest", "num_merges": "4"}).get_json()
    state = client.get(f"/api/share/{first['id']}").get_json()["state"]
    assert client.post("/share", data=state).headers["Location"].endswith(first["path"])
