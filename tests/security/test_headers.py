"""Security headers on every kind of response, and pages that a strict CSP
does not break (no inline script/style, no event-handler attributes)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from tests.conftest import make_app

PAGES = ["/bytes", "/chars", "/train"]

# The policy written out by hand: a change to webapp/infra/security.py must change
# this line too, on purpose (test_csp_browser.py checks that browsers obey it).
EXPECTED_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


def _requests(client):
    """One response of each kind the app gives."""
    yield "page", client.get("/bytes")
    yield "redirect or index", client.get("/")
    yield "health", client.get("/healthz")
    yield "static js", client.get("/static/share.js")
    yield "vendored htmx", client.get("/vendor/htmx.min.js")
    yield "json ok", client.post("/api/share", json={"tool": "bytes", "text": "hi"})
    yield "json error", client.post("/api/encode", data="{not json", content_type="application/json")
    yield "share 404", client.get("/s/doesnotexist")
    yield "api share 404", client.get("/api/share/aaaaaaaaaaaaaaaa")
    yield "unknown route 404", client.get("/no/such/page")
    yield "method not allowed", client.delete("/api/share")


def test_every_response_carries_the_security_headers(sec_client):
    for label, response in _requests(sec_client):
        headers = response.headers
        assert headers.get("Content-Security-Policy") == EXPECTED_CSP, label
        assert headers.get("X-Content-Type-Options") == "nosniff", label
        assert headers.get("Referrer-Policy") == "same-origin", label
        assert headers.get("X-Frame-Options") == "DENY", label
        assert response.status_code < 500, label


def test_policy_allows_only_own_scripts_and_styles(sec_client):
    policy = sec_client.get("/bytes").headers["Content-Security-Policy"]
    directives = dict(part.split(" ", 1) for part in policy.split("; "))
    assert directives["script-src"] == "'self'"
    assert directives["style-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'"
    assert directives["object-src"] == "'none'"
    assert "unsafe" not in policy


def test_hsts_only_when_configured(tmp_path):
    app = make_app(tmp_path, SECURITY_HSTS_SECONDS=3600)
    assert app.test_client().get("/healthz").headers["Strict-Transport-Security"] == "max-age=3600"


class _InlineFinder(HTMLParser):
    """Collects what a strict CSP would block in a page."""

    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []
        self._in_inline_script = False

    def handle_starttag(self, tag, attrs):
        names = {name for name, _ in attrs}
        if tag == "script" and "src" not in names:
            self._in_inline_script = True
        if tag == "style":
            self.problems.append("<style> block")
        if tag == "link" and dict(attrs).get("rel") == "stylesheet":
            href = dict(attrs).get("href") or ""
            if re.match(r"^(https?:)?//", href):
                self.problems.append(f"stylesheet from another origin: {href}")
        for name, value in attrs:
            if name == "style":
                self.problems.append(f"style attribute on <{tag}>: {value!r}")
            if name.startswith("on"):
                self.problems.append(f"event handler attribute {name} on <{tag}>")
            if name.startswith("hx-on"):
                self.problems.append(f"{name} on <{tag}> (htmx evaluates it as script)")
            if name == "src" and re.match(r"^(https?:)?//", value or ""):
                self.problems.append(f"<{tag}> loads from another origin: {value}")

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_inline_script = False

    def handle_data(self, data):
        if self._in_inline_script and data.strip():
            self.problems.append(f"inline script: {data.strip()[:60]!r}")


@pytest.mark.parametrize("path", PAGES)
def test_pages_need_nothing_the_policy_blocks(sec_client, path):
    response = sec_client.get(path)
    assert response.status_code == 200
    finder = _InlineFinder()
    finder.feed(response.get_data(as_text=True))
    assert finder.problems == []


def test_shared_page_needs_nothing_the_policy_blocks(sec_client):
    made = sec_client.post("/api/share", json={"tool": "bytes", "text": "hello", "merges": "[[104, 101, 256]]"})
    response = sec_client.get(made.get_json()["path"])
    assert response.status_code == 200
    finder = _InlineFinder()
    finder.feed(response.get_data(as_text=True))
    assert finder.problems == []


@pytest.mark.parametrize("tool, field", [("bytes", "text"), ("chars", "text"), ("train", "words")])
def test_shared_state_is_escaped_everywhere(sec_client, tool, field):
    evil = '</textarea><script>alert("x")</script><img src=x onerror=alert(1)>'
    made = sec_client.post("/api/share", json={"tool": tool, field: evil})
    assert made.status_code == 201
    html = sec_client.get(made.get_json()["path"]).get_data(as_text=True)
    assert '<script>alert("x")</script>' not in html
    assert "<img src=x onerror" not in html
    assert "&lt;script&gt;" in html


def test_not_found_page_escapes_the_id(sec_client):
    response = sec_client.get("/s/%3Cscript%3Ealert(1)%3C%5Cscript%3E")
    assert response.status_code == 404
    html = response.get_data(as_text=True)
    assert "<script>alert(1)" not in html
    assert "&lt;script&gt;alert(1)&lt;\\script&gt;" in html


def test_links_behind_a_trusted_proxy_use_its_scheme_and_the_host_header(tmp_path):
    # The proxy passes the Host header on (TRUSTED_HOSTS checks it) and sets the scheme;
    # X-Forwarded-Host is never trusted (issue 28, row 9: tests/security/test_deploy_settings.py).
    app = make_app(tmp_path, TRUSTED_PROXIES=1)
    made = app.test_client().post(
        "/api/share",
        json={"tool": "bytes", "text": "hi"},
        headers={"Host": "bpe.example.org", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.example"},
    )
    assert made.get_json()["url"].startswith("https://bpe.example.org/s/")


def test_forwarded_headers_are_ignored_without_a_trusted_proxy(sec_client):
    made = sec_client.post(
        "/api/share",
        json={"tool": "bytes", "text": "hi"},
        headers={"X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.example"},
    )
    assert made.get_json()["url"].startswith("http://localhost/s/")


def test_share_base_url_setting(tmp_path):
    app = make_app(tmp_path, SHARE_BASE_URL="https://play.example/")
    made = app.test_client().post("/api/share", json={"tool": "train", "words": "a b"})
    assert made.get_json()["url"] == "https://play.example" + made.get_json()["path"]
