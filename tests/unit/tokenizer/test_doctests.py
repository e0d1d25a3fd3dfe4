"""The `>>>` examples of the tokenizer facade's public functions run, and say what they print.

Two checks. REQUIRED names the facade's main functions and `Encoding` and
(stages) `Tokenizer` methods; each must carry at least one example, and its examples
must pass. Then every example anywhere in a module the facade exports from
runs too, so an example added elsewhere is checked the same way.

Examples import what they use (`from webapp.tokenizer import ...`), as a
reader pasting them into Python would: they run with empty globals, not the
module's. ELLIPSIS is on, so a long error message can end in "...". The
examples using a preset need the presets `make test` prepares
(instance/presets).
"""

from __future__ import annotations

import doctest
import importlib

import pytest

import webapp.tokenizer as facade

#: (facade name, method or None): what must carry at least one example.
REQUIRED = [
    ("encode", None),
    ("decode", None),
    ("bpe_encode_text", None),
    ("bpe_merges", None),
    ("get_encoding", None),
    ("get_tokenizer", None),
    ("Encoding", None),
    *[("Encoding", method) for method in (
        "encode", "encode_ordinary", "encode_batch", "encode_single_token", "decode", "decode_bytes",
        "decode_single_token_bytes", "decode_tokens_bytes", "decode_with_offsets")],
    ("tokenizer_of", None),
    ("Tokenizer", "encode"),
]

FLAGS = doctest.ELLIPSIS


def _run(tests: list[doctest.DocTest]) -> tuple[int, int, str]:
    """(examples, failures, the runner's report) of running `tests`."""
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for test in tests:
        runner.run(test, out=report.append)
    results = runner.summarize(verbose=False)
    return results.attempted, results.failed, "".join(report)


def _doctests(obj: object, name: str) -> list[doctest.DocTest]:
    """The examples of one object's own docstring (not of its members), with empty globals."""
    finder = doctest.DocTestFinder(recurse=False)
    return [t for t in finder.find(obj, name, globs={}) if t.examples]


@pytest.mark.parametrize(("name", "method"), REQUIRED, ids=[f"{n}.{m}" if m else n for n, m in REQUIRED])
def test_a_public_function_has_examples_that_pass(name, method):
    obj = getattr(facade, name)
    if method is not None:
        obj = getattr(obj, method)
    label = f"{name}.{method}" if method else name
    tests = _doctests(obj, label)
    assert tests, f"{label} has no >>> example in its docstring"
    attempted, failed, report = _run(tests)
    assert attempted > 0 and failed == 0, report


def _facade_modules() -> list[str]:
    """Every module the facade exports a name from."""
    return sorted({module for module, _ in facade._EXPORTS.values()})


@pytest.mark.parametrize("module_name", _facade_modules())
def test_every_example_in_the_facade_modules_passes(module_name):
    module = importlib.import_module(module_name)
    tests = [t for t in doctest.DocTestFinder().find(module, module_name, globs={}) if t.examples]
    _, failed, report = _run(tests)
    assert failed == 0, report


def test_a_wrong_example_fails():
    def sample() -> None:
        """>>> from webapp.tokenizer import bpe_merges
        >>> bpe_merges(["low", "lower"], 1)
        ['ow']
        """

    attempted, failed, report = _run(_doctests(sample, "sample"))
    assert (attempted, failed) == (2, 1) and "Expected:\n    ['ow']\nGot:\n    ['lo']" in report
