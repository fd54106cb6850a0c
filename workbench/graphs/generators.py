"""Seeded synthetic graphs for the size sliders: Erdos-Renyi G(n, p), R-MAT (power-law), 2-D grid.

Specs (what ``--graph`` and the panel accept): ``er-N-P[-SEED]``, ``rmat-SCALE-EDGEFACTOR[-SEED]``,
``grid-ROWS-COLS``. Every generator goes through :func:`~workbench.graphs.graph.from_edges`, so R-MAT's
self-loops and repeated edges are dropped and counted in ``graph.report``.

Example::

    >>> from_spec("grid-3-4").m    # 3 * 3 + 2 * 4 edges
    17
"""

from __future__ import annotations

import re

import numpy as np

from workbench.graphs.graph import Graph, from_edges
from workbench.memory import require

__all__ = ["erdos_renyi", "rmat", "grid", "from_spec", "is_spec", "SPEC_HELP"]

SPEC_HELP = "er-N-P[-SEED], rmat-SCALE-EDGEFACTOR[-SEED], grid-ROWS-COLS"
_NUM = r"(\d+(?:\.\d*)?(?:[eE]-?\d+)?)"
_SPECS = {
    "er": re.compile(rf"^er-(\d+)-{_NUM}(?:-(\d+))?$"),
    "rmat": re.compile(r"^rmat-(\d+)-(\d+)(?:-(\d+))?$"),
    "grid": re.compile(r"^grid-(\d+)-(\d+)$"),
}
MAX_VERTICES = 1 << 24
MAX_EDGES = 1 << 27
#: measured peak bytes (tracemalloc) of building a graph, per raw edge and per vertex (R-MAT, ER, grid: 125-161
#: bytes per raw edge on 0.5-2 M edges), with a margin
BYTES_PER_RAW_EDGE = 180
BYTES_PER_VERTEX = 64


def check_memory(name: str, raw_edges: float, vertices: float) -> None:
    """Refuse (ValueError naming the estimate and the available memory) a graph that cannot be built here."""
    require(
        raw_edges * BYTES_PER_RAW_EDGE + vertices * BYTES_PER_VERTEX,
        what=f"graph {name}",
        hint="valid sizes fit in memory: choose a smaller scale, edge factor or size",
    )


def erdos_renyi(n: int, p: float, *, seed: int = 0) -> Graph:
    """G(n, p): each of the n(n-1)/2 vertex pairs is an edge independently with probability p.

    Exact sampling in O(n + m) by geometric skips over the pairs in row-major order (Batagelj & Brandes,
    Phys. Rev. E 71, 2005).

    Raises:
        ValueError: n out of 1..2^24, p out of [0, 1], or more than 2^27 expected edges.
    """
    if not 1 <= n <= MAX_VERTICES:
        raise ValueError(f"n={n} is out of range: valid range is 1..{MAX_VERTICES}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p={p} is out of range: valid range is 0..1")
    total = n * (n - 1) // 2
    if p * total > MAX_EDGES:
        raise ValueError(f"er-{n}-{p} has {p * total:.3g} expected edges: valid is at most {MAX_EDGES}")
    check_memory(f"er-{n}-{p:g}", p * total, n)
    rng = np.random.default_rng(seed)
    if p == 0.0 or total == 0:
        t = np.zeros(0, dtype=np.int64)
    elif p == 1.0:
        t = np.arange(total, dtype=np.int64)
    else:
        parts, pos = [], -1
        while pos < total:
            want = int(max(1024, (total - pos) * p * 1.05 + 64))
            steps = np.cumsum(rng.geometric(p, size=want)) + pos
            parts.append(steps[steps < total])
            pos = int(steps[-1])
        t = np.concatenate(parts)
    # pair index t -> (i, j), i < j, rows of length n-1, n-2, ...: offset(i) = i (2n - i - 1) / 2
    i = np.floor((2 * n - 1 - np.sqrt((2 * n - 1) ** 2 - 8.0 * t)) / 2).astype(np.int64)
    off = i * (2 * n - i - 1) // 2
    i = np.where(off > t, i - 1, i)
    off = i * (2 * n - i - 1) // 2
    nxt = (i + 1) * (2 * n - i - 2) // 2
    i = np.where(nxt <= t, i + 1, i)
    off = i * (2 * n - i - 1) // 2
    j = t - off + i + 1
    return from_edges(i, j, n, name=f"er-{n}-{p:g}", source=f"erdos_renyi(n={n}, p={p}, seed={seed})")


