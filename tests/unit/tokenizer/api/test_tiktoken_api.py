"""The tiktoken-style API (webapp.tokenizer.api) against tiktoken 0.14.0 itself.

The oracle is a real `tiktoken.Encoding` built by tiktoken's own
`tiktoken_ext.openai_public` constructors, with their rank-file loaders
handed our checked ranks (nothing is downloaded; the patterns, special
tokens and names are tiktoken's). Every call is made on both sides and the
outcomes compared: the same result, or an exception of the same type
(ours may be a subclass, e.g. a TypeError that is also the AssertionError
tiktoken raises).
"""

from __future__ import annotations

import pickle
import unicodedata
from functools import lru_cache
from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from webapp.tokenizer import Encoding, encoding_for_model, get_encoding, get_tokenizer, list_encoding_names
from webapp.tokenizer.presets import openai as presets
from webapp.tokenizer.api import registry as tiktoken_api
from webapp.tokenizer.pretokenize.textencode import clear_text_caches, encode_split, encode_split_batch

tiktoken = pytest.importorskip("tiktoken")
openai_public = pytest.importorskip("tiktoken_ext.openai_public")
tiktoken_model = pytest.importorskip("tiktoken.model")

NAMES = ("gpt2", "r50k_base", "p50k_base", "p50k_edit", "cl100k_base", "o200k_base", "o200k_harmony")


