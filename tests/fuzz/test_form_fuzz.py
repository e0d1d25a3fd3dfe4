"""Property-based fuzz of every form route (the pages, their htmx fragments,
the Share button, the tokenizer-file controls): whatever fields arrive, with
or without htmx, as valid or invalid UTF-8, the answer is never a 500."""

from __future__ import annotations

import json
import os
import re
import tempfile
from urllib.parse import quote_from_bytes

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from tests.conftest import make_app
from webapp.infra.storage import get_storage

EXAMPLES_PER_ROUTE = int(os.environ.get("FUZZ_EXAMPLES", "40"))  # FUZZ_EXAMPLES: see test_api_fuzz.py
FIELDS = ["text", "merges", "vocab", "ids", "words", "num_merges", "view", "pretokenize", "tool",
          "tokenizer", "action", "format", "example"]


def _form_routes() -> list[str]:
    with tempfile.TemporaryDirectory() as folder:
        app = make_app(folder)
        routes = sorted(
            rule.rule
            for rule in app.url_map.iter_rules()
            if "POST" in (rule.methods or ()) and not rule.rule.startswith("/api/")
        )
        get_storage(app).dispose()
    return routes


ROUTES = _form_routes()

typed = st.one_of(
    st.text(max_size=40),
    st.text(alphabet="0123456789 \n,[]{}\":ab-", max_size=60),
    st.sampled_from(["108 111 256", "l o", '[[108,111,256]]', '{"256": [108, 111]}', "257 97", "tokens", "trace", "ids",
                     "gpt2", "none", "bytes", "chars", "train", "1000000000", "-1", "9" * 5000]),
    # hostile: nested past any limit, exponential merges, long values, lone surrogates
    st.integers(60, 3000).map(lambda d: "[" * d + "]" * d),
    st.integers(2, 45).map(lambda n: json.dumps([[97, 97, 256]] + [[255 + i, 255 + i, 256 + i] for i in range(1, n)])),
    st.integers(1000, 30_000).map(lambda n: "ab " * n),
    st.sampled_from(["\ud800", "a\udfffb", "1e999", "NaN", '{"256": ' + "[" * 100 + "]" * 100 + "}"]),
)
raw_value = st.one_of(typed.map(lambda s: s.encode("utf-8", "surrogatepass")), st.binary(max_size=40))


@st.composite
def form_bodies(draw) -> bytes:
    names = draw(st.lists(st.sampled_from(FIELDS), unique=True, max_size=6))
    pairs = [(name.encode(), draw(raw_value)) for name in names]
    return b"&".join(quote_from_bytes(k).encode() + b"=" + quote_from_bytes(v).encode() for k, v in pairs)


@pytest.fixture(scope="module")
def fuzz_app(tmp_path_factory):
    app = make_app(tmp_path_factory.mktemp("formfuzz"))
    yield app
    get_storage(app).dispose()


def test_the_form_routes_are_found():
    for expected in ("/bytes", "/chars", "/train", "/share", "/fragments/<tool>"):
        assert expected in ROUTES


@pytest.mark.parametrize("rule", ROUTES)
def test_form_route_never_answers_500(fuzz_app, rule):
    client = fuzz_app.test_client()
    seen: list[int] = []

    @settings(max_examples=examples(EXAMPLES_PER_ROUTE), deadline=None, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(body=form_bodies(), htmx=st.booleans(),
           tool=st.one_of(st.sampled_from(["bytes", "chars", "train"]), st.text(alphabet="abcxyz.%", min_size=1, max_size=8)))
    def run(body, htmx, tool):
        path = re.sub(r"<[^>]+>", tool, rule)
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        if htmx:
            headers["HX-Request"] = "true"
        response = client.post(path, data=body, headers=headers)
        seen.append(response.status_code)
        assert response.status_code < 500, (path, body[:200], response.get_data()[:300])

    try:
        run()
    finally:
        report = os.environ.get("FUZZ_REPORT")
        if report:
            with open(report, "a", encoding="utf-8") as out:
                out.write(json.dumps({"route": f"POST {rule}", "examples": len(seen),
                                      "5xx": sum(s >= 500 for s in seen)}) + "\n")
    assert len(seen) >= EXAMPLES_PER_ROUTE
