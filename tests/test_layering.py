"""The technique shape, enforced: imports flow one way (notebooks -> widgets -> workbench), area roots import
no technique, the module graph has no cycle (function-local imports included), panels hold no cache.

Reference: the import statements themselves, read with ``ast`` (every ``import``/``from`` anywhere in a file).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from workbench.registry import AREAS, catalogue

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
    """Shared code (an area's root modules and its shared folders, e.g. ``quantum/common``) imports no technique
    package; a technique package is one the registry lists."""
    techniques = {e.package for e in catalogue()}
    for area in AREAS:
        folder = REPO_ROOT / "workbench" / area
        shared = [
            p for p in folder.iterdir() if p.is_dir() and (p / "__init__.py").is_file() and p.name not in techniques
        ]
        for path in [*folder.glob("*.py"), *(f for d in shared for f in d.rglob("*.py"))]:
            bad = {m for m in _imports(path) for t in techniques if m.startswith(f"workbench.{area}.{t}")}
            assert not bad, f"{path.relative_to(REPO_ROOT)} (shared code) imports {sorted(bad)}"


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


#: the workbench modules a widget may call into: a technique's study, config and claims, and the shared ones
CALLABLE_LEAVES = ("study", "config", "claims")
CALLABLE_SHARED = ("workbench.config", "workbench.registry", "workbench.results", "workbench.claims")
#: the device catalogue: names and calibration snapshots a control lists or a caption reads (lookups, no simulation)
CATALOGUE = ("device_names", "pulse_device_names", "load_calibration", "get_device")


def _may_call(module: str) -> bool:
    return module in CALLABLE_SHARED or (
        module.startswith("workbench.") and module.rsplit(".", 1)[-1] in CALLABLE_LEAVES
    )


def _called_machinery(path: Path) -> list[str]:
    """``module.name`` for every name a widget imports from a workbench module it may not call into, and calls
    (``name(...)``; a module imported whole: ``module.attr(...)``)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    banned: dict[str, str] = {}  # local name -> where it comes from
    modules: set[str] = set()  # the local names that are modules (called through their attributes)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("workbench"):
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                where = full if full in MODULES else node.module  # `from pkg import module`: the module itself
                if not _may_call(where) and alias.name not in CATALOGUE:
                    banned[alias.asname or alias.name] = full
                    if full in MODULES:
                        modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("workbench") and not _may_call(alias.name):
                    local = alias.asname or alias.name.split(".")[0]
                    banned[local] = alias.name
                    modules.add(local)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in banned:
                found.append(banned[func.id])
            root = func
            while isinstance(root, ast.Attribute):
                root = root.value
            if root is not func and isinstance(root, ast.Name) and root.id in modules:
                found.append(banned[root.id])
    return sorted(set(found))


def test_widgets_call_workbench_only_through_study_config_and_claims():
    """No algorithm in a panel. The rule: a widget module calls into ``workbench`` only through a technique's
    ``study``, ``config`` or ``claims`` module, the shared ``workbench.config``/``registry``/``results``/``claims``,
    and the device catalogue's lookups (:data:`CATALOGUE`). From any other workbench module (a kernel, simulator,
    model or trainer) it may import names but never call them: constants, types for annotations, exceptions to
    catch. Building NAPA's pulse ansatz and calibrating its native pulses in the panel (``PulseAnsatz(...)``,
    ``calibrated_natives(...)``) broke this rule; that work is ``napa.study.panel_view`` now, which returns what
    the panel draws."""
    offenders = {name: bad for name, path in _modules("widgets").items() if (bad := _called_machinery(path))}
    assert not offenders, f"widgets call workbench machinery outside study/config/claims: {offenders}"


def test_the_machinery_rule_catches_a_panel_that_builds_an_ansatz(tmp_path):
    """The check above, on NAPA's old panel code: constructing the ansatz and calibrating pulses are both caught,
    importing a constant and a study function is not."""
    source = tmp_path / "napa_panel.py"
    source.write_text(
        "from workbench.quantum.napa.ansatz import PulseAnsatz\n"
        "from workbench.quantum.common.pulse.calibrated import calibrated_natives\n"
        "from workbench.quantum.napa.study import panel_view\n"
        "from workbench.quantum.topgen.model import LABEL\n"
        "natives = calibrated_natives(None, 0, 1, 3)\n"
        "schedule = PulseAnsatz(natives, 1, False).schedule([])\n"
        "view = panel_view(None)\n"
        "text = LABEL.upper()\n"
    )
    assert _called_machinery(source) == [
        "workbench.quantum.common.pulse.calibrated.calibrated_natives",
        "workbench.quantum.napa.ansatz.PulseAnsatz",
    ]


#: private imports a frozen file still makes (``claims.py`` is not edited here): (importing module, name)
PRIVATE_IMPORT_EXCEPTIONS: set[tuple[str, str]] = set()  # (importing module, private name): none today


_FROM_IMPORT = re.compile(r"\bimport\s+(\([^)]*\)|[^\n]*(?:\\\n[^\n]*)*)")
_PRIVATE_NAME = re.compile(r"(?:^|[\s(,])_\w")


def _private_imports(path: Path, name: str) -> list[str]:
    """``module._name`` for every leading-underscore name ``path`` (module ``name``) imports from another
    workbench/widgets module (``from X import _name``, relative imports resolved; dunders and third-party
    packages are not counted)."""
    text = path.read_text()
    if not any(_PRIVATE_NAME.search(m.group(1)) for m in _FROM_IMPORT.finditer(text)):
        return []  # no `from ... import _name` in the text: skip the parse (keeps this test fast)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(text, filename=str(path))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            if base == name or base.split(".")[0] not in ("workbench", "widgets"):
                continue
            found += [
                f"{base}.{a.name}"
                for a in node.names
                if a.name.startswith("_") and not a.name.startswith("__")
                and (name, a.name) not in PRIVATE_IMPORT_EXCEPTIONS
            ]  # fmt: skip
    return found


def test_no_private_cross_imports():
    """A leading-underscore name is its module's own: another workbench/widgets module that needs it gets a
    public name (or the code moves to where it is used). Tests may still import private names."""
    offenders = {name: bad for name, path in MODULES.items() if (bad := _private_imports(path, name))}
    assert not offenders, f"private names imported across modules: {offenders}"


def test_the_private_import_rule(tmp_path):
    (tmp_path / "pkg").mkdir()
    source = tmp_path / "pkg" / "mod.py"
    source.write_text(
        "from workbench.quantum.aer import _helper, apply_confusion\n"
        "from .study import _problem\n"
        "from numpy._core import _reconstruct\n"
        "from workbench.x import __version__\n"
    )
    assert _private_imports(source, "workbench.quantum.mod") == [
        "workbench.quantum.aer._helper",
        "workbench.quantum.study._problem",
    ]
