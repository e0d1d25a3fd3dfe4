"""The features: one blueprint package each, registered here in one place.

`init_app` runs the lower layers' hooks (errors, body bounds, security
headers, storage, memory, opened tokenizers, the job queue) and registers
every blueprint. Which features may use which: docs/architecture.md.
What it does not do: settings (webapp.config).
"""

from __future__ import annotations

from pathlib import Path

from flask import Flask

from webapp.infra import body, errors, memory, ratelimit, security, storage, timebudget
from webapp.jobs import queue, views as job_views
from webapp.opened import store as tokenizer_store
from webapp.web.api import routes as api
from webapp.web.chat import routes as chat
from webapp.web.compare import routes as compare
from webapp.web.counts import routes as counts
from webapp.web.corpus import routes as corpus
from webapp.web.explain import routes as explain
from webapp.web.files import routes as files
from webapp.web.languages import routes as languages
from webapp.web.parity import routes as parity
from webapp.web.ops import health, kinds as ops_kinds, vendor
from webapp.web.playground import pages
from webapp.web.presets import routes as presets
from webapp.web.prompt import routes as prompt
from webapp.web.share import routes as share
from webapp.web.vocab import routes as vocab

FEATURE_BLUEPRINTS = (health.bp, share.bp, vendor.bp, pages.bp, api.bp, files.bp, presets.bp, compare.bp, corpus.bp,
                      chat.bp, counts.bp, vocab.bp, languages.bp, job_views.bp,
                      explain.bp, prompt.bp, parity.bp)
#: Job kinds that no route submits (the tests and the load benchmark submit "sleep" from code);
#: every other kind is registered by the feature module that submits it.
UNROUTED_KINDS = (ops_kinds.run_sleep,)


def new_app(import_name: str, templates: Path, static: Path) -> Flask:
    """The bare app `webapp.create_app` configures (made here: the package's __init__ imports no Flask)."""
    return Flask(import_name, instance_relative_config=True, template_folder=str(templates),
                 static_folder=str(static))


def init_app(app: Flask) -> None:
    """The hooks of the layers below (no routes), then every feature's blueprint."""
    for module in (errors, body, security, storage, ratelimit, timebudget, memory, tokenizer_store, queue):
        module.init_app(app)
    for blueprint in FEATURE_BLUEPRINTS:
        app.register_blueprint(blueprint)
