"""A GGUF file opened by the playground gives llama.cpp's own ids (tests/oracles/llama_cpp.py).

Each file is opened with `import_tokenizer` and encoded here; llama.cpp (node-llama-cpp, vocabulary only)
tokenizes the same texts, every file in one node process, under four flags: special tokens parsed or not,
BOS added or not. The files: every preset exported with `export_gguf`, a small byte-level model trained
with `tokenizers` for each of llama.cpp's pre-tokenizer types the playground has, and files made to show
what llama.cpp does its own way (special tokens that overlap, Phi-3's rstrip by model name, Jina's
lstrip by pre-tokenizer name). The texts: the 42 of gguf_texts.py and, per file, texts made of its
special tokens. Where ids differ, the texts are listed exactly (`DIFFERS`), each explained in
docs/formats.md ("What matches llama.cpp, measured").
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

gguf = pytest.importorskip("gguf")
from gguf import TokenType  # noqa: E402
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers  # noqa: E402

from tests.gguf_files import byte_level_keys, preset_gguf, tokenizer_json_parts, write_gguf  # noqa: E402
from tests.oracles.llama_cpp import LlamaAnswer, LlamaRequest, require_llama_cpp  # noqa: E402
from tests.oracles.llama_cpp import tokenize_files_with_llama_cpp  # noqa: E402
from tests.unit.tokenizer.formats.gguf_texts import TEXTS  # noqa: E402
from webapp.tokenizer import import_tokenizer  # noqa: E402
from webapp.tokenizer.formats.gguf_pre import PRE_NAMES, PRE_TYPES  # noqa: E402
from webapp.tokenizer.presets import catalog, open_models  # noqa: E402
from webapp.tokenizer.stages import tokenizer_of  # noqa: E402

pytestmark = pytest.mark.slow

PRESETS = ["r50k_base", "cl100k_base", "o200k_base", "llama3", "qwen3", "deepseek_v3", "gpt_oss", "mistral_tekken",
           "llama2", "gemma3", "mistral_v1", "mistral_v3"]
#: One llama.cpp name for each pre-tokenizer type (the first the table lists).
TYPE_NAMES = {kind: next(n for n, k in PRE_NAMES.items() if k == kind) for kind in sorted(PRE_TYPES)}
MODES = [(False, False), (True, False), (False, True), (True, True)]  # (special tokens parsed, BOS added)
#: Special tokens worth a text of their own where a file has them (llama.cpp types some by their text).
NAMED = ("<unk>", "<s>", "</s>", "<|endoftext|>", "<|channel|>", "<|message|>", "<|start|>", "<|end|>", "<|return|>",
         "<|constrain|>", "<|im_start|>", "<|im_end|>", "<|begin_of_text|>", "<|eot_id|>", "<start_of_turn>",
         "<end_of_turn>", "[INST]", "[/INST]", "<mask>", "<pad>", "<bos>", "<eos>", "abc<", "<tag>")
#: (file, texts) where the playground's ids still differ from llama.cpp's, in any of the four modes.
DIFFERS: dict[str, set[str]] = {}


def special_texts(tok: Any) -> dict[str, str]:
    """Texts made of a file's special tokens: the first and last few by id and the named ones, joined, with
    spaces and on lines; and pairs that overlap (one's end is the other's start) where the file has them."""
    cut = tok.special_tokens
    by_id = sorted(cut, key=cut.__getitem__)
    chosen = list(dict.fromkeys([*by_id[:3], *[t for t in NAMED if t in cut], *by_id[-2:]]))
    texts = {"specials_joined": "".join(chosen), "specials_spaced": " ".join(f"{t}x" for t in chosen) + " ",
             "specials_lines": "\n".join(f"  {t} hello, world" for t in chosen)}
    overlapping = _overlaps(cut)
    if overlapping:
        texts["specials_overlap"] = " ".join(overlapping[:5])
    return texts


def _overlaps(tokens: dict[str, int]) -> list[str]:
    """Texts "a" + "b" where the special token a ends as the longer special token b starts (up to 12 characters)."""
    starting: dict[str, list[str]] = {}
    for b in tokens:
        for k in range(1, min(len(b), 12) + 1):
            starting.setdefault(b[:k], []).append(b)
    out: list[str] = []
    for a in sorted(tokens):
        for k in range(1, min(len(a), 12) + 1):
            b = next((b for b in starting.get(a[-k:], ()) if b != a and len(b) > k
                      and len(b.encode("utf-8")) > len(a.encode("utf-8"))), None)
            if b is not None:
                out.append(a[:-k] + b)
                break
    return out


@dataclass
class Case:
    name: str
    path: Path


# --- the files ------------------------------------------------------------------------------------------


def _preset(name: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not catalog.is_installed(name):
        pytest.skip(f"{name} is not installed (make setup)")
    return preset_gguf(name, tmp_path_factory)


CORPUS = [t for t in TEXTS.values() if t] * 10 + ["hello world, hello there; it's a test of the tokenizer 12345"] * 30


@lru_cache(maxsize=None)
def trained(kind: str) -> str:
    """A small byte-level BPE (tokenizer.json) trained through the type's regexes as Split steps."""
    library = Tokenizer(models.BPE())
    library.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Split(Regex(p), behavior="isolated") for p in PRE_TYPES[kind].patterns]
        + [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    library.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=["<|endoftext|>", "<|user|>", "<mask>"],
                                  show_progress=False, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    library.train_from_iterator(CORPUS, trainer)
    return str(library.to_str())


def _trained_file(kind: str, folder: Path, **more: Any) -> Path:
    tokens, types, merges = tokenizer_json_parts(json.loads(trained(kind)))
    for content, kind_of in more.pop("extra", ()):  # (tokens added past the vocabulary, with their type)
        tokens.append(content)
        types.append(int(kind_of))
    name = more.pop("name", None)
    pre = more.pop("pre", TYPE_NAMES[kind])
    # (BOS and EOS named, as the converter names them: node-llama-cpp reports a BOS only when it is a
    # control token, and llama.cpp's default for a "gpt2" file, id 11, is a byte here)
    keys = byte_level_keys(tokens, types, merges, pre, **{"bos": 0, "eos": 0, **more})

    def add(writer: Any) -> None:
        keys(writer)
        if name is not None:
            writer.add_string("general.name", name)
    path = folder / f"trained-{kind}-{pre}-{len(tokens)}-{name}.gguf"
    path.write_bytes(write_gguf(add))
    return path


def files(folder: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = {name: _preset(name, tmp_path_factory) for name in PRESETS}
    for kind in sorted(PRE_TYPES):
        out[f"trained {TYPE_NAMES[kind]}"] = _trained_file(kind, folder)
    # (a user-defined token whose end starts a longer control token: llama.cpp cuts the longer one first)
    out["overlapping specials"] = _trained_file("gpt2", folder, extra=[("abc<", TokenType.USER_DEFINED),
                                                                        ("<tag>", TokenType.CONTROL)])
    out["jina lstrip"] = _trained_file("gpt2", folder, pre="jina-v2-es")
    # (llama.cpp sets rstrip on every special token of a file named Phi-3 but <unk>, <s>, <|endoftext|>,
    # which it then requires, and </s>)
    out["phi-3 rstrip"] = _trained_file("gpt2", folder, name="Phi-3-mini-4k-instruct", extra=[
        ("<unk>", TokenType.UNKNOWN), ("<s>", TokenType.CONTROL), ("</s>", TokenType.CONTROL)])
    return out


# --- the comparison ---------------------------------------------------------------------------------------


@dataclass
class Ours:
    """A file's texts (by name) and the playground's ids for each, in each of the MODES."""

    texts: dict[str, str]
    ids: list[list[list[int]]]


def ours(path: Path) -> Ours:
    """The playground's ids for the file's texts (the 42 and its special tokens'), in every mode."""
    tok = import_tokenizer(path.read_bytes(), filename=path.name)
    texts = {**TEXTS, **special_texts(tok)}
    stages = tokenizer_of(tok)
    every = frozenset(tok.special_tokens)
    ids: list[list[list[int]]] = []
    for special, bos in MODES:
        encoded = [stages.encode(text, every if special else frozenset()) for text in texts.values()]
        ids.append([stages.post_process(one) for one in encoded] if bos else encoded)
    return Ours(texts, ids)


def differing(mine: Ours, answer: LlamaAnswer) -> tuple[set[str], list[str]]:
    """The texts (by name) whose ids differ from llama.cpp's in any mode, and a line per difference."""
    differ: set[str] = set()
    lines: list[str] = []
    for (special, bos), ids, expected in zip(MODES, mine.ids, [answer.ids, *answer.modes]):
        for key, own, theirs in zip(mine.texts, ids, expected):
            if own != theirs:
                differ.add(key)
                lines.append(f"{key} special={special} bos={bos}: ours {own[:12]} llama.cpp {theirs[:12]}")
    return differ, lines


@pytest.fixture(scope="module")
def gguf_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    require_llama_cpp()
    if not open_models.is_installed("llama3"):
        pytest.skip("the open-model presets are not installed (npm ci)")
    return files(tmp_path_factory.mktemp("gguf-llama"), tmp_path_factory)


def test_opened_files_give_llama_cpps_ids(gguf_files: dict[str, Path]) -> None:
    mine = {name: ours(path) for name, path in gguf_files.items()}
    # (every file in one node process: starting node and llama.cpp costs more than a small file's texts)
    answers = tokenize_files_with_llama_cpp([LlamaRequest(path, list(mine[name].texts.values()), modes=MODES[1:])
                                             for name, path in gguf_files.items()])
    found: dict[str, set[str]] = {}
    report: list[str] = []
    for name, answer in zip(gguf_files, answers):
        differ, lines = differing(mine[name], answer)
        if differ:
            found[name] = differ
            report += [f"{name}: {line}" for line in lines[:6]]
    assert found == DIFFERS, "\n".join(report)
