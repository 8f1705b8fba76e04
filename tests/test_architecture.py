"""The shape of the package, checked from its source: the import graph of ``workbench/`` has no
circle among module-level imports and no function-local import that only dodges one, no module
outgrows what a reader can hold, and the two storage backends never import each other.

Read with ``ast`` (nothing is imported), so it is fast and sees every module, including those
whose dependencies are not installed.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "workbench"
EXTENSION_SRC = ROOT / "extensions" / "jupyterlab-lithify" / "src"
MAX_PY_LINES = 700
MAX_TS_LINES = 400
BACKENDS = ("workbench.storage.sqlite", "workbench.storage.postgres")


@dataclass
class Module:
    """One module of the package: its name, file, and what it imports, by where."""

    name: str
    path: Path
    is_package: bool
    top: set[str] = field(default_factory=set)  # module level, run at import
    typing_only: set[str] = field(default_factory=set)  # under `if TYPE_CHECKING:`
    local: dict[str, int] = field(default_factory=dict)  # inside a function: module -> line


def module_name(path: Path, root: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(root).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts.pop()
    return ".".join(parts), is_package


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _targets(node: ast.Import | ast.ImportFrom, mod: Module, known: set[str]) -> set[str]:
    """The package's modules an import statement depends on: ``import a.b`` and ``from a.b
    import name`` need a.b; ``from a import b`` needs only b when b is a module."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        if node.level:
            base = mod.name.split(".")
            if not mod.is_package:
                base = base[:-1]
            base = base[: len(base) - (node.level - 1)]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        names = [
            f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in known else prefix for a in node.names
        ]
    out: set[str] = set()
    for name in names:
        while name and name not in known:  # `import a.b.c` loads a.b.c; a name in a module: it
            name = name.rpartition(".")[0]
        if name:
            out.add(name)
    out.discard(mod.name)
    return out


def _walk(nodes: list[ast.stmt], mod: Module, known: set[str], where: str) -> None:
    for node in nodes:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found = _targets(node, mod, known)
            if where == "top":
                mod.top |= found
            elif where == "typing":
                mod.typing_only |= found
            else:
                for name in found:
                    mod.local.setdefault(name, node.lineno)
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            _walk(node.body, mod, known, "typing" if where == "top" else where)
            _walk(node.orelse, mod, known, where)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _walk(node.body, mod, known, "local")  # runs when called, not at import
        else:
            children = [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt)]
            _walk(children, mod, known, where)


