"""The tokenizer inside a GGUF file (formats/gguf_tokenizer.py, formats/gguf_pre.py) against the library
that made the vocabulary, where llama.cpp gives that library's ids.

- Files written with the `gguf` package's writer (tests/gguf_files.py, laid out as llama.cpp's converter
  lays them out) from the presets' tokenizer.json files (llama3, qwen3, deepseek_v3: `tokenizers` is the
  oracle) and SentencePiece .model files (mistral-common's v1 and v3: `sentencepiece` is the oracle), and
  from small models trained here.
- Where llama.cpp and the library differ, the test says so: Qwen's tokenizer.json applies NFC first and
  llama.cpp does not, so a text that NFC changes is compared after NFC.
- Every pre-tokenizer type of the table: its regexes compile, and the pipeline's Split steps cut sample
  texts as the list of regexes does, each cutting the previous pieces (written out here with the `regex`
  package, and `tokenizers`' own Split steps as a second oracle).
- Names and types the playground does not have: the fallback and its note, the refusal naming the type.
"""

from __future__ import annotations

import json
import unicodedata
from functools import lru_cache
from typing import Any

import pytest
import regex

gguf = pytest.importorskip("gguf")
from gguf import TokenType  # noqa: E402
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers  # noqa: E402

from tests.gguf_files import (  # noqa: E402
    byte_level_keys, gguf_from_model_proto, gguf_from_tokenizer_json, tokenizer_json_parts, write_gguf,
)
from tests.loaded_calls import decode_loaded, encode_loaded  # noqa: E402
from tests.mistral_files import mistral_file  # noqa: E402
from webapp.tokenizer import TokenizerError, import_tokenizer  # noqa: E402
from webapp.tokenizer.chat.templates import ChatTemplate  # noqa: E402
from webapp.tokenizer.formats.detect import detect_format  # noqa: E402
from webapp.tokenizer.formats.gguf_pre import OWN_CODE, PRE_NAMES, PRE_TYPES, pre_type_for, split_steps  # noqa: E402
from webapp.tokenizer.pretokenize.pre_tokenizers import build_pre_tokenizer, describe_pre_tokenizer  # noqa: E402
from webapp.tokenizer.presets import open_models  # noqa: E402
from webapp.tokenizer.stages import tokenizer_of  # noqa: E402

TEXTS = [
    "The quick brown fox jumps over the lazy dog. It's 3:45pm; DON'T panic! e-mail: a@b.org",
    "Tiếng Việt là ngôn ngữ chính thức của Việt Nam.",
    "Ünïcödé façade naïve — straße ΑΒΓ αβγ русский текст עברית العربية हिन्दी ภาษาไทย ÉCOLE École",
    "東京は日本の首都です。北京是中国的首都。한국어 텍스트 ｆｕｌｌｗｉｄｔｈ カタカナ",
    "def f(x):\n\treturn x  +  1  # comment\n\n\nclass A:\n    pass\r\n",
    "1234567890 3.14159 2026-12-01 1,234,567 ٣٤٥ ४५६ ²³ ½",
    "👨‍👩‍👧‍👦 family 🏳️‍🌈 flag 👍🏽 🇫🇷 e\u0301 a\u0308",
    "   spaces    and\t\ttabs  \n  \n\t \u00a0\u3000 end" + " " * 17 + "\t" * 5,
    "\x00\x01\x7f odd \uffff ctrl 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ꙮ 𓀀",
    "I'M 'S 'll 'Ve we'RE it's \"quoted\" ... !!! ?! ，。、 …",
    "<sentinel:12> IMGIMGABZ $x+y<=z^2~|w` http://example.com/a_b?c=d&e=f",
    "", " ", "a", "\n",
]
#: llama.cpp tokenizer names for the presets, as its converter writes them.
PRESET_PRE = {"llama3": "llama-bpe", "qwen3": "qwen2", "deepseek_v3": "deepseek-v3"}
MISTRAL = {"v1": "tokenizer.model.v1", "v3": "mistral_instruct_tokenizer_240323.model.v3"}


def opened(data: bytes) -> Any:
    return import_tokenizer(data, filename="model.gguf")


def ids_of(tok: Any, text: str, allowed: frozenset[str] = frozenset()) -> list[int]:
    return encode_loaded(tok, text, allowed_special=allowed)


