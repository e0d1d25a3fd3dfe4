"""Cancel tokens: only the client that submitted a job may cancel it; anyone with its id may look.

What it does not do: decide anything else about jobs (webapp.jobs.views asks
`may_cancel` before cancelling).

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from flask import g, has_request_context, request, session

from webapp.jobs.store import Job
from webapp.tokenizer import load_json
from webapp.tokenizer.textformats import JsonProblem

#: The session keeps the tokens of this many newest jobs (the cookie stays small).
SESSION_JOBS = 16
SESSION_KEY = "job_tokens"
HEADER = "X-Cancel-Token"
FIELD = "cancel_token"


def new_token() -> tuple[str, str]:
    """(token, its hash): the token goes to the submitter, the hash to the job row."""
    token = secrets.token_urlsafe(18)
    return token, token_hash(token)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def remember(job_id: str, token: str) -> None:
    """Hand a new job's token to the submitting request: its answer and its session."""
    if not has_request_context():
        return
    issued: dict[str, str] = g.setdefault("job_tokens", {})
    issued[job_id] = token
    kept = dict(session.get(SESSION_KEY) or {})
    kept.pop(job_id, None)
    kept[job_id] = token
    session[SESSION_KEY] = dict(list(kept.items())[-SESSION_JOBS:])


def issued(job_id: str) -> str | None:
    """The token this very request was given for a job it created (for the 202 answer)."""
    if not has_request_context():
        return None
    tokens: dict[str, str] = g.get("job_tokens") or {}
    return tokens.get(job_id)


def _offered(job_id: str) -> list[str]:
    """Every token this request carries for the job: header, form or JSON field, session."""
    offered = [request.headers.get(HEADER, ""), request.form.get(FIELD, "") if request.form else ""]
    if request.is_json:
        try:
            body = load_json(request.get_data(cache=True))  # (the one reader: a deep body is no RecursionError)
        except JsonProblem:
            body = None
        if isinstance(body, dict) and isinstance(body.get(FIELD), str):
            offered.append(body[FIELD])
    offered.append(str((session.get(SESSION_KEY) or {}).get(job_id, "")))
    offered.append(issued(job_id) or "")
    return [token for token in offered if token]


def may_cancel(job: Job) -> bool:
    """Whether this request carries the job's cancel token (a job stored before
    tokens existed has none: anyone may cancel it, as before)."""
    if job.cancel_hash is None:
        return True
    if not has_request_context():
        return False
    return any(hmac.compare_digest(token_hash(token), job.cancel_hash) for token in _offered(job.id))
