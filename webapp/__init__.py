"""The BPE Playground web application.

`create_app()` builds the Flask app: the settings (webapp.config), then the
layers from the bottom up: the infrastructure hooks (webapp.infra), the
opened-tokenizer service (webapp.opened), the job queue (webapp.jobs),
and the features' blueprints (webapp.web). The tokenizer itself lives in
`webapp.tokenizer` and knows nothing of Flask. docs/architecture.md draws the
layers and the path of one request.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from webapp.config import DEFAULT_CONFIG, PROJECT_ROOT, apply_cache_budget, env_overrides, host_list, https_settings

if TYPE_CHECKING:
    from flask import Flask

__all__ = ["DEFAULT_CONFIG", "PROJECT_ROOT", "create_app"]


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """Application factory: `flask --app webapp run`, the worker and the tests call this."""
    # The one import here, not at the top: `from webapp.tokenizer import get_encoding` runs this package's
    # __init__ first, and a script using only the tokenizer must load neither Flask nor the views (webapp.web
    # imports both, and makes the bare app).
    from webapp import web

    app = web.new_app(__name__, PROJECT_ROOT / "templates", PROJECT_ROOT / "static")
    app.config.from_mapping(DEFAULT_CONFIG)
    app.config.from_pyfile("config.py", silent=True)
    app.config.update(env_overrides())
    if config:
        app.config.update(config)
    app.config["TRUSTED_HOSTS"] = host_list(app.config.get("TRUSTED_HOSTS"))
    app.config.update(https_settings(app.config))
    Path(app.instance_path).mkdir(parents=True, exist_ok=True)
    apply_cache_budget(int(app.config["CACHE_BUDGET_MB"]))
    web.init_app(app)
    return app