def rmat(scale: int, edge_factor: int, *, seed: int = 0, a: float = 0.57, b: float = 0.19, c: float = 0.19) -> Graph:
    """R-MAT power-law graph (Chakrabarti, Zhan & Faloutsos, SDM 2004; Graph500 parameters by default).

    ``edge_factor * 2^scale`` raw edges, each placed by ``scale`` recursive quadrant choices with
    probabilities a, b, c, d = 1 - a - b - c; vertex ids are then shuffled (as Graph500 does) and self-loops
    and duplicates dropped (see ``graph.report``).

    Raises:
        ValueError: scale out of 1..24, edge_factor out of 1..64, or bad probabilities.
    """
    if not 1 <= scale <= 24:
        raise ValueError(f"scale={scale} is out of range: valid range is 1..24")
    if not 1 <= edge_factor <= 64:
        raise ValueError(f"edge_factor={edge_factor} is out of range: valid range is 1..64")
    d = 1.0 - a - b - c
    if min(a, b, c, d) < 0:
        raise ValueError(f"R-MAT probabilities a={a}, b={b}, c={c} must be >= 0 with a + b + c <= 1")
    n, m = 1 << scale, edge_factor << scale
    check_memory(f"rmat-{scale}-{edge_factor}", m, n)
    rng = np.random.default_rng(seed)
    src = np.zeros(m, dtype=np.int64)
    dst = np.zeros(m, dtype=np.int64)
    for bit in range(scale):
        r = rng.random(m)
        down = r >= a + b  # quadrants c, d: source bit set
        right = ((r >= a) & (r < a + b)) | (r >= a + b + c)  # quadrants b, d: target bit set
        src |= down.astype(np.int64) << bit
        dst |= right.astype(np.int64) << bit
    perm = rng.permutation(n)
    return from_edges(
        perm[src],
        perm[dst],
        n,
        name=f"rmat-{scale}-{edge_factor}",
        source=f"rmat(scale={scale}, edge_factor={edge_factor}, seed={seed})",
    )


def grid(rows: int, cols: int) -> Graph:
    """The rows x cols 2-D lattice (4-neighbour grid): no triangles, many 4-cycles."""
    if rows < 1 or cols < 1 or rows * cols > MAX_VERTICES:
        raise ValueError(
            f"grid {rows} x {cols} is out of range: valid is rows, cols >= 1 and rows*cols <= {MAX_VERTICES}"
        )
    check_memory(f"grid-{rows}-{cols}", 2 * rows * cols, rows * cols)
    ids = np.arange(rows * cols, dtype=np.int64).reshape(rows, cols)
    src = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    dst = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    return from_edges(src, dst, rows * cols, name=f"grid-{rows}-{cols}", source=f"grid({rows}, {cols})")


def is_spec(spec: str) -> bool:
    """Whether ``spec`` looks like a synthetic graph spec (``er-...``, ``rmat-...``, ``grid-...``)."""
    return spec.split("-", 1)[0] in _SPECS and "-" in spec


def from_spec(spec: str) -> Graph:
    """The graph of a synthetic spec (see module docstring); ValueError naming the valid forms."""
    kind = spec.split("-", 1)[0]
    match = _SPECS.get(kind, re.compile("$^")).match(spec)
    if match is None:
        raise ValueError(
            f"graph={spec!r} is not a valid synthetic spec: valid forms are {SPEC_HELP}, "
            "e.g. er-1000-0.01, rmat-12-8, grid-30-30"
        )
    g = match.groups()
    if kind == "er":
        return erdos_renyi(int(g[0]), float(g[1]), seed=int(g[2] or 0))
    if kind == "rmat":
        return rmat(int(g[0]), int(g[1]), seed=int(g[2] or 0))
    return grid(int(g[0]), int(g[1]))
