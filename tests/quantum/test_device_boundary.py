"""Quantum devices are resolved by name only at the config boundary (#28).

Reference: the source tree itself, read with :mod:`ast`. A *lookup by name* is a call of one of the resolver's
name-taking functions (:data:`LOOKUPS`, imported from ``workbench.quantum``); it may appear only in the resolver
(``workbench/quantum/device.py``, ``calibration.py``), in a technique's ``config.py`` (``OnDevice.resolved_device``
and the checks of its ``device`` field), in its ``claims.py`` (a claim pins a named device), in the public simulate
entry (``workbench/quantum/__init__.py``: ``noise="fake_lima"``) and in the few entries of :data:`ENTRIES`, each with
its reason. Kernels, studies' inner functions and panels take a :class:`~workbench.quantum.device.Device`.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: the resolver's functions that take a device *name*
LOOKUPS = frozenset(
    {
        "get_device",
        "load_calibration",
        "fake_backend",
        "load_pulse_device",
        "conf_path",
        "device_qubit_count",
        "coupled_qubits",
        "device_basis",
        "resolve_device",
    }
)
#: files where a name may be resolved: the resolver and the public simulate entry
RESOLVER = frozenset(
    {"workbench/quantum/device.py", "workbench/quantum/calibration.py", "workbench/quantum/__init__.py"}
)
#: (file, function) entries outside config.py / claims.py that take a user's device name, and why
ENTRIES = {
    ("workbench/quantum/devices/experiment.py", "fidelity_points"): "a notebook's entry, called with device names",
    ("workbench/quantum/devices/experiment.py", "fidelity_vs_scale"): "a notebook's entry, called with device names",
    ("workbench/quantum/quest/dataset.py", "_pick_device"): "the dataset spec's plan draws a name of its device table",
    ("workbench/quantum/quest/outside.py", "outside_check"): "a notebook's entry, called with the default names",
    ("workbench/quantum/quest/outside.py", "duration_coverage"): "a notebook's entry, called with the default names",
    ("workbench/quantum/quest/outside.py", "duration_counterfactual"): "a notebook's entry (default fake_toronto)",
    ("workbench/quantum/quest/speed.py", "speed_comparison"): "a notebook's entry, called with the notebook's name",
    ("workbench/quantum/quest/study.py", "rank_check"): "a notebook's entry, called with the notebook's device name",
    ("workbench/quantum/topgen/study.py", "paper_scale"): "a notebook's entry, called with the paper's device names",
    ("widgets/quantum/quest.py", "QuestPanel._set_ranges"): "a control's value: the width slider before a config",
    ("widgets/quantum/topgen.py", "device_qubits"): "a control's value: the width clamp before a config",
}


def _boundary(rel: str) -> bool:
    return rel in RESOLVER or (rel.startswith("workbench/quantum/") and Path(rel).name in ("config.py", "claims.py"))


def lookups(source: str) -> list[tuple[int, str, str]]:
    """(line, enclosing function's qualified name, called name) of every lookup by name in ``source``: a call of a
    :data:`LOOKUPS` function imported from ``workbench.quantum`` (under any alias)."""
    tree = ast.parse(source)
    names = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("workbench.quantum")
        for alias in node.names
        if alias.name in LOOKUPS
    }
    found: list[tuple[int, str, str]] = []

    def visit(node: ast.AST, scope: tuple[str, ...]) -> None:
        for child in ast.iter_child_nodes(node):
            inner = scope
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = (*scope, child.name)
            if isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id in names:
                found.append((child.lineno, ".".join(scope) or "<module>", child.func.id))
            visit(child, inner)

    visit(tree, ())
    return found


@functools.cache
def _tree_lookups() -> list[tuple[str, int, str, str]]:
    out = []
    for top in ("workbench", "widgets"):
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            out += [(rel, line, scope, name) for line, scope, name in lookups(path.read_text(encoding="utf-8"))]
    return out


def test_devices_are_looked_up_by_name_only_at_the_config_boundary():
    found = _tree_lookups()
    outside = [
        f"{rel}:{line} {scope}() calls {name}(...)"
        for rel, line, scope, name in found
        if not _boundary(rel) and (rel, scope) not in ENTRIES
    ]
    assert not outside, (
        "a device is looked up by name outside the config boundary (resolve it once with the config's "
        "resolved_device() and pass the Device down):\n" + "\n".join(outside)
    )


def test_every_listed_entry_still_looks_a_device_up():
    used = {(rel, scope) for rel, _, scope, _ in _tree_lookups()}
    stale = sorted(set(ENTRIES) - used)
    assert not stale, f"ENTRIES lists functions that no longer look a device up (remove them): {stale}"


@pytest.mark.parametrize(
    "source, expected",
    [
        ("from workbench.quantum.device import get_device\ndef f(c):\n    return get_device(c.device)\n", [(3, "f")]),
        (
            "from workbench.quantum.calibration import load_calibration as lc\n"
            "class P:\n    def g(self, n):\n        return lc(n).num_qubits\n",
            [(4, "P.g")],
        ),
        ("from workbench.quantum.device import Device\ndef f(d: Device):\n    return d.coupled_qubits(0)\n", []),
        ("def get_device(n):\n    return n\nget_device('cuda')\n", []),  # not the quantum resolver
    ],
)
def test_the_scanner_finds_lookups_under_any_alias_and_only_those(source, expected):
    assert [(line, scope) for line, scope, _ in lookups(source)] == expected
