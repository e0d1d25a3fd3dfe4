"""GGUF export (webapp/tokenizer/formats/gguf_export.py) against llama.cpp itself.

Every preset is exported (once per run: tests/gguf_files.py), the files are loaded by llama.cpp
(tests/oracles/llama_cpp.py: node-llama-cpp, vocabulary only, all in one node process), and llama.cpp's
ids for the texts of gguf_texts.py are compared with the original library's on the same text: tiktoken
for the OpenAI presets and Tekken, `tokenizers` on the published tokenizer.json, `sentencepiece` on
Mistral's .model files. Where llama.cpp itself tokenizes differently from the original, the texts that
differ are listed exactly (`LLAMA_CPP_DIFFERS`), so that any change, better or worse, shows. Each file is also read back with our own `read_metadata`.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from pathlib import Path
from typing import Any, Callable

import pytest

from tests.gguf_files import preset_gguf
from tests.oracles.llama_cpp import LlamaAnswer, LlamaRequest, require_llama_cpp, tokenize_files_with_llama_cpp
from tests.unit.tokenizer.formats.gguf_texts import TEXTS
from webapp.tokenizer import TokenizerError
from webapp.tokenizer.formats.dispatch import export_tokenizer
from webapp.tokenizer.formats.gguf import read_metadata
from webapp.tokenizer.formats.gguf_export import LLAMA_PRE, export_gguf, llama_pre_for, plan_gguf
from webapp.tokenizer.presets import catalog, open_models
from webapp.tokenizer.presets.openai import load_ranks

gguf = pytest.importorskip("gguf")

OPENAI = ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"]
OPEN = [p.name for p in open_models.OPEN_MODEL_LIST]
SPECIAL = ["r50k_base", "llama3", "mistral_v3"]  # (one of each kind of file)
#: The llama.cpp pre-tokenizer each byte-level preset is written with (None: a SentencePiece-style one).
PRE = {"r50k_base": "gpt-2", "p50k_base": "gpt-2", "cl100k_base": "llama-bpe", "o200k_base": "gpt-4o",
       "llama3": "llama-bpe", "qwen3": "qwen2", "deepseek_v3": "deepseek-v3", "gpt_oss": "gpt-4o",
       "mistral_tekken": "tekken", "llama2": None, "gemma3": None, "mistral_v1": None, "mistral_v3": None}
#: The texts on which llama.cpp's ids differ from the original library's, measured, with why:
#: - "gpt-4o" and "tekken": llama.cpp's regex engine has no \p{Lu}-style classes, so its versions of
#:   these patterns test letters as `(?=[\p{L}])([^a-z])`, leaving out \p{M}; the combining marks of
#:   Devanagari and Thai (vowel signs, viramas: category Mn/Mc, not L) then end a word where the original
#:   pattern, whose letter classes hold \p{M}, keeps going.
#: - qwen3: its tokenizer.json composes the text (NFC) before splitting; llama.cpp applies no normalizer,
#:   so a letter followed by a combining accent stays two characters.
_MARKS = {"hindi", "thai", "mixed_scripts"}
LLAMA_CPP_DIFFERS: dict[str, set[str]] = {"o200k_base": _MARKS, "gpt_oss": _MARKS, "mistral_tekken": _MARKS,
                                          "qwen3": {"decomposed"}}


def _tiktoken_reference(name: str) -> Callable[[str], list[int]]:
    tiktoken = pytest.importorskip("tiktoken")
    openai_public = pytest.importorskip("tiktoken_ext.openai_public")
    with pytest.MonkeyPatch.context() as patch:  # (the ranks from our installed copy, never downloaded)
        patch.setattr(openai_public, "load_tiktoken_bpe", lambda *a, **k: dict(load_ranks(name)))
        definition = openai_public.ENCODING_CONSTRUCTORS[name]()
    encoding = tiktoken.Encoding(name=f"oracle-{name}", pat_str=definition["pat_str"],
                                 mergeable_ranks=definition["mergeable_ranks"], special_tokens={})
    return encoding.encode_ordinary


def reference(name: str) -> Callable[[str], list[int]]:
    """The original library's ids (no special tokens added) under preset `name`."""
    if name in OPENAI:
        return _tiktoken_reference(name)
    preset = open_models.OPEN_MODELS[name]
    if preset.kind == "tokenizer.json":
        from tokenizers import Tokenizer

        library = Tokenizer.from_file(str(preset.file_path()))
        return lambda text: library.encode(text, add_special_tokens=False).ids
    if preset.kind == "tekken":  # (mistral-common's Tekkenizer: tiktoken on the file's ranks and pattern, ids + specials)
        tiktoken = pytest.importorskip("tiktoken")
        data = json.loads(open_models.file_bytes(name))
        special = data["config"]["default_num_special_tokens"]
        inner = data["config"]["default_vocab_size"] - special
        ranks = {base64.b64decode(x["token_bytes"]): x["rank"] for x in data["vocab"][:inner]}
        encoding = tiktoken.Encoding(name="tekken", pat_str=data["config"]["pattern"], mergeable_ranks=ranks,
                                     special_tokens={})
        return lambda text: [i + special for i in encoding.encode_ordinary(text)]
    spm = pytest.importorskip("sentencepiece")
    processor = spm.SentencePieceProcessor(model_proto=open_models.file_bytes(name))
    return lambda text: list(processor.encode(text))


