"""Issue 8, finding 5: limits at the edge of the production server (gunicorn).

- A chunked body has no Content-Length: over MAX_CONTENT_LENGTH it must be a
  413 naming the setting, as with a Content-Length, not a 400 "invalid JSON"
  from a silently cut body; under it, it is read whole.
- gunicorn's own request-line and header limits are the outer bound; the app
  bounds the URL and the header lines below them (LIMIT_URL_BYTES...), so
  every request gunicorn lets through gets the app's answer, its 414 / 431
  with the security headers included; beyond them gunicorn answers 414
  itself (docs/production.md says what the proxy does).
"""

from __future__ import annotations

import http.client
import json
import runpy
from typing import Iterator

import pytest

from webapp import PROJECT_ROOT

LIMIT = 200_000  # SMALL_BODY_LIMIT of tests/hostile/conftest.py


@pytest.fixture(scope="module")
def small_server(small_limit_server):
    return small_limit_server


#: gunicorn's own request-line limit, as gunicorn.conf.py sets it.
LIMIT_REQUEST_LINE = runpy.run_path(str(PROJECT_ROOT / "gunicorn.conf.py"))["limit_request_line"]


def _chunks(data: bytes, size: int = 16_384) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def _chunked(server, path: str, data: bytes) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        try:
            conn.request("POST", path, body=_chunks(data), encode_chunked=True,
                         headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"})
        except (BrokenPipeError, ConnectionResetError):
            pass
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


@pytest.mark.parametrize("path", ["/api/encode", "/api/share", "/api/import", "/api/export"])
def test_a_chunked_body_over_the_limit_is_a_413(small_server, path):
    body = json.dumps({"text": "a" * (LIMIT + 10)}).encode()
    status, _headers, raw = _chunked(small_server, path, body)
    assert status == 413, raw[:300]
    error = json.loads(raw)["error"]
    assert error["field"] == "body" and f"{LIMIT:,} bytes (setting MAX_CONTENT_LENGTH)" in error["message"]


def test_a_chunked_body_under_the_limit_is_read_whole(small_server):
    text = "ab" * 40_000
    status, _headers, raw = _chunked(small_server, "/api/encode", json.dumps({"text": text, "merges": [[97, 98, 256]]}).encode())
    assert status == 200, raw[:300]
    assert json.loads(raw)["ids"] == [256] * 40_000


def _request_line(server, path: str) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


#: The app's own bounds on the request head (webapp/__init__.py defaults), below gunicorn's.
APP_URL_LIMIT = 8000
APP_HEADER_LIMIT = 8000


def _get(server, path: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def test_the_apps_limits_are_inside_gunicorns():
    assert APP_URL_LIMIT + len("OPTIONS  HTTP/1.1") < LIMIT_REQUEST_LINE
    conf = runpy.run_path(str(PROJECT_ROOT / "gunicorn.conf.py"))
    assert APP_HEADER_LIMIT < conf["limit_request_field_size"]
    from webapp import DEFAULT_CONFIG

    assert DEFAULT_CONFIG["LIMIT_URL_BYTES"] == APP_URL_LIMIT and DEFAULT_CONFIG["LIMIT_HEADER_BYTES"] == APP_HEADER_LIMIT
    assert DEFAULT_CONFIG["LIMIT_HEADER_FIELDS"] < conf["limit_request_fields"]


def test_a_url_within_the_apps_limit_reaches_the_route(small_server):
    path = "/api/share/" + "x" * (APP_URL_LIMIT - len("/api/share/"))
    status, headers, raw = _request_line(small_server, path)
    assert status == 404
    assert json.loads(raw)["error"]["field"] == "id"
    assert headers.get("X-Content-Type-Options") == "nosniff" and "Content-Security-Policy" in headers


@pytest.mark.parametrize("prefix", ["/api/share/", "/bytes?text="])
def test_a_url_over_the_apps_limit_but_within_gunicorns_is_the_apps_414(small_server, prefix):
    # the longest target gunicorn lets through: the app answers, with its headers
    path = prefix + "x" * (LIMIT_REQUEST_LINE - len("GET  HTTP/1.1\r\n") - len(prefix) - 10)
    status, headers, raw = _request_line(small_server, path)
    assert status == 414, raw[:300]
    assert headers.get("X-Content-Type-Options") == "nosniff" and "Content-Security-Policy" in headers
    text = raw.decode()
    assert f"{len(path):,} bytes" in text and f"{APP_URL_LIMIT:,} bytes (setting LIMIT_URL_BYTES)" in text
    if prefix.startswith("/api/"):
        assert json.loads(raw)["error"]["field"] == "url"
    else:
        assert headers["Content-Type"].startswith("text/html") and "Address too long" in text


def test_a_header_over_the_apps_limit_but_within_gunicorns_is_the_apps_431(small_server):
    value = "y" * (APP_HEADER_LIMIT + 50)
    status, headers, raw = _get(small_server, "/api/tokenizers", {"X-Long": value})
    assert status == 431, raw[:300]
    assert "Content-Security-Policy" in headers
    error = json.loads(raw)["error"]
    assert error["field"] == "headers" and "setting LIMIT_HEADER_BYTES" in error["message"]
    status, headers, raw = _get(small_server, "/healthz", {f"X-Many-{i}": "1" for i in range(95)})
    assert status == 431 and "Content-Security-Policy" in headers and b"LIMIT_HEADER_FIELDS" in raw
    assert _get(small_server, "/healthz", {"X-Short": "y" * 1000})[0] == 200


def test_beyond_gunicorns_request_line_limit_gunicorn_answers_414(small_server):
    status, _headers, _raw = _request_line(small_server, "/s/" + "x" * (LIMIT_REQUEST_LINE + 10))
    assert status == 414


def test_a_chunked_form_over_the_limit_is_a_413_not_a_cut_text(small_server):
    body = ("text=" + "a" * (LIMIT + 10) + "&merges=").encode()
    conn = http.client.HTTPConnection("127.0.0.1", small_server.port, timeout=60)
    try:
        try:
            conn.request("POST", "/fragments/bytes", body=_chunks(body), encode_chunked=True,
                         headers={"Content-Type": "application/x-www-form-urlencoded", "Transfer-Encoding": "chunked"})
        except (BrokenPipeError, ConnectionResetError):
            pass
        response = conn.getresponse()
        assert response.status == 413
    finally:
        conn.close()


def test_a_chunked_form_under_the_limit_is_read_whole(small_server):
    body = b"text=" + b"ab" * 5_000 + b"&merges=97+98+256"
    conn = http.client.HTTPConnection("127.0.0.1", small_server.port, timeout=60)
    try:
        conn.request("POST", "/fragments/bytes", body=_chunks(body, 1000), encode_chunked=True,
                     headers={"Content-Type": "application/x-www-form-urlencoded", "Transfer-Encoding": "chunked"})
        response = conn.getresponse()
        page = response.read().decode()
        assert response.status == 200
        assert '<dt>tokens</dt><dd>5,000</dd>' in page.replace("\n", "").replace("  ", "")
    finally:
        conn.close()