# --- tokenizer.json presets: byte-level ("gpt2") files --------------------------------------------


@lru_cache(maxsize=None)
def preset_case(name: str) -> tuple[Any, Tokenizer, bytes]:
    if not open_models.is_installed(name):
        pytest.skip(f"{name} is not installed (npm ci)")
    path = open_models.OPEN_MODELS[name].file_path()
    library = Tokenizer.from_file(str(path))
    prefix = library.encode("", add_special_tokens=True).ids  # (the BOS its post-processor adds, if any)
    ids: dict[str, int | bool] = {"bos": prefix[0], "add_bos": True} if prefix else {"add_bos": False}
    data = gguf_from_tokenizer_json(path.read_text(encoding="utf-8"), PRESET_PRE[name], **ids)
    return opened(data), library, data


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PRESET_PRE))
def test_preset_gguf_gives_the_librarys_ids(name: str) -> None:
    tok, library, _ = preset_case(name)
    assert tok.source == "gguf" and tok.summary()["merge_order"] == "library"
    normalizes = library.normalizer is not None  # (Qwen's NFC; llama.cpp normalizes nothing)
    for text in TEXTS + ["\n".join(TEXTS) * 2]:
        seen = unicodedata.normalize("NFC", text) if normalizes else text
        expected = library.encode(seen, add_special_tokens=False).ids
        assert ids_of(tok, text if not normalizes or seen == text else seen) == expected, text
        assert tokenizer_of(tok).post_process(expected) == library.encode(seen, add_special_tokens=True).ids
        assert decode_loaded(tok, expected) == library.decode(expected, skip_special_tokens=False)


def test_qwen_without_nfc_differs_as_llama_cpp_does() -> None:
    tok, library, _ = preset_case("qwen3")
    text = "e\u0301"  # (NFC makes it é, one token there; llama.cpp sees e and a combining mark)
    assert ids_of(tok, text) != library.encode(text, add_special_tokens=False).ids
    assert ids_of(tok, text) == library.encode("e", add_special_tokens=False).ids + ids_of(tok, "\u0301")


@pytest.mark.parametrize("name", sorted(PRESET_PRE))
def test_control_tokens_are_text_unless_asked(name: str) -> None:
    tok, library, _ = preset_case(name)
    specials = {t.content for t in library.get_added_tokens_decoder().values() if t.special}
    first, last = sorted(specials)[:2]
    text = f"{first}hi there{last} and {first}"
    assert tokenizer_of(tok).special_default == "none"
    plain = ids_of(tok, text)
    assert library.token_to_id(first) not in plain
    assert ids_of(tok, text, frozenset(specials)) == library.encode(text, add_special_tokens=False).ids


def test_llama3_keeps_llama_cpps_flags() -> None:
    tok, _, _ = preset_case("llama3")
    assert json.loads(tok.model)["ignore_merges"] is True  # (llama.cpp sets it for the llama3 type)
    assert any("'llama-bpe'" in note for note in tok.notes)


# --- SentencePiece .model files: "llama" files ------------------------------------------------------


def mistral(name: str) -> bytes:
    return mistral_file(MISTRAL[name])


@pytest.mark.parametrize("name", sorted(MISTRAL))
def test_model_gguf_gives_sentencepieces_ids(name: str) -> None:
    spm = pytest.importorskip("sentencepiece")
    data = mistral(name)
    sp = spm.SentencePieceProcessor(model_proto=data)
    tok = opened(gguf_from_model_proto(data, add_bos=True))
    assert tok.source == "gguf" and tok.level == "chars"
    stages = tokenizer_of(tok)
    assert stages.special_default == "none"
    for text in TEXTS + ["<s> [INST] hi [/INST]", "  leading", "x   y  ", "\n".join(TEXTS) * 2]:
        ids = ids_of(tok, text)
        assert ids == sp.encode(text), text
        assert stages.post_process(ids) == [sp.bos_id(), *ids]
        assert decode_loaded(tok, ids) == sp.decode(ids)


def test_model_gguf_without_space_prefix_and_with_eos() -> None:
    spm = pytest.importorskip("sentencepiece")
    from sentencepiece import sentencepiece_model_pb2 as pb

    data = mistral("v1")
    tok = opened(gguf_from_model_proto(data, add_space_prefix=False, add_bos=False, add_eos=True))
    proto = pb.ModelProto()
    proto.ParseFromString(data)
    proto.normalizer_spec.add_dummy_prefix = False
    sp = spm.SentencePieceProcessor(model_proto=proto.SerializeToString())
    for text in TEXTS[:6]:
        assert ids_of(tok, text) == sp.encode(text), text
        assert tokenizer_of(tok).post_process(ids_of(tok, text)) == [*sp.encode(text), sp.eos_id()]


