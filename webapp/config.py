"""The playground's settings: defaults, and how the environment overrides them.

`DEFAULT_CONFIG` holds every setting with its default (docs/limits.md and
docs/production.md explain them); `create_app` applies, in order, these
defaults, the instance folder's config.py, environment variables prefixed
with `PLAYGROUND_` (`env_overrides`), then the mapping a test passes in.
`apply_cache_budget` sets the worker-wide budget of the tokenizer caches.

What it does not do: read requests or build the app (webapp.create_app).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping
from webapp.tokenizer.caches import BUDGET_BYTES_PER_UNIT, LIST_BUDGET


#: The repository's root: templates/, static/ and node_modules/ are found from here.
PROJECT_ROOT = Path(__file__).resolve().parent.parent

DEFAULT_CONFIG: dict[str, Any] = {
    "SECRET_KEY": "dev-only-not-secret",
    # The session cookie holds only the cancel tokens of the jobs this browser started (webapp.jobs.tokens).
    "SESSION_COOKIE_SAMESITE": "Lax",
    # Limits a real tokenizer fits in; every one is reported by name when exceeded.
    "MAX_CONTENT_LENGTH": 32 * 1024 * 1024,
    # One multipart field (a pasted tokenizer file, the no-JavaScript page form):
    # Flask's default of 500 kB would refuse a pasted tokenizer.json.
    "MAX_FORM_MEMORY_SIZE": 32 * 1024 * 1024,
    "LIMIT_TEXT_CHARS": 1_000_000,
    # Wall time of one request's tokenizer-file regexes (and, on Counts and compare, of each
    # tokenizer's whole encode), shared by all its tokenizers (webapp.infra.timebudget);
    # well under gunicorn's 60 s timeout.
    "LIMIT_REQUEST_SECONDS": 10,
    "LIMIT_RULES": 300_000,
    # An opened tokenizer file's merges (import jobs; gemma3's tokenizer.json has 514,906).
    "LIMIT_FILE_RULES": 600_000,
    "LIMIT_VOCAB": 300_000,
    "LIMIT_IDS": 1_000_000,
    # Bytes decoding ids may give, added up from the tokens' sizes before anything is joined
    # (webapp.tokenizer.core.byte_decode; docs/limits.md): twice any text of LIMIT_TEXT_CHARS.
    "LIMIT_DECODE_BYTES": 8 * 1024 * 1024,
    "LIMIT_WORDS": 500_000,
    "LIMIT_NUM_MERGES": 50_000,
    # Bytes a merge list's tokens may stand for (one token / all of them): checked
    # as lengths before any vocab is built (webapp.tokenizer.core.token_sizes).
    "LIMIT_TOKEN_BYTES": 65_536,
    "LIMIT_VOCAB_BYTES": 8 * 1024 * 1024,
    # A text's UTF-8 bytes an explanation takes (webapp.web.explain; docs/explain.md).
    "LIMIT_EXPLAIN_BYTES": 65_536,
    # A parity check's texts and their UTF-8 bytes together (webapp.web.parity; docs/limits.md).
    "LIMIT_PARITY_TEXTS": 100,
    "LIMIT_PARITY_BYTES": 65_536,
    # How much of a result the pages render (the full ids stay available).
    "RENDER_MAX_TOKENS": 250,  # token spans per page (about a screenful): the rest are paged
    "TRACE_MAX_STEPS": 200,
    # Share links and the database (webapp.infra.storage / webapp.web.share.routes / webapp.infra.security).
    "DATABASE_URL": "",  # empty: $DATABASE_URL, else instance/playground.sqlite3
    "DATABASE_AUTO_MIGRATE": 1,
    "LIMIT_SHARE_BYTES": 4 * 1024 * 1024,
    # The request head, bounded by the app below gunicorn's limit_request_line /
    # limit_request_field_size (8190) and limit_request_fields (100), so gunicorn's
    # own header-less error pages are only ever for larger requests (webapp.infra.errors).
    "LIMIT_URL_BYTES": 8000,
    "LIMIT_HEADER_BYTES": 8000,
    "LIMIT_HEADER_FIELDS": 90,
    "LIMIT_BLOB_BYTES": 32 * 1024 * 1024,
    # Where the playground is reached (https://bpe.example.org): share links are built
    # on it, never on the request's Host header, and a cross-site check allows it.
    "PUBLIC_URL": "",
    "SHARE_BASE_URL": "",  # the older name of PUBLIC_URL for share links (PUBLIC_URL wins)
    # Host names the app answers (comma-separated in PLAYGROUND_TRUSTED_HOSTS; ".example.org"
    # takes its subdomains too); any other Host header is a 400. None: any host.
    "TRUSTED_HOSTS": None,
    # Proxies in front (nginx: 1): the client's address and the scheme are taken from
    # their X-Forwarded-For / X-Forwarded-Proto; the host and the path prefix never
    # (X-Forwarded-Host / -Prefix are a client's to forge; webapp.infra.security).
    "TRUSTED_PROXIES": 0,
    # Strict-Transport-Security max-age; None: a year when PUBLIC_URL is https, else none.
    # An https PUBLIC_URL also makes the session cookie Secure (https_settings below).
    "SECURITY_HSTS_SECONDS": None,
    # Writes (shares, jobs, uploads, opened files) per client address (webapp.infra.ratelimit):
    # "N/minute;M/hour" as the `limits` library reads it, "" for none; counted in
    # RATE_LIMIT_STORAGE_URL (empty: Redis when QUEUE_URL is Redis, else a SQLite file
    # beside the queue, shared by the processes of one machine; "memory://": per process).
    "RATE_LIMIT_WRITES": "20/minute;300/hour",
    "RATE_LIMIT_STORAGE_URL": "",
    # Inline compute (Counts, chat, encode, compare) per client address, charged as
    # characters x tokenizers before the work starts ("" for none; issue 28, row 6).
    "RATE_LIMIT_WORK": "30000000/minute;300000000/hour",
    # Background jobs (webapp.jobs.queue): the queue, the budgets of one job, and what
    # goes to a job instead of running inside the request (measured thresholds,
    # see docs/limits.md).
    "QUEUE_URL": "",  # empty: a SQLite file in instance/; redis://host:6379/0 for Redis
    "QUEUE_NAME": "bpe-playground",  # several playgrounds can share one Redis by name
    "JOB_WORKERS": 2,
    "JOB_TIME_SECONDS": 300,
    "JOB_MEMORY_MB": 2048,
    "JOB_NICE": 10,
    # A running job whose heartbeat (every 2 s) is this old lost its worker: the
    # upkeep (every JOB_UPKEEP_SECONDS, in each worker) queues it again, at most
    # JOB_MAX_ATTEMPTS claims in all; a job queued for JOB_EXPIRE_SECONDS fails
    # (0: never); upload folders no live job owns go after JOB_SPOOL_GRACE_SECONDS.
    "JOB_STALE_SECONDS": 30,
    "JOB_UPKEEP_SECONDS": 5,
    "JOB_MAX_ATTEMPTS": 3,
    "JOB_EXPIRE_SECONDS": 3600,
    "JOB_SPOOL_GRACE_SECONDS": 120,
    # What may wait or run at once (webapp.jobs.queue; 0: no cap), checked before an
    # upload is stored: per client address and in all, jobs and the bytes of their
    # uploads on disk; over one is a 429 with Retry-After: JOB_RETRY_AFTER_SECONDS.
    "JOB_CLIENT_LIMIT": 8,
    "JOB_QUEUE_LIMIT": 64,
    "JOB_CLIENT_UPLOAD_BYTES": 512 * 1024 * 1024,
    "JOB_UPLOAD_BYTES": 2 * 1024 * 1024 * 1024,
    "JOB_RETRY_AFTER_SECONDS": 30,
    "JOB_IMPORT_BYTES": 256 * 1024,
    "JOB_TRAIN_CHARS": 200_000,
    "JOB_TRAIN_MERGES": 2_000,
    "JOB_ENCODE_CHARS": 200_000,
    "JOB_ENCODE_RULES": 100_000,
    "JOB_CHARS_TEXT": 20_000,
    "JOB_CHARS_RULES": 20_000,
    # Counts (webapp.web.counts.kinds): characters x tokenizers over this is a job
    # (about 0.4 s inline at 0.75 us per character per preset; docs/limits.md).
    "JOB_COUNTS_WORK": 500_000,
    # The Vocabulary: a tokenizer with more tokens finds its unreachable tokens as a job (and
    # POST /api/unreachable takes at most this many typed rules): a list whose tokens need proofs
    # and witnesses took 0.5 s inline at 2,000 and 6-9 s at 20,000 (docs/limits.md).
    "JOB_VOCAB_TOKENS": 2_000,
    # Corpus training (webapp.web.corpus.routes): uploads in total, files, pasted text, distinct pre-tokens counted.
    "CORPUS_DIR": "",  # empty: instance/corpora; uploads wait there for their job (shared with remote workers)
    "LIMIT_CORPUS_BYTES": 256 * 1024 * 1024,
    "LIMIT_CORPUS_FILES": 20,
    "LIMIT_CORPUS_PASTE_BYTES": 16 * 1024 * 1024,
    "LIMIT_CORPUS_DISTINCT": 1_000_000,
    "LIMIT_CORPUS_HELD_OUT_CHARS": 1_000_000,
    # What the caches inside all compiled lists (segments, pre-tokens, chunks) may
    # hold together per worker (webapp.tokenizer.caches.LIST_BUDGET; docs/limits.md).
    "CACHE_BUDGET_MB": 400,
}


def env_overrides(prefix: str = "PLAYGROUND_") -> dict[str, Any]:
    """Settings from the environment: PLAYGROUND_LIMIT_RULES=1000 and so on."""
    overrides: dict[str, Any] = {}
    for name, raw in os.environ.items():
        if not name.startswith(prefix):
            continue
        key = name[len(prefix):]
        default = DEFAULT_CONFIG.get(key)
        overrides[key] = _number(raw) if isinstance(default, (int, float)) else raw
    return overrides


def _number(raw: str) -> int | float:
    """A numeric setting as given: "30" is 30, "0.5" is 0.5."""
    try:
        return int(raw)
    except ValueError:
        return float(raw)


def host_list(value: Any) -> list[str] | None:
    """TRUSTED_HOSTS as Flask takes it: a list of names, from a list or a comma-separated string."""
    if value is None or value == "":
        return None
    names = value.split(",") if isinstance(value, str) else list(value)
    return [str(name).strip() for name in names if str(name).strip()]


#: Strict-Transport-Security's max-age when PUBLIC_URL is https and SECURITY_HSTS_SECONDS is not set.
HSTS_DEFAULT_SECONDS = 365 * 24 * 3600


def public_url(config: Mapping[str, Any]) -> str:
    """PUBLIC_URL, or its older name SHARE_BASE_URL ("" when neither is set)."""
    return str(config.get("PUBLIC_URL") or config.get("SHARE_BASE_URL") or "")


def https_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """What an https PUBLIC_URL implies: Secure session cookies and an HSTS max-age
    (SECURITY_HSTS_SECONDS when set, 0 included; else a year under https, 0 otherwise)."""
    https = public_url(config).lower().startswith("https://")
    raw = config.get("SECURITY_HSTS_SECONDS")
    hsts = (HSTS_DEFAULT_SECONDS if https else 0) if raw is None or raw == "" else max(0, int(raw))
    out: dict[str, Any] = {"SECURITY_HSTS_SECONDS": hsts}
    if https:
        out["SESSION_COOKIE_SECURE"] = True
    return out


def secret_key_problem(instance_path: str | Path | None = None) -> str | None:
    """Why the SECRET_KEY the app would use is not fit for production (None when it is):
    the defaults, instance/config.py, then PLAYGROUND_SECRET_KEY, as create_app reads them."""
    key: Any = DEFAULT_CONFIG["SECRET_KEY"]
    pyfile = Path(instance_path or PROJECT_ROOT / "instance") / "config.py"
    if pyfile.is_file():
        namespace: dict[str, Any] = {}
        exec(compile(pyfile.read_text(encoding="utf-8"), str(pyfile), "exec"), namespace)  # as Flask's from_pyfile
        key = namespace.get("SECRET_KEY", key)
    key = os.environ.get("PLAYGROUND_SECRET_KEY", key)
    how = ("set PLAYGROUND_SECRET_KEY to a long random value, made for example with\n"
           "  python3 -c 'import secrets; print(secrets.token_hex(32))'\n"
           "and give every web process and job worker the same one (or set SECRET_KEY in instance/config.py)")
    if not key:
        return f"the SECRET_KEY is empty: {how}"
    if key == DEFAULT_CONFIG["SECRET_KEY"]:
        return f"the SECRET_KEY is the development key, which anyone can read in the source: {how}"
    return None


def apply_cache_budget(megabytes: int) -> None:
    """The worker-wide budget of the per-list caches, in their weight units (at the measured cost per unit)."""
    LIST_BUDGET.limit = max(0, megabytes) * 2**20 // BUDGET_BYTES_PER_UNIT
