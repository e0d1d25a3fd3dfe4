"""Count the signs of the tokenizer package's shape that issue 27 reads from the code (measurement only).

`python scripts/count_signs.py [repo]` prints: the modules directly in
webapp/tokenizer/ with their line counts, the facade's size
(`len(webapp.tokenizer.__all__)`, in a fresh process), `level == / !=
"bytes"/"chars"` comparisons outside the builders (formats/ and presets/),
`.library_order` (the flag, not the package `core.library_order`) and `uses_pipeline(` occurrences, `isinstance(...,
OpenModelPreset)`, `__dict__[` and `object.__setattr__` occurrences (stashes
and their reads), all in webapp/, and the import cycles among webapp/'s
modules (strongly connected groups of the graph of `import` / `from ...
import` statements, function-level imports included), once without and once
with the imports under `if TYPE_CHECKING:`. An import names its module, or
the submodule when the imported name is one; a package's `__init__` that
runs first is not counted as an edge.

Reads of another module's private attribute, in webapp/ (and in
webapp/tokenizer/core/ alone), with the files that have any. Which class
an object belongs to is hard to know statically, so the rule is a simple
one, read from the syntax tree: an attribute access `x._name` (read,
write or delete; `_name` starts with an underscore and is not a dunder
`__name__`) whose `x` is not the name `self` or `cls` or a call `super()`, and every name
`_name` in a `from m import ...`. It over-counts a method reading the
privates of another instance of its own class (`other._count`), and
under-counts privates reached through `getattr` or `__dict__`; both are
rare here.

What it does not do: change anything, or judge the figures (the issue states
the targets).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

LEVEL = r'level\s*[!=]=\s*"(?:bytes|chars)"'
BUILDERS = ("webapp/tokenizer/formats/", "webapp/tokenizer/presets/")


def module_name(root: Path, path: Path) -> str:
    """The dotted name of a module file (a package's `__init__` names the package)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_type_checking(node: ast.AST) -> bool:
    """Is `node` an `if TYPE_CHECKING:` (or `if typing.TYPE_CHECKING:`)?"""
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imported(module: str, package: str, node: ast.Import | ast.ImportFrom, known: set[str]) -> set[str]:
    """The modules of `known` one import statement of `module` (in `package`) names."""
    if isinstance(node, ast.Import):
        targets = {alias.name for alias in node.names}
    else:
        base = node.module or ""
        if node.level:
            up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            base = ".".join(up + ([base] if base else []))
        targets = {f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names}
    return {t for t in targets if t in known and t != module}


def import_graph(root: Path, files: list[Path], with_type_checking: bool) -> dict[str, set[str]]:
    """module -> the modules it imports (every import statement, at any depth)."""
    modules = {module_name(root, p): p for p in files}
    known = set(modules)
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        stack: list[tuple[ast.AST, bool]] = [(ast.parse(path.read_text(encoding="utf-8")), False)]
        while stack:
            node, guarded = stack.pop()
            guarded = guarded or is_type_checking(node)
            if isinstance(node, (ast.Import, ast.ImportFrom)) and (with_type_checking or not guarded):
                graph[module] |= imported(module, package, node, known)
            stack.extend((child, guarded) for child in ast.iter_child_nodes(node))
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def occurrences(root: Path, files: list[Path], pattern: str, exclude: tuple[str, ...] = ()) -> int:
    """How often `pattern` occurs in `files` (those under an `exclude` folder left out)."""
    count = 0
    for path in files:
        if not path.relative_to(root).as_posix().startswith(exclude or ("\0",)):
            count += len(re.findall(pattern, path.read_text(encoding="utf-8")))
    return count


def is_private(name: str) -> bool:
    """`_name` or `__name` (not a dunder such as `__init__`)."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def is_super(node: ast.AST) -> bool:
    """`super()`: the object itself, seen through its base class."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def private_reads(path: Path) -> list[tuple[int, str]]:
    """(line, what) of every `x._name` with x not self / cls, and every `from m import _name`, in one file."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and is_private(node.attr):
            if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")) and not is_super(node.value):
                found.append((node.lineno, f"{ast.unparse(node.value)}.{node.attr}"))
        elif isinstance(node, ast.ImportFrom):
            found.extend((node.lineno, f"from {node.module} import {alias.name}")
                         for alias in node.names if is_private(alias.name))
    return sorted(found)


def line_count(path: Path) -> int:
    with path.open(encoding="utf-8") as lines:
        return sum(1 for _ in lines)


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    files = sorted((root / "webapp").rglob("*.py"))
    top = sorted((root / "webapp" / "tokenizer").glob("*.py"))
    print(f"modules directly in webapp/tokenizer/: {len(top)} (largest {max(map(line_count, top))} lines)")
    for path in top:
        print(f"  {line_count(path):5d} {path.name}")
    facade = subprocess.run([sys.executable, "-c", "import webapp.tokenizer as t; print(len(t.__all__))"],
                            cwd=root, capture_output=True, text=True, check=True)
    print("facade len(webapp.tokenizer.__all__):", facade.stdout.strip())
    tokenizer = [p for p in files if p.relative_to(root).as_posix().startswith("webapp/tokenizer/")]
    print(f'level ==/!= "bytes"/"chars" outside formats/ and presets/: {occurrences(root, files, LEVEL, BUILDERS)} '
          f"in webapp/ ({occurrences(root, tokenizer, LEVEL, BUILDERS)} in webapp/tokenizer/)")
    print(".library_order:", occurrences(root, files, r"(?<!core)\.library_order\b"))
    print("uses_pipeline(:", occurrences(root, files, r"uses_pipeline\("))
    print("isinstance(..., OpenModelPreset):", occurrences(root, files, r"isinstance\([^)]*OpenModelPreset"))
    print("__dict__[ / object.__setattr__:", occurrences(root, files, r"__dict__\[|object\.__setattr__"))
    reads = {path.relative_to(root).as_posix(): private_reads(path) for path in files}
    in_core = sum(len(found) for name, found in reads.items() if name.startswith("webapp/tokenizer/core/"))
    print(f"reads of another module's private attribute: {sum(map(len, reads.values()))} in webapp/ "
          f"({in_core} in webapp/tokenizer/core/)")
    for name, found in reads.items():
        if found:
            print(f"  {len(found):4d} {name}: {', '.join(sorted({what for _, what in found}))}")
    for with_type_checking in (False, True):
        groups = cycles(import_graph(root, files, with_type_checking))
        print(f"import cycles {'with' if with_type_checking else 'without'} TYPE_CHECKING imports: {len(groups)}")
        for group in groups:
            print("   ", " <-> ".join(group))


if __name__ == "__main__":
    main()
