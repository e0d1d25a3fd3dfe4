"""The preset cache on disk (webapp/tokenizer/presets/cache.py): where it goes, two processes
filling it at once, damaged and stale files, and a folder that cannot be written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import tiktoken

from webapp import PROJECT_ROOT
from webapp.tokenizer.caches import BoundedCache
from webapp.tokenizer.presets import cache
from webapp.tokenizer.presets import openai as presets

ROOT = PROJECT_ROOT
TEXT = "Hello, world! naïve café 東京 12345  \n\t x"


@pytest.fixture
def fresh(monkeypatch):
    """Empty in-process preset caches (restored afterwards) and no folder chosen by set_cache_dir."""
    for name in ("_LOADED", "_COMPILED", "_RANKS"):
        old = getattr(presets, name)
        monkeypatch.setattr(presets, name, BoundedCache(old.max_entries, old.max_weight, weigh=old.weigh))
    monkeypatch.setattr(cache, "_CHOSEN", [None])
    cache.forget_warnings()


def expected_ids(text: str = TEXT) -> list[int]:
    preset = presets.get_preset("r50k_base")
    ranks = presets.parse_rank_bytes(presets.rank_file_bytes("r50k_base"))
    enc = tiktoken.Encoding("r50k", pat_str=preset.pattern, mergeable_ranks=ranks,
                            special_tokens=dict(preset.special_tokens))
    return enc.encode_ordinary(text)


def test_where_it_goes(tmp_path):
    fake = tmp_path / "site-packages"  # a folder that is no checkout
    (fake / "webapp").mkdir(parents=True)
    home = str(tmp_path / "home")
    assert cache.default_cache_dir({cache.CACHE_ENV: str(tmp_path / "mine")}) == tmp_path / "mine"
    assert cache.default_cache_dir({cache.CACHE_ENV: ""}) is None  # memory only
    assert cache.default_cache_dir({}, project=ROOT) == ROOT / "instance" / "presets"  # the checkout
    assert cache.default_cache_dir({"XDG_CACHE_HOME": str(tmp_path / "xdg"), "HOME": home}, project=fake) == (
        tmp_path / "xdg" / "bpe-playground" / "presets")
    # a relative XDG_CACHE_HOME is ignored, as the XDG spec says
    assert cache.default_cache_dir({"XDG_CACHE_HOME": "rel", "HOME": home}, project=fake) == (
        Path(home) / ".cache" / "bpe-playground" / "presets")
    assert cache.default_cache_dir({cache.CACHE_ENV: str(tmp_path / "env")}, project=fake) == tmp_path / "env"


def test_set_cache_dir_wins_over_the_environment(tmp_path, monkeypatch, fresh):
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "env"))
    assert cache.get_cache_dir() == tmp_path / "env"
    cache.set_cache_dir(tmp_path / "chosen")
    assert presets.get_cache_dir() == tmp_path / "chosen"
    cache.set_cache_dir(None)
    assert cache.get_cache_dir() == tmp_path / "env"


CHILD = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from webapp.tokenizer import get_encoding
print(json.dumps(get_encoding("r50k_base").encode_ordinary(sys.argv[2])))
"""


def run_child(env_dir: str, text: str = TEXT) -> subprocess.Popen[str]:
    env = {**os.environ, cache.CACHE_ENV: env_dir}
    return subprocess.Popen([sys.executable, "-c", CHILD, str(ROOT), text], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.slow
def test_a_fresh_process_fills_the_folder_the_variable_names_and_two_fill_it_at_once(tmp_path):
    folder = tmp_path / "cache"
    first, second = run_child(str(folder)), run_child(str(folder))  # both convert and write at the same time
    outs = [proc.communicate(timeout=300) for proc in (first, second)]
    assert [proc.returncode for proc in (first, second)] == [0, 0], outs
    want = expected_ids()
    assert [json.loads(out) for out, _ in outs] == [want, want]
    assert sorted(p.name for p in folder.iterdir()) == [presets.cache_file_name("r50k_base")]  # no temporary left
    # a third process reads what they wrote (and gets the same ids)
    third = run_child(str(folder))
    out, err = third.communicate(timeout=300)
    assert third.returncode == 0, err
    assert json.loads(out) == want


def test_an_empty_variable_keeps_presets_in_memory(tmp_path):
    child = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), TEXT], cwd=tmp_path, text=True,
                           capture_output=True, env={**os.environ, cache.CACHE_ENV: "", "HOME": str(tmp_path)},
                           timeout=300)
    assert child.returncode == 0, child.stderr
    assert json.loads(child.stdout) == expected_ids()
    assert list(tmp_path.iterdir()) == []