def test_chat_template_is_kept_with_bos_and_eos() -> None:
    template = "{{ bos_token }}{% for m in messages %}[INST] {{ m.content }} [/INST]{% endfor %}{{ eos_token }}"
    tok = opened(gguf_from_model_proto(mistral("v1"), template=template))
    assert ChatTemplate.from_json(tok.chat) == ChatTemplate(template, "<s>", "</s>")
    assert tok.summary()["chat_template"] is True


# --- small models trained here ------------------------------------------------------------------------

CORPUS = [t for t in TEXTS if t] * 20 + ["hello world, hello there; it's a test of the tokenizer 12345"] * 50


@lru_cache(maxsize=None)
def trained_byte_level(pre: str) -> tuple[Tokenizer, bytes]:
    """A small byte-level BPE trained with `tokenizers`, its pre-tokenizer the type's regexes as Split steps."""
    library = Tokenizer(models.BPE())
    patterns = PRE_TYPES[PRE_NAMES[pre]].patterns
    library.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Split(Regex(p), behavior="isolated") for p in patterns]
        + [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    library.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=700, special_tokens=["<|endoftext|>", "<|user|>"], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    library.train_from_iterator(CORPUS, trainer)
    return library, gguf_from_tokenizer_json(library.to_str(), pre)


def test_trained_gpt2_model_gives_the_librarys_ids() -> None:
    library = Tokenizer(models.BPE())
    library.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)  # GPT-2's own
    trainer = trainers.BpeTrainer(vocab_size=600, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    library.train_from_iterator(CORPUS, trainer)
    tok = opened(gguf_from_tokenizer_json(library.to_str(), "gpt-2"))
    for text in TEXTS:
        assert ids_of(tok, text) == library.encode(text).ids, text


@pytest.mark.parametrize("pre", ["default", "deepseek-llm", "deepseek-coder", "falcon", "starcoder", "bloom",
                                 "viking", "tekken", "gpt-4o", "chatglm-bpe", "jais-2", "chameleon"])
def test_trained_models_give_the_librarys_ids_through_each_pre(pre: str) -> None:
    library, data = trained_byte_level(pre)
    tok = opened(data)
    for text in TEXTS:
        assert ids_of(tok, text) == library.encode(text).ids, (pre, text)


def test_user_defined_tokens_always_match_and_control_ones_on_request() -> None:
    library, _ = trained_byte_level("gpt-2")
    tokens, types, merges = tokenizer_json_parts(json.loads(library.to_str()))
    endoftext, user = tokens.index("<|endoftext|>"), tokens.index("<|user|>")
    types[user] = int(TokenType.USER_DEFINED)
    tok = opened(write_gguf(byte_level_keys(tokens, types, merges, "gpt-2")))
    plain = ids_of(tok, "a<|user|>b<|endoftext|>")
    assert user in plain and endoftext not in plain
    assert endoftext in ids_of(tok, "a<|user|>b<|endoftext|>", frozenset({"<|endoftext|>"}))


# --- the pre-tokenizer table -------------------------------------------------------------------------

SAMPLES = TEXTS + ["Hello\nworld\r\n  done  ", "x" * 3 + " 1234567 12 " + "ab  " * 3, "\u2126\u212a K Ω ά ΐ",
                   "It'S'S'ſ", "  \u00a0\u2028x", "IMGIMGIIIIIZ <sentinel:0>"]


def list_split(patterns: tuple[str, ...], text: str) -> list[str]:
    """llama.cpp's `unicode_regex_split`, written out: each regex cuts every piece the previous ones made,
    its matches and the text between them each a piece."""
    pieces = [text] if text else []
    for pattern in patterns:
        compiled = regex.compile(pattern)
        cut: list[str] = []
        for piece in pieces:
            done = 0
            for match in compiled.finditer(piece):
                if match.start() > done:
                    cut.append(piece[done:match.start()])
                if match.end() > match.start():
                    cut.append(match.group())
                done = match.end()
            if done < len(piece):
                cut.append(piece[done:])
        pieces = cut
    return pieces


@pytest.mark.parametrize("kind", sorted(PRE_TYPES))
def test_each_pre_type_splits_as_its_list_of_regexes(kind: str) -> None:
    patterns = PRE_TYPES[kind].patterns
    for pattern in patterns:
        regex.compile(pattern)
    steps = split_steps(patterns)
    ours = build_pre_tokenizer(describe_pre_tokenizer({**steps, "pretokenizers": steps["pretokenizers"][:-1]}))
    library = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(p), behavior="isolated") for p in patterns])
    for text in SAMPLES:
        expected = list_split(patterns, text)
        assert [piece for piece, _ in ours([(text, True)])] == expected, (kind, text)
        assert [piece for piece, _ in library.pre_tokenize_str(text)] == expected, (kind, text)


