"""Issue 28, row 9, through the production command: nginx drops a client's
X-Forwarded-Host / -Prefix, and the app behind it takes the host from Host only.

`scripts/serve-prod.sh` (nginx in front of gunicorn, a job worker) runs on a
loopback port with TRUSTED_HOSTS set; a client sends the forwarded headers a
phishing link needs. The share link must stay on the real host, and a Host
the app does not serve is refused even when X-Forwarded-Host names one it does.
"""

from __future__ import annotations

import http.client
import json
import shutil

import pytest

from tests.hostile.test_clients_production import SERVE_PROD, production  # noqa: F401 - the fixture

pytestmark = pytest.mark.skipif(shutil.which("nginx") is None and not shutil.which("apt-get"),
                                reason="no nginx on this machine (scripts/ensure-nginx.sh installs Debian's)")


def _post(port: int, path: str, body: dict, headers: dict[str, str]) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        conn.request("POST", path, body=json.dumps(body), headers={"Content-Type": "application/json", **headers})
        response = conn.getresponse()
        data = response.read()
        return response.status, (json.loads(data) if data.startswith(b"{") else {"raw": data.decode(errors="replace")})
    finally:
        conn.close()


def test_row9_nginx_and_the_app_ignore_a_clients_forwarded_host_and_prefix(production):  # noqa: F811
    server = production(SERVE_PROD, PLAYGROUND_TRUSTED_HOSTS="bpe.example.org,127.0.0.1", WEB_CONCURRENCY="2")
    assert "nginx on" in server.log.read_text()
    status, made = _post(server.port, "/api/share", {"tool": "bytes", "text": "hi"},
                         {"Host": f"127.0.0.1:{server.port}", "X-Forwarded-Host": "evil.example",
                          "X-Forwarded-Prefix": "/phish", "Forwarded": "host=evil.example"})
    assert status in (200, 201), made
    assert made["url"].startswith(f"http://127.0.0.1:{server.port}/s/"), made["url"]
    refused, _ = _post(server.port, "/api/share", {"tool": "bytes", "text": "hi"},
                       {"Host": "evil.example", "X-Forwarded-Host": "bpe.example.org"})
    assert refused == 400
    # what nginx was told: the client's forwarded host and prefix are replaced by nothing
    conf = (server.log.parent / "run" / "nginx.conf").read_text()
    for header in ("X-Forwarded-Host", "X-Forwarded-Prefix", "X-Forwarded-Port", "Forwarded"):
        assert f'proxy_set_header {header} "";' in conf
