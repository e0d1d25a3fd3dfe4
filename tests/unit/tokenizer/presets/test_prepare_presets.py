"""The set-up step that converts and precompiles the presets before any request
(webapp.tokenizer.presets.prepare, run by the Makefile).

It must write where the web app reads, and afterwards a fresh process must load
a preset from those files without converting ranks or compiling merges.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import make_app
from webapp import PROJECT_ROOT
from webapp.tokenizer.caches import BoundedCache
from webapp.tokenizer.core.list_order import byte_level
from webapp.tokenizer.presets import openai as presets, prepare as prepare_presets


@pytest.fixture
def fresh(monkeypatch):
    """Empty in-process caches, restored afterwards (other tests keep theirs)."""
    for name in ("_LOADED", "_COMPILED", "_RANKS"):
        cache = getattr(presets, name)
        monkeypatch.setattr(presets, name, BoundedCache(cache.max_entries, cache.max_weight, weigh=cache.weigh))


def test_prepare_writes_files_that_load_without_converting(tmp_path, fresh, monkeypatch, capsys):
    assert prepare_presets.main([str(tmp_path), "--only", "gpt2"]) == 0
    assert "preset r50k_base: ready" in capsys.readouterr().out
    assert presets.is_prepared(tmp_path, "r50k_base") and not presets.is_prepared(tmp_path, "cl100k_base")
    presets.clear_caches()

    def refuse(*_args, **_kwargs):
        raise AssertionError("converted or compiled again instead of reading the prepared files")

    monkeypatch.setattr(presets, "convert_preset", refuse)
    monkeypatch.setattr(byte_level, "compile_byte_merges", refuse)
    tok = presets.load_preset("r50k_base", tmp_path)
    compiled = presets.load_compiled("r50k_base", tmp_path)
    # the prepared tokenizer is the real one: every rank past the 256 bytes is a merge
    assert len(tok.merges) == len(compiled) == presets.get_preset("r50k_base").n_ranks - 256
    assert dict(tok.special_tokens) == {"<|endoftext|>": 50256}


def test_prepare_writes_where_the_app_reads(tmp_path, monkeypatch):
    app = make_app(tmp_path)
    assert Path(app.instance_path) / "presets" == prepare_presets.DEFAULT_CACHE_DIR
    assert presets.get_cache_dir() == prepare_presets.DEFAULT_CACHE_DIR
    makefile = (PROJECT_ROOT / "Makefile").read_text()
    step = re.search(r"^\t\$\(PY\) -m webapp\.tokenizer\.presets\.prepare (\S+) --only \$\(OPENAI_PRESETS\)$",
                     makefile, re.M)
    assert step is not None
    folder = step.group(1).replace("$(PRESETS_DIR)", re.search(r"^PRESETS_DIR := (\S+)$", makefile, re.M).group(1))
    assert PROJECT_ROOT / folder == prepare_presets.DEFAULT_CACHE_DIR
    # make run / serve-prod / test all go through `setup`, which prepares OpenAI's; the open models
    # before `make test` and `make serve-prod`, and in the background of `make run`
    assert re.search(r"^setup: .*\$\(PRESETS_DIR\)/\.prepared", makefile, re.M)
    assert re.search(r"^setup-test: .*\$\(PRESETS_DIR\)/\.prepared-open", makefile, re.M)
    assert re.search(r"^serve-prod: .*\$\(PRESETS_DIR\)/\.prepared-open", makefile, re.M)
    assert re.search(r"^run: .*prepare-open-background", makefile, re.M)


def test_a_missing_package_is_a_clear_failure(tmp_path, fresh, monkeypatch, capsys):
    monkeypatch.setenv("PLAYGROUND_JS_TIKTOKEN_RANKS", str(tmp_path / "nothing-here"))
    assert prepare_presets.main([str(tmp_path / "cache"), "--only", "r50k_base"]) == 1
    assert "npm ci" in capsys.readouterr().err
    assert not presets.is_prepared(tmp_path / "cache", "r50k_base")


def test_an_open_model_is_prepared_and_the_marker_is_gone_after(tmp_path, capsys):
    from webapp.tokenizer.presets import catalog, open_models

    if not open_models.is_installed("llama2"):
        pytest.skip("the @lenml packages are not installed (npm ci)")
    assert prepare_presets.main([str(tmp_path), "--only", "llama2"]) == 0
    assert "preset llama2: ready" in capsys.readouterr().out
    assert catalog.is_prepared(tmp_path, "llama2") and not (tmp_path / catalog.PREPARING_MARKER).exists()
