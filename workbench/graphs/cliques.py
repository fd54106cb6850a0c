"""k-clique counting over the degree-oriented DAG with bitsets (triangles, 4-, 5-, ... cliques).

Orient every edge from the larger to the smaller vertex id: after :meth:`Graph.by_degree` that points at
the higher-degree end, so each vertex's *forward* list ``out(v) = {u in N(v): u < v}`` (the prefix of its
sorted row) is short (at most ``sqrt(2 m)``). A k-clique ``v1 > v2 > ... > vk`` is then found exactly once,
from its largest vertex, with no symmetry checks (Chiba & Nishizeki, SIAM J. Comput. 1985; kClist, Danisch
et al., WWW 2018).

- **Triangles** (:func:`count_triangles_dag`): for every DAG edge ``c -> b`` the count is
  ``|out(c) ∩ out(b)|``. ``out(c)`` is marked once per ``c`` in a bitset over all vertices; each edge then
  takes the cheapest of three exact ways: scan ``out(b)`` against the marks; scan the part of ``out(c)``
  below ``b`` against the hub bit row of ``b``; or AND-and-popcount the marks with the hub row of ``b``, one
  64-bit word per 64 ids below ``b``. Hub rows are the forward lists of the ``hubs`` smallest ids (the
  highest degrees), as a dense ``(hubs, ceil(hubs / 64))`` bit matrix built once per count.
- **k >= 4** (:func:`count_cliques_dag`): for every vertex ``v``, the subgraph induced on ``out(v)`` is
  written as local bit rows (``row[i]`` = the members of ``out(v)`` before ``i`` adjacent to the ``i``-th),
  then cliques are grown inside it by ANDing rows (``S & row[j]``) and the last level is a popcount.

The kernels are numba functions compiled once and cached on disk; :func:`count_cliques` is the Python entry
(threads over strided roots; the kernels release the GIL).

Example::

    >>> from workbench.graphs.generators import grid
    >>> count_cliques(grid(3, 3).by_degree(), 3)
    0
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import wait as futures_wait
from dataclasses import dataclass

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core.extending import intrinsic

from workbench.graphs.graph import Graph

__all__ = [
    "CliqueIndex",
    "count_cliques",
    "forward_ends",
    "hub_rows",
    "count_triangles_dag",
    "count_cliques_dag",
    "warm",
    "HUB_LIMIT",
    "MAX_FORWARD",
    "PARALLEL_MIN_EDGES",
    "CHUNKS_PER_WORKER",
]

#: at most this many hub rows (a 2048 x 32 word bit matrix: 512 KiB, stays in L2)
HUB_LIMIT = 2048
#: the k >= 4 kernel keeps a (d, ceil(d / 64)) bit matrix per root; above this forward degree d the
#: engine falls back to the generic enumeration kernels
MAX_FORWARD = 4096
#: graphs with fewer edges are counted on one thread: starting a helper thread costs about 0.1 ms, the
#: triangle kernel about 12 ns per edge (measured on Wiki-Vote), so below this a second thread cannot pay off
PARALLEL_MIN_EDGES = 20_000
#: root chunks per thread, taken from a shared queue (load balance on a busy machine)
CHUNKS_PER_WORKER = 4


@intrinsic
def _popcount(typingctx, x):
    """Number of set bits of a uint64 (LLVM ``ctpop``: one ``popcnt`` instruction where the CPU has it)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        value = builder.zext(args[0], ir.IntType(64)) if args[0].type.width < 64 else args[0]
        return builder.ctpop(value)

    return types.int64(x), codegen


@intrinsic
def _ctz(typingctx, x):
    """Index of the lowest set bit of a non-zero uint64 (LLVM ``cttz``)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))

    return types.int64(x), codegen


@numba.njit(cache=True, nogil=True)
def forward_ends(indptr, indices):
    """int64 ``(n,)``: row ``v``'s forward part ``out(v) = {u < v}`` is ``indices[indptr[v]:end[v]]``."""
    n = indptr.shape[0] - 1
    end = np.empty(n, np.int64)
    for v in range(n):
        lo, hi = indptr[v], indptr[v + 1]
        while lo < hi:  # first position with indices[pos] >= v
            mid = (lo + hi) >> 1
            if indices[mid] < v:
                lo = mid + 1
            else:
                hi = mid
        end[v] = lo
    return end


