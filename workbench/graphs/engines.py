"""Counting engines of the graph area: ``name -> fn(graph, pattern, config) -> dict``, filled by techniques.

The area core defines the hook and imports no technique. A technique registers its engines when its module
is imported (``register_engine("kudu", fn)`` in Kudu's runner); :func:`get_engine` imports the area's ready
techniques through the workbench registry the first time a name is missing, so ``--engine kudu`` works
without anyone importing Kudu by hand. The result dict holds at least ``count``, ``plan`` and ``seconds``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workbench.graphs.graph import Graph
from workbench.graphs.patterns import Pattern

__all__ = ["EngineFn", "register_engine", "get_engine", "engine_names"]

EngineFn = Callable[[Graph, Pattern, Any], dict[str, Any]]

_ENGINES: dict[str, EngineFn] = {}


def register_engine(name: str, fn: EngineFn) -> None:
    """Make ``fn`` the engine called ``name`` (a later registration under the same name replaces it)."""
    _ENGINES[name] = fn


def _load_area() -> None:
    from workbench.registry import import_area

    import_area("graphs")


def engine_names() -> tuple[str, ...]:
    """Names of every engine the area's ready techniques register."""
    _load_area()
    return tuple(_ENGINES)


def get_engine(name: str) -> EngineFn:
    """The engine called ``name``; ValueError naming the valid engines if there is none."""
    if name not in _ENGINES:
        _load_area()
    if name not in _ENGINES:
        raise ValueError(f"engine={name!r} is not registered: valid engines are {', '.join(sorted(_ENGINES))}")
    return _ENGINES[name]
