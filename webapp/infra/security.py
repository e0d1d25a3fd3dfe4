"""Security headers on every response, and trust in a reverse proxy when configured.

What it does not do: escaping (Jinja autoescape does it in the templates),
authentication, rate limiting (webapp.infra.ratelimit).

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from flask import Flask, Response, current_app, request
from werkzeug.middleware.proxy_fix import ProxyFix

from webapp.infra.errors import ApiError

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


SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def _host_of(url: str) -> str:
    try:
        return (urlsplit(url).netloc or "").lower()
    except ValueError:
        return ""


def _allowed_origin_hosts() -> set[str]:
    hosts = {request.host.lower()}
    public = str(current_app.config.get("PUBLIC_URL") or current_app.config.get("SHARE_BASE_URL") or "")
    if public:
        hosts.add(_host_of(public))
    for name in current_app.config.get("TRUSTED_HOSTS") or ():
        hosts.add(str(name).lower())
    return hosts


def _forbidden(reason: str) -> ApiError:
    return ApiError(f"origin: {reason}; a page of another site may not change anything here "
                    "(open the playground itself and try again)", field="origin", status=403,
                    page=("Refused: sent from another site", "A form on another site tried to send this "
                          "request. Open the playground itself and try again."))


def refuse_cross_site() -> None:
    """403 for a state-changing request a browser sends on behalf of another site (see the module doc)."""
    if request.method in SAFE_METHODS:
        return
    site = request.headers.get("Sec-Fetch-Site", "").lower()
    if site in ("cross-site", "same-site"):
        raise _forbidden(f"the browser says this request came from another site (Sec-Fetch-Site: {site})")
    origin = request.headers.get("Origin")
    if origin is None:
        return
    host = _host_of(origin) if origin != "null" else ""
    if not host:
        raise _forbidden("the request's Origin is opaque (null)")
    allowed = _allowed_origin_hosts()
    if host not in allowed and not any(name.startswith(".") and host.endswith(name) for name in allowed):
        raise _forbidden(f"the request's Origin {origin[:100]!r} is not this site")


def init_app(app: Flask) -> None:
    """Register the header hook (runs for every response, errors included) and the cross-site check."""
    hsts = int(app.config.get("SECURITY_HSTS_SECONDS", 0) or 0)
    app.before_request(refuse_cross_site)

    @app.after_request
    def _headers(response: Response) -> Response:
        return add_security_headers(response, hsts)

    proxies = int(app.config.get("TRUSTED_PROXIES", 0) or 0)
    if proxies > 0:
        wsgi: Any = app.wsgi_app
        # Never x_host / x_port / x_prefix: links and the trusted-host check follow the Host header.
        app.wsgi_app = ProxyFix(wsgi, x_for=proxies, x_proto=proxies, x_host=0, x_port=0,  # type: ignore[method-assign]
                                x_prefix=0)
