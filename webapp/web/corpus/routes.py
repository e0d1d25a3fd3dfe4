"""The Corpus page and API: train a tokenizer on uploaded files as a background job.

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import secrets
import shutil
from pathlib import Path
from typing import Any, cast

from flask import Blueprint, Response, current_app, render_template, request, url_for
from werkzeug.datastructures import FileStorage, ImmutableMultiDict
from werkzeug.exceptions import RequestEntityTooLarge

from webapp.web.corpus.kinds import corpus_dir, submit_corpus
from webapp.infra import compound_inputs, inputs, ratelimit
from webapp.jobs import queue
from webapp.jobs import views as jobs
from webapp.jobs.registry import done_view
from webapp.web.common import train_views
from webapp.jobs.store import Job
from webapp.infra.errors import ApiError, not_found
from webapp.infra.body import read_json_object
from webapp.web.common.tools import PRETOKENIZE_CHOICES
from webapp.tokenizer import TokenizerError
from webapp.tokenizer.training.corpus import LEVELS, SCHEMES

bp = Blueprint("corpus", __name__)

STEPS_PER_PAGE = 100
#: The fields with an error slot of their own on the page (others show in "corpus").
PAGE_FIELDS = frozenset({"corpus", "text", "pretokenize", "level", "num_merges", "held_out"})
FORM_SLACK = 1024 * 1024  # room for the form's other fields and multipart headers
DEFAULT_STATE = {"text": "", "pretokenize": "gpt2", "level": "bytes", "num_merges": "1000", "held_out": ""}
#: The page's pre-tokenization choices: the app's (webapp.web.common.tools), "none" meaning whitespace-split words here.
SCHEME_CHOICES = tuple((s, "none (whitespace-split words)" if s == "none" else label)
                       for s, label in PRETOKENIZE_CHOICES if s in SCHEMES)


def _limits() -> inputs.Limits:
    return inputs.current_limits()


def _admit() -> None:
    """Before the body is read or stored: a 429 over the write rate (webapp.infra.ratelimit)
    or when a job holding this upload would go over the queue's caps (webapp.jobs.queue)."""
    ratelimit.check_write()
    queue.get_queue().admit(request.content_length or 0)


def _max_parts(limits: inputs.Limits) -> int:
    """Form parts parsed at most: room for far more files than the limit, so a
    few too many are counted and named (save_corpus), while thousands of tiny
    parts stop the parser early."""
    return limits.corpus_files * 5 + 50


def _apply_request_limits(limits: inputs.Limits) -> None:
    """Raise the body caps for this request only (before the body is read), then
    parse the form strictly (`_read_form`)."""
    request.max_content_length = limits.corpus_bytes + FORM_SLACK
    request.max_form_memory_size = limits.corpus_paste_bytes + FORM_SLACK
    request.max_form_parts = _max_parts(limits)
    _read_form()


def _read_form() -> None:
    """Parse the multipart body now and say what is wrong with it: werkzeug's
    own parsing is silent (a part it cannot read leaves an empty form, which
    would be reported as a missing field). A file name that is not UTF-8 is
    named as such."""
    if "form" in request.__dict__ or (request.mimetype or "") != "multipart/form-data":
        return
    parser = request.make_form_data_parser()
    parser.silent = False
    try:
        # (request.stream: nothing reads the body before the form is parsed here)
        data = parser.parse(request.stream, request.mimetype, request.content_length,
                            request.mimetype_params)
    except UnicodeDecodeError as exc:
        header = bytes(exc.object)[:200].decode("utf-8", "replace") if isinstance(exc.object, bytes) else ""
        name = "a file name" if "filename=" in header else "a form field's header"
        raise TokenizerError(f"files: {name} is not UTF-8 (byte 0x{bytes(exc.object)[exc.start]:02x} in "
                             f"{header[:120]!r}); rename the file with UTF-8 characters or upload it "
                             "from a browser", field="files") from None
    except ValueError as exc:
        raise TokenizerError(f"corpus: the upload is not a well-formed multipart form ({str(exc)[:120]})",
                             field="corpus") from None
    # werkzeug's cached properties take a set value, as its own form parsing leaves them; the parser
    # made the request's own (immutable) dict class, typed by werkzeug as its MultiDict base
    stream, form, files = data
    request.stream = stream
    request.form = cast("ImmutableMultiDict[str, str]", form)
    request.files = cast("ImmutableMultiDict[str, FileStorage]", files)