@dataclasses.dataclass
class Exported:
    name: str
    tok: Any
    data: bytes
    path: Path


@pytest.fixture(scope="module", params=OPENAI + OPEN)
def exported(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Exported:
    name = request.param
    if not catalog.is_installed(name):
        pytest.skip(f"{name} is not installed (make setup)")
    tok = catalog.load_preset(name)
    path = preset_gguf(name, tmp_path_factory)
    return Exported(name, tok, path.read_bytes(), path)


@dataclasses.dataclass
class SpecialCase:
    """A text holding a preset's lowest-id special token (`token`), and llama.cpp's answers to it."""

    token: int
    plain: LlamaAnswer
    parsed: LlamaAnswer


#: llama.cpp's answers by preset for the texts of gguf_texts.py, and the special-token cases by preset.
Answers = tuple[dict[str, LlamaAnswer], dict[str, SpecialCase]]


def _special_text(name: str) -> tuple[str, int]:
    content, token = min(catalog.load_preset(name).special_tokens.items(), key=lambda kv: kv[1])
    return f"a{content}b", token


@pytest.fixture(scope="module")
def llama_answers(tmp_path_factory: pytest.TempPathFactory) -> Answers:
    """llama.cpp's answers for every installed preset's texts and for the special-token texts, from one node
    process: starting node and llama.cpp once instead of once per question."""
    require_llama_cpp()
    installed = [name for name in OPENAI + OPEN if catalog.is_installed(name)]
    requests = [LlamaRequest(preset_gguf(name, tmp_path_factory), list(TEXTS.values())) for name in installed]
    specials = {name: _special_text(name) for name in SPECIAL if name in installed}
    for name, (text, _token) in specials.items():
        path = preset_gguf(name, tmp_path_factory)
        requests += [LlamaRequest(path, [text]), LlamaRequest(path, [text], special=True, add_bos=True)]
    answers = tokenize_files_with_llama_cpp(requests)
    rest = iter(answers[len(installed):])
    cases = {name: SpecialCase(token, next(rest), next(rest)) for name, (_text, token) in specials.items()}
    return dict(zip(installed, answers)), cases


@pytest.mark.slow
def test_llama_cpp_gives_the_original_librarys_ids(exported: Exported, llama_answers: Answers) -> None:
    require_llama_cpp()
    answer = llama_answers[0][exported.name]
    original = reference(exported.name)
    differ = {key for (key, text), ids in zip(TEXTS.items(), answer.ids) if ids != original(text)}
    assert differ == LLAMA_CPP_DIFFERS.get(exported.name, set()), exported.name
    assert answer.vocabulary_type == ("spm" if PRE[exported.name] is None else "bpe")


@pytest.mark.slow
def test_the_file_reads_back_with_its_tokenizer_keys(exported: Exported) -> None:
    meta = read_metadata(exported.data)
    values = meta.values
    pre = PRE[exported.name]
    assert meta.tensor_count == 0 and values["general.architecture"] == "llama"
    assert values["tokenizer.ggml.model"] == ("llama" if pre is None else "gpt2")
    assert values.get("tokenizer.ggml.pre") == pre
    tokens = values["tokenizer.ggml.tokens"]
    types = values["tokenizer.ggml.token_type"]
    assert len(tokens) == len(types) == len(set(tokens))
    pipeline = json.loads(exported.tok.pipeline) if exported.tok.pipeline else {}
    flagged = {i: special for _c, i, special, *_ in pipeline.get("added_tokens", [])}
    for content, i in exported.tok.special_tokens.items():  # (under their own text, not GPT-2's spelling)
        if pre is None and content.startswith("<0x") and len(content) == 6:
            continue  # (Gemma 3 lists its byte pieces as added tokens: written as BYTE, checked below)
        wanted = (gguf.TokenType.UNKNOWN if i == exported.tok.unk_id
                  else gguf.TokenType.CONTROL if flagged.get(i, True) else gguf.TokenType.USER_DEFINED)
        assert tokens[i] == content and types[i] == wanted, (content, i)
    if pre is None:
        scores = values["tokenizer.ggml.scores"]
        assert len(scores) == len(tokens) and "tokenizer.ggml.merges" not in values
        assert values["tokenizer.ggml.unknown_token_id"] == exported.tok.unk_id
        assert types[exported.tok.unk_id] == gguf.TokenType.UNKNOWN
        assert tokens.index("<0x0A>") == [i for i, t in enumerate(types) if t == gguf.TokenType.BYTE][10]
        assert values["tokenizer.ggml.add_space_prefix"] == (exported.name != "gemma3")
        assert values["tokenizer.ggml.add_bos_token"] is True
    else:
        merges = values["tokenizer.ggml.merges"]
        assert len(merges) == len(exported.tok.merges) and all(m.count(" ") == 1 for m in merges)
        assert "Ġ" in tokens and "Ġthe" in tokens  # (GPT-2's spelling: a space is Ġ)
        # (none of these files' post-processors adds a token: the published llama3 tokenizer.json has none)
        assert values["tokenizer.ggml.add_bos_token"] is False
    for key in ("tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id"):
        assert key not in values or types[values[key]] == gguf.TokenType.CONTROL, key


@pytest.mark.slow
@pytest.mark.parametrize("name", SPECIAL)
def test_special_tokens_are_parsed_only_when_asked(name: str, llama_answers: Answers) -> None:
    require_llama_cpp()
    if not catalog.is_installed(name):
        pytest.skip(f"{name} is not installed (make setup)")
    case = llama_answers[1][name]
    plain = case.plain.ids[0]
    parsed = case.parsed
    assert case.token not in plain
    assert case.token in parsed.ids[0]
    assert (parsed.ids[0][0] == parsed.bos) is parsed.prepends_bos


# --- the pre-tokenizer names, and what cannot be written


def test_each_llama_pre_name_is_found_from_its_own_patterns() -> None:
    for name, patterns in LLAMA_PRE.items():
        assert llama_pre_for(patterns) == name
    assert llama_pre_for((r"\w+",)) is None
    # (a file may hold a line break as an escape or as the character itself)
    assert llama_pre_for(tuple(p.replace(r"\r", "\r") for p in LLAMA_PRE["deepseek-v3"])) == "deepseek-v3"


def _r50k() -> Any:
    if not catalog.is_installed("r50k_base"):
        pytest.skip("r50k_base is not installed (make setup)")
    return catalog.load_preset("r50k_base")


def test_a_tokenizer_that_does_not_split_text_is_refused() -> None:
    tok = dataclasses.replace(_r50k(), pretokenize="none")
    with pytest.raises(TokenizerError, match="does not split text") as caught:
        export_gguf(tok)
    assert caught.value.field == "format"


def test_a_pattern_llama_cpp_has_no_name_for_is_refused_naming_it() -> None:
    pipeline = {"v": 1, "normalizer": None, "decoder": None, "added_tokens": [], "post": [[], []],
                "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                    {"type": "Split", "pattern": {"Regex": r"\w+|\W"}, "behavior": "Isolated", "invert": False},
                    {"type": "ByteLevel", "add_prefix_space": False, "use_regex": False}]}}
    tok = dataclasses.replace(_r50k(), pipeline=json.dumps(pipeline))
    with pytest.raises(TokenizerError, match=r"no llama.cpp pre-tokenizer .*\\w\+\|\\W"):
        plan_gguf(tok)


def test_a_character_level_tokenizer_without_sentencepiece_spaces_is_refused() -> None:
    from webapp.tokenizer.formats import from_playground

    tok = from_playground(level="chars", merges=[("a", "b")], vocab={})
    with pytest.raises(TokenizerError, match="character-level"):
        export_tokenizer(tok, "gguf")


def test_export_tokenizer_names_the_file_and_its_media_type() -> None:
    content, filename, mimetype = export_tokenizer(_r50k(), "gguf")
    assert isinstance(content, bytes) and content[:4] == b"GGUF"
    assert (filename, mimetype) == ("tokenizer.gguf", "application/octet-stream")
    with pytest.raises(TokenizerError, match="pre-tokenizer"):
        export_tokenizer(_r50k(), "gguf", "cl100k")


def test_a_chat_template_opened_with_the_tokenizer_is_written() -> None:
    from webapp.tokenizer.chat.templates import ChatTemplate

    template = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}"
    tok = dataclasses.replace(_r50k(), chat=ChatTemplate(template).to_json())
    assert read_metadata(export_gguf(tok)).values["tokenizer.chat_template"] == template
    assert "tokenizer.chat_template" not in read_metadata(export_gguf(_r50k())).values