def test_pre_types_split_as_llama_cpp_says() -> None:
    def split(name: str, text: str) -> list[str]:
        return list_split(pre_type_for(name)[0].patterns, text)

    assert split("default", "x 1234567!") == ["x", " ", "123", "456", "7", "!"]
    assert split("falcon", "1234567") == ["123", "456", "7"]
    assert split("starcoder", " 123") == [" ", "1", "2", "3"]
    assert split("llama-bpe", "I'M 1234567") == ["I", "'M", " ", "123", "456", "7"]
    assert split("qwen2", "I'M 123 it'ſa") == ["I", "'M", " ", "1", "2", "3", " it", "'ſa"]  # ('[sS]: no ſ)
    assert split("deepseek-v3", "東京abc1234") == ["東京", "abc", "123", "4"]
    assert split("deepseek-llm", "Hello\nworld  ") == ["Hello", "\n", "world", "  "]
    assert split("deepseek-coder", "ab12") == ["ab", "1", "2"]
    assert split("bloom", "Hi, there! ok") == ["Hi", ",", " there", "!", " ok"]
    assert split("viking", "a12") == ["a", "1", "2"]
    assert split("gpt-4o", "HelloWorld ÉCOLEschool") == ["Hello", "World", " ÉCOLEschool"]
    assert split("tekken", "e\u0301t\u00e9") == ["e", "\u0301t\u00e9"]  # (a mark is no letter there)


def test_names_map_to_types_and_unknown_names_fall_back_with_a_note() -> None:
    assert all(name in PRE_TYPES for name in PRE_NAMES.values())
    assert not OWN_CODE & set(PRE_NAMES)
    assert pre_type_for("llama-bpe") == (PRE_TYPES["llama3"], None)
    for name in (None, "no-such-pre", "kimi-k2"):
        kind, note = pre_type_for(name)
        assert kind is PRE_TYPES["default"] and note and "'default'" in note


@pytest.mark.parametrize("pre", [None, "no-such-pre"])
def test_unknown_pre_opens_with_the_fallback_and_says_so(pre: str | None) -> None:
    library, _ = trained_byte_level("default")
    tokens, types, merges = tokenizer_json_parts(json.loads(library.to_str()))
    tok = opened(write_gguf(byte_level_keys(tokens, types, merges, pre)))
    steps = json.loads(tok.pipeline)["pre_tokenizer"]["pretokenizers"]
    assert [s["pattern"]["Regex"] for s in steps[:-1]] == list(PRE_TYPES["default"].patterns)
    assert any("'default'" in note for note in tok.notes)
    assert ids_of(tok, TEXTS[0]) == library.encode(TEXTS[0]).ids


# --- detection and refusals -----------------------------------------------------------------------------


def tiny(model: str = "gpt2", **more: Any) -> bytes:
    def add(writer: Any) -> None:
        writer.add_tokenizer_model(model)
        writer.add_token_list(more.get("tokens", ["a", "b", "ab"]))
        if "types" in more:
            writer.add_token_types(more["types"])
        if model == "gpt2":
            writer.add_token_merges(["a b"])
        if "add_bos" in more:
            writer.add_add_bos_token(more["add_bos"])
    return write_gguf(add)


def test_detected_by_its_magic() -> None:
    assert detect_format(tiny()) == "gguf"
    assert detect_format(tiny(), "tokenizer.model") == "gguf"
    assert ids_of(opened(tiny()), "abba") == [2, 1, 0]