def _refused_body(limits: inputs.Limits) -> tuple[TokenizerError, int]:
    """What a RequestEntityTooLarge during parsing means, with its status: over
    the total bytes (413), or, for a body within them, too many form parts or a
    pasted text over its limit (400)."""
    length = request.content_length
    if length is None or length > limits.corpus_bytes + FORM_SLACK:
        return _too_large(limits), 413
    return TokenizerError(
        f"corpus: the form has more than {_max_parts(limits):,} parts or a pasted text over "
        f"{limits.corpus_paste_bytes:,} bytes: upload at most {limits.corpus_files:,} files "
        "(setting LIMIT_CORPUS_FILES; put many small texts in one file) and paste at most "
        f"{limits.corpus_paste_bytes:,} bytes (setting LIMIT_CORPUS_PASTE_BYTES)",
        field="corpus", location={"limit": limits.corpus_files}), 400


def _too_large(limits: inputs.Limits) -> TokenizerError:
    return TokenizerError(
        f"corpus: the upload is over the limit of {limits.corpus_bytes:,} bytes in total "
        f"(setting LIMIT_CORPUS_BYTES; pasted text up to {limits.corpus_paste_bytes:,} bytes, "
        "setting LIMIT_CORPUS_PASTE_BYTES)", field="corpus", location={"limit": limits.corpus_bytes})


def save_corpus(paste: str, limits: inputs.Limits) -> tuple[Path, list[dict[str, str]]]:
    """Stream the uploaded files and the pasted text into a new folder; (folder, [{name, file}])."""
    uploads = [u for u in request.files.getlist("files") if u.filename]
    if len(uploads) > limits.corpus_files:
        raise TokenizerError(f"corpus: {len(uploads):,} files is over the limit of {limits.corpus_files:,} files "
                             "(setting LIMIT_CORPUS_FILES)", field="corpus", location={"limit": limits.corpus_files})
    if len(paste.encode("utf-8", "surrogatepass")) > limits.corpus_paste_bytes:
        raise _too_large(limits)
    if not uploads and not paste:
        raise TokenizerError("corpus: upload at least one UTF-8 text file or paste some text", field="corpus")
    folder = corpus_dir(current_app.config, current_app.instance_path) / secrets.token_hex(12)
    folder.mkdir(parents=True)
    files: list[dict[str, str]] = []
    try:
        total = 0
        for index, upload in enumerate(uploads):
            target = folder / f"{index:03d}.txt"
            upload.save(target)  # a chunked copy from werkzeug's spooled temporary file
            total += target.stat().st_size
            files.append({"name": Path(upload.filename or f"file {index + 1}").name[:200], "file": target.name})
        if paste:
            try:
                (folder / "pasted.txt").write_bytes(paste.encode("utf-8"))
            except UnicodeEncodeError as exc:
                raise TokenizerError(f"text: character {exc.start + 1} is a lone surrogate, which UTF-8 cannot "
                                     "encode", field="text", location={"position": exc.start + 1}) from None
            files.append({"name": "pasted text", "file": "pasted.txt"})
            total += len(paste)
        if total > limits.corpus_bytes:
            raise _too_large(limits)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder, files


# --- pages ---------------------------------------------------------------------------------


def _page(state: dict[str, str], errors: dict[str, Any], job: Job | None = None) -> str:
    return render_template("corpus.html", title="Corpus", tool="corpus", state=state, errors=errors,
                           schemes=SCHEME_CHOICES, levels=LEVELS,
                           job_panel=jobs.render_panel(job, "corpus") if job else None,
                           job_id=job.id if job else None, limits=_limits())


