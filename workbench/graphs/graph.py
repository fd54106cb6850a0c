"""A simple undirected graph in CSR form: the one graph type of the pattern-mining engines.

``Graph.indptr`` (int64, shape ``(n + 1,)``) and ``Graph.indices`` (int32, shape ``(2 m,)``) hold every
vertex's neighbours, each row sorted ascending, no self-loops, no duplicates; every undirected edge appears
in both rows. :func:`from_edges` is the one constructor that cleans raw edge lists (drops self-loops and
duplicate or reversed edges, and reports how many) so every loader and generator yields the same form.

Engines relabel the graph with :meth:`Graph.by_degree` (vertex 0 = highest degree): symmetry-breaking
restrictions ``v_j < v_i`` then walk from low- to high-degree vertices, which bounds candidate sets
(the degree orientation of triangle counting).

Example::

    >>> g = from_edges([0, 1, 2, 2], [1, 2, 0, 2])   # a triangle plus a self-loop
    >>> g.n, g.m, g.report.self_loops
    (3, 3, 1)
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

import numba
import numpy as np

__all__ = ["Graph", "GraphReport", "from_edges", "from_networkx"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GraphReport:
    """What cleaning did to the raw input: counts of dropped self-loops and duplicate edges.

    ``duplicates`` counts raw edges beyond the first occurrence of each undirected edge (``u v`` and
    ``v u`` are the same edge); ``raw_edges`` is the number of edge records read; ``source`` says where
    the graph came from (file path, generator spec).
    """

    raw_edges: int = 0
    self_loops: int = 0
    duplicates: int = 0
    source: str = ""

    def describe(self) -> str:
        return (
            f"{self.raw_edges} edge records; dropped {self.self_loops} self-loops and {self.duplicates} duplicate edges"
        )


@dataclass(frozen=True, eq=False)
class Graph:
    """Simple undirected graph, CSR.

    Attributes:
        indptr: int64 ``(n + 1,)``; row ``v`` is ``indices[indptr[v]:indptr[v + 1]]``.
        indices: int32 ``(2 m,)``; each row sorted ascending.
        name: label for tables and plots.
        report: what :func:`from_edges` dropped.
        original_ids: int64 ``(n,)``, the input id of each vertex (loaders remap ids to ``0..n-1``), or None.
        labels: int32 ``(n,)`` vertex labels (e.g. Planetoid classes; used by labelled mining), or None.
    """

    indptr: np.ndarray
    indices: np.ndarray
    name: str = "graph"
    report: GraphReport = field(default_factory=GraphReport)
    original_ids: np.ndarray | None = None
    labels: np.ndarray | None = None

    @property
    def n(self) -> int:
        """Number of vertices."""
        return int(self.indptr.shape[0] - 1)

    @property
    def m(self) -> int:
        """Number of undirected edges."""
        return int(self.indices.shape[0] // 2)

    @property
    def degrees(self) -> np.ndarray:
        """int64 ``(n,)`` vertex degrees."""
        return np.diff(self.indptr)

    @property
    def max_degree(self) -> int:
        return int(self.degrees.max()) if self.n else 0

    def neighbors(self, v: int) -> np.ndarray:
        """Sorted int32 neighbours of vertex ``v`` (a view into ``indices``)."""
        return self.indices[self.indptr[v] : self.indptr[v + 1]]

    def has_edge(self, u: int, v: int) -> bool:
        row = self.neighbors(u)
        i = int(np.searchsorted(row, v))
        return i < row.shape[0] and int(row[i]) == v

    def edges(self) -> np.ndarray:
        """int64 ``(m, 2)`` array of edges ``(u, v)`` with ``u < v``, sorted."""
        src = np.repeat(np.arange(self.n, dtype=np.int64), self.degrees)
        dst = self.indices.astype(np.int64)
        keep = src < dst
        return np.stack([src[keep], dst[keep]], axis=1)

    def relabel(self, new_id: np.ndarray, name: str | None = None, *, check: bool = True) -> Graph:
        """The same graph with vertex ``v`` renamed ``new_id[v]`` (a permutation of ``0..n-1``)."""
        new_id = np.asarray(new_id, dtype=np.int64)
        if check and (new_id.shape != (self.n,) or not np.array_equal(np.sort(new_id), np.arange(self.n))):
            raise ValueError(f"new_id must be a permutation of 0..{self.n - 1}")
        old = np.empty(self.n, dtype=np.int64)
        old[new_id] = np.arange(self.n)
        out = _relabel_csr(self.indptr, self.indices, new_id, old)
        ids = self.original_ids[old] if self.original_ids is not None else old
        labels = self.labels[old] if self.labels is not None else None
        return Graph(out[0], out[1], name or self.name, self.report, ids, labels)

    def by_degree(self) -> Graph:
        """Relabelled so that vertex 0 has the highest degree (ties by old id); ``original_ids`` maps back."""
        order = np.lexsort((np.arange(self.n), -self.degrees))  # old ids, highest degree first
        new_id = np.empty(self.n, dtype=np.int64)
        new_id[order] = np.arange(self.n)
        return self.relabel(new_id, check=False)

    def with_labels(self, labels: Sequence[int] | np.ndarray) -> Graph:
        labels = np.asarray(labels, dtype=np.int32)
        if labels.shape != (self.n,):
            raise ValueError(f"labels has shape {labels.shape}: expected ({self.n},), one label per vertex")
        return Graph(self.indptr, self.indices, self.name, self.report, self.original_ids, labels)

    def stats(self) -> dict[str, float]:
        """Degree statistics the cost model reads: n, m, max degree, mean degree, sum of d^2 and d^3."""
        d = self.degrees.astype(np.float64)
        return {
            "n": self.n,
            "m": self.m,
            "max_degree": self.max_degree,
            "mean_degree": float(d.mean()) if self.n else 0.0,
            "sum_d2": float((d * d).sum()),
            "sum_d3": float((d**3).sum()),
        }

    def to_networkx(self):
        """A ``networkx.Graph`` with the same vertices ``0..n-1`` and edges (for oracles and drawing)."""
        import networkx as nx

        g = nx.Graph()
        g.add_nodes_from(range(self.n))
        g.add_edges_from(map(tuple, self.edges().tolist()))
        return g

    def __repr__(self) -> str:
        return f"Graph(name={self.name!r}, n={self.n}, m={self.m}, max_degree={self.max_degree})"


@numba.njit(cache=True)
def _relabel_csr(indptr, indices, new_id, old):
    """CSR of the graph with vertex v renamed new_id[v]: row i is old row old[i], mapped and sorted."""
    n = indptr.shape[0] - 1
    out_ptr = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        out_ptr[i + 1] = out_ptr[i] + indptr[old[i] + 1] - indptr[old[i]]
    out = np.empty(indices.shape[0], dtype=np.int32)
    for i in range(n):
        a, b = indptr[old[i]], indptr[old[i] + 1]
        row = np.empty(b - a, dtype=np.int32)
        for j in range(a, b):
            row[j - a] = new_id[indices[j]]
        out[out_ptr[i] : out_ptr[i + 1]] = np.sort(row)
    return out_ptr, out


def _csr(src: np.ndarray, dst: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR of the symmetric closure of clean edges ``src[i] -- dst[i]`` (no loops, no duplicates)."""
    a = np.concatenate([src, dst]).astype(np.int64)
    b = np.concatenate([dst, src]).astype(np.int64)
    order = np.lexsort((b, a))
    a, b = a[order], b[order]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(a, minlength=n), out=indptr[1:])
    return indptr, b.astype(np.int32)


