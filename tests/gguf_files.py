"""GGUF files for the tests, written by the `gguf` package's own writer (vocab-only, no tensors).

`gguf_from_tokenizer_json` lays a tokenizer.json out as llama.cpp's converter does for a byte-level
model (model "gpt2": its vocab in id order, added tokens typed CONTROL when special and USER_DEFINED
otherwise, ids nobody holds filled with "[PAD<id>]" UNUSED tokens, merges as "a b", the pre-tokenizer's
name, BOS from the file's post-processor); `gguf_from_model_proto` does the same for a SentencePiece
.model (model "llama": pieces, scores, types, the dummy prefix). Any key can be added or left out.
`preset_gguf` is a preset's `export_gguf` file, written once per test run and shared by the workers.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable

import gguf
import pytest
from gguf import TokenType

Add = Callable[[Any], None]


def write_gguf(add: Add, arch: str = "llama") -> bytes:
    """The bytes of a vocab-only GGUF file (architecture `arch`) after `add(writer)`."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "vocab.gguf"
        writer = gguf.GGUFWriter(path, arch)
        add(writer)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_ti_data_to_file()
        writer.close()
        return path.read_bytes()


def byte_level_keys(tokens: list[str], types: list[int], merges: list[str], pre: str | None,
                    **ids: int | bool) -> Add:
    """The keys of a "gpt2" tokenizer (`ids`: bos=, eos=, add_bos=, add_eos=, each written when given)."""
    def add(writer: Any) -> None:
        writer.add_tokenizer_model("gpt2")
        if pre is not None:
            writer.add_tokenizer_pre(pre)
        writer.add_token_list(tokens)
        writer.add_token_types(types)
        writer.add_token_merges(merges)
        _add_ids(writer, ids)
    return add


def _add_ids(writer: Any, ids: dict[str, int | bool]) -> None:
    if "bos" in ids:
        writer.add_bos_token_id(ids["bos"])
    if "eos" in ids:
        writer.add_eos_token_id(ids["eos"])
    if "add_bos" in ids:
        writer.add_add_bos_token(ids["add_bos"])
    if "add_eos" in ids:
        writer.add_add_eos_token(ids["add_eos"])


def tokenizer_json_parts(document: dict[str, Any]) -> tuple[list[str], list[int], list[str]]:
    """A tokenizer.json's tokens, token types and merges as the converter writes them."""
    vocab: dict[str, int] = document["model"]["vocab"]
    added = {t["id"]: t for t in document.get("added_tokens", [])}
    size = max([*vocab.values(), *added]) + 1
    tokens: list[str | None] = [None] * size
    types = [int(TokenType.NORMAL)] * size
    for token, i in vocab.items():
        tokens[i] = token
    for i, token in added.items():
        tokens[i] = token["content"]
        types[i] = int(TokenType.CONTROL if token["special"] else TokenType.USER_DEFINED)
    for i, token in enumerate(tokens):
        if token is None:
            tokens[i], types[i] = f"[PAD{i}]", int(TokenType.UNUSED)
    merges = [m if isinstance(m, str) else " ".join(m) for m in document["model"]["merges"]]
    return [str(t) for t in tokens], types, merges


def gguf_from_tokenizer_json(text: str, pre: str | None, **ids: int | bool) -> bytes:
    """A "gpt2" GGUF file holding a byte-level tokenizer.json's vocabulary."""
    tokens, types, merges = tokenizer_json_parts(json.loads(text))
    return write_gguf(byte_level_keys(tokens, types, merges, pre, **ids))


def gguf_from_model_proto(data: bytes, *, add_space_prefix: bool | None = True, template: str | None = None,
                          name: str | None = None, **ids: int | bool) -> bytes:
    """A "llama" GGUF file holding a SentencePiece .model's pieces (BOS / EOS / UNK ids from its spec;
    `name`: general.name, which llama.cpp reads some token attributes from)."""
    from sentencepiece import sentencepiece_model_pb2 as pb

    model = pb.ModelProto()
    model.ParseFromString(data)

    def add(writer: Any) -> None:
        if name is not None:
            writer.add_string("general.name", name)
        writer.add_tokenizer_model("llama")
        writer.add_token_list([p.piece for p in model.pieces])
        writer.add_token_scores([p.score for p in model.pieces])
        writer.add_token_types([p.type for p in model.pieces])
        writer.add_unk_token_id(model.trainer_spec.unk_id)
        defaults: dict[str, int | bool] = {"bos": model.trainer_spec.bos_id, "eos": model.trainer_spec.eos_id}
        _add_ids(writer, {**defaults, **ids})
        if add_space_prefix is not None:
            writer.add_add_space_prefix(add_space_prefix)
        if template is not None:
            writer.add_chat_template(template)
    return write_gguf(add)


def _run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of this test run that every pytest-xdist worker sees (the workers' common parent)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def preset_gguf(name: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The file `export_gguf` writes for preset `name`, exported once per test run: the export is
    deterministic and takes seconds, and three test modules on different workers need every preset's.
    A lock per preset makes a second worker wait for the first's file instead of exporting it again."""
    from webapp.tokenizer.formats.gguf_export import export_gguf
    from webapp.tokenizer.presets import catalog

    folder = _run_folder(tmp_path_factory) / "gguf-presets"
    folder.mkdir(exist_ok=True)
    path = folder / f"{name}.gguf"
    with open(folder / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not path.exists():
            partial = path.with_suffix(".partial")
            partial.write_bytes(export_gguf(catalog.load_preset(name)))
            partial.replace(path)  # (whole or absent, whatever stops this worker)
    return path
