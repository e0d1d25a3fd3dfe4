"""A tokenizer.json's normalizer, pre-tokenizer, decoder and added tokens, checked against `tokenizers`.

Every test trains a tiny BPE with the library (offline, on the corpus below)
with one component configured, saves it as tokenizer.json, imports it and
checks that our ids equal the library's ids on the same texts, and that
decoding our ids with the file's decoder gives what the library's decode gives.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

from webapp.tokenizer import formats as tokfiles
from tests.loaded_calls import char_pipeline_trace, decode_loaded, encode_loaded, encode_loaded_trace, uses_pipeline
from webapp.tokenizer.pretokenize.patterns import CL100K_PATTERN

CORPUS = [
    "The lower the newest, the wider the widest: lowering lowers the lowest newer widths.",
    "Hello there! Don't you know they'll say we're happy? I've 12345 reasons, 6789 more.",
    "Zürich, Köln und München: schöne Städte. Ça va très bien, café naïve résumé.",
    "日本語のテキストも少し。東京と大阪。Русский текст тоже здесь есть. Σίσυφος ΣΑΣ.",
    "def encode(text):\n    return [ord(c) for c in text]  # code   with   spaces\n\n",
    "emoji 🙂🙂 and tabs\tand\ttabs, numbers 2024-11-30 and 3.14159, ﬁne ① ２０２４ x²",
    "  leading and trailing spaces  \u00a0 nbsp\u3000ideographic space",
]
TEXTS = CORPUS + [
    "",
    " ",
    "   ",
    "hello   world  ",
    "e\u0301 cafe\u0301 ﬁ ① Ａ ½ x² Å",  # combining accents and compatibility forms (NF* differ)
    "ΣΑΣ σας Σ İstanbul",
    "don't 123456789 !!? ... --- (a) [b] {c}",
    "x<|end|>y <|end|> z<|end|>",
    "unseen qzxj ÿþ ☃ 𝔘𝔫𝔦",
    "\t\n\r\n  \n",
    "▁already▁marked ▁",
]


def _train(
    pre_tokenizer=None, *, normalizer=None, decoder=None, byte_level: bool = True, special=(),
    added=(), vocab_size: int = 420, unk: str | None = None,
) -> Tokenizer:
    tok = Tokenizer(models.BPE(unk_token=unk) if unk else models.BPE())
    if normalizer is not None:
        tok.normalizer = normalizer
    if pre_tokenizer is not None:
        tok.pre_tokenizer = pre_tokenizer
    if decoder is not None:
        tok.decoder = decoder
    options = dict(vocab_size=vocab_size, show_progress=False, special_tokens=list(special))
    if byte_level:
        options["initial_alphabet"] = pre_tokenizers.ByteLevel.alphabet()
    tok.train_from_iterator(CORPUS * 3, trainers.BpeTrainer(**options))
    if added:
        tok.add_tokens(list(added))
    return tok


def _check(tok: Tokenizer, texts=TEXTS, *, notes: tuple[str, ...] = ()) -> tokfiles.LoadedTokenizer:
    loaded = tokfiles.import_tokenizer(tok.to_str())
    assert loaded.notes == notes
    for text in texts:
        ours = encode_loaded(loaded, text)
        assert ours == tok.encode(text).ids, text
        for skip in (True, False):
            assert decode_loaded(loaded, ours, skip_special=skip) == tok.decode(ours, skip_special_tokens=skip), text
    return loaded


def _byte_seq(*steps) -> pre_tokenizers.PreTokenizer:
    return pre_tokenizers.Sequence([*steps, pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])


# --------------------------------------------------------------------------
# The two files the issue names


@pytest.fixture(scope="module")
def llama3_tok() -> Tokenizer:
    return _train(
        pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(CL100K_PATTERN), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]),
        decoder=decoders.ByteLevel(),
        special=["<|begin_of_text|>", "<|end|>"],
    )


def test_llama3_style_file(llama3_tok):
    loaded = _check(llama3_tok)
    assert loaded.level == "bytes" and loaded.pretokenize == "cl100k"
    assert loaded.summary()["file_pipeline"] == {
        "normalizer": None, "pre_tokenizer": "Sequence[Split, ByteLevel]", "decoder": "ByteLevel", "added_tokens": 2,
    }
    # the special token is one id, not its characters
    end = llama3_tok.token_to_id("<|end|>")
    assert encode_loaded(loaded, "a<|end|>b").count(end) == 1


def test_nfkc_file():
    tok = _train(pre_tokenizers.ByteLevel(add_prefix_space=True), normalizer=normalizers.NFKC(), decoder=decoders.ByteLevel())
    _check(tok)
    loaded = tokfiles.import_tokenizer(tok.to_str())
    # NFKC makes the ligature "fi" and the full-width digits plain
    assert encode_loaded(loaded, "ﬁ２") == encode_loaded(loaded, "fi2")


# --------------------------------------------------------------------------
# Normalizers


@pytest.mark.parametrize(
    "normalizer",
    [
        normalizers.NFC(),
        normalizers.NFD(),
        normalizers.NFKD(),
        normalizers.Lowercase(),
        normalizers.Strip(),
        normalizers.Strip(left=False, right=True),
        normalizers.Prepend("▁"),
        normalizers.Replace(" ", "▁"),
        normalizers.Replace(Regex(r"\p{N}+"), "#"),
        normalizers.Sequence([normalizers.NFKD(), normalizers.StripAccents(), normalizers.Lowercase()]),
    ],
    ids=["NFC", "NFD", "NFKD", "Lowercase", "Strip", "Strip-right", "Prepend", "Replace-string", "Replace-regex",
         "Sequence"],
)
def test_normalizers(normalizer):
    _check(_train(pre_tokenizers.ByteLevel(add_prefix_space=False), normalizer=normalizer, decoder=decoders.ByteLevel()))


# --------------------------------------------------------------------------
# Pre-tokenizers (byte level: each one followed by ByteLevel without its regex)


BEHAVIORS = ["removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"]


@pytest.mark.parametrize("behavior", BEHAVIORS)
@pytest.mark.parametrize("invert", [False, True])
@pytest.mark.parametrize("pattern", [" ", Regex(r"\p{N}|[,.!?]+"), Regex(r"\s+")], ids=["string", "regex", "spaces"])
def test_split_behaviors(behavior, invert, pattern):
    _check(_train(_byte_seq(pre_tokenizers.Split(pattern, behavior=behavior, invert=invert)), decoder=decoders.ByteLevel()))


@pytest.mark.parametrize(
    "step",
    [
        pre_tokenizers.Whitespace(),
        pre_tokenizers.WhitespaceSplit(),
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.Digits(individual_digits=False),
        pre_tokenizers.Punctuation(),
        pre_tokenizers.Punctuation(behavior="merged_with_next"),
        pre_tokenizers.BertPreTokenizer(),
        pre_tokenizers.CharDelimiterSplit("e"),
    ],
    ids=["Whitespace", "WhitespaceSplit", "Digits-individual", "Digits-contiguous", "Punctuation",
         "Punctuation-next", "Bert", "CharDelimiterSplit"],
)
def test_pre_tokenizers(step):
    _check(_train(_byte_seq(step), decoder=decoders.ByteLevel()))


@pytest.mark.parametrize("add_prefix_space", [False, True])
@pytest.mark.parametrize("use_regex", [False, True])
def test_byte_level_options(add_prefix_space, use_regex):
    tok = _train(pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space, use_regex=use_regex),
                 decoder=decoders.ByteLevel(), special=["<|end|>"])
    _check(tok)


@pytest.mark.parametrize("pattern, behavior", [(r"\s*", "merged_with_next"), (r"a*", "contiguous"), (r"x?", "isolated")])
def test_patterns_that_match_empty_strings(pattern, behavior):
    # The library's regex iterator skips an empty match right after a match; Python's does not.
    tok = _train(_byte_seq(pre_tokenizers.Split(Regex(pattern), behavior=behavior)), decoder=decoders.ByteLevel())
    _check(tok, TEXTS + ["\x1d x", "aab  xx a", " x  x"])


def test_a_step_after_byte_level_sees_the_byte_alphabet():
    pre = pre_tokenizers.Sequence([
        pre_tokenizers.ByteLevel(add_prefix_space=True, use_regex=False),
        pre_tokenizers.Split("Ġ", behavior="merged_with_next"),
    ])
    _check(_train(pre, decoder=decoders.ByteLevel()))


# --------------------------------------------------------------------------
# Character level: Metaspace and friends


@pytest.mark.parametrize("scheme", ["always", "first", "never"])
@pytest.mark.parametrize("split", [True, False])
def test_metaspace(scheme, split):
    tok = _train(pre_tokenizers.Metaspace(prepend_scheme=scheme, split=split),
                 decoder=decoders.Metaspace(prepend_scheme=scheme), byte_level=False,
                 special=["<s>", "</s>"], added=[AddedToken("<s>", special=True)])
    loaded = _check(tok, TEXTS + ["<s>hello", "a <s> b"])
    assert loaded.level == "chars"


def test_metaspace_first_after_a_normalizer_that_removes_the_first_characters():
    # A piece whose first character is not the text's first one is not "first".
    tok = _train(pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Metaspace(prepend_scheme="first")]),
                 normalizer=normalizers.Strip(), decoder=decoders.Metaspace(prepend_scheme="first"), byte_level=False,
                 unk="<unk>", special=["<unk>"])
    _check(tok, TEXTS + ["\u3000.x", "  hello there", "hello  "])
    tok = _train(pre_tokenizers.Metaspace(prepend_scheme="first"),
                 normalizer=normalizers.Sequence([normalizers.Replace(Regex("^ +"), ""), normalizers.Lowercase()]),
                 decoder=decoders.Metaspace(prepend_scheme="first"), byte_level=False, unk="<unk>", special=["<unk>"])
    _check(tok, TEXTS + ["  Hello there", "Hello"])


def test_unknown_characters_use_the_unk_token_or_are_dropped():
    for unk in (None, "<unk>"):
        tok = _train(pre_tokenizers.Whitespace(), decoder=decoders.Fuse(), byte_level=False, unk=unk,
                     special=["<unk>"] if unk else ())
        _check(tok, ["qzx ☃☃ Ω unseen", "☃"])


def test_sentencepiece_style_normalizer_and_byte_fallback_decoder():
    tok = _train(
        None,
        normalizer=normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")]),
        decoder=decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                   decoders.Strip(" ", 1, 0)]),
        byte_level=False,
    )
    loaded = _check(tok)
    document = json.loads(tok.to_str())
    vocab = document["model"]["vocab"]
    byte_ids = [vocab.setdefault(f"<0x{b:02X}>", len(vocab)) for b in "€".encode() + b"\xff"]
    retok = Tokenizer.from_str(json.dumps(document))
    loaded = tokfiles.import_tokenizer(json.dumps(document))
    assert decode_loaded(loaded, byte_ids[:3]) == retok.decode(byte_ids[:3]) == "€"
    assert decode_loaded(loaded, byte_ids) == retok.decode(byte_ids)


# --------------------------------------------------------------------------
# Added tokens: split out before the normalizer, with their own rules


def test_special_tokens_left_as_text_like_encode_special_tokens(llama3_tok):
    loaded = tokfiles.import_tokenizer(llama3_tok.to_str())
    plain = Tokenizer.from_str(llama3_tok.to_str())
    plain.encode_special_tokens = True
    for text in ["a<|end|>b<|begin_of_text|>", "<|end|>", "x <|end|> y"]:
        assert encode_loaded(loaded, text, allowed_special=frozenset()) == plain.encode(text).ids
        only_end = encode_loaded(loaded, text, allowed_special=frozenset({"<|end|>"}))
        assert only_end.count(llama3_tok.token_to_id("<|end|>")) == text.count("<|end|>")
        assert llama3_tok.token_to_id("<|begin_of_text|>") not in only_end


def test_added_tokens_with_their_rules():
    added = [
        AddedToken("<L>", lstrip=True, special=True),
        AddedToken("<R>", rstrip=True, special=True),
        AddedToken("word", single_word=True),
        AddedToken("HeLLo", normalized=True),  # matched after Lowercase: "hello" in any case
        AddedToken("RAW", normalized=False),  # matched before Lowercase: only "RAW"
        AddedToken("<R><L>x", special=True),  # longest match wins
    ]
    tok = _train(pre_tokenizers.ByteLevel(add_prefix_space=True), normalizer=normalizers.Lowercase(),
                 decoder=decoders.ByteLevel(), added=added)
    texts = TEXTS + [
        "a  <L>b", "a<R>   b", "  <L>  <R>  ", "word words sword word_ (word)", "HELLO hello HeLLo",
        "RAW raw Raw", "<R><L>x <R><L>", "<L><L><R><R>",
    ]
    _check(tok, texts)


# --------------------------------------------------------------------------
# Random text


_ALPHABET = st.sampled_from(
    list("aeiouxyzAEZ  \t\n0123456789.,!?'-_()ΣσςéÉ\u0301\u0308ﬁ①２ß東京🙂▁Ġ\u00a0\u3000") + ["<|end|>", "'s", "word"]
)
_TEXT = st.lists(_ALPHABET, max_size=40).map("".join)


@pytest.fixture(scope="module")
def random_tokenizers(llama3_tok):
    return [
        llama3_tok,
        _train(pre_tokenizers.ByteLevel(add_prefix_space=True), normalizer=normalizers.NFKC(), decoder=decoders.ByteLevel(),
               special=["<|end|>"]),
        _train(_byte_seq(pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.Punctuation(),
                         pre_tokenizers.Whitespace()),
               normalizer=normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase(), normalizers.Strip()]),
               decoder=decoders.ByteLevel(), added=[AddedToken("word", single_word=True, lstrip=True)]),
        _train(pre_tokenizers.Metaspace(prepend_scheme="first"), decoder=decoders.Metaspace(prepend_scheme="first"),
               byte_level=False, unk="<unk>", special=["<unk>", "<|end|>"]),
    ]


@pytest.mark.slow
@settings(max_examples=examples(150), deadline=None)
@given(text=_TEXT)
def test_random_texts_give_the_library_ids(random_tokenizers, text):
    for tok in random_tokenizers:
        loaded = tokfiles.import_tokenizer(tok.to_str())
        ours = encode_loaded(loaded, text)
        assert ours == tok.encode(text).ids
        assert decode_loaded(loaded, ours) == tok.decode(ours)


# --------------------------------------------------------------------------
# What is still left out is noted; storage keeps the pipeline


def test_unsupported_components_are_noted():
    document = json.loads(_train(pre_tokenizers.ByteLevel(), decoder=decoders.ByteLevel()).to_str())
    document["normalizer"] = {"type": "BertNormalizer", "clean_text": True}
    document["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "UnicodeScripts"}, {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True}]}
    document["decoder"] = {"type": "CTC"}
    loaded = tokfiles.import_tokenizer(json.dumps(document))
    assert any("normalizer is the BertNormalizer normalizer" in n for n in loaded.notes)
    assert any("pre-tokenizer includes the UnicodeScripts pre-tokenizer" in n for n in loaded.notes)
    assert any("decoder is the CTC decoder" in n for n in loaded.notes)
    assert loaded.summary()["file_pipeline"]["pre_tokenizer"] == "Sequence[ByteLevel]"


def test_stored_form_keeps_the_pipeline(llama3_tok):
    tok = _train(pre_tokenizers.Metaspace(), decoder=decoders.Metaspace(), byte_level=False, unk="<unk>",
                 special=["<unk>"])
    for source in (llama3_tok, tok):
        loaded = tokfiles.import_tokenizer(source.to_str())
        back = tokfiles.loads_stored(tokfiles.dumps_stored(loaded))
        assert back == loaded
        for text in TEXTS:
            assert encode_loaded(back, text) == source.encode(text).ids


def test_stored_version_1_still_loads(llama3_tok):
    loaded = tokfiles.import_tokenizer(llama3_tok.to_str())
    doc = json.loads(tokfiles.dumps_stored(loaded))
    doc["v"] = 1
    del doc["pipeline"]
    old = tokfiles.loads_stored(json.dumps(doc).encode())
    assert old.pipeline == "" and old.merges == loaded.merges
    assert encode_loaded(old, "hello world") == llama3_tok.encode("hello world").ids


def test_another_scheme_skips_the_pipeline(llama3_tok):
    loaded = tokfiles.import_tokenizer(llama3_tok.to_str())
    text = "x<|end|>y"
    assert uses_pipeline(loaded, "cl100k") and not uses_pipeline(loaded, "none")
    assert encode_loaded(loaded, text, "none") != encode_loaded(loaded, text)


def test_pipeline_trace_shows_what_the_model_sees(llama3_tok):
    tok = _train(pre_tokenizers.ByteLevel(add_prefix_space=True), normalizer=normalizers.NFKC(),
                 decoder=decoders.ByteLevel(), special=["<|end|>"])
    loaded = tokfiles.import_tokenizer(tok.to_str())
    text = "ﬁne<|end|> café"
    trace = encode_loaded_trace(loaded, text)
    assert trace.ids == tok.encode(text).ids
    assert trace.text == " fine<|end|> café"  # NFKC, then the prefix space; the added token untouched
    assert [t.id for t in trace.tokens] == trace.ids
    data = trace.text.encode()
    assert b"".join(data[t.start:t.end] for t in trace.tokens) == data
    end = next(t for t in trace.tokens if t.id == tok.token_to_id("<|end|>"))
    assert end.value == b"<|end|>"


# --------------------------------------------------------------------------
# Bounds: the file brings its own regexes and normalizers


def _with(document_changes: dict) -> str:
    document = json.loads(_train(pre_tokenizers.ByteLevel(), decoder=decoders.ByteLevel(), vocab_size=300).to_str())
    document.update(document_changes)
    return json.dumps(document)


def test_a_slow_file_regex_stops_at_the_time_budget(monkeypatch):
    from webapp.tokenizer import TokenizerError
    from webapp.tokenizer.reading import text as hf_text

    monkeypatch.setattr(hf_text, "REGEX_BUDGET_SECONDS", 0.05)
    loaded = tokfiles.import_tokenizer(_with({"pre_tokenizer": {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": "(a|aa)+$"}, "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "use_regex": False}]}}))
    with pytest.raises(TokenizerError) as info:
        encode_loaded(loaded, "a" * 40 + "!")
    assert info.value.field == "text" and "patterns took over 0.05 s" in info.value.message


def test_a_normalizer_may_not_grow_the_text_without_bound():
    from webapp.tokenizer import TokenizerError

    grow = {"type": "Replace", "pattern": {"String": "a"}, "content": "a" * 16}
    content = _with({"normalizer": {"type": "Sequence", "normalizers": [grow] * 6}})
    loaded = tokfiles.import_tokenizer(content)
    with pytest.raises(TokenizerError) as info:
        encode_loaded(loaded, "a" * 100)  # 100 * 16**6 characters: stopped after the third step
    assert info.value.field == "text" and "over the limit of 65,536" in info.value.message
    for text in ("b", "bc"):  # (within the cap it is still the library's answer)
        assert encode_loaded(loaded, text) == Tokenizer.from_str(content).encode(text).ids


def test_oversized_and_deeply_nested_components_are_left_out_with_a_note():
    nested: dict = {"type": "Lowercase"}
    for _ in range(12):
        nested = {"type": "Sequence", "normalizers": [nested]}
    loaded = tokfiles.import_tokenizer(_with({
        "normalizer": nested,
        "decoder": {"type": "Replace", "pattern": {"String": "x"}, "content": "y" * 17},
    }))
    assert any("nested more than 8 deep" in n for n in loaded.notes)
    assert any("inserting 17 characters (over 16)" in n for n in loaded.notes)
    assert loaded.summary()["file_pipeline"]["normalizer"] == "Sequence[]"  # (the nested part left out)


@pytest.mark.parametrize("unk", [None, "<unk>"])
def test_char_pipeline_trace_for_the_characters_page(unk):
    tok = _train(pre_tokenizers.Metaspace(prepend_scheme="always"), decoder=decoders.Metaspace(), byte_level=False,
                 unk=unk, special=["<unk>", "<s>"] if unk else ["<s>"], added=[AddedToken("<s>", special=True)])
    loaded = tokfiles.import_tokenizer(tok.to_str())
    for text in ["the lowest<s> ☃x☃ newer", "<s>", "☃", ""]:
        trace = char_pipeline_trace(loaded, text)
        assert trace.ids == tok.encode(text).ids, text
        assert [t.id for t in trace.tokens] == trace.ids  # (unknown characters: unk, or left out)
        assert "".join(str(t.value) for t in trace.tokens) == trace.text
        assert all(trace.text[t.start:t.end] == t.value for t in trace.tokens)
