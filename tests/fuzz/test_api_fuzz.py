"""Property-based fuzz of every JSON API route: whatever arrives, the answer
is never a 500, and every 4xx from /api carries an error message.

The routes are read from the app's URL map, so a route added later is fuzzed
too. Bodies mix plausible shapes (the fields the endpoints take, with values
of the right and wrong types) with arbitrary JSON, raw bytes and hostile
values in every field: JSON nested past the depth limit, 5,000-digit numbers,
1e999, lone surrogates, long strings and lists, objects where strings belong,
and tokenizer files that are almost right.

FUZZ_EXAMPLES=N runs N examples per route instead of the quick default (the
benchmark mode: `FUZZ_EXAMPLES=1000 pytest tests/fuzz`); FUZZ_REPORT=path
appends one JSON line per route with the examples run and the 5xx seen.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from tests.conftest import make_app
from webapp.infra.storage import get_storage

EXAMPLES_PER_ROUTE = int(os.environ.get("FUZZ_EXAMPLES", "80"))

FIELDS = [
    "text", "merges", "vocab", "ids", "words", "num_merges", "pretokenize", "tool", "view",
    "tokenizer", "format", "content", "filename", "state", "id", "merges_txt", "level", "allowed_special", "skip_special_tokens",
]


#: The fields each known route takes, so most bodies get past "unknown field"
#: and reach the parsing and the engine; other routes get the whole pool.
ROUTE_FIELDS = {
    "/api/encode": ["text", "merges", "pretokenize"],
    "/api/decode": ["ids", "vocab"],
    "/api/encode-text": ["text", "vocab", "merges"],
    "/api/train": ["words", "num_merges"],
    "/api/share": ["tool", "text", "merges", "vocab", "ids", "words", "num_merges", "view", "pretokenize", "tokenizer"],
    "/api/import": ["content", "format", "merges_txt", "filename"],
    "/api/export": ["tokenizer", "merges", "vocab", "level", "words", "num_merges", "format", "pretokenize"],
    "/api/tokenizers/<tokenizer_id>/encode": ["text", "pretokenize", "allowed_special"],
    "/api/tokenizers/<tokenizer_id>/decode": ["ids", "skip_special_tokens"],
    "/api/tokenizers/<tokenizer_id>/chat": ["messages", "tools", "add_generation_prompt"],
    "/api/compare": ["text", "a", "b"],
}


class Raw:
    """JSON text put into a body as is (what json.dumps cannot write: 5,000-digit
    numbers, 1e999, lone surrogates as escapes, nesting past any limit)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"Raw({self.text[:40]!r}...)"


def dumps(value) -> str:
    """json.dumps (no spaces) that writes Raw fragments verbatim: each Raw is written as a marker string
    by one call of the C encoder, then the quoted markers are replaced (with a json.dumps per element,
    as before, this module took 33 s of CPU; 26 s so)."""
    marker = uuid.uuid4().hex
    raws: list[str] = []

    def stand_in(item: object) -> str:
        if not isinstance(item, Raw):
            raise TypeError(f"not JSON: {item!r}")
        raws.append(item.text)
        return f"{marker}{len(raws) - 1}"

    text = json.dumps(value, separators=(",", ":"), default=stand_in)
    return re.sub(f'"{marker}(\\d+)"', lambda found: raws[int(found.group(1))], text) if raws else text


def _deep(depth: int, inner: str = "1") -> Raw:
    return Raw("[" * depth + inner + "]" * depth)


#: Values no field expects: past limits, of odd types, nested, not text.
hostile = st.one_of(
    st.sampled_from([Raw("9" * 5000), Raw("-" + "9" * 4400), Raw("1e999"), Raw("-1e999"), Raw("1.5"), Raw("-0"),
                     Raw('"\\ud800"'), Raw('"a\\udfffb"'), Raw('["\\ud83d"]'), Raw('{"\\ud800": 1}'),
                     2**64, -(2**63) - 1, 10**30, True, False, None, {}, [], "", " ", "\x00", "\n" * 3]),
    st.integers(60, 140).map(_deep),
    st.integers(60, 140).map(lambda d: Raw('{"a":' * d + "1" + "}" * d)),
    st.integers(1, 20).map(lambda d: _deep(d, "[97, 97, 256]")),
    st.integers(1000, 40_000).map(lambda n: "a" * n),
    st.integers(1000, 20_000).map(lambda n: "9 " * n),
    st.integers(1000, 20_000).map(lambda n: "[" * n),
    st.integers(100, 3000).map(lambda n: list(range(n))),
    st.integers(100, 2000).map(lambda n: [[97, 97, 256]] * n),
    st.integers(2, 45).map(lambda n: [[97, 97, 256]] + [[255 + i, 255 + i, 256 + i] for i in range(1, n)]),
    st.integers(100, 2000).map(lambda n: {str(i): [97] * 3 for i in range(256, 256 + n)}),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=3),
)


