"""The partial-embedding API: embeddings of an anchor (cut) pattern with their extension counts.

DwarvesGraph exposes, instead of full embeddings, the embeddings ``phi_C`` of a small anchor pattern
p[C] together with how many ways each extends to the whole pattern. This answers questions that need
"which data vertices take part" rather than a total, without materialising full embeddings:

- :func:`partial_embeddings`: every ``phi_C`` (all of them, no symmetry breaking), the per-component
  extension counts ``n_i(phi_C)`` (from the compiled decomposition kernel in *emit* mode) and the exact
  number of full embeddings extending it, ``prod_i n_i(phi_C) - sum_pi ext_{phi_C}(p / pi)`` with the
  shrinkage patterns anchored at the same C (recursively; rows align because every kernel enumerates
  p[C] in the same order);
- :func:`exists` / :func:`domains`: existence queries (is there an embedding with vertex u at x?);
- :func:`mni_support` and :func:`frequent_subgraphs`: frequent-subgraph mining on a labelled graph with
  the minimum-image-based support (Bringmann & Nijssen, PAKDD 2008): the support of p is the smallest,
  over pattern vertices u, number of distinct data vertices that u maps to in some embedding. It is
  anti-monotone, so mining grows frequent patterns one edge at a time.

All counts here are of injective maps (labelled embeddings, edge-induced). Data vertex ids are the ids of
the graph passed in (the degree relabelling used inside is undone).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.graphs.compiler import Bind, Factor, KernelPlan
from workbench.graphs.decompose import component_orders, vertex_bind
from workbench.graphs.graph import Graph
from workbench.graphs.kernels import compile_plan, run_emit
from workbench.graphs.patterns import Pattern

__all__ = ["PartialEmbeddings", "partial_embeddings", "exists", "domains", "mni_support", "frequent_subgraphs"]


@dataclass(frozen=True)
class PartialEmbeddings:
    """Embeddings of the anchor pattern p[cut] and their extension counts.

    ``vertices``: ``(M, len(cut))`` data vertices (column j is the image of ``cut[j]``);
    ``extensions``: ``(M, len(components))`` injective extensions of each component of p - cut;
    ``exact``: ``(M,)`` full embeddings (injective maps of p) extending each row (Python-int safe as int64
    for the graphs in scope); ``components``: the components, in column order.
    """

    pattern: Pattern
    cut: tuple[int, ...]
    vertices: np.ndarray
    extensions: np.ndarray
    exact: np.ndarray
    components: tuple[tuple[int, ...], ...]

    @property
    def total(self) -> int:
        """inj(p): the sum of the exact extension counts."""
        return int(self.exact.sum())


@functools.lru_cache(maxsize=8)
def _ordered(graph: Graph) -> tuple[Graph, np.ndarray]:
    """The degree-ordered graph and ``old[new]`` (its vertex ids in the input graph)."""
    order = np.lexsort((np.arange(graph.n), -graph.degrees))
    new_id = np.empty(graph.n, dtype=np.int64)
    new_id[order] = np.arange(graph.n)
    return graph.relabel(new_id), order


def _check_anchor(pattern: Pattern, cut: tuple[int, ...]) -> None:
    if not cut or len(set(cut)) != len(cut) or any(not 0 <= c < pattern.k for c in cut):
        raise ValueError(f"cut={cut} must be distinct pattern vertices in 0..{pattern.k - 1}")
    if not pattern.is_connected(cut):
        raise ValueError(f"cut={cut} induces a disconnected subpattern: anchors must be connected")
    if not all(any(pattern.has_edge(cut[i], cut[j]) for j in range(i)) for i in range(1, len(cut))):
        raise ValueError(f"cut={cut}: list anchors so that each is adjacent to an earlier one")


def _emit_plan(pattern: Pattern, cut: tuple[int, ...]) -> tuple[KernelPlan, tuple[tuple[int, ...], ...]]:
    comps = tuple(pattern.components([v for v in range(pattern.k) if v not in cut]))
    binds: list[Bind] = []
    for i, v in enumerate(cut):
        lab = pattern.labels[v] if pattern.labels else -1
        binds.append(Bind(v, label=lab) if i == 0 else vertex_bind(pattern, v, list(cut[:i])))
    factors = []
    for comp in comps:
        order = component_orders(pattern, cut, comp)[0]
        fb, bound = [], list(cut)
        for v in order:
            fb.append(vertex_bind(pattern, v, bound))
            bound.append(v)
        factors.append(Factor(tuple(fb)))
    return KernelPlan(cut=tuple(binds), factors=tuple(factors), emit=True), comps


def _partitions(pattern: Pattern, cut: tuple[int, ...], comps) -> list[Pattern]:
    """Quotients p/pi (non-identity; cut vertices kept as vertices 0..len(cut)-1 in order)."""
    comp_of = {v: i for i, c in enumerate(comps) for v in c}
    free = [v for c in comps for v in c]
    out = []

    def place(i: int, blocks: list[list[int]]) -> None:
        if i == len(free):
            if any(len(b) > 1 for b in blocks):
                out.append(pattern.quotient([[c] for c in cut] + [list(b) for b in blocks]))
            return
        v = free[i]
        for block in blocks:
            if all(comp_of[u] != comp_of[v] for u in block) and (
                pattern.labels is None or pattern.labels[block[0]] == pattern.labels[v]
            ):
                block.append(v)
                place(i + 1, blocks)
                block.pop()
        blocks.append([v])
        place(i + 1, blocks)
        blocks.pop()

    place(0, [])
    return out


def _exact(graph: Graph, pattern: Pattern, cut: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple]:
    plan, comps = _emit_plan(pattern, cut)
    kernel = compile_plan(plan)
    emb, ext = run_emit(kernel, graph, len(cut), len(comps))
    exact = np.prod(ext, axis=1) if len(comps) else np.ones(emb.shape[0], dtype=np.int64)
    if len(comps) > 1:
        anchors = tuple(range(len(cut)))
        for q in _partitions(pattern, cut, comps):
            emb_q, _, exact_q, _ = _exact(graph, q, anchors)
            if not np.array_equal(emb_q, emb):  # the kernels enumerate p[C] identically; guard anyway
                raise RuntimeError("shrinkage kernel enumerated the anchor pattern in a different order")
            exact = exact - exact_q
    return emb, ext, exact, comps


def partial_embeddings(graph: Graph, pattern: Pattern, cut: tuple[int, ...]) -> PartialEmbeddings:
    """Every embedding of p[cut] in ``graph`` with its extension counts (see module docstring).

    Args:
        graph: the data graph (labels required when the pattern has labels).
        pattern: a connected pattern; cut: anchor vertices, connected, each adjacent to an earlier one.

    Raises:
        ValueError: bad anchors, or a labelled pattern on an unlabelled graph.

    Example::

        >>> from workbench.graphs.generators import grid
        >>> from workbench.graphs.patterns import parse_pattern
        >>> pe = partial_embeddings(grid(3, 3), parse_pattern("wedge"), (0,))   # centre of the wedge
        >>> int(pe.exact[pe.vertices[:, 0] == 4][0])                             # the grid's centre
        12
    """
    cut = tuple(int(c) for c in cut)
    _check_anchor(pattern, cut)
    if pattern.labels is not None and graph.labels is None:
        raise ValueError("pattern has labels but the graph has none")
    ordered, old = _ordered(graph)
    emb, ext, exact, comps = _exact(ordered, pattern, cut)
    return PartialEmbeddings(pattern, cut, old[emb].astype(np.int64), ext, exact, comps)


def domains(graph: Graph, pattern: Pattern) -> dict[int, np.ndarray]:
    """For each pattern vertex u, the sorted data vertices x such that some embedding maps u to x
    (vertices in one automorphism orbit share a domain and are computed once)."""
    out: dict[int, np.ndarray] = {}
    for u in range(pattern.k):
        twin = next((w for w in out if any(s[w] == u for s in pattern.automorphisms)), None)
        if twin is not None:
            out[u] = out[twin]
            continue
        pe = partial_embeddings(graph, pattern, (u,))
        out[u] = np.unique(pe.vertices[pe.exact > 0, 0])
    return out


def exists(graph: Graph, pattern: Pattern, at: dict[int, int] | None = None) -> bool:
    """Whether ``pattern`` occurs in ``graph`` (with pattern vertex u at data vertex x for every
    ``u: x`` in ``at``; anchors must induce a connected subpattern)."""
    if not at:
        return bool((partial_embeddings(graph, pattern, (0,)).exact > 0).any())
    cut = _connected_order(pattern, tuple(at))
    pe = partial_embeddings(graph, pattern, cut)
    want = np.array([at[c] for c in cut], dtype=np.int64)
    rows = (pe.vertices == want).all(axis=1)
    return bool((pe.exact[rows] > 0).any())


def _connected_order(pattern: Pattern, vertices: tuple[int, ...]) -> tuple[int, ...]:
    left, order = list(vertices[1:]), [vertices[0]]
    while left:
        nxt = next((v for v in left if any(pattern.has_edge(v, u) for u in order)), None)
        if nxt is None:
            raise ValueError(f"anchors {sorted(vertices)} induce a disconnected subpattern: anchors must be connected")
        order.append(nxt)
        left.remove(nxt)
    return tuple(order)


def mni_support(graph: Graph, pattern: Pattern) -> int:
    """Minimum-image-based support: min over pattern vertices of the size of their :func:`domains`."""
    return min(len(d) for d in domains(graph, pattern).values())


def frequent_subgraphs(graph: Graph, *, min_support: int, max_edges: int = 3) -> list[tuple[Pattern, int]]:
    """Connected labelled patterns with at most ``max_edges`` edges whose MNI support is at least
    ``min_support``, found level by level (each level extends the frequent patterns of the previous one
    by an edge to a new labelled vertex or between two existing vertices; MNI is anti-monotone).

    Raises:
        ValueError: the graph has no labels, or bad thresholds.
    """
    if graph.labels is None:
        raise ValueError("frequent subgraph mining needs vertex labels (graph.labels is None)")
    if min_support < 1 or not 1 <= max_edges <= 5:
        raise ValueError(f"min_support={min_support} must be >= 1 and max_edges={max_edges} in 1..5")
    labels = sorted(int(x) for x in np.unique(graph.labels) if x >= 0)
    level: dict[Any, Pattern] = {}
    for a in labels:
        for b in labels:
            if a <= b:
                p = Pattern(2, ((0, 1),), (a, b))
                level.setdefault(p.canonical, p)
    found: list[tuple[Pattern, int]] = []
    for size in range(1, max_edges + 1):
        frequent = []
        for p in level.values():
            support = mni_support(graph, p)
            if support >= min_support:
                frequent.append(p)
                found.append((p, support))
        if size == max_edges:
            break
        level = {}
        for p in frequent:
            for q in _extensions(p, labels):
                level.setdefault(q.canonical, q.canonical_pattern())
    return found


def _extensions(p: Pattern, labels: list[int]) -> list[Pattern]:
    out = []
    for a in range(p.k):
        for b in range(a + 1, p.k):
            if not p.has_edge(a, b):
                out.append(Pattern(p.k, p.edges + ((a, b),), p.labels))
        if p.k < 7:
            for lab in labels:
                out.append(Pattern(p.k + 1, p.edges + ((a, p.k),), p.labels + (lab,)))
    return out