@lru_cache(maxsize=None)
def oracle(name: str) -> Any:
    """tiktoken's own encoding `name`, its rank files replaced by our checked ranks (by their hash)."""
    by_hash = {preset.sha256: preset.name for preset in presets.PRESETS.values()}

    def ranks_by_hash(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        return dict(presets.load_ranks(by_hash[expected_hash or ""]))

    def gpt2_ranks(**_: Any) -> dict[bytes, int]:
        return dict(presets.load_ranks("r50k_base"))  # gpt2's data-gym files hold r50k_base's ranks

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(openai_public, "load_tiktoken_bpe", ranks_by_hash)
        patch.setattr(openai_public, "data_gym_to_mergeable_bpe_ranks", gpt2_ranks)
        return tiktoken.Encoding(**openai_public.ENCODING_CONSTRUCTORS[name]())


def outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    """("ok", comparable result) or ("error", the exception)."""
    try:
        result = call()
    except Exception as exc:  # noqa: BLE001 - the type is what is compared
        return "error", exc
    if isinstance(result, np.ndarray):
        return "ok", (str(result.dtype), result.tolist())
    return "ok", result


class Fresh:
    """An argument made anew for each side (an iterator would be used up by the first call)."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make

    def __repr__(self) -> str:
        return repr(self.make())


def _fresh(value: Any) -> Any:
    return value.make() if isinstance(value, Fresh) else value


def assert_same(ours: Any, theirs: Any, method: str, *args: Any, **kwargs: Any) -> None:
    mine = outcome(lambda: getattr(ours, method)(*map(_fresh, args), **kwargs))
    expected = outcome(lambda: getattr(theirs, method)(*map(_fresh, args), **kwargs))
    where = f"{method}{args!r:.120}{kwargs!r:.80}"
    if expected[0] == "error":
        assert mine[0] == "error", f"{where}: tiktoken raised {expected[1]!r}, we returned {mine[1]!r:.200}"
        assert isinstance(mine[1], type(expected[1])), f"{where}: {mine[1]!r} is not a {type(expected[1]).__name__}"
    else:
        assert mine == expected, where


ENGLISH = "The quick brown fox. It's 3:45pm, we've 1,234,567 things; don't panic!  \n\n  x\ty"
MIXED = "Zürich 東京 русский 😀👩‍👩‍👧 e\u0301 naïve — straße\u00a0end  "
SURROGATES = ["\ud83d", "a\udc00b", "\ud83d\ude00", "x\ud800\ud800y", "<|endoftext|>\ud83d"]
SPECIAL_TEXTS = [
    "a<|endoftext|>b",
    "<|endoftext|><|endofprompt|> <|fim_prefix|>x<|fim_middle|>y<|fim_suffix|>",
    "<|start|>user<|message|>hi<|end|><|reserved_200018|><|startoftext|><|return|>",
    "<|endoftext <|endoftext|",
]
TEXTS = ["", "hello", ENGLISH, MIXED, *SURROGATES, *SPECIAL_TEXTS]


@pytest.fixture(scope="module", params=NAMES)
def pair(request: pytest.FixtureRequest) -> tuple[Encoding, Any]:
    return get_encoding(request.param), oracle(request.param)


def test_attributes_match(pair):
    ours, theirs = pair
    assert ours.name == theirs.name
    assert repr(ours) == repr(theirs)
    assert (ours.n_vocab, ours.max_token_value) == (theirs.n_vocab, theirs.max_token_value)
    assert ours.special_tokens_set == theirs.special_tokens_set
    assert ours._special_tokens == theirs._special_tokens
    assert ours.eot_token == theirs.eot_token
    assert ours.token_byte_values() == theirs.token_byte_values()
    for token in (0, theirs.eot_token, theirs.max_token_value, 5):
        assert_same(ours, theirs, "is_special_token", token)
    assert_same(ours, theirs, "is_special_token", "5")


def test_encode_matches(pair):
    ours, theirs = pair
    for text in TEXTS:
        assert_same(ours, theirs, "encode", text)
        assert_same(ours, theirs, "encode_ordinary", text)
        assert_same(ours, theirs, "encode", text, allowed_special="all")
        assert_same(ours, theirs, "encode", text, disallowed_special=())
        assert_same(ours, theirs, "encode", text, allowed_special={"<|endoftext|>"}, disallowed_special=())
        assert_same(ours, theirs, "encode", text, allowed_special=frozenset({"<|endofprompt|>", "<|nope|>"}))
        assert_same(ours, theirs, "encode", text, disallowed_special={"<|endoftext|>"})
        assert_same(ours, theirs, "encode", text, disallowed_special={"o", "<|"})
        assert_same(ours, theirs, "encode_to_numpy", text, allowed_special="all")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"allowed_special": ["<|endoftext|>"]},
        {"allowed_special": ["<|endoftext|>"], "disallowed_special": ()},
        {"allowed_special": "<|endoftext|>"},
        {"allowed_special": None},
        {"allowed_special": {1}},
        {"allowed_special": {"<|endoftext|>": 1}.keys()},
        {"disallowed_special": "<|endoftext|>"},
        {"disallowed_special": None},
        {"disallowed_special": {""}},
        {"disallowed_special": 5},
        {"disallowed_special": {5}},
        {"disallowed_special": ["<|endoftext|>"]},
    ],
)
def test_bad_special_arguments_raise_alike(kwargs):
    ours, theirs = get_encoding("cl100k_base"), oracle("cl100k_base")
    for text in ("plain", "x<|endoftext|>", "hello <"):
        assert_same(ours, theirs, "encode", text, **kwargs)
    assert_same(ours, theirs, "encode_batch", ["plain", "x<|endoftext|>"], **kwargs)


def test_text_of_the_wrong_type_is_a_type_error():
    ours, theirs = get_encoding("r50k_base"), oracle("r50k_base")
    for bad in (b"abc", None, 5):
        assert_same(ours, theirs, "encode", bad)
        assert_same(ours, theirs, "encode", bad, disallowed_special=())
        assert_same(ours, theirs, "encode_ordinary", bad)


def test_batches_match(pair):
    ours, theirs = pair
    plain = [text for text in TEXTS if "<|" not in text]
    assert_same(ours, theirs, "encode_batch", plain)
    assert_same(ours, theirs, "encode_batch", TEXTS)  # a special token's text: ValueError
    assert_same(ours, theirs, "encode_batch", TEXTS, allowed_special="all")
    assert_same(ours, theirs, "encode_batch", TEXTS, disallowed_special=(), num_threads=2)
    assert_same(ours, theirs, "encode_batch", "abc")  # a str is a batch of its characters, as in tiktoken
    assert_same(ours, theirs, "encode_ordinary_batch", TEXTS)
    assert_same(ours, theirs, "encode_ordinary_batch", [])
    ids = theirs.encode_batch(TEXTS, allowed_special="all")
    assert_same(ours, theirs, "decode_batch", ids)
    assert_same(ours, theirs, "decode_batch", ids, errors="strict")
    assert_same(ours, theirs, "decode_bytes_batch", ids)
    assert_same(ours, theirs, "encode_ordinary_batch", plain, num_threads=0)


def test_batch_equals_one_by_one_on_many_texts():
    enc = get_encoding("o200k_base")
    words = (ENGLISH + " " + MIXED).split()
    texts = [" ".join(words[i % len(words) : i % len(words) + 1 + i % 7]) + "\n" * (i % 3) for i in range(400)]
    texts[7] += "<|endoftext|>"
    assert enc.encode_batch(texts, allowed_special="all") == [enc.encode(t, allowed_special="all") for t in texts]
    assert enc.encode_ordinary_batch(texts) == [enc.encode_ordinary(t) for t in texts]
    assert enc.encode_ordinary_batch(texts) == oracle("o200k_base").encode_ordinary_batch(texts)


def test_encode_split_batch_equals_encode_split():
    enc = get_encoding("cl100k_base")
    compiled, id_map = enc._tokenizer.model.compiled, enc._loaded.id_map
    texts = ["", "hello world", "hello world", "new  text\n\n  here", MIXED, ENGLISH * 3, "x" * 300 + "\n y", "", "日本"]
    clear_text_caches(compiled)
    encode_split(compiled, texts[1], "cl100k", id_map)  # one text cached, the others new
    expected = [encode_split(compiled, text, "cl100k", id_map) for text in texts]
    clear_text_caches(compiled)
    encode_split(compiled, texts[4], "cl100k", id_map)
    assert encode_split_batch(compiled, texts, "cl100k", id_map) == expected
    assert encode_split_batch(compiled, texts, "cl100k", id_map) == expected  # all cached now
    assert encode_split_batch(compiled, [], "cl100k", id_map) == []


def test_single_tokens_match(pair):
    ours, theirs = pair
    candidates: list[Any] = ["hello", " world", "<|endoftext|>", b"<|endoftext|>", "hello world foo", b"\xff",
                             b"\xe6\x97", "\ud83d", bytearray(b"hello"), 5, "", b""]
    candidates += [theirs.decode_single_token_bytes(i) for i in (0, 300, 5000, 40000, 50000)]
    for item in candidates:
        assert_same(ours, theirs, "encode_single_token", item)
    ids: list[Any] = [0, 255, 256, 1000, 50256, 50280, 50281, 50283, 50284, 100256, 100257, 100261, 100276,
                      199998, 199999, 200001, 200018, 201087, 201088, theirs.n_vocab, -1, 2**32, 2**40,
                      True, "5", 5.0, None, np.int64(300)]
    for token in ids:
        assert_same(ours, theirs, "decode_single_token_bytes", token)


def test_decoding_matches(pair):
    ours, theirs = pair
    for text in [*TEXTS, "é日本😀"]:
        ids = theirs.encode(text, allowed_special="all")
        for tokens in (ids, ids[:1], ids[1:], tuple(ids), np.array(ids, dtype=np.uint32)):
            assert_same(ours, theirs, "decode_bytes", tokens)
            assert_same(ours, theirs, "decode", tokens)
            assert_same(ours, theirs, "decode", tokens, errors="strict")
            assert_same(ours, theirs, "decode", tokens, errors="ignore")
            assert_same(ours, theirs, "decode_tokens_bytes", tokens)
            assert_same(ours, theirs, "decode_with_offsets", tokens)
    some = theirs.encode("hello")
    for bad in ([*some, theirs.n_vocab], [-1, *some], [*some, 2**32], "abc", {1, 2}, Fresh(lambda: iter(some)), [1.0], [None],
                [True, 2], [theirs.n_vocab, -1], range(5), np.array([1.5])):
        assert_same(ours, theirs, "decode_bytes", bad)
        assert_same(ours, theirs, "decode", bad)
    assert_same(ours, theirs, "decode", some, errors="bogus")
    assert_same(ours, theirs, "decode_tokens_bytes", Fresh(lambda: iter(some)))
    assert_same(ours, theirs, "decode_with_offsets", [*some, theirs.n_vocab])


def completion_sets(enc: Any, text: str, **kwargs: Any) -> tuple[str, Any]:
    result = outcome(lambda: enc.encode_with_unstable(text, **kwargs))
    if result[0] == "error":
        return "error", type(result[1])
    stable, completions = result[1]
    return "ok", (stable, {tuple(seq) for seq in completions})  # tiktoken's order is a hash set's


UNSTABLE_TEXTS = ["hello fanta", "hello", "hello ", "x\n\n", "日本", "123", "don't", "abc\u3000", "", "😀",
                  "hello \ud83d", "end \t", "x<|endoftext|>", "<|endoftext|>y"]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_harmony"])
def test_encode_with_unstable_matches(name):
    ours, theirs = get_encoding(name), oracle(name)
    # (text ending in two spaces: about 100,000 completions; once, on the smallest vocabulary)
    texts = UNSTABLE_TEXTS + (["a  "] if name == "gpt2" else [])
    for text in texts:
        for kwargs in ({}, {"allowed_special": "all"}) if "<|" in text else ({},):
            mine, expected = completion_sets(ours, text, **kwargs), completion_sets(theirs, text, **kwargs)
            if expected[0] == "error":
                assert mine[0] == "error" and issubclass(mine[1], expected[1]), text
            else:
                assert mine == expected, text


# --------------------------------------------------------------------------
# Random texts and special-token arguments (hypothesis)

# Unassigned characters (for Python 3.11's Unicode tables) are left out: the
# `regex` package's newer tables call some of them letters, tiktoken's do not
# (the same known difference tests/unit/tokenizer/presets/test_presets.py names).
PIECES = st.one_of(
    st.characters(codec="utf-8").filter(lambda c: unicodedata.category(c) != "Cn"),
    st.sampled_from(["\ud83d", "\ude00", "\udfff", "\ud800"]),  # lone surrogates (and pairs, side by side)
    st.sampled_from(list(" \t\n\r'sdmtlvre019AZaz.,!/<|>😀日本\u0301")),
    st.sampled_from(["<|endoftext|>", "<|endofprompt|>", "<|fim_prefix|>", "<|fim_suffix|>", "<|start|>",
                     "<|reserved_200018|>", "<|endoftext", "endoftext|>", "<|", "|>", "<|end|>", "<|message|>"]),
)
SPECIALS = ["<|endoftext|>", "<|endofprompt|>", "<|fim_prefix|>", "<|fim_middle|>", "<|start|>", "<|end|>",
            "<|reserved_200018|>", "<|nope|>"]
ALLOWED = st.one_of(st.just("all"), st.frozensets(st.sampled_from(SPECIALS)), st.sets(st.sampled_from(SPECIALS)))
DISALLOWED = st.one_of(
    st.just("all"), st.just(()), st.frozensets(st.sampled_from(SPECIALS + ["<|", "x"])),
    st.lists(st.sampled_from(SPECIALS), max_size=3),
)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=examples(60), deadline=None)
@given(pieces=st.lists(PIECES, max_size=30), allowed=ALLOWED, disallowed=DISALLOWED)
def test_random_texts_and_special_sets_match_tiktoken(name, pieces, allowed, disallowed):
    ours, theirs = get_encoding(name), oracle(name)
    text = "".join(pieces)
    assert_same(ours, theirs, "encode", text, allowed_special=allowed, disallowed_special=disallowed)
    assert_same(ours, theirs, "encode", text, allowed_special=allowed)
    assert_same(ours, theirs, "encode_ordinary", text)
    ids = theirs.encode(text, allowed_special="all")
    assert_same(ours, theirs, "decode", ids)
    assert_same(ours, theirs, "decode_with_offsets", ids)


# --------------------------------------------------------------------------
# Registry, models, construction, pickling


def test_registry_matches():
    assert list_encoding_names()[: len(tiktoken.list_encoding_names())] == tiktoken.list_encoding_names()
    assert list_encoding_names()[len(tiktoken.list_encoding_names()):] == [
        "llama3", "llama2", "qwen3", "deepseek_v3", "gemma3", "gpt_oss", "mistral_tekken", "mistral_v1",
        "mistral_v3"]  # then the open models
    assert get_encoding("cl100k_base") is get_encoding("cl100k_base")
    assert get_encoding("gpt2") is not get_encoding("r50k_base")
    assert get_encoding("gpt2").encode("hello world") == get_encoding("r50k_base").encode("hello world")
    for bad in (5, None, "nope", "cl100k"):
        with pytest.raises(ValueError):
            get_encoding(bad)
    with pytest.raises(ValueError) as info:
        get_encoding("nope")
    assert "o200k_harmony" in str(info.value)


def model_names() -> list[Any]:
    names: list[Any] = list(tiktoken_model.MODEL_TO_ENCODING)
    for prefix in tiktoken_model.MODEL_PREFIX_TO_ENCODING:
        names += [prefix, prefix + "2024-05-13", prefix + "x", prefix[:-1]]
    names += ["ft:gpt-4o-mini:org::id", "ft:gpt-4:org::id", "gpt-4o-mini", "gpt-4.1-nano", "gpt-5-mini", "gpt-oss-20b",
              "o3-pro", "gpt-3.5-turbo-16k", "text-embedding-3-large", "unknown", "", "GPT-4", "llama3", 5, None]
    return names


def test_models_map_as_in_tiktoken():
    for model in model_names():
        mine = outcome(lambda: tiktoken_api.encoding_name_for_model(model))
        expected = outcome(lambda: tiktoken.encoding_name_for_model(model))
        if expected[0] == "error":
            assert mine[0] == "error" and isinstance(mine[1], type(expected[1])), model
        else:
            assert mine == expected, model
    assert encoding_for_model("gpt2").name == "gpt2"
    assert encoding_for_model("gpt-4o") is get_encoding("o200k_base")
    assert encoding_for_model("gpt-oss-120b").name == "o200k_harmony"


def test_the_extend_recipe_works():
    base = get_encoding("cl100k_base")
    args: dict[str, Any] = {
        "name": "cl100k_im",
        "pat_str": base._pat_str,
        "mergeable_ranks": base._mergeable_ranks,
        "special_tokens": {**base._special_tokens, "<|im_start|>": 100264, "<|im_end|>": 100265},
    }
    ours = Encoding(**args)
    theirs = tiktoken.Encoding(**args)
    text = "<|im_start|>user\nhello<|im_end|> and <|endoftext|>"
    for kwargs in ({"allowed_special": "all"}, {"disallowed_special": ()}, {}):
        assert_same(ours, theirs, "encode", text, **kwargs)
    assert (ours.n_vocab, ours.special_tokens_set) == (theirs.n_vocab, theirs.special_tokens_set)
    assert pickle.loads(pickle.dumps(ours)).encode(text, allowed_special="all") == theirs.encode(
        text, allowed_special="all"
    )


def test_constructor_turns_other_ranks_into_merges():
    ranks = {token: rank for token, rank in presets.load_ranks("r50k_base").items() if rank < 700}
    pattern = oracle("r50k_base")._pat_str  # tiktoken's published spelling of GPT-2's pattern
    args: dict[str, Any] = {"name": "small", "pat_str": pattern, "mergeable_ranks": ranks,
                            "special_tokens": {"<|eos|>": 700}, "explicit_n_vocab": 701}
    ours, theirs = Encoding(**args), tiktoken.Encoding(**args)
    for text in (ENGLISH, MIXED, "the <|eos|> thing"):
        assert_same(ours, theirs, "encode", text, allowed_special="all")
        assert_same(ours, theirs, "encode_ordinary", text)
    with pytest.raises(AssertionError):
        Encoding(**{**args, "explicit_n_vocab": 702})
    with pytest.raises(ValueError, match="pat_str"):
        Encoding(**{**args, "pat_str": r"\w+|\s+"})


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_harmony"])
def test_pickle_round_trip(name):
    enc = get_encoding(name)
    enc.encode("warm the caches up", allowed_special="all")
    enc.decode(enc.encode("and the tables"))
    copy = pickle.loads(pickle.dumps(enc))
    assert copy is enc  # registered encodings pickle by name, as tiktoken's do
    made = Encoding(name="mine", pat_str=enc._pat_str, mergeable_ranks=enc._mergeable_ranks,
                    special_tokens=enc._special_tokens)
    made.encode("fill its caches")
    again = pickle.loads(pickle.dumps(made))
    assert again is not made and again.name == "mine"
    for text in TEXTS:
        assert again.encode(text, allowed_special="all") == made.encode(text, allowed_special="all")


def test_the_web_default_is_unchanged():
    # get_tokenizer (the pages, the JSON API) keeps special-token text as plain text by default.
    tok = get_tokenizer("cl100k_base")
    assert tok.encode("a<|endoftext|>") == oracle("cl100k_base").encode_ordinary("a<|endoftext|>")
    with pytest.raises(ValueError):
        get_encoding("cl100k_base").encode("a<|endoftext|>")
