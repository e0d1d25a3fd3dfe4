"""The Hypothesis profiles that docs/testing.md names can be picked on pytest's command line.

`--hypothesis-profile=NAME` is read before any test module is imported, so the
profiles must be registered by a conftest (tests/conftest.py imports
tests/hypothesis_profiles.py); these tests run pytest in a child process to see it.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from webapp import PROJECT_ROOT

#: A cheap property test that asks for examples(60): 6 under "quick", 600 under "deep".
TARGET = "tests/unit/tokenizer/models/test_library_model.py::test_long_pieces_keep_the_unknown_token_beside_fallback_bytes"


def _pytest(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "-q", *args],
                          cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("profile", ["deep", "quick", "playground"])
def test_each_named_profile_is_accepted(profile: str) -> None:
    done = _pytest(f"--hypothesis-profile={profile}", "--collect-only", TARGET)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def test_the_quick_profile_runs_a_tenth_of_the_examples() -> None:
    done = _pytest("--hypothesis-profile=quick", "--hypothesis-show-statistics", TARGET)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    # (the passing count splits between saved examples replayed and new ones; the limit is the profile's)
    assert "Stopped because settings.max_examples=6" in done.stdout, done.stdout[-2000:]
