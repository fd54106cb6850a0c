"""MaxCut instances: edge lists given by the user or generated, cut values of every assignment, brute force.

A graph is ``(n, edges)`` with ``edges`` a tuple of ``(u, v, w)`` (``u < v``, weight ``w > 0``). Assignments are
indexed like qiskit's basis states: bit ``i`` of index ``x`` is node ``i``'s side.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import networkx as nx
import numpy as np

__all__ = ["Graph", "parse_graph", "generated", "cut_values", "max_cut", "GENERATORS"]

GENERATORS = ("ring", "complete", "regular3", "random")
MAX_WEIGHT = 1e6  # rzz(gamma w) angles and cut sums stay finite and meaningful


@dataclass(frozen=True)
class Graph:
    """``n`` nodes ``0..n-1`` and weighted edges ``((u, v, w), ...)``; ``name`` says where it came from."""

    n: int
    edges: tuple[tuple[int, int, float], ...]
    name: str = ""

    def networkx(self) -> nx.Graph:
        g = nx.Graph()
        g.add_nodes_from(range(self.n))
        g.add_weighted_edges_from(self.edges)
        return g


def _checked(n: int, edges: list[tuple[int, int, float]], name: str, spec: str) -> Graph:
    if not edges:
        raise ValueError(f"graph={spec!r} has no edges: give at least one edge, e.g. '0-1,1-2'")
    if not 2 <= n <= 10:
        raise ValueError(f"graph={spec!r} has {n} nodes: valid range is 2..10 nodes")
    g = Graph(n, tuple(sorted(edges)), name)
    if not nx.is_connected(g.networkx()):
        parts = [sorted(c) for c in nx.connected_components(g.networkx())]
        raise ValueError(f"graph={spec!r} is disconnected (components {parts}): give a connected graph")
    return g


def parse_graph(spec: str) -> Graph:
    """An edge list ``"0-1,1-2,2-0"`` (optional weights ``"0-1:2.5"``) or a generator ``"ring-5"``,
    ``"complete-4"``, ``"regular3-6"``, ``"random-5"`` (G(n, 1/2), seed 0; ``"random-5-s3"`` for seed 3)."""
    spec = spec.strip()
    m = re.fullmatch(r"(ring|complete|regular3|random)-(\d+)(?:-s(\d+))?", spec)
    if m:
        return generated(m[1], int(m[2]), int(m[3] or 0))
    edges: dict[tuple[int, int], float] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        em = re.fullmatch(r"(\d+)\s*-\s*(\d+)(?::\s*([0-9.eE+-]+))?", part)
        if not em:
            raise ValueError(
                f"graph={spec!r}: cannot read edge {part!r}: write edges as 'u-v' or 'u-v:weight', comma-separated, "
                f"or a generator {', '.join(g + '-N' for g in GENERATORS)}"
            )
        u, v = int(em[1]), int(em[2])
        try:
            w = float(em[3]) if em[3] else 1.0
        except ValueError:
            raise ValueError(f"graph={spec!r}: edge {part!r} has an unreadable weight: write 'u-v:2.5'") from None
        if u == v:
            raise ValueError(f"graph={spec!r}: edge {part!r} is a self-loop")
        if not (math.isfinite(w) and 0 < w <= MAX_WEIGHT):
            raise ValueError(f"graph={spec!r}: edge {part!r} has weight {w}: valid weights are in (0, {MAX_WEIGHT:g}]")
        edges[(min(u, v), max(u, v))] = w
    n = 1 + max((max(e) for e in edges), default=-1)
    return _checked(n, [(u, v, w) for (u, v), w in edges.items()], "edges", spec)


def generated(kind: str, n: int, seed: int = 0) -> Graph:
    """A generated graph on ``n`` nodes (``ring``, ``complete``, ``regular3`` (random 3-regular), ``random``)."""
    if kind not in GENERATORS:
        raise ValueError(f"generator={kind!r} is unknown: valid generators are {', '.join(GENERATORS)}")
    if kind == "ring":
        g = nx.cycle_graph(n)
    elif kind == "complete":
        g = nx.complete_graph(n)
    elif kind == "regular3":
        if n % 2 or n < 4:
            raise ValueError(f"graph='regular3-{n}': a 3-regular graph needs an even n >= 4")
        g = nx.random_regular_graph(3, n, seed=seed)
    else:
        g = nx.gnp_random_graph(n, 0.5, seed=seed)
    return _checked(n, [(min(u, v), max(u, v), 1.0) for u, v in g.edges], f"{kind}-{n}", f"{kind}-{n}")


def cut_values(graph: Graph) -> np.ndarray:
    """Cut weight of every assignment ``x`` in ``0..2**n - 1`` (bit i = node i)."""
    x = np.arange(2**graph.n)
    out = np.zeros(2**graph.n)
    for u, v, w in graph.edges:
        out += w * (((x >> u) & 1) != ((x >> v) & 1))
    return out


def max_cut(graph: Graph) -> tuple[float, tuple[int, ...]]:
    """Brute force: the largest cut and every assignment reaching it."""
    values = cut_values(graph)
    best = float(values.max())
    return best, tuple(int(i) for i in np.flatnonzero(np.isclose(values, best)))
