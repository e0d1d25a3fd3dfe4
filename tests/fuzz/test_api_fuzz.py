"""Property-based fuzz of every JSON API route: whatever arrives, the answer
is never a 500, and every 4xx from /api carries an error message.

The routes are read from the app's URL map, so a route added later is fuzzed
too. Bodies mix plausible shapes (the fields the endpoints take, with values
of the right and wrong types) with arbitrary JSON and raw bytes.
"""

from __future__ import annotations

import json
import re
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import make_app
from webapp.storage import get_storage

EXAMPLES_PER_ROUTE = 80

FIELDS = [
    "text", "merges", "vocab", "ids", "words", "num_merges", "pretokenize", "tool", "view",
    "tokenizer", "format", "content", "filename", "state", "id",
]


#: The fields each known route takes, so most bodies get past "unknown field"
#: and reach the parsing and the engine; other routes get the whole pool.
ROUTE_FIELDS = {
    "/api/encode": ["text", "merges", "pretokenize"],
    "/api/decode": ["ids", "vocab"],
    "/api/encode-text": ["text", "vocab", "merges"],
    "/api/train": ["words", "num_merges"],
    "/api/share": ["tool", "text", "merges", "vocab", "ids", "words", "num_merges", "view"],
}


def _api_routes() -> list[tuple[str, str]]:
    with tempfile.TemporaryDirectory() as folder:
        app = make_app(folder)
        routes = sorted(
            {
                (method, rule.rule)
                for rule in app.url_map.iter_rules()
                if rule.rule.startswith("/api/")
                for method in rule.methods or ()
                if method not in ("HEAD", "OPTIONS")
            }
        )
        get_storage(app).dispose()
    return routes


ROUTES = _api_routes()

small_ints = st.integers(min_value=-3, max_value=400)
any_ints = st.one_of(small_ints, st.integers(), st.sampled_from([2**63, -(2**63), 10**30]))
texts = st.text(max_size=40)
json_scalars = st.one_of(st.none(), st.booleans(), any_ints, st.floats(allow_nan=False), texts)
any_json = st.recursive(
    json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(texts, inner, max_size=5)),
    max_leaves=20,
)
plausible = {
    "text": st.one_of(texts, st.text(alphabet="ab \n", max_size=60)),
    "merges": st.one_of(
        st.lists(st.lists(small_ints, min_size=2, max_size=4), max_size=12),
        st.lists(st.lists(st.text(alphabet="ab", max_size=3), min_size=1, max_size=3), max_size=8),
        st.text(alphabet="0123456789 ab\n[],\"", max_size=60),
    ),
    "vocab": st.one_of(
        st.dictionaries(st.integers(0, 400).map(str), st.lists(small_ints, max_size=4), max_size=8),
        st.dictionaries(st.text(alphabet="ab", max_size=3), small_ints, max_size=8),
        st.text(max_size=40),
    ),
    "ids": st.one_of(st.lists(small_ints, max_size=20), st.text(alphabet="0123456789 ,-", max_size=40)),
    "words": st.one_of(st.lists(st.text(alphabet="abc", max_size=6), max_size=10), texts),
    "num_merges": st.one_of(st.integers(-2, 30), st.text(alphabet="0123456789-e.", max_size=6)),
    "pretokenize": st.sampled_from(["none", "gpt2", "cl100k", "", "other"]),
    "tool": st.sampled_from(["bytes", "chars", "train", "", "x"]),
    "format": st.sampled_from(["seed", "hf", "minbpe", "tiktoken", "auto", "", "x"]),
}


def _value(name: str):
    return st.one_of(plausible.get(name, any_json), any_json) if name in plausible else any_json


@st.composite
def bodies(draw, rule: str) -> tuple[bytes, str]:
    """A request body and its content type."""
    kind = draw(st.sampled_from(["fields", "fields", "fields", "plausible", "plausible", "json", "bytes"]))
    if kind == "plausible" and rule in ROUTE_FIELDS:
        obj = {name: draw(plausible.get(name, texts)) for name in ROUTE_FIELDS[rule]}
        return json.dumps(obj).encode(), "application/json"
    if kind in ("fields", "plausible"):
        pool = ROUTE_FIELDS.get(rule, FIELDS)
        names = draw(st.lists(st.sampled_from(pool), unique=True, max_size=len(pool)))
        obj = {name: draw(_value(name)) for name in names}
        if draw(st.integers(0, 5)) == 0:
            obj[draw(texts)] = draw(any_json)
        return json.dumps(obj).encode(), "application/json"
    if kind == "json":
        return json.dumps(draw(any_json)).encode(), draw(st.sampled_from(["application/json", "text/plain"]))
    return draw(st.binary(max_size=200)), draw(
        st.sampled_from(["application/json", "application/x-www-form-urlencoded", "multipart/form-data", ""])
    )


path_values = st.one_of(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz234567", min_size=16, max_size=16),
    st.text(min_size=1, max_size=30).filter(lambda s: "/" not in s and "?" not in s and "#" not in s),
)


@pytest.fixture(scope="module")
def fuzz_app(tmp_path_factory):
    app = make_app(tmp_path_factory.mktemp("fuzz"))
    yield app
    get_storage(app).dispose()


def test_every_api_route_is_fuzzed():
    paths = {path for _method, path in ROUTES}
    for expected in ("/api/encode", "/api/decode", "/api/encode-text", "/api/train", "/api/share", "/api/share/<share_id>"):
        assert expected in paths


@pytest.mark.parametrize("method, rule", ROUTES, ids=[f"{m} {r}" for m, r in ROUTES])
def test_api_route_never_answers_500(fuzz_app, method, rule):
    client = fuzz_app.test_client()
    statuses: list[int] = []
    saved = client.post("/api/share", json={"tool": "bytes", "text": "fuzz", "merges": "[]"}).get_json()["id"]

    @settings(
        max_examples=EXAMPLES_PER_ROUTE,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        database=None,
    )
    @given(body=bodies(rule), path_value=st.one_of(path_values, st.just(saved)), query=st.dictionaries(st.sampled_from(FIELDS), texts, max_size=2))
    def run(body, path_value, query):
        path = re.sub(r"<[^>]+>", lambda _m: path_value, rule)
        data, content_type = body
        headers = {"Content-Type": content_type} if content_type else {}
        response = client.open(path, method=method, data=data if method != "GET" else None,
                               headers=headers, query_string=query)
        statuses.append(response.status_code)
        assert response.status_code < 500, (method, path, data[:200], response.get_data()[:300])
        if 400 <= response.status_code < 500 and response.is_json:
            assert response.get_json()["error"]["message"]

    run()
    assert len(statuses) >= EXAMPLES_PER_ROUTE  # the fuzz really ran
