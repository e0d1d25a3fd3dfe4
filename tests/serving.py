"""Serve a Flask app on loopback from a thread, for the browser tests."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

from flask import Flask
from werkzeug.serving import make_server

from webapp.infra.storage import get_storage


@contextmanager
def serve_app(app: Flask, name: str = "test-server") -> Iterator[str]:
    """Serve `app` on 127.0.0.1 with a free port from a thread; yields its base URL."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name=name, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=5)
        get_storage(app).dispose()