def package_modules(package: Path = PACKAGE) -> dict[str, Module]:
    """Every module of a package (``workbench/``) with its imports of the package's modules."""
    files = sorted(package.rglob("*.py"))
    mods = {}
    for path in files:
        name, is_package = module_name(path, package.parent)
        mods[name] = Module(name, path, is_package)
    known = set(mods)
    for mod in mods.values():
        tree = ast.parse(mod.path.read_text(encoding="utf-8"), str(mod.path))
        _walk(tree.body, mod, known, "top")
    # Importing a.b.c runs a/__init__ and a/b/__init__ first: an edge of its own.
    for mod in mods.values():
        for edges in (mod.top, mod.typing_only):
            for target in list(edges):
                parent = target.rpartition(".")[0]
                while parent:
                    if parent in mods and not (mod.name + ".").startswith(parent + "."):
                        edges.add(parent)
                    parent = parent.rpartition(".")[0]
    return mods


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def reaches(graph: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, todo = {start}, [start]
    while todo:
        for w in graph.get(todo.pop(), ()):
            if w == goal:
                return True
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return False


def dodges(mods: dict[str, Module]) -> list[str]:
    """Function-local imports of B inside A where B imports A at module level (directly or
    through other modules): imports moved into a function to break a circle."""
    top = {name: mod.top for name, mod in mods.items()}
    return [
        f"{mod.path.name}:{line} ({mod.name}) imports {target}, which imports {mod.name}"
        for mod in mods.values()
        for target, line in sorted(mod.local.items())
        if target in top and reaches(top, target, mod.name)
    ]


def crossings(mods: dict[str, Module], sides: tuple[str, ...]) -> list[str]:
    """Imports of any kind from one of ``sides`` (packages) into another."""

    def side(name: str) -> str | None:
        return next((b for b in sides if name == b or name.startswith(b + ".")), None)

    return [
        f"{mod.name} imports {target}"
        for mod in mods.values()
        if (here := side(mod.name)) is not None
        for target in sorted(mod.top | mod.typing_only | set(mod.local))
        if (there := side(target)) is not None and there != here
    ]


MODULES = package_modules()
TOP = {name: mod.top for name, mod in MODULES.items()}


def test_module_level_imports_form_no_circle() -> None:
    found = cycles(TOP)
    assert found == [], "import circles among module-level imports: " + "; ".join(
        " <-> ".join(c) for c in found
    )


def test_no_circle_even_counting_type_check_imports() -> None:
    # The modules a journal delegates to are typed against workbench.port.JournalPort, not the
    # Journal, so the journal imports them and none of them imports it back, not even for the
    # checker. Any circle is a knot to cut: a Protocol of what the module needs.
    both = {name: mod.top | mod.typing_only for name, mod in MODULES.items()}
    found = cycles(both)
    assert not found, "circles counting type-check imports: " + "; ".join(
        " <-> ".join(c) for c in found
    )


def test_no_function_local_import_dodges_a_circle() -> None:
    found = dodges(MODULES)
    assert found == [], "function-local imports dodging a circle:\n" + "\n".join(found)


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_python_module_is_over_700_lines() -> None:
    big = sorted(
        f"{p.relative_to(ROOT)} ({n} lines)"
        for p in PACKAGE.rglob("*.py")
        if (n := _lines(p)) > MAX_PY_LINES
    )
    assert big == [], f"modules over {MAX_PY_LINES} lines (split by concept): " + ", ".join(big)


def test_no_frontend_source_file_is_over_400_lines() -> None:
    files = [p for ext in ("*.ts", "*.tsx") for p in EXTENSION_SRC.rglob(ext)]
    assert files, f"no TypeScript sources under {EXTENSION_SRC}"
    big = sorted(
        f"{p.relative_to(ROOT)} ({n} lines)" for p in files if (n := _lines(p)) > MAX_TS_LINES
    )
    assert big == [], f"frontend files over {MAX_TS_LINES} lines: " + ", ".join(big)


def test_the_two_storage_backends_never_import_each_other() -> None:
    assert set(BACKENDS) <= set(MODULES), f"the backend packages moved: {BACKENDS}"
    found = crossings(MODULES, BACKENDS)
    assert found == [], "imports between the SQLite and PostgreSQL backends:\n" + "\n".join(found)


def test_the_checks_find_what_they_look_for(tmp_path: Path) -> None:
    # A small package with one of each fault, and the imports that are fine.
    files = {
        "__init__.py": "from .a import A\n",
        "a.py": "from . import b\nA = 1\n",
        "b.py": "from .a import A\n",  # a <-> b at module level
        "c.py": "def f():\n    from . import d\n",  # d imports c: a dodge
        "d.py": "import pkg.c\n",
        "e.py": (  # typing-only and lazy imports of modules that do not import e: fine
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n"
            "def g():\n    from .d import x\n"
        ),
        "one/__init__.py": "",
        "one/x.py": "from ..two import y\n",  # a crossing
        "two/__init__.py": "",
        "two/y.py": "from .. import e\n",
    }
    for name, text in files.items():
        path = tmp_path / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    mods = package_modules(tmp_path / "pkg")
    assert cycles({n: m.top for n, m in mods.items()}) == [["pkg.a", "pkg.b"]]
    assert [d.split(" ")[1] for d in dodges(mods)] == ["(pkg.c)"]
    assert crossings(mods, ("pkg.one", "pkg.two")) == [
        "pkg.one.x imports pkg.two",
        "pkg.one.x imports pkg.two.y",
    ]