@numba.njit(cache=True, nogil=True)
def hub_rows(indptr, indices, end, hubs):
    """uint64 ``(hubs, ceil(hubs / 64))``: bit ``a`` of row ``b`` is set iff ``a`` in ``out(b)`` (b < hubs)."""
    words = (hubs + 63) >> 6
    rows = np.zeros((hubs, max(words, 1)), np.uint64)
    for b in range(hubs):
        for j in range(indptr[b], end[b]):
            a = indices[j]
            rows[b, a >> 6] |= np.uint64(1) << np.uint64(a & 63)
    return rows


@numba.njit(cache=True, nogil=True)
def count_triangles_dag(indptr, indices, end, hub, roots):
    """Triangles whose largest vertex is in ``roots`` (int64): sum over DAG edges ``c -> b`` of
    ``|out(c) ∩ out(b)|``, each edge by the cheapest of scan / hub-row lookup / AND-popcount."""
    n = indptr.shape[0] - 1
    hubs = hub.shape[0]
    own = np.zeros((n >> 6) + 1, np.uint64)  # bitset of out(c)
    total = 0
    for ri in range(roots.shape[0]):
        c = roots[ri]
        s, e = indptr[c], end[c]
        if e - s < 2:
            continue
        for j in range(s, e):
            a = indices[j]
            own[a >> 6] |= np.uint64(1) << np.uint64(a & 63)
        first = indices[s] >> 6
        for j in range(s + 1, e):
            b = indices[j]
            below = j - s  # members of out(c) smaller than b
            scan = end[b] - indptr[b]
            if b < hubs:
                words = (b >> 6) + 1 - first
                if words <= below and words <= scan:
                    for w in range(first, (b >> 6) + 1):
                        total += _popcount(own[w] & hub[b, w])
                    continue
                if below < scan:
                    for i in range(s, j):
                        a = indices[i]
                        total += (hub[b, a >> 6] >> np.uint64(a & 63)) & np.uint64(1)
                    continue
            for i in range(indptr[b], end[b]):
                a = indices[i]
                total += (own[a >> 6] >> np.uint64(a & 63)) & np.uint64(1)
        for j in range(s, e):
            own[indices[j] >> 6] = 0
    return total


@numba.njit(cache=True, nogil=True)
def _local_rows(indptr, indices, end, hub, s, d, pos, rows):
    """Fill ``rows[:d, :ceil(d / 64)]`` with the DAG inside ``L = indices[s:s + d]`` (sorted):
    bit ``j`` of row ``i`` is set iff ``L[j]`` in ``out(L[i])`` (so ``j < i``). ``pos[L[i]] == i + 1`` on entry."""
    words = (d + 63) >> 6
    hubs = hub.shape[0]
    for i in range(d):
        for w in range(words):
            rows[i, w] = 0
        u = indices[s + i]
        if u < hubs and i <= end[u] - indptr[u]:  # look the earlier members up in u's hub row
            for w in range((i + 63) >> 6):
                acc = np.uint64(0)
                for j in range(w * 64, min(i, w * 64 + 64)):
                    a = indices[s + j]
                    acc |= ((hub[u, a >> 6] >> np.uint64(a & 63)) & np.uint64(1)) << np.uint64(j & 63)
                rows[i, w] = acc
        else:  # scan out(u) for members of L
            for t in range(indptr[u], end[u]):
                p = pos[indices[t]] - 1
                if p >= 0:
                    rows[i, p >> 6] |= np.uint64(1) << np.uint64(p & 63)


