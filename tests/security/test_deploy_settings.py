"""Issue 28, rows 9 and 10: what the app takes from a proxy, and what an https PUBLIC_URL turns on.

Row 9: behind a trusted proxy the app takes the client's address and the
scheme from it (X-Forwarded-For / -Proto, which nginx sets), never the host
or the path prefix (X-Forwarded-Host / -Prefix, which a client can send):
share links cannot be pointed at another site, and TRUSTED_HOSTS cannot be
passed with a forwarded header. The nginx side is checked through the
production command in tests/hostile/test_deploy_production.py.

Row 10: an https PUBLIC_URL gives Secure session cookies and HSTS (a year,
unless SECURITY_HSTS_SECONDS says otherwise); `scripts/serve-prod.sh` refuses
to start with the development SECRET_KEY and says how to set one.
"""

from __future__ import annotations

import os
import subprocess

from tests.conftest import make_app
from webapp import PROJECT_ROOT

SHARE = {"tool": "bytes", "text": "hi"}


def test_row9_forwarded_host_and_prefix_never_reach_share_links(tmp_path):
    app = make_app(tmp_path, TRUSTED_PROXIES=1)
    made = app.test_client().post("/api/share", json=SHARE, headers={
        "Host": "bpe.example.org", "X-Forwarded-Proto": "https",
        "X-Forwarded-Host": "evil.example", "X-Forwarded-Prefix": "/phish"})
    assert made.status_code in (200, 201)
    url = made.get_json()["url"]
    assert url.startswith("https://bpe.example.org/s/"), url
    assert "evil" not in url and "phish" not in url


def test_row9_trusted_hosts_cannot_be_passed_with_a_forwarded_host(tmp_path):
    app = make_app(tmp_path, TRUSTED_PROXIES=1, TRUSTED_HOSTS="bpe.example.org")
    client = app.test_client()
    refused = client.post("/api/share", json=SHARE,
                          headers={"Host": "evil.example", "X-Forwarded-Host": "bpe.example.org"})
    assert refused.status_code == 400
    allowed = client.post("/api/share", json=SHARE, headers={"Host": "bpe.example.org"})
    assert allowed.status_code in (200, 201)
    assert allowed.get_json()["url"].startswith("http://bpe.example.org/s/")


def test_row9_the_client_address_still_comes_from_the_proxy(tmp_path):
    app = make_app(tmp_path, TRUSTED_PROXIES=1)

    @app.get("/_test/remote")
    def remote() -> str:
        from flask import request
        return str(request.remote_addr)

    answer = app.test_client().get("/_test/remote", headers={"X-Forwarded-For": "203.0.113.7"})
    assert answer.get_data(as_text=True) == "203.0.113.7"


def _session_cookie(app) -> str:
    """The Set-Cookie header of a response that writes the session (a job submitted by a browser)."""
    with app.test_request_context("/"):
        from flask import session
        session["probe"] = 1
        response = app.make_response("x")
        app.session_interface.save_session(app, session, response)
    return response.headers.get("Set-Cookie", "")


def test_row10_https_public_url_gives_secure_cookies_and_hsts(tmp_path):
    app = make_app(tmp_path, PUBLIC_URL="https://bpe.example.org", SECRET_KEY="k" * 40)
    cookie = _session_cookie(app)
    assert "session=" in cookie and "Secure" in cookie, cookie
    headers = app.test_client().get("/healthz").headers
    assert headers["Strict-Transport-Security"] == "max-age=31536000"


def test_row10_http_or_no_public_url_gives_neither(tmp_path):
    for public in ("", "http://localhost:5000"):
        app = make_app(tmp_path / (public.replace(":", "_").replace("/", "_") or "none"), PUBLIC_URL=public)
        assert "Secure" not in _session_cookie(app)
        assert "Strict-Transport-Security" not in app.test_client().get("/healthz").headers


def test_row10_hsts_setting_wins_over_the_default(tmp_path):
    off = make_app(tmp_path / "off", PUBLIC_URL="https://bpe.example.org", SECURITY_HSTS_SECONDS=0)
    assert "Strict-Transport-Security" not in off.test_client().get("/healthz").headers
    short = make_app(tmp_path / "short", PUBLIC_URL="https://bpe.example.org", SECURITY_HSTS_SECONDS=600)
    assert short.test_client().get("/healthz").headers["Strict-Transport-Security"] == "max-age=600"


def _serve_prod(tmp_path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "PLAYGROUND_SECRET_KEY"}
    environment.update({"PLAYGROUND_PROXY": "none", "BIND": "256.0.0.1:1", "PLAYGROUND_START_WORKER": "0",
                        "PLAYGROUND_DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}", **env})
    return subprocess.run(["bash", "scripts/serve-prod.sh", str(PROJECT_ROOT / ".venv/bin/python")],
                          cwd=PROJECT_ROOT, env=environment, capture_output=True, text=True, timeout=60)


def test_row10_serve_prod_refuses_the_development_secret_key(tmp_path):
    done = _serve_prod(tmp_path)
    assert done.returncode != 0
    assert "PLAYGROUND_SECRET_KEY" in done.stderr
    assert "secrets.token_hex" in done.stderr  # how to make one
    empty = _serve_prod(tmp_path, PLAYGROUND_SECRET_KEY="")
    assert empty.returncode != 0 and "PLAYGROUND_SECRET_KEY" in empty.stderr