def from_edges(
    src: Sequence[int] | np.ndarray,
    dst: Sequence[int] | np.ndarray,
    n: int | None = None,
    *,
    name: str = "graph",
    source: str = "",
    remap: bool = False,
    labels: np.ndarray | None = None,
) -> Graph:
    """Build a simple undirected :class:`Graph` from raw edges, dropping self-loops and duplicates.

    Args:
        src, dst: endpoint ids of each raw edge (same length); direction is ignored.
        n: number of vertices (ids ``0..n-1``); default ``max id + 1``. Ignored when ``remap``.
        name: graph name; source: provenance for the report.
        remap: map the distinct ids that occur, in ascending order, to ``0..n'-1`` (vertices without
            edges vanish); ``original_ids`` keeps the input ids.
        labels: optional per-vertex labels, int, shape ``(n,)`` (not together with ``remap``).

    Returns:
        The graph; ``graph.report`` counts the dropped self-loops and duplicate edges.

    Raises:
        ValueError: negative ids, ids ``>= n``, or ``src``/``dst`` of different lengths.
    """
    src = np.asarray(src, dtype=np.int64).ravel()
    dst = np.asarray(dst, dtype=np.int64).ravel()
    if src.shape != dst.shape:
        raise ValueError(f"src has {src.shape[0]} entries but dst has {dst.shape[0]}: one per edge")
    raw = int(src.shape[0])
    if raw and min(int(src.min()), int(dst.min())) < 0:
        raise ValueError("vertex ids must be >= 0")
    original = None
    if remap:
        original, inv = np.unique(np.concatenate([src, dst]), return_inverse=True)
        src, dst = inv[:raw], inv[raw:]
        n = int(original.shape[0])
    elif n is None:
        n = int(max(src.max(), dst.max()) + 1) if raw else 0
    elif raw and max(int(src.max()), int(dst.max())) >= n:
        raise ValueError(f"vertex id {max(int(src.max()), int(dst.max()))} is out of range: valid ids are 0..{n - 1}")
    loops = src == dst
    u, v = np.minimum(src[~loops], dst[~loops]), np.maximum(src[~loops], dst[~loops])
    key = np.unique(u * max(n, 1) + v)
    u, v = key // max(n, 1), key % max(n, 1)
    report = GraphReport(
        raw_edges=raw, self_loops=int(loops.sum()), duplicates=int((~loops).sum() - key.shape[0]), source=source
    )
    if report.self_loops or report.duplicates:
        log.info("%s: %s", name, report.describe())
    indptr, indices = _csr(u, v, n)
    if labels is not None and remap:
        raise ValueError("labels cannot be combined with remap=True: relabel after building the graph")
    lab = None if labels is None else np.asarray(labels, dtype=np.int32)
    if lab is not None and lab.shape != (n,):
        raise ValueError(f"labels has shape {lab.shape}: expected ({n},), one label per vertex")
    return Graph(indptr, indices, name, report, original, lab)


def from_networkx(g, *, name: str = "networkx") -> Graph:
    """A :class:`Graph` from a networkx graph with nodes ``0..n-1`` (others are remapped in sorted order)."""
    nodes = sorted(g.nodes())
    index = {v: i for i, v in enumerate(nodes)}
    e = np.array([(index[a], index[b]) for a, b in g.edges()], dtype=np.int64).reshape(-1, 2)
    return from_edges(e[:, 0], e[:, 1], len(nodes), name=name, source="networkx")