@numba.njit(cache=True, nogil=True)
def count_cliques_dag(indptr, indices, end, hub, k, roots):
    """k-cliques (k >= 3) whose largest vertex is in ``roots`` (int64): for each root ``v``, the
    (k - 1)-cliques of the DAG induced on ``out(v)``, grown by ANDing local bit rows, last level popcount.
    Returns -1 when the int64 total would overflow (a float running sum checks it once per root)."""
    n = indptr.shape[0] - 1
    dmax = 0
    for ri in range(roots.shape[0]):
        dmax = max(dmax, end[roots[ri]] - indptr[roots[ri]])
    width = max((dmax + 63) >> 6, 1)
    rows = np.zeros((max(dmax, 1), width), np.uint64)
    pos = np.zeros(n, np.int32)
    loops = k - 2  # vertices chosen by loops inside out(v); the last one is counted
    sets = np.zeros((loops + 1, width), np.uint64)  # sets[l]: candidates after l loop choices
    word = np.zeros(loops + 1, np.int64)
    bits = np.zeros(loops + 1, np.uint64)
    total = 0
    ftotal = 0.0
    for ri in range(roots.shape[0]):
        v = roots[ri]
        s, d = indptr[v], end[v] - indptr[v]
        if d < k - 1:
            continue
        before = total
        for i in range(d):
            pos[indices[s + i]] = i + 1
        _local_rows(indptr, indices, end, hub, s, d, pos, rows)
        for i in range(d):
            pos[indices[s + i]] = 0
        words = (d + 63) >> 6
        for w in range(words):
            sets[0, w] = ~np.uint64(0) if (w + 1) * 64 <= d else (np.uint64(1) << np.uint64(d - w * 64)) - np.uint64(1)
        level = 0
        word[0] = 0
        bits[0] = sets[0, 0]
        while True:
            while bits[level] == 0 and word[level] + 1 < words:
                word[level] += 1
                bits[level] = sets[level, word[level]]
            if bits[level] == 0:
                if level == 0:
                    break
                level -= 1
                continue
            x = word[level] * 64 + _ctz(bits[level])
            bits[level] &= bits[level] - np.uint64(1)
            top = x >> 6  # row x has no bits above word x >> 6
            if level + 1 == loops:
                for w in range(top + 1):
                    total += _popcount(sets[level, w] & rows[x, w])
                continue
            size = 0
            for w in range(top + 1):
                sets[level + 1, w] = sets[level, w] & rows[x, w]
                size += _popcount(sets[level + 1, w])
            if size < loops - level:  # too few candidates left to finish a clique
                continue
            for w in range(top + 1, words):
                sets[level + 1, w] = 0
            level += 1
            word[level] = 0
            bits[level] = sets[level, 0]
        ftotal += total - before
        if ftotal > 9.0e18:
            return -1
    return total


@dataclass(frozen=True, eq=False)
class CliqueIndex:
    """The degree-oriented DAG of a graph as the clique kernels read it.

    Attributes:
        end: int64 ``(n,)``, ``out(v) = indices[indptr[v]:end[v]]`` (the neighbours ``u < v``).
        hub: uint64 ``(hubs, ceil(hubs / 64))`` bit rows of ``out(b)`` for ``b < hubs = min(n, HUB_LIMIT)``.
        max_forward: the largest ``|out(v)|``.
    """

    end: np.ndarray
    hub: np.ndarray
    max_forward: int

    @classmethod
    def of(cls, graph: Graph) -> CliqueIndex:
        """Build the index (one binary search per row, then the hub rows: O(n log d + m))."""
        end = forward_ends(graph.indptr, graph.indices)
        hub = hub_rows(graph.indptr, graph.indices, end, min(graph.n, HUB_LIMIT))
        return cls(end, hub, int((end - graph.indptr[:-1]).max()) if graph.n else 0)


def _sum_over_roots(kernel: Callable[[np.ndarray], int], n: int, workers: int) -> int:
    """``kernel(roots)`` summed over all roots ``0..n-1`` on ``workers`` threads.

    The roots are cut into ``workers * CHUNKS_PER_WORKER`` strided chunks (hubs, the smallest ids, spread
    evenly) that the calling thread and ``workers - 1`` helper threads take in turn from one queue. On a busy
    machine a helper may start late or be descheduled holding a chunk: once the queue is empty the calling
    thread waits for the helpers at most about as long as it took per chunk itself, then recounts the
    missing chunks (the kernel is pure, so either result is the same) instead of waiting on the straggler.
    """
    if workers <= 1 or n < 2:
        return int(kernel(np.arange(n, dtype=np.int64)))
    n_chunks = workers * CHUNKS_PER_WORKER
    chunks = [np.arange(i, n, n_chunks, dtype=np.int64) for i in range(n_chunks)]
    queue = iter(range(n_chunks))
    results: list[int | None] = [None] * n_chunks

    def drain() -> int:
        done = 0
        for i in queue:  # next() on a range iterator is atomic under the GIL; the kernels release it
            results[i] = int(kernel(chunks[i]))
            done += 1
        return done

    pool = ThreadPoolExecutor(max_workers=workers - 1)
    try:
        helpers = [pool.submit(drain) for _ in range(workers - 1)]
        start = time.perf_counter()
        mine = drain()
        per_chunk = (time.perf_counter() - start) / max(mine, 1)
        futures_wait(helpers, timeout=2 * per_chunk)
        for i in range(n_chunks):
            if results[i] is None:  # still held by a slow helper (or it failed): count it here
                results[i] = int(kernel(chunks[i]))
    finally:
        pool.shutdown(wait=False)  # a straggler finishes its (discarded) chunk in the background
    return sum(results)


