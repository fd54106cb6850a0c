"""The study-by-role split (#28), enforced: in every registered technique ``runner.py`` (CLI entry, ``run``,
Result) never imports ``study.py`` (views for panels), and ``study.py`` never imports ``runner.py``; the
orchestration both call lives in a third module (``experiment.py``), which imports neither.

Reference: the import statements themselves, read with ``ast`` (every ``import``/``from`` anywhere in the file,
function-local ones included, relative ones resolved).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from workbench.registry import catalogue

REPO_ROOT = Path(__file__).resolve().parents[1]

READY = [e for e in catalogue() if e.module]


def _package_dir(module: str) -> Path:
    """``workbench.llm.x.runner`` -> ``REPO_ROOT/workbench/llm/x``."""
    return REPO_ROOT.joinpath(*module.split(".")[:-1])


def imported_modules(path: Path, package: str) -> set[str]:
    """Every dotted name ``path`` imports (top level or inside functions); ``from pkg import name`` yields both
    ``pkg`` and ``pkg.name`` since ``name`` may be a module."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def test_import_reader_sees_function_local_and_relative_imports(tmp_path: Path) -> None:
    src = tmp_path / "runner.py"
    src.write_text("def f():\n    from .study import x\n    import a.b.study\n")
    found = imported_modules(src, "a.b")
    assert "a.b.study" in found and "a.b.study.x" in found


@pytest.mark.parametrize("entry", READY, ids=[e.name for e in READY])
def test_runner_and_study_do_not_import_each_other(entry) -> None:
    package = entry.module.rsplit(".", 1)[0]
    folder = _package_dir(entry.module)
    pairs = [("runner.py", "study"), ("study.py", "runner"), ("experiment.py", "runner"), ("experiment.py", "study")]
    problems = []
    for name, other in pairs:
        path = folder / name
        if path.exists() and f"{package}.{other}" in imported_modules(path, package):
            problems.append(f"{path.relative_to(REPO_ROOT)} imports {package}.{other}")
    assert not problems, "; ".join(problems) + " (move what both need to experiment.py)"
