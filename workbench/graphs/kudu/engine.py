"""Kudu's engine on one rank: extendable embeddings explored BFS-DFS hybrid, with data reuse.

An **extendable embedding** at depth d binds pattern levels ``0..d-1`` (the schedule's matching order) and
carries, for every later level L, the part of L's candidate set that the bound vertices already determine
(the intersection of its bound parents' lists, minus its bound anti-vertices' lists; see
:meth:`workbench.graphs.enumerate.Schedule.candidates` for the full rule). Binding level d to a vertex v needs
N(v) only if a later level has v's level as parent or anti-vertex; the child is *ready* once N(v) is here.

- **Vertical reuse**: a child computes ``S_L ∩ N(v)`` from its parent's ``S_L``, and shares the parent's
  rows for sets that v does not touch (no copy), like AutoMine's loop-invariant sets.
- **Horizontal reuse**: the embeddings of a chunk ask for each distinct remote list once (and a bounded
  cache keeps lists across chunks; :mod:`.fetch`).
- **BFS-DFS hybrid**: embeddings move in *chunks* of at most ``chunk_size``; the engine always extends the
  deepest chunk that still has candidates (depth first over chunks, breadth first inside one), so at most
  about two chunks per level are alive. With ``lookahead`` the fetch of the next chunk is in flight while
  the previous chunk is built and counted (communication overlapped with computation).

Strategies (:class:`EngineOptions`): ``hybrid`` (the above), ``dfs`` (chunks of one embedding, no
lookahead), ``bfs`` (a whole level per chunk: fewest rounds, unbounded memory), ``naive`` (hybrid traversal,
but no reuse at all: every candidate set is recomputed from scratch and every remote list fetched on every
use). The last level is counted, never enumerated. Roots are this rank's own vertices, so the counts of
all ranks add up to the pattern count (the restrictions are the same schedule on every rank).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from workbench.distributed.comm import Comm
from workbench.graphs.enumerate import Schedule
from workbench.graphs.kudu import sets as S
from workbench.graphs.kudu.fetch import ABORT, ACTIVE, DONE, Fetcher, FetchStats, Request, Ticket
from workbench.graphs.kudu.partition import LocalGraph

__all__ = ["Strategy", "STRATEGIES", "EngineOptions", "LevelPlan", "RankResult", "mine", "embedding_bound"]

Strategy = Literal["hybrid", "dfs", "bfs", "naive"]
STRATEGIES: tuple[str, ...] = ("hybrid", "dfs", "bfs", "naive")

Store = tuple[np.ndarray, np.ndarray, np.ndarray]  # (indptr, vals, row of each embedding)


@dataclass(frozen=True)
class EngineOptions:
    """How one run explores: ``strategy``; ``chunk_size`` (embeddings per chunk for hybrid and naive);
    ``cache_bytes`` (LRU capacity for remote lists; naive never caches); ``max_embeddings`` (live embeddings
    per rank before the run is abandoned: what BFS hits on big inputs)."""

    strategy: Strategy = "hybrid"
    chunk_size: int = 256
    cache_bytes: int = 1 << 20
    max_embeddings: int = 4_000_000

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"strategy={self.strategy!r} is unknown: valid values are {', '.join(STRATEGIES)}")
        if self.chunk_size < 1:
            raise ValueError(f"chunk_size={self.chunk_size} is out of range: valid range is >= 1")
        if self.cache_bytes < 0 or self.max_embeddings < 1:
            raise ValueError("cache_bytes must be >= 0 and max_embeddings >= 1")

    @property
    def batch(self) -> int | None:
        """Embeddings per chunk (None: unbounded)."""
        return {"dfs": 1, "bfs": None}.get(self.strategy, self.chunk_size)

    @property
    def reuse(self) -> bool:
        return self.strategy != "naive"

    @property
    def lookahead(self) -> bool:
        return self.strategy in ("hybrid", "naive")

    @property
    def cache(self) -> int:
        return 0 if self.strategy == "naive" else self.cache_bytes


def embedding_bound(k: int, chunk: int) -> int:
    """Live embeddings a hybrid run can hold per rank: two chunks per level plus the one in flight."""
    return (2 * max(k - 1, 1) + 1) * chunk


@dataclass(frozen=True, eq=False)
class LevelPlan:
    """A :class:`Schedule` by position: per level its parents, anti-vertices (vertex-induced), the levels
    bounding it from below/above (symmetry breaking) and the levels it must differ from."""

    k: int
    parents: tuple[tuple[int, ...], ...]
    anti: tuple[tuple[int, ...], ...]
    lower: tuple[np.ndarray, ...]
    upper: tuple[np.ndarray, ...]
    distinct: tuple[np.ndarray, ...]
    text: str

    @classmethod
    def of(cls, schedule: Schedule) -> LevelPlan:
        if schedule.pattern.labels is not None:
            raise ValueError("the kudu engine counts unlabelled patterns only: this pattern has vertex labels")
        k = schedule.k
        arr = lambda t: np.asarray(t, dtype=np.int64)  # noqa: E731
        return cls(
            k,
            tuple(schedule.parents(i) for i in range(k)),
            tuple(schedule.anti(i) for i in range(k)),
            tuple(arr(schedule.lower(i)) for i in range(k)),
            tuple(arr(schedule.upper(i)) for i in range(k)),
            tuple(arr(schedule.distinct(i)) for i in range(k)),
            schedule.describe(),
        )

    def ops_after(self, d: int) -> dict[int, int]:
        """Later levels L whose set changes when level d is bound: L -> OP_AND (parent) or OP_SUB (anti)."""
        out = {}
        for L in range(d + 1, self.k):
            if d in self.parents[L]:
                out[L] = S.OP_AND
            elif d in self.anti[L]:
                out[L] = S.OP_SUB
        return out


@dataclass
class RankResult:
    """What one rank measured. ``count``: embeddings rooted at its vertices; ``completed``: False when some
    rank exceeded ``max_embeddings`` and the run was abandoned; times in seconds; bytes of sets held by live
    chunks (``peak_set_bytes``) beside the cache and the partition; ``comm_bytes_*``: what the
    :class:`~workbench.distributed.comm.Comm` byte counter saw during the run (headers included)."""

    rank: int
    count: int = 0
    completed: bool = True
    fetch: FetchStats = field(default_factory=FetchStats)
    compute_seconds: float = 0.0
    total_seconds: float = 0.0
    peak_embeddings: int = 0
    peak_set_bytes: int = 0
    embeddings: int = 0
    chunks: int = 0
    owned_vertices: int = 0
    owned_entries: int = 0
    partition_bytes: int = 0
    comm_bytes_sent: int = 0
    comm_bytes_recv: int = 0


class _Chunk:
    """Embeddings at one depth: ``verts`` int32 ``(c, depth)``, sets per later level, candidates + cursor."""

    __slots__ = ("depth", "verts", "sets", "excl", "own_bytes", "cand", "cursor")

    def __init__(self, depth: int, verts: np.ndarray) -> None:
        self.depth = depth
        self.verts = verts
        self.sets: dict[int, Store] = {}
        self.excl: dict[int, Store] = {}
        self.own_bytes = verts.nbytes
        self.cand: tuple[np.ndarray, np.ndarray] | None = None
        self.cursor = 0

    @property
    def size(self) -> int:
        return self.verts.shape[0]


@dataclass(eq=False)
class _Batch:
    """Children produced from ``parent`` (embedding ``emb[i]`` extended by ``verts[i, -1]``), waiting for lists."""

    parent: _Chunk
    emb: np.ndarray
    verts: np.ndarray
    request: Request
    ticket: Ticket | None = None


class _Miner:
    def __init__(self, local: LocalGraph, comm: Comm, plan: LevelPlan, options: EngineOptions) -> None:
        self.local, self.plan, self.opt = local, plan, options
        self.fetcher = Fetcher(comm, local, cache_bytes=options.cache, dedup=options.reuse)
        self.res = RankResult(
            rank=local.rank,
            owned_vertices=int(local.vertices.shape[0]),
            owned_entries=int(local.indices.shape[0]),
            partition_bytes=local.nbytes,
        )
        self.ops = [plan.ops_after(d) for d in range(plan.k)]
        self.stack: list[_Chunk] = []
        self.flying: list[_Batch] = []  # batches produced and not yet built
        self.aborting = False

    # ------------------------------------------------------------------ chunks
    def candidates(self, chunk: _Chunk) -> tuple[np.ndarray, np.ndarray]:
        if chunk.cand is None:
            d = chunk.depth
            ip, vals, rows = chunk.sets[d]
            chunk.cand = S.filter_rows(
                ip, vals, rows, chunk.verts, self.plan.lower[d], self.plan.upper[d], self.plan.distinct[d]
            )
            chunk.own_bytes += chunk.cand[0].nbytes + chunk.cand[1].nbytes
        return chunk.cand

    def produce(self, parent: _Chunk) -> _Batch | None:
        """The next batch of children of ``parent`` (None when it has none left)."""
        indptr, flat = self.candidates(parent)
        total = flat.shape[0]
        if parent.cursor >= total:
            return None
        end = total if self.opt.batch is None else min(total, parent.cursor + self.opt.batch)
        pos = np.arange(parent.cursor, end, dtype=np.int64)
        parent.cursor = end
        emb = np.searchsorted(indptr, pos, side="right") - 1
        verts = np.concatenate([parent.verts[emb], flat[pos, None]], axis=1)
        d = parent.depth
        if self.opt.reuse:
            uses = verts[:, d].astype(np.int64) if self.ops[d] else np.zeros(0, dtype=np.int64)
        else:  # naive: every list the child's candidate set needs, one use each
            L = d + 1
            levels = self.plan.parents[L] + self.plan.anti[L] if L < self.plan.k else ()
            uses = verts[:, list(levels)].T.astype(np.int64).ravel()
        return _Batch(parent, emb, verts, self.fetcher.resolve(uses))

    def build(self, batch: _Batch, lists: tuple[np.ndarray, np.ndarray]) -> _Chunk:
        """Turn a batch whose lists are here into a chunk (its sets for every later level)."""
        parent, emb, d = batch.parent, batch.emb, batch.parent.depth
        child = _Chunk(d + 1, batch.verts)
        lip, lvals = lists
        lidx = batch.request.lidx
        c = child.size
        shared_lists = False
        if self.opt.reuse:
            for L in range(d + 1, self.plan.k):
                op = self.ops[d].get(L)
                have, excl = parent.sets.get(L), parent.excl.get(L)
                if op is None:
                    if have is not None:
                        child.sets[L] = (have[0], have[1], have[2][emb])
                    if excl is not None:
                        child.excl[L] = (excl[0], excl[1], excl[2][emb])
                    continue
                is_set = op == S.OP_AND or have is not None  # else it still only collects exclusions
                target = child.sets if is_set else child.excl
                if op == S.OP_AND and have is not None:
                    out = S.row_op(S.OP_AND, have[0], have[1], have[2][emb], lip, lvals, lidx)
                elif op == S.OP_AND and excl is not None:
                    out = S.row_op(S.OP_RSUB, excl[0], excl[1], excl[2][emb], lip, lvals, lidx)
                elif op == S.OP_SUB and have is not None:
                    out = S.row_op(S.OP_SUB, have[0], have[1], have[2][emb], lip, lvals, lidx)
                elif op == S.OP_SUB and excl is not None:
                    out = S.row_op(S.OP_OR, excl[0], excl[1], excl[2][emb], lip, lvals, lidx)
                else:  # the list itself starts the set (or the exclusions): share it, no copy
                    target[L] = (lip, lvals, lidx)
                    shared_lists = True
                    continue
                target[L] = (out[0], out[1], np.arange(c, dtype=np.int64))
                child.own_bytes += out[0].nbytes + out[1].nbytes
        else:
            L = d + 1
            levels = self.plan.parents[L] + self.plan.anti[L]
            cur = (lip, lvals, lidx[:c])
            for a, j in enumerate(levels[1:], start=1):
                op = S.OP_AND if j in self.plan.parents[L] else S.OP_SUB
                ip, vals = S.row_op(op, cur[0], cur[1], cur[2], lip, lvals, lidx[a * c : (a + 1) * c])
                cur = (ip, vals, np.arange(c, dtype=np.int64))
            child.sets[L] = cur
            shared_lists = True  # the lists buffer lives as long as the chunk (conservative)
        if shared_lists:
            child.own_bytes += lip.nbytes + lvals.nbytes
        self.res.embeddings += c
        self.res.chunks += 1
        return child

    def count(self, chunk: _Chunk) -> int:
        d = chunk.depth
        ip, vals, rows = chunk.sets[d]
        return int(
            S.count_rows(ip, vals, rows, chunk.verts, self.plan.lower[d], self.plan.upper[d], self.plan.distinct[d])
        )

    # ------------------------------------------------------------------ bookkeeping
    def note_live(self, *extra: _Chunk | None) -> None:
        """Update the peaks with the live chunks, the batches in flight and ``extra``."""
        chunks = [c for c in self.stack if c.depth > 0] + [x for x in extra if x is not None]
        live = sum(c.size for c in chunks) + sum(b.verts.shape[0] for b in self.flying)
        held = sum(c.own_bytes for c in chunks) + sum(b.verts.nbytes for b in self.flying)
        self.res.peak_embeddings = max(self.res.peak_embeddings, live)
        self.res.peak_set_bytes = max(self.res.peak_set_bytes, held)
        if live > self.opt.max_embeddings:
            self.aborting = True

    def finish(self, batch: _Batch) -> None:
        """Wait for the batch's lists, build the chunk, then count it (last level) or push it."""
        lists = self.fetcher.complete(batch.request, batch.ticket)
        start = time.perf_counter()
        child = self.build(batch, lists)
        self.flying.remove(batch)
        self.note_live(child)
        if child.depth == self.plan.k - 1:
            self.res.count += self.count(child)
        else:
            self.stack.append(child)
        self.res.compute_seconds += time.perf_counter() - start

    # ------------------------------------------------------------------ main loop
    def run(self) -> RankResult:
        start = time.perf_counter()
        root = _Chunk(0, np.zeros((1, 0), dtype=np.int32))
        owned = self.local.vertices.astype(np.int32)
        root.cand = (np.array([0, owned.shape[0]], dtype=np.int64), owned)
        if self.plan.k == 1:
            self.res.count = int(owned.shape[0])
        else:
            self.stack.append(root)
        inflight: _Batch | None = None
        while True:
            if self.aborting:  # tell everyone in the next round, then stop together
                self.fetcher.exchange(None, ABORT)
                break
            t0 = time.perf_counter()
            batch = None
            while self.stack and batch is None:
                batch = self.produce(self.stack[-1])
                if batch is None:
                    self.stack.pop()
            self.res.compute_seconds += time.perf_counter() - t0
            if batch is not None:
                self.flying.append(batch)
                self.note_live()
                if self.aborting:  # this batch would break the memory bound: never materialise it
                    continue
                if not batch.request.needs_round:
                    self.finish(batch)  # every list is local or cached: no message
                    continue
                batch.ticket, states = self.fetcher.exchange(batch.request, ACTIVE)
                if (states == ABORT).any():
                    self.aborting = True
                    break
                if self.opt.lookahead:
                    if inflight is not None:
                        self.finish(inflight)  # computed while the new batch's lists travel
                    inflight = batch
                else:
                    self.finish(batch)
                continue
            if inflight is not None:
                self.finish(inflight)
                inflight = None
                continue
            _, states = self.fetcher.exchange(None, DONE)  # out of work: serve the others
            if (states == ABORT).any():
                self.aborting = True
                break
            if (states == DONE).all():
                break
        if self.aborting or self.flying:
            self.res.completed = False
        for b in self.flying:
            self.fetcher.close(b.ticket)
        self.fetcher.close()
        self.res.fetch = self.fetcher.stats
        self.res.total_seconds = time.perf_counter() - start
        return self.res


def mine(local: LocalGraph, comm: Comm, plan: LevelPlan, options: EngineOptions) -> RankResult:
    """Count ``plan``'s pattern rooted at ``local``'s vertices, fetching remote lists through ``comm``.

    Every rank of ``comm`` must call this with the same ``plan`` and ``options`` (the fetch rounds are
    collective). Returns this rank's :class:`RankResult`; the pattern count is the sum over ranks.
    """
    comm.barrier()
    sent, recv = comm.bytes_sent, comm.bytes_recv
    res = _Miner(local, comm, plan, options).run()
    res.comm_bytes_sent, res.comm_bytes_recv = comm.bytes_sent - sent, comm.bytes_recv - recv
    return res