def count_cliques(graph: Graph, k: int, *, workers: int = 1, index: CliqueIndex | None = None) -> int:
    """Number of k-cliques of ``graph`` (each vertex set once), exact.

    Args:
        graph: any :class:`Graph`; every vertex order gives the same count, but only :meth:`Graph.by_degree`
            keeps the forward lists short (the speed the module docstring describes).
        k: clique size, ``k >= 1`` (1 and 2 are ``n`` and ``m``).
        workers: threads (the kernels release the GIL); graphs with fewer than ``PARALLEL_MIN_EDGES`` edges
            use one.
        index: a prebuilt :class:`CliqueIndex` of ``graph`` (built here when None).

    Returns:
        The count as a Python int.

    Raises:
        ValueError: ``k < 1``, ``workers < 1``, or (k >= 4) a forward list longer than ``MAX_FORWARD``.
        OverflowError: the count exceeds the int64 range of the kernels (about 9.2e18).

    Example::

        >>> from workbench.graphs.graph import from_edges
        >>> count_cliques(from_edges([0, 0, 0, 1, 1, 2], [1, 2, 3, 2, 3, 3]), 4)
        1
    """
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k={k!r} is not allowed: clique sizes are integers >= 1")
    if workers < 1:
        raise ValueError(f"workers={workers} is not allowed: use at least 1 thread")
    if k == 1:
        return graph.n
    if k == 2:
        return graph.m
    index = CliqueIndex.of(graph) if index is None else index
    ip, ix, end, hub = graph.indptr, graph.indices, index.end, index.hub
    workers = workers if graph.m >= PARALLEL_MIN_EDGES else 1
    if k == 3:
        return _sum_over_roots(lambda roots: count_triangles_dag(ip, ix, end, hub, roots), graph.n, workers)
    if index.max_forward > MAX_FORWARD:
        raise ValueError(
            f"a forward list has {index.max_forward} vertices: the {k}-clique kernel allows at "
            f"most MAX_FORWARD={MAX_FORWARD} (relabel with Graph.by_degree, or enumerate)"
        )
    parts: list[int] = []

    def run(roots: np.ndarray) -> int:
        part = int(count_cliques_dag(ip, ix, end, hub, k, roots))
        parts.append(part)
        return part

    total = _sum_over_roots(run, graph.n, workers)
    if min(parts) < 0 or total > 2**63 - 1:
        raise OverflowError(f"{k}-clique count of {graph.name} exceeds the int64 range of the kernels (about 9.2e18)")
    return total


def warm() -> float:
    """Compile (or load from numba's disk cache) every kernel of this module, once per process; returns the
    seconds this call spent doing so (0.0 from the second call on)."""
    before = _warm_once.cache_info().hits
    seconds = _warm_once()
    return 0.0 if _warm_once.cache_info().hits > before else seconds


@functools.lru_cache(maxsize=1)
def _warm_once() -> float:
    start = time.perf_counter()
    e = np.zeros(0, np.int64)
    ip, ix = np.zeros(2, np.int64), np.zeros(0, np.int32)
    end = forward_ends(ip, ix)
    hub = hub_rows(ip, ix, end, 1)
    count_triangles_dag(ip, ix, end, hub, e)
    count_cliques_dag(ip, ix, end, hub, 4, e)
    return time.perf_counter() - start
