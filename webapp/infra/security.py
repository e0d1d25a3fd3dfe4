"""Security headers on every response, and trust in a reverse proxy when configured.

What it does: `init_app(app)` adds an `after_request` hook that sets a strict
Content-Security-Policy (scripts, styles, images, fonts and XHR from the app's
own origin only; no inline script or style, no plugins, no framing, forms post
only to the app), `X-Content-Type-Options: nosniff`, a same-origin referrer
policy, `X-Frame-Options: DENY`, and, when SECURITY_HSTS_SECONDS is set (behind
HTTPS), `Strict-Transport-Security`. With TRUSTED_PROXIES=n it wraps the app in
Werkzeug's ProxyFix so URLs built for share links use the proxy's scheme/host.

What it does not do: escaping (Jinja autoescape does it in the templates),
authentication, rate limiting (a proxy's job).
"""

from __future__ import annotations

from typing import Any

from flask import Flask, Response
from werkzeug.middleware.proxy_fix import ProxyFix

#: Each directive allows only the app's own origin; nothing inline, nothing framed.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "font-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)

SECURITY_HEADERS: dict[str, str] = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    # Share links carry ids; never leak them (or anything else) to other sites.
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
}


def add_security_headers(response: Response, hsts_seconds: int = 0) -> Response:
    """Set the headers on one response; a view that set its own value keeps it."""
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    if hsts_seconds > 0:
        response.headers.setdefault("Strict-Transport-Security", f"max-age={hsts_seconds}")
    return response


def init_app(app: Flask) -> None:
    """Register the header hook (runs for every response, errors included)."""
    hsts = int(app.config.get("SECURITY_HSTS_SECONDS", 0) or 0)

    @app.after_request
    def _headers(response: Response) -> Response:
        return add_security_headers(response, hsts)

    proxies = int(app.config.get("TRUSTED_PROXIES", 0) or 0)
    if proxies > 0:
        wsgi: Any = app.wsgi_app
        app.wsgi_app = ProxyFix(wsgi, x_for=proxies, x_proto=proxies, x_host=proxies, x_prefix=proxies)  # type: ignore[method-assign]
