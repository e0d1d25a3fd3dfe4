"""The WSGI entry point for production servers: `gunicorn -c gunicorn.conf.py wsgi:app`.

Each gunicorn worker imports this module and builds its own app (no preload),
so every worker opens its own database connections. Settings come from the
environment (PLAYGROUND_SECRET_KEY, PLAYGROUND_DATABASE_URL or DATABASE_URL,
PLAYGROUND_LIMIT_*, ...), see webapp.create_app.
"""

from __future__ import annotations

import logging

from webapp import DEFAULT_CONFIG, create_app

app = create_app()

if app.config["SECRET_KEY"] == DEFAULT_CONFIG["SECRET_KEY"]:
    logging.getLogger("gunicorn.error").warning(
        "PLAYGROUND_SECRET_KEY is not set: using the development key. "
        "Set a long random PLAYGROUND_SECRET_KEY in production."
    )
