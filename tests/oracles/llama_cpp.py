"""llama.cpp's own tokenizer as a test oracle: token ids of texts under a GGUF file, from llama.cpp itself.

`tokenize_with_llama_cpp(path, texts)` runs tests/oracles/llama_tokenize.mjs once (one node process,
the file's vocabulary loaded once) for the whole batch; `tokenize_files_with_llama_cpp(requests)`
does several files in one node process. The script uses node-llama-cpp and its prebuilt
CPU binaries for x64 Linux, which `make test` installs into tests/oracles/node_modules (package.json
and package-lock.json beside this file; `make run` does not need them). `require_llama_cpp()` skips
the calling test, saying what is missing, when node or that package is not there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import pytest

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "llama_tokenize.mjs"
PACKAGE = HERE / "node_modules" / "node-llama-cpp"
BINARIES = HERE / "node_modules" / "@node-llama-cpp" / "linux-x64"
#: Seconds one batch may take: loading a 260,000-token vocabulary takes about 2 s here, tokenizing
#: a few dozen texts well under one.
TIMEOUT = 240


@dataclass(frozen=True)
class LlamaAnswer:
    """What llama.cpp made of a file: the ids of each text, and how it reads the file's special tokens."""

    ids: list[list[int]]
    vocabulary_type: str
    bos: int | None
    eos: int | None
    prepends_bos: bool
    appends_eos: bool
    #: The ids of every text again under each of the request's other `modes` (special, add_bos).
    modes: list[list[list[int]]] = field(default_factory=list)
    #: With `time_rounds`: each round's wall time, in seconds, of tokenizing all the texts inside node.
    seconds: list[float] = field(default_factory=list)
    #: Wall time of loading the file's vocabulary in node (node-llama-cpp's loadModel, vocabulary only).
    load_seconds: float = 0.0


def missing_llama_cpp() -> str | None:
    """Why the oracle cannot run here, or None."""
    if shutil.which("node") is None:
        return "node is not installed (make test installs it with the other Debian packages)"
    if not PACKAGE.is_dir() or not BINARIES.is_dir():
        return ("node-llama-cpp is not installed in tests/oracles/node_modules "
                "(make test installs it: `make tests/oracles/node_modules/.installed`)")
    return None


def require_llama_cpp() -> None:
    """Skip the calling test, naming what is missing, when llama.cpp cannot be run."""
    why = missing_llama_cpp()
    if why is not None:
        pytest.skip(f"llama.cpp oracle unavailable: {why}")


@dataclass(frozen=True)
class LlamaRequest:
    """One file's texts and flags (see `tokenize_with_llama_cpp`)."""

    path: str | os.PathLike[str]
    texts: Sequence[str]
    special: bool = False
    add_bos: bool = False
    modes: Sequence[tuple[bool, bool]] = ()
    time_rounds: int = 0

    def as_json(self) -> dict[str, object]:
        return {"path": str(self.path), "texts": list(self.texts), "special": self.special, "add_bos": self.add_bos,
                "modes": [{"special": s, "add_bos": b} for s, b in self.modes], "time_rounds": self.time_rounds}


def _answer(answer: dict[str, Any]) -> LlamaAnswer:
    return LlamaAnswer(answer["ids"], answer["vocabulary_type"], answer["bos"], answer["eos"],
                       answer["prepends_bos"], answer["appends_eos"], answer.get("modes", []),
                       answer.get("seconds", []), answer.get("load_seconds", 0.0))


def _run_node(request: dict[str, object], timeout: float, what: str) -> Any:
    done = subprocess.run(["node", str(SCRIPT)], input=json.dumps(request).encode("utf-8"), capture_output=True,
                          timeout=timeout, cwd=HERE, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"llama.cpp could not tokenize with {what}: "
                           f"{done.stderr.decode('utf-8', 'replace')[-2000:]}")
    return json.loads(done.stdout)


def tokenize_with_llama_cpp(path: str | os.PathLike[str], texts: Sequence[str], *, special: bool = False,
                            add_bos: bool = False, modes: Sequence[tuple[bool, bool]] = (),
                            time_rounds: int = 0) -> LlamaAnswer:
    """llama.cpp's ids for each text under the GGUF at `path` (see llama_tokenize.mjs for the flags);
    `modes`: more (special, add_bos) pairs to tokenize the same texts with, in the same node process;
    `time_rounds`: also time that many rounds of tokenizing all the texts, inside node."""
    request = LlamaRequest(path, texts, special, add_bos, modes, time_rounds)
    return _answer(_run_node(request.as_json(), TIMEOUT, str(path)))


def tokenize_files_with_llama_cpp(requests: Sequence[LlamaRequest]) -> list[LlamaAnswer]:
    """`tokenize_with_llama_cpp` for each request, in one node process: node and llama.cpp start once
    (over a second of CPU each time) instead of once per file."""
    if not requests:
        return []
    names = ", ".join(str(r.path) for r in requests)
    answer = _run_node({"requests": [r.as_json() for r in requests]}, TIMEOUT * len(requests), names)
    return [_answer(one) for one in answer["answers"]]