@pytest.mark.parametrize("model", ["bert", "t5", "rwkv", "plamo2", "none", "something-new"])
def test_other_tokenizer_types_are_refused_naming_the_type(model: str) -> None:
    with pytest.raises(TokenizerError) as caught:
        opened(tiny(model))
    assert repr(model) in caught.value.message and "'gpt2'" in caught.value.message


def test_refusals_name_what_is_wrong() -> None:
    cases = {
        b"": "not a tokenizer file",
        tiny()[:40]: "only 40 were sent",
        tiny(tokens=["a", "b", "a"]): "token 2 ('a') is already token 0",
        tiny(tokens=["a", "b", "ab", "c"], add_bos=True): "add_bos_token is true, but tokenizer.ggml.bos_token_id",
        tiny(types=[1, 1]): "2 values for 3 tokens",
        write_gguf(lambda w: w.add_string("general.name", "x")): "holds no tokenizer",
    }
    for data, message in cases.items():
        with pytest.raises(TokenizerError) as caught:
            opened(data)
        assert message in caught.value.message, caught.value.message
    with pytest.raises(TokenizerError, match="binary"):
        import_tokenizer("GGUF as text", fmt="gguf")


# --- special tokens as llama.cpp cuts them (its own ids: test_gguf_llama_cpp.py) ------------------------


def _with_extra(pre: str, extra: list[tuple[str, int]], **keys: Any) -> Any:
    library, _ = trained_byte_level("gpt-2")
    tokens, types, merges = tokenizer_json_parts(json.loads(library.to_str()))
    for content, kind in extra:
        tokens.append(content)
        types.append(kind)
    name = keys.pop("name", None)
    add_keys = byte_level_keys(tokens, types, merges, pre, **keys)

    def add(writer: Any) -> None:
        add_keys(writer)
        if name is not None:
            writer.add_string("general.name", name)
    return opened(write_gguf(add)), tokens


def test_overlapping_special_tokens_the_longer_first() -> None:
    tok, tokens = _with_extra("gpt-2", [("abc<", int(TokenType.USER_DEFINED)), ("<tag>", int(TokenType.CONTROL))])
    user, control = tokens.index("abc<"), tokens.index("<tag>")
    every = frozenset(tok.special_tokens)
    assert control in ids_of(tok, "xabc<tag>y", every) and user not in ids_of(tok, "xabc<tag>y", every)
    assert user in ids_of(tok, "xabc<tag>y")  # (a control token is not looked for when special tokens are text)


def test_tokens_typed_by_their_text_and_stripped_by_model_name() -> None:
    tok, tokens = _with_extra("gpt-2", [("<|channel|>", int(TokenType.CONTROL)), ("<|im_end|>", int(TokenType.NORMAL))])
    assert tokens.index("<|channel|>") in ids_of(tok, "a<|channel|>b")  # (gpt-oss's: always cut out)
    assert tokens.index("<|im_end|>") in ids_of(tok, "a<|im_end|>", frozenset(tok.special_tokens))  # (made control)
    assert tokens.index("<|im_end|>") not in ids_of(tok, "a<|im_end|>")
    jina, tokens = _with_extra("jina-v2-es", [("<mask>", int(TokenType.CONTROL))])
    assert ids_of(jina, "a  <mask>", frozenset(jina.special_tokens)) == [*ids_of(jina, "a"), tokens.index("<mask>")]
    phi, tokens = _with_extra("gpt-2", [("<unk>", int(TokenType.UNKNOWN)), ("<s>", int(TokenType.CONTROL)),
                                        ("</s>", int(TokenType.CONTROL))], name="Phi-3-mini")
    assert ids_of(phi, "</s>  x", frozenset(phi.special_tokens)) == [tokens.index("</s>"), *ids_of(phi, "x")]
    assert ids_of(phi, "<s> x", frozenset(phi.special_tokens)) == [tokens.index("<s>"), *ids_of(phi, " x")]


def test_a_llama_file_puts_a_space_symbol_after_each_special_token() -> None:
    tok = opened(gguf_from_model_proto(mistral("v1"), add_bos=True))
    pieces = {v: k for k, v in tok.vocab.items()}
    ids = ids_of(tok, "<s>hi</s> x", frozenset(tok.special_tokens))
    assert [pieces[i] for i in ids] == ["<s>", "\u2581hi", "</s>", "\u2581", "\u2581x"]
