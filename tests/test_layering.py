"""The technique shape, enforced: imports flow one way (notebooks -> widgets -> workbench), area roots import
no technique, the module graph has no cycle (function-local imports included), panels hold no cache.

Reference: the import statements themselves, read with ``ast`` (every ``import``/``from`` anywhere in a file).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from workbench.registry import AREAS

REPO_ROOT = Path(__file__).resolve().parents[1]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules(root: str) -> dict[str, Path]:
    return {_module_name(p): p for p in (REPO_ROOT / root).rglob("*.py") if "__pycache__" not in p.parts}


MODULES = {**_modules("workbench"), **_modules("widgets")}


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at top level or inside functions (resolved to full dotted names)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = _module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" else _module_name(path)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else [])
                )
            subs = {f"{base}.{alias.name}" for alias in node.names}
            modules = {m for m in subs if m in MODULES}
            found.update(modules if modules == subs else {base, *modules})  # `from pkg import module` needs only it
    return found


def _graph() -> dict[str, set[str]]:
    """Module -> the workbench/widgets modules it imports; a parent package (imported anyway before any of its
    modules) is not an edge."""
    return {
        name: {m for m in _imports(path) if m in MODULES and not name.startswith(m + ".") and m != name}
        for name, path in MODULES.items()
    }


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_workbench_never_imports_the_ui_floor():
    for name, path in _modules("workbench").items():
        ui = {m for m in _imports(path) if m.split(".")[0] in ("ipywidgets", "plotly", "widgets", "IPython")}
        assert not ui, f"{name} imports {sorted(ui)}"


def test_area_roots_import_no_technique_package():
    for area in AREAS:
        folder = REPO_ROOT / "workbench" / area
        techniques = {p.name for p in folder.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
        for path in folder.glob("*.py"):
            bad = {m for m in _imports(path) for t in techniques if m.startswith(f"workbench.{area}.{t}")}
            assert not bad, f"{path.relative_to(REPO_ROOT)} (area root) imports {sorted(bad)}"


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_no_import_cycle_even_through_function_local_imports():
    graph = _graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt) :] + [nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)


def test_panels_hold_no_cache():
    for name, path in _modules("widgets").items():
        text = path.read_text()
        assert "lru_cache" not in text and "functools.cache" not in text, f"{name} caches: caches live in study.py"
