"""Cost models that rank candidate plans: a locality-aware degree-statistics estimate and a sampling estimate.

**Degree statistics** (:func:`plan_cost`). Walks a :class:`~.compiler.KernelPlan` the way the generated
code runs it and adds up work units (elements touched by merges, scatters and loop iterations):

- the walk is evaluated per bucket of root degrees (log2 buckets) and summed, weighted by bucket sizes;
- a root's neighbour list has its bucket's degree; any other bound vertex was reached through an edge,
  so its list has the size-biased mean ``d2 = sum(d^2)/sum(d)``;
- locality: a candidate in the root's neighbourhood is adjacent to another bound vertex with the root
  bucket's local clustering; elsewhere with the graph's transitivity (3 x triangles / wedges), not the
  global edge density ``2m/n^2``; estimated from sampled wedges; an anti-vertex keeps ``1 - p``;
- a restriction ``v < root`` keeps the bucket's share of higher-degree neighbours (the degree order);
  other bounds keep ``1 / (1 + #bounds)`` of a candidate set;
- each set is charged once per iteration of the loop it is hoisted to; a merge costs ``|a| + |b|``, or
  ``min * log2(max)`` when the sides are skewed; a count table costs ``|T| * d2`` per rebuild.

**Sampling** (:func:`sample_seconds`): runs the compiled kernel on a systematic sample of root vertices
(every s-th id of the degree-ordered graph, so hubs and leaves are both represented) and scales the time
by ``n / sample``: DwarvesGraph's approximate-mining estimate.

Predicted seconds are ``units * SECONDS_PER_UNIT`` (a constant measured on this class of machine); the
runner reports them next to the measured time.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass

import numpy as np

from workbench.graphs.graph import Graph
from workbench.graphs.ir import Bind, KernelPlan
from workbench.graphs.ir import chain_of as _chain
from workbench.graphs.ir import ready_vertex as _ready
from workbench.graphs.kernels import run_kernel

__all__ = ["GraphStats", "plan_cost", "sample_seconds", "SECONDS_PER_UNIT", "predict_seconds"]

#: seconds per work unit of :func:`plan_cost`: the median of measured CPU seconds / units over 250 kernels
#: (11 patterns, every top-4 plan, on Wiki-Vote, CiteSeer, R-MAT 2^12 and G(20000, 0.001)); the 10-90 %
#: range of that ratio was 1.1-5.1 ns, so predictions are good to a factor of about 3
SECONDS_PER_UNIT = 3.0e-9


@dataclass(frozen=True, eq=False)
class GraphStats:
    """The degree statistics the analytic model reads.

    Global: ``n``, ``m``, mean degree, size-biased mean degree ``sum d^2 / sum d``, maximum degree,
    transitivity. Per degree bucket (vertices with ``floor(log2 d)`` equal; arrays of one entry per
    bucket): ``bucket_count``, ``bucket_degree`` (mean), ``bucket_clustering`` (local clustering, from
    sampled wedges) and ``bucket_higher`` (fraction of neighbours ranked before the vertex in the degree
    order, i.e. the share a restriction ``v_j < v_i`` keeps). The model evaluates every plan per root bucket,
    so hubs with dense neighbourhoods weigh what they cost.
    """

    n: int
    m: int
    mean_degree: float
    biased_degree: float
    max_degree: int
    transitivity: float
    bucket_count: np.ndarray
    bucket_degree: np.ndarray
    bucket_clustering: np.ndarray
    bucket_higher: np.ndarray

    @classmethod
    def of(cls, graph: Graph, *, samples: int = 20000, seed: int = 0) -> GraphStats:
        """Statistics of ``graph``; clustering from ``samples`` random wedges (seeded). Cached per graph
        object (a catalogue of statistics, as a database keeps): later sessions on it reuse them."""
        return _stats_of(graph, samples, seed)

    @classmethod
    def measure(cls, graph: Graph, samples: int, seed: int) -> GraphStats:
        d = graph.degrees.astype(np.int64)
        n, m = graph.n, graph.m
        mean = 2.0 * m / n if n else 0.0
        biased = float((d * d).sum() / d.sum()) if m else 0.0
        bucket = np.where(d > 0, np.floor(np.log2(np.maximum(d, 1))).astype(np.int64), -1)
        ids = np.unique(bucket[bucket >= 0])
        closed, sampled, tau = _wedge_closure(graph, samples, seed)
        rank = np.empty(n, dtype=np.int64)
        rank[np.lexsort((np.arange(n), -d))] = np.arange(n)
        src = np.repeat(np.arange(n), d)
        before = np.bincount(src, weights=(rank[graph.indices] < rank[src]).astype(np.float64), minlength=n)
        count, degree, clust, higher = [], [], [], []
        for b in ids:
            members = bucket == b
            count.append(float(members.sum()))
            degree.append(float(d[members].mean()))
            c_b, s_b = closed[members].sum(), sampled[members].sum()
            clust.append(float(c_b / s_b) if s_b else 0.0)
            higher.append(float((before[members] / d[members]).mean()))
        return cls(
            n,
            m,
            mean,
            biased,
            graph.max_degree,
            tau,
            np.array(count),
            np.array(degree),
            np.array(clust),
            np.array(higher),
        )


@functools.lru_cache(maxsize=16)
def _stats_of(graph: Graph, samples: int, seed: int) -> GraphStats:
    return GraphStats.measure(graph, samples, seed)


def _wedge_closure(graph: Graph, samples: int, seed: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Per vertex: closed and sampled wedges centred there; and the transitivity (closed fraction of the
    half of the samples whose centres were drawn with probability ~ C(d, 2), i.e. uniform wedges)."""
    d = graph.degrees
    n = graph.n
    closed = np.zeros(n)
    sampled = np.zeros(n)
    w = d * (d - 1) / 2.0
    if w.sum() == 0:
        return closed, sampled, 0.0
    rng = np.random.default_rng(seed)
    # half the samples proportional to C(d, 2) (global transitivity), half uniform over vertices with d >= 2
    # (so small-degree buckets get their own clustering estimate)
    eligible = np.flatnonzero(d >= 2)
    centre = np.concatenate(
        [rng.choice(n, size=samples // 2, p=w / w.sum()), rng.choice(eligible, size=samples - samples // 2)]
    )
    deg = d[centre]
    i = rng.integers(0, deg)
    j = (i + rng.integers(1, deg)) % deg  # a different neighbour
    a = graph.indices[graph.indptr[centre] + i].astype(np.int64)
    b = graph.indices[graph.indptr[centre] + j].astype(np.int64)
    keys = np.repeat(np.arange(n, dtype=np.int64), d) * n + graph.indices  # sorted (CSR order)
    want = a * n + b
    pos = np.minimum(np.searchsorted(keys, want), keys.shape[0] - 1)
    hit = (keys[pos] == want).astype(np.float64)
    np.add.at(closed, centre, hit)
    np.add.at(sampled, centre, 1.0)
    half = samples // 2
    return closed, sampled, max(float(hit[:half].mean()), 1.0 / max(half, 1))


def _merge(a, b):
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    return np.where(lo * 16 < hi, lo * np.log2(hi + 2) + 1, a + b + 1)


class _Walk:
    """One cost walk, vectorised over root-degree buckets: expected iterations per bound vertex."""

    def __init__(self, stats: GraphStats, plan: KernelPlan, scale: float):
        self.s = stats
        self.plan = plan
        self.depth: dict[int, int] = {}
        for d, b in enumerate(plan.all_binds()):
            self.depth.setdefault(b.vertex, d)
        self.root = plan.cut[0].vertex
        self.iters: dict[int, np.ndarray] = {self.root: stats.bucket_count * scale}
        self.charged: set = set()
        self.units = np.zeros_like(stats.bucket_count)

    def list_size(self, v: int):
        return self.s.bucket_degree if v == self.root else self.s.biased_degree

    def chain_size(self, chain: tuple):
        local = chain[0][1] == self.root  # a subset of the root's neighbourhood: the root's clustering applies
        p = self.s.bucket_clustering if local else self.s.transitivity
        size = self.list_size(chain[0][1])
        for sign, _ in chain[1:]:
            size = size * (p if sign == "+" else (1.0 - p))
        return np.minimum(size, float(self.s.n))

    def charge_chain(self, chain: tuple):
        """Charge materialising ``chain`` (and prefixes) at their hoisted loops; return its size."""
        if len(chain) == 1:
            return self.chain_size(chain)
        prev = self.charge_chain(chain[:-1])
        key = chain if self.plan.hoist else None
        if key is None or key not in self.charged:
            at = _ready(chain, self.depth)
            self.units = self.units + self.iters.get(at, 1.0) * _merge(prev, self.list_size(chain[-1][1]))
            if key is not None:
                self.charged.add(key)
        return self.chain_size(chain)

    def bind_size(self, b: Bind, chain: tuple):
        size = self.chain_size(chain)
        upper, lower = list(b.upper), list(b.lower)
        if chain[0][1] == self.root and self.root in upper:  # below the root in degree order
            size = size * self.s.bucket_higher
            upper.remove(self.root)
        elif chain[0][1] == self.root and self.root in lower:
            size = size * (1.0 - self.s.bucket_higher)
            lower.remove(self.root)
        return size / (1.0 + len(upper) + len(lower))

    def loop(self, b: Bind, outer):
        chain = _chain(b, self.depth)
        self.charge_chain(chain)
        inner = outer * np.maximum(self.bind_size(b, chain), 0.0)
        self.units = self.units + inner
        self.iters[b.vertex] = inner
        return inner

    def count(self, b: Bind, outer, enclosing: int) -> None:
        """Charge counting ``b``'s candidates once per ``outer`` iteration."""
        chain = _chain(b, self.depth)
        log_d = math.log2(self.s.biased_degree + 2)
        if b.table and len(chain) >= 2 and chain[-1][0] == "+":
            t_at = _ready(chain[:-1], self.depth)
            if self.depth[t_at] < self.depth[chain[-1][1]]:
                size_t = self.charge_chain(chain[:-1])
                self.units = self.units + self.iters.get(t_at, 1.0) * size_t * self.s.biased_degree
                self.units = self.units + outer * (1 + len(b.distinct) * 2 * log_d)
                return
        if len(chain) >= 2 and _ready(chain, self.depth) == enclosing:  # merged in the innermost loop
            prev = self.charge_chain(chain[:-1])
            self.units = self.units + outer * _merge(prev, self.list_size(chain[-1][1]))
        else:
            self.charge_chain(chain)
            self.units = self.units + outer * (1 + len(b.distinct) * log_d)

    def nest(self, binds: tuple[Bind, ...], outer, enclosing: int) -> None:
        for b in binds[:-1]:
            outer = self.loop(b, outer)
            enclosing = b.vertex
        self.count(binds[-1], outer, enclosing)


def plan_cost(plan: KernelPlan, stats: GraphStats, *, roots: float | None = None) -> float:
    """Work units of running ``plan`` over ``roots`` root vertices (default all n); see module docstring."""
    scale = 1.0 if roots is None else roots / max(stats.n, 1)
    walk = _Walk(stats, plan, scale)
    outer = walk.iters[walk.root]
    if plan.is_enumeration:
        if len(plan.cut) > 1:
            walk.nest(plan.cut[1:], outer, walk.root)
        return float(walk.units.sum()) + stats.n * scale
    for b in plan.cut[1:]:
        outer = walk.loop(b, outer)
    last = plan.cut[-1].vertex
    if plan.bridge:
        inner = outer
        for b in plan.bridge:
            inner = walk.loop(b, inner)
        outer = np.minimum(inner, outer * stats.n)  # distinct last-cut vertices visited
        last = plan.bridge[-1].vertex
        walk.iters[last] = outer
        walk.units = walk.units + outer
    for f in plan.factors:
        walk.nest(f.binds, outer, last)
    return float((walk.units + outer).sum()) + stats.n * scale


def predict_seconds(units: float) -> float:
    return units * SECONDS_PER_UNIT


def sample_seconds(kernel, graph: Graph, *, sample: int = 256, workers: int = 1) -> float:
    """Sampling estimate: time the compiled ``kernel`` on every ``n/sample``-th root, scaled to all roots."""
    step = max(graph.n // max(sample, 1), 1)
    roots = np.arange(0, graph.n, step, dtype=np.int64)
    start = time.perf_counter()
    run_kernel(kernel, graph, workers=1, roots=roots)
    return (time.perf_counter() - start) * graph.n / max(roots.shape[0], 1) / max(workers, 1)
