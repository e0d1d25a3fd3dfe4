"""The tiktoken-style API over opened tokenizer.json files, against the `tokenizers` library.

The samples are the small models tests/hf_samples.py trains (offline), with
added tokens of every kind: special ones, plain ones, one with lstrip /
rstrip, one that must stand as a single word. `Encoding.encode` (a tokenizer.json: `tokenizers` defaults)
must give `tokenizers.Tokenizer.encode(text, add_special_tokens=...).ids`.
"""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples
from tokenizers import AddedToken, Tokenizer

from tests.hf_samples import SAMPLE_CORPUS, byte_level_tokenizer, char_level_tokenizer
from webapp.tokenizer import formats as tokfiles
from webapp.tokenizer import get_encoding
from webapp.tokenizer.api import Encoding, registry
from webapp.tokenizer.api.encoding import TOKENIZERS

SPECIAL = ["<|sp|>", "[X]"]
PLAIN = ["lowest", "happy"]
TEXTS = SAMPLE_CORPUS + [
    "",
    "the lowest <|sp|> newer[X] happy  unhappy",
    "<|sp|><|sp|>[X]lowest<|sp",
    " <|tight|> x<|tight|>y ",
    "word wide widest",
    "Zürich 東京 😀 tabs\tand\nlines  ",
]


def with_added_tokens(tok: Tokenizer) -> Tokenizer:
    tok.add_special_tokens([SPECIAL[0], AddedToken(SPECIAL[1], special=True)])
    tok.add_tokens([*PLAIN, AddedToken("<|tight|>", lstrip=True, rstrip=True), AddedToken("wide", single_word=True)])
    return tok


@pytest.fixture(scope="module", params=["byte-regex", "byte-plain", "chars"])
def sample(request: pytest.FixtureRequest) -> tuple[Encoding, Tokenizer]:
    if request.param == "chars":
        library = with_added_tokens(char_level_tokenizer(SAMPLE_CORPUS))
    else:
        library = with_added_tokens(byte_level_tokenizer(SAMPLE_CORPUS, use_regex=request.param == "byte-regex"))
    enc = Encoding.from_loaded(request.param, tokfiles.import_tokenizer(library.to_str()))
    assert enc.defaults is TOKENIZERS  # a tokenizer.json: its library's defaults
    return enc, library


def library_ids(library: Tokenizer, text: str, *, add_special_tokens: bool = True, ordinary: bool = False) -> list[int]:
    library.encode_special_tokens = ordinary
    try:
        return list(library.encode(text, add_special_tokens=add_special_tokens).ids)
    finally:
        library.encode_special_tokens = False


def test_encode_follows_the_library(sample):
    enc, library = sample
    for text in TEXTS:
        for add in (True, False):
            assert enc.encode(text, add_special_tokens=add) == library_ids(library, text, add_special_tokens=add), text
        # special tokens as text (the library's encode_special_tokens); plain added tokens still split out
        assert enc.encode_ordinary(text) == library_ids(library, text, ordinary=True), text
        assert enc.encode(text, allowed_special=set()) == enc.encode_ordinary(text)
    assert enc.encode_batch(TEXTS) == [enc.encode(text) for text in TEXTS]
    assert enc.encode_batch(TEXTS) == [list(e.ids) for e in library.encode_batch(TEXTS)]
    assert enc.encode_ordinary_batch(TEXTS) == [enc.encode_ordinary(text) for text in TEXTS]


def test_special_tokens_and_sizes(sample):
    enc, library = sample
    assert enc.special_tokens_set == set(SPECIAL)
    vocab = library.get_vocab(with_added_tokens=True)
    assert enc.max_token_value == max(vocab.values()) and enc.n_vocab == max(vocab.values()) + 1
    for token in (*SPECIAL, *PLAIN):
        assert enc.encode_single_token(token) == library.token_to_id(token)
    assert enc.is_special_token(library.token_to_id(SPECIAL[0])) and not enc.is_special_token(library.token_to_id(PLAIN[0]))
    with pytest.raises(KeyError):
        enc.eot_token  # noqa: B018 - no <|endoftext|> in this file
    with pytest.raises(KeyError):
        enc.encode_single_token("no such token at all")


def test_tiktoken_arguments_still_work(sample):
    enc, library = sample
    text = "a <|sp|> b [X] lowest"
    with pytest.raises(ValueError, match="disallowed_special"):
        enc.encode(text, allowed_special=set(), disallowed_special="all")
    only_sp = enc.encode(text, allowed_special={"<|sp|>"})
    assert library.token_to_id("<|sp|>") in only_sp and library.token_to_id("[X]") not in only_sp
    with pytest.raises(TypeError):
        enc.encode(text, add_special_tokens=1)  # the library's TypeError too
    with pytest.raises(TypeError):
        library.encode(text, add_special_tokens=1)
    with pytest.raises(NotImplementedError):
        enc.encode_with_unstable("hello")


def test_decode_gives_the_tokens_bytes(sample):
    enc, library = sample
    for text in TEXTS:
        ids = enc.encode(text)
        joined = b"".join(enc.decode_tokens_bytes(ids))
        assert enc.decode_bytes(ids) == joined
        if enc.name != "chars":  # byte level, no prefix space: the bytes are the text (less what lstrip took)
            assert enc.decode(ids) == library.decode(ids, skip_special_tokens=False)
            assert enc.decode_with_offsets(ids)[0] == enc.decode(ids)
            if "<|tight|>" not in text:
                assert enc.decode(ids) == text


def test_surrogates_are_repaired_where_the_library_refuses(sample):
    enc, library = sample
    with pytest.raises(TypeError):
        library.encode("x\ud83d")
    assert enc.encode("x\ud83d lowest") == library_ids(library, "x\ufffd lowest")
    assert enc.encode("\ud83d\ude00") == library_ids(library, "😀")


def test_pickle_and_registered_ids(sample, monkeypatch):
    enc, library = sample
    again = pickle.loads(pickle.dumps(enc))
    assert type(again) is Encoding and again.defaults is TOKENIZERS and again.name == enc.name
    assert [again.encode(text) for text in TEXTS] == [enc.encode(text) for text in TEXTS]
    # An opened file's id, as the web layer registers them, is an encoding name too.
    loaded = enc._loaded
    monkeypatch.setattr(registry, "_RESOLVERS", [lambda name: loaded if name == "file-123" else None])
    by_id = get_encoding("file-123")
    assert by_id.defaults is TOKENIZERS and by_id.encode(TEXTS[1]) == enc.encode(TEXTS[1])
    with pytest.raises(ValueError):
        get_encoding("file-456")


WORDS = sorted({word for line in SAMPLE_CORPUS for word in line.split()})
PIECES = st.one_of(
    st.sampled_from(WORDS + SPECIAL + PLAIN + ["<|tight|>", "wide", "<|", "[", "]", " ", "  ", "\n", "\t"]),
    st.characters(codec="utf-8", exclude_categories=("Cn",)),
)


@settings(max_examples=examples(80), deadline=None)
@given(pieces=st.lists(PIECES, max_size=25), add=st.booleans())
def test_random_texts_follow_the_library(sample, pieces: list[Any], add: bool):
    enc, library = sample
    text = "".join(pieces)
    assert enc.encode(text, add_special_tokens=add) == library_ids(library, text, add_special_tokens=add)
    assert enc.encode_ordinary(text) == library_ids(library, text, ordinary=True)