def test_a_write_is_atomic(tmp_path, monkeypatch):
    target = tmp_path / "f.bin"
    seen: list[tuple[bool, bytes]] = []
    real_replace = os.replace

    def watching(src, dst):  # at the last moment before the rename: the target is not there yet
        seen.append((Path(dst).exists(), Path(src).read_bytes()))
        real_replace(src, dst)

    monkeypatch.setattr(cache.os, "replace", watching)
    assert cache.write_atomic(target, b"x" * 1000)
    assert seen == [(False, b"x" * 1000)] and target.read_bytes() == b"x" * 1000
    assert [p.name for p in tmp_path.iterdir()] == ["f.bin"]


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["garbage", "truncated", "flipped", "another preset's", "empty"])
def test_a_damaged_or_stale_file_is_rebuilt(tmp_path, fresh, damage):
    path = tmp_path / presets.cache_file_name("r50k_base")
    presets.load_compiled("r50k_base", tmp_path)
    good = path.read_bytes()
    if damage == "garbage":
        path.write_bytes(b"not a zip file at all")
    elif damage == "truncated":
        path.write_bytes(good[: len(good) // 2])
    elif damage == "flipped":
        middle = len(good) // 2
        path.write_bytes(good[:middle] + bytes([good[middle] ^ 0xFF]) + good[middle + 1:])
    elif damage == "another preset's":
        presets.clear_caches()
        presets.load_compiled("p50k_base", tmp_path)
        path.write_bytes((tmp_path / presets.cache_file_name("p50k_base")).read_bytes())
    else:
        path.write_bytes(b"")
    presets.clear_caches()
    tok = presets.load_preset("r50k_base", tmp_path)
    compiled = presets.load_compiled("r50k_base", tmp_path)
    assert len(tok.merges) == len(compiled) == presets.get_preset("r50k_base").n_ranks - 256
    from tests.loaded_calls import encode_loaded

    assert encode_loaded(tok, TEXT, compiled=compiled) == expected_ids()
    assert path.read_bytes() != b"" and path.stat().st_size > 1000  # written again
    presets.clear_caches()
    again, _ = presets._load("r50k_base", tmp_path)
    assert "merges" in again.contents.pending()  # read from the rebuilt file this time (not converted)


@pytest.mark.slow
def test_a_folder_that_cannot_be_written_falls_back_to_memory_with_one_warning(tmp_path, fresh):
    blocker = tmp_path / "a-file"
    blocker.write_text("in the way")
    folder = blocker / "presets"  # cannot be made: its parent is a file (root may write anywhere else)
    cache.set_cache_dir(folder)
    with pytest.warns(cache.PresetCacheWarning, match="cannot write") as caught:
        tok = presets.load_preset("r50k_base")
        compiled = presets.load_compiled("r50k_base")
        presets.load_preset("p50k_base")  # the same folder: no second warning
    assert len(caught) == 1 and str(folder) in str(caught[0].message)
    from tests.loaded_calls import encode_loaded

    assert encode_loaded(tok, TEXT, compiled=compiled) == expected_ids()
    assert presets.load_preset("r50k_base") is tok  # kept in memory


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes to read-only folders")
def test_a_read_only_folder_falls_back_to_memory(tmp_path, fresh):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.warns(cache.PresetCacheWarning):
            tok = presets.load_preset("r50k_base", folder)
        assert len(tok.merges) == presets.get_preset("r50k_base").n_ranks - 256
    finally:
        folder.chmod(0o700)


def test_a_filled_read_only_folder_is_read_without_a_warning(tmp_path, fresh):
    presets.load_compiled("r50k_base", tmp_path)
    presets.clear_caches()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tok, compiled = presets._load("r50k_base", tmp_path)
    assert compiled is not None and "merges" in tok.contents.pending()


def test_the_deferred_whole_token_table_gives_the_same_ids_and_is_made_when_worth_it(tmp_path, fresh):
    from tests.loaded_calls import encode_loaded
    from webapp.tokenizer.pretokenize import textencode

    presets.load_compiled("r50k_base", tmp_path)
    presets.clear_caches()
    tok, compiled = presets._load("r50k_base", tmp_path)
    assert compiled is not None and compiled.whole_deferred
    assert encode_loaded(tok, TEXT, compiled=compiled) == expected_ids()
    assert compiled.whole_deferred  # a short text: not made
    words = " ".join(f"w{i} word{i % 97}" for i in range(textencode.WHOLE_TABLE_AFTER))
    assert encode_loaded(tok, words, compiled=compiled) == expected_ids(words)
    assert not compiled.whole_deferred and compiled.whole  # made once enough pre-tokens missed


def test_the_web_app_keeps_a_presets_tables_ready(fresh):
    from webapp.opened import store

    entry = store.preset_entry("r50k_base")
    assert not entry.compiled.whole_deferred and entry.compiled.whole


def test_the_web_app_keeps_a_library_order_presets_pair_map_ready(monkeypatch):
    """Read from its stored form, an open model's pair map is left to its first encodes (binary searches
    until then); the app's preset entry makes it at once, before gunicorn forks (catalog.make_tables)."""
    from webapp.opened import store
    from webapp.tokenizer.presets import open_models
    from webapp.tokenizer.stages.models import library_model

    if not open_models.is_installed("qwen3"):
        pytest.skip("the qwen3 preset is not installed (make setup installs it)")
    monkeypatch.setattr(store, "PRESET_ENTRIES", BoundedCache(4, store.PRESET_RULES, weigh=store._rules_of))
    open_models.clear_caches()
    try:
        assert not library_model(open_models.load("qwen3")).merges.tables_made  # (stored form: deferred)
        open_models.clear_caches()
        entry = store.preset_entry("qwen3")
        assert library_model(entry.tok).merges.tables_made
    finally:
        open_models.clear_caches()
