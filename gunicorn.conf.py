"""gunicorn settings for `make serve-prod` (gunicorn -c gunicorn.conf.py wsgi:app).

Environment variables:
  BIND               address to listen on (default 127.0.0.1:8000; use
                     0.0.0.0:8000 behind a proxy on another host)
  WEB_CONCURRENCY    worker processes (default: 2 x CPU cores, at most 8)
  GUNICORN_THREADS   threads per worker (default 1: encoding is CPU-bound)
  GUNICORN_TIMEOUT   seconds before a stuck worker is restarted (default 60)
  ACCESS_LOG         access log file, "-" for stdout (default "-")
  PRESETS_PRELOAD    1 (default): the master opens and warms the prepared presets
                     before forking, shared by the workers; 0: each worker opens its own
"""

import multiprocessing
import os

bind = os.environ.get("BIND", "127.0.0.1:8000")
workers = int(os.environ.get("WEB_CONCURRENCY", min(2 * multiprocessing.cpu_count(), 8)))
threads = int(os.environ.get("GUNICORN_THREADS", "1"))
worker_class = "gthread" if threads > 1 else "sync"
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "60"))
graceful_timeout = 20
keepalive = 5
# Each worker builds its own app and database pool after the fork.
preload_app = False
accesslog = os.environ.get("ACCESS_LOG", "-")
errorlog = "-"
access_log_format = '%(h)s "%(r)s" %(s)s %(b)s %(M)sms "%(a)s"'
# gunicorn's control socket (gunicornc) would live at one fixed path per user and
# clash between instances; the playground does not use it.
control_socket_disable = True
# gunicorn's own bounds, the outermost ones: a longer request line is gunicorn's
# 414, more or longer header lines its 400 (its plain page, without the app's
# security headers). Every URL the app makes (share links, /bytes?...) stays far
# inside them, and the proxy in front should refuse at or below them
# (docs/production.md). Bodies are bounded by MAX_CONTENT_LENGTH in the app, chunked too.
limit_request_line = 8190
limit_request_fields = 100
limit_request_field_size = 8190
# Recycle workers now and then so a slow leak cannot grow without bound.
max_requests = 20000
max_requests_jitter = 2000


# The presets, opened and warmed once in the master before the workers are forked, so
# the workers share their memory (copy-on-write) instead of each building its own
# copy: about 820 MB per worker with every preset open (docs/limits.md, Every preset open).
# Only presets already prepared by `make setup` are opened (from their
# precompiled files, seconds in all); PRESETS_PRELOAD=0 turns it off.
PRESETS_PRELOAD = os.environ.get("PRESETS_PRELOAD", "1") != "0"


def when_ready(server):  # noqa: ANN001 - gunicorn's hook
    if not PRESETS_PRELOAD:
        return
    import gc
    from pathlib import Path

    from webapp.tokenizer import PRESET_NAMES, set_cache_dir
    from webapp.tokenizer.presets.catalog import is_installed, is_prepared
    from webapp.opened.store import warm_preset

    folder = Path(__file__).resolve().parent / "instance" / "presets"
    set_cache_dir(folder)
    opened = []
    for name in PRESET_NAMES:
        if is_installed(name) and is_prepared(folder, name):
            try:
                warm_preset(name)  # (opened, and what a first encode and trace build, built: shared by the workers)
            except Exception:  # noqa: BLE001 - never keep the server from starting: a worker opens it on use
                server.log.exception("preset %s could not be opened before the workers start", name)
                continue
            opened.append(name)
    gc.collect()
    gc.freeze()  # (the collector then never writes to these objects' headers, which would copy their pages)
    server.log.info("presets opened before the workers start: %s", ", ".join(opened) or "none")