def _tokenizer_file(draw) -> str:
    """A tokenizer file that is almost right: real shapes with hostile parts."""
    kind = draw(st.sampled_from(["valid", "minbpe", "hf", "tiktoken", "playground", "vocab"]))
    if kind == "valid":
        return "minbpe v1\n\n0\n" + "\n".join(draw(st.lists(st.sampled_from(["97 97", "256 97", "98 256"]), max_size=4)))
    odd = draw(st.one_of(hostile, any_json))
    if kind == "minbpe":
        lines = ["minbpe v1", "", draw(st.sampled_from(["0", "1", "9" * 5000, "x"]))]
        lines += draw(st.lists(st.sampled_from(["97 97", "256 97", "9" * 5000 + " 97", "97 ²", "a b", "", "<s> 5"]),
                               max_size=6))
        return "\n".join(lines)
    if kind == "hf":
        doc = {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}}
        where = draw(st.sampled_from(["added_tokens", "pre_tokenizer", "normalizer", "decoder", "model.vocab",
                                      "model.merges", "model.type", "pretokenizers", "model"]))
        if where == "pretokenizers":
            doc["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": odd}
        elif where.startswith("model."):
            doc["model"][where[6:]] = odd
        else:
            doc[where] = odd
        return dumps(doc)
    if kind == "tiktoken":
        return "\n".join(draw(st.lists(st.sampled_from(["YQ== 0", "Yg== 1", "YWI= 2", "YQ== " + "9" * 5000,
                                                         "!!! 3", "YWFh 4", "YQ==", ""]), max_size=6)))
    if kind == "playground":
        return dumps({"merges": odd, "vocab": draw(st.one_of(hostile, any_json))})
    return dumps({"a": 0, "b": odd})


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
    "format": st.sampled_from(["playground", "seed", "hf", "minbpe", "tiktoken", "auto", "", "x"]),
}
# A tokenizer spec of /api/compare: some of its fields, plausible or not.
_spec = st.dictionaries(
    st.sampled_from(["tokenizer", "merges", "pretokenize", "allowed_special"]),
    st.one_of(st.sampled_from(["gpt2", "nope", "", "all", "none"]), plausible["merges"], any_json),
    max_size=3,
)
plausible["a"] = plausible["b"] = st.one_of(_spec, st.fixed_dictionaries({"tokenizer": st.just("gpt2")}),
                                             st.fixed_dictionaries({"merges": plausible["merges"]}))


def _value(name: str):
    base = st.one_of(plausible[name], any_json) if name in plausible else any_json
    return st.one_of(base, hostile)


@st.composite
def bodies(draw, rule: str) -> tuple[bytes, str]:
    """A request body and its content type."""
    kind = draw(st.sampled_from(["fields", "fields", "fields", "plausible", "plausible", "hostile", "json", "bytes"]))
    if kind == "plausible" and rule in ROUTE_FIELDS:
        obj = {name: draw(plausible.get(name, texts)) for name in ROUTE_FIELDS[rule]}
        if "content" in obj:
            obj["content"] = _tokenizer_file(draw)
        return dumps(obj).encode("utf-8", "surrogatepass"), "application/json"
    if kind == "hostile":
        # every field the route takes, each one hostile or a real-looking file
        pool = ROUTE_FIELDS.get(rule, FIELDS)
        obj = {name: draw(hostile) for name in pool}
        if "content" in obj and draw(st.booleans()):
            obj["content"] = _tokenizer_file(draw)
        return dumps(draw(st.one_of(st.just(obj), st.just([obj]), st.just(_deep(70, dumps(obj)))))).encode(
            "utf-8", "surrogatepass"), "application/json"
    if kind in ("fields", "plausible"):
        pool = ROUTE_FIELDS.get(rule, FIELDS)
        names = draw(st.lists(st.sampled_from(pool), unique=True, max_size=len(pool)))
        obj = {name: draw(_value(name)) for name in names}
        if draw(st.integers(0, 5)) == 0:
            obj[draw(texts)] = draw(any_json)
        return dumps(obj).encode("utf-8", "surrogatepass"), "application/json"
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
    tokenizer = client.post("/api/import", json={"content": "minbpe v1\n\n0\n97 97\n"}).get_json()["tokenizer"]
    known = st.sampled_from([saved, tokenizer])

    @settings(
        max_examples=examples(EXAMPLES_PER_ROUTE),
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
        database=None,
    )
    @given(body=bodies(rule), path_value=st.one_of(path_values, known, known, known),
           query=st.dictionaries(st.sampled_from(FIELDS), st.one_of(texts, st.sampled_from(["9" * 5000, "x" * 3000])),
                                 max_size=2))
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

    try:
        run()
    finally:
        report = os.environ.get("FUZZ_REPORT")
        if report:
            with open(report, "a", encoding="utf-8") as out:
                out.write(json.dumps({"route": f"{method} {rule}", "examples": len(statuses),
                                      "5xx": sum(s >= 500 for s in statuses)}) + "\n")
    assert len(statuses) >= EXAMPLES_PER_ROUTE  # the fuzz really ran