@bp.get("/corpus")
def corpus_page() -> str:
    return _page(dict(DEFAULT_STATE), {})


@bp.post("/corpus")
def corpus_submit() -> Any:
    limits = _limits()
    _admit()
    state = dict(DEFAULT_STATE)
    try:
        _apply_request_limits(limits)
        form = request.form
        state.update({k: inputs.normalize_newlines(form.get(k, "")) for k in DEFAULT_STATE if k in form})
        options, errors = compound_inputs.read_corpus_options(state, limits)
        if options is not None:
            folder, files = save_corpus(state["text"], limits)
            job = submit_corpus(folder, files, options, limits)
            if request.headers.get("HX-Request"):
                return jobs.render_panel(job, "corpus")
            return _page(state, {}, job)
    except RequestEntityTooLarge:
        errors = {"corpus": _refused_body(limits)[0]}
    except TokenizerError as exc:
        # the files and the pasted text share the form's "corpus" slot
        errors = {exc.field if exc.field in PAGE_FIELDS else "corpus": exc}
    if request.headers.get("HX-Request"):
        return render_template("partials/corpus_errors.html", errors=errors)
    # the storage's own status (a 503 while it is unavailable), the page and what was typed kept
    status = max([int(getattr(e, "http_status", 200) or 200) for e in errors.values()] or [200])
    return _page(state, errors), status


@bp.get("/corpus/jobs/<job_id>")
def corpus_result_page(job_id: str) -> Any:
    job_queue = queue.get_queue()
    job = job_queue.store.get(job_id)
    if job is None or job.kind != "corpus":
        raise not_found(f"job: no corpus job {job_id[:40]!r}", field="job",
                        page=("Not found", "There is no corpus training job with this id."))
    result = job_queue.store.result(job) if job.state == "done" else None
    view = None
    if result is not None:
        view = train_views.corpus_result(result, job.id, _page_number(), STEPS_PER_PAGE, url_for=url_for)
    return render_template("corpus_result.html", title="Corpus training", tool="corpus", job=job, result=view,
                           job_panel=None if result is not None else jobs.render_panel(job, "corpus"))


def _page_number() -> int:
    raw = request.args.get("page", "1")
    return int(raw) if raw.isascii() and raw.isdigit() and 0 < len(raw) < 8 else 1


@done_view("corpus", kinds=("corpus",))
def _done(job: Job, result: Any, params: dict[str, Any]) -> str:
    """What replaces the panel when the job is done: the headline and a link to the results page."""
    return render_template("partials/corpus_done.html", job=job, result=result,
                           url=url_for("corpus.corpus_result_page", job_id=job.id))


# --- the JSON API ----------------------------------------------------------------------------


@bp.post("/api/corpus")
def api_corpus() -> Response:
    """Submit a corpus job from JSON or multipart; problems go to the app-wide handlers (webapp.infra.errors)."""
    limits = _limits()
    _admit()
    try:
        if (request.mimetype or "") == "multipart/form-data":
            _apply_request_limits(limits)
            values: dict[str, Any] = dict(request.form)
        else:
            values = read_json_object(("text", "pretokenize", "level", "num_merges", "held_out"), ())
        paste = values.get("text") or ""
        if not isinstance(paste, str):
            raise ApiError("text: expected a string", field="text")
        options, errors = compound_inputs.read_corpus_options(values, limits)
        if options is None:
            raise next(iter(errors.values()))
        folder, files = save_corpus(paste, limits)
    except RequestEntityTooLarge:
        refused, status = _refused_body(limits)
        raise ApiError.from_tokenizer(refused, status=status) from None
    except TokenizerError as exc:
        status = 413 if "LIMIT_CORPUS_BYTES" in exc.message else 400
        raise ApiError.from_tokenizer(exc, status=status) from None
    return jobs.accepted(submit_corpus(folder, files, options, limits))
