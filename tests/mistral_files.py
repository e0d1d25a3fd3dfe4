"""Mistral's SentencePiece .model files for the tests, read from mistral-common's wheel (`make setup` downloads
it into instance/pypi); a test that needs one is skipped, with the reason, when the wheel is missing."""

from __future__ import annotations

import zipfile
from functools import lru_cache
from pathlib import Path

import pytest

from webapp.tokenizer.presets.open_models import pypi_dir

WHEEL = "mistral_common-1.13.1-py3-none-any.whl"


def wheel_path() -> Path:
    """The wheel's path; the calling test is skipped when it is missing."""
    path = pypi_dir() / WHEEL
    if not path.exists():
        pytest.skip(f"{path} is missing: run make setup (it downloads mistral-common's wheel)")
    return path


@lru_cache(maxsize=None)
def mistral_file(name: str) -> bytes:
    """The bytes of mistral_common/data/<name> in the wheel."""
    with zipfile.ZipFile(wheel_path()) as wheel:
        return wheel.read(f"mistral_common/data/{name}")
