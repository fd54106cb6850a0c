"""Remote adjacency fetches for Kudu: request/response messages over ``torch.distributed``, a bounded cache,
and counters of every list, message and byte.

**Protocol (one fetch round).** Ranks fetch in synchronised rounds, so a rank that has finished keeps
serving the others until everybody is done:

1. header all-to-all (``Comm.all_to_all_single``, one ``(P, 2)`` int64 tensor): how many lists this rank
   requests from each peer, and its state (active, done, abort);
2. request messages: the requested vertex ids (int32) to each owner;
3. the owner answers each requester with two messages: the lengths of the asked lists (the requester knows
   how many it asked for), then the lists themselves; the requester waits for the lengths only, posts the
   receive buffer of the lists and returns.

:meth:`Fetcher.exchange` returns as soon as the lists are *posted*; the caller computes on other work
while they arrive and calls :meth:`Fetcher.complete` when it needs them, which is where exposed
communication time is measured. The round's end state is the same on every rank (everyone receives every
header), so all ranks leave the loop in the same round.

**Reuse.** Horizontal reuse happens here: with ``dedup`` a chunk asks for each distinct remote list once,
and a least-recently-used cache (``cache_bytes``; 0 disables it) keeps lists across chunks. Kudu's paper
insists the cache be bounded (otherwise it re-replicates the graph); its peak size is reported.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numba
import numpy as np
import torch

from workbench.distributed.comm import Comm
from workbench.graphs.kudu.partition import LocalGraph

__all__ = ["FetchStats", "ListCache", "Request", "Ticket", "Fetcher", "ACTIVE", "DONE", "ABORT"]

ACTIVE, DONE, ABORT = 1, 0, 2
TAG_REQUEST, TAG_RESPONSE = 1, 2
ID_BYTES = 4  # vertex ids and list entries travel as int32


@dataclass
class FetchStats:
    """Counters of one rank (lists, entries and bytes are this rank's requests unless named ``served``).

    remote_uses: embedding-list pairs that needed a list owned by another rank;
    lookups: distinct remote lists looked up in the cache after within-chunk deduplication;
    cache_hits, lists_fetched, entries_fetched: how those lookups were answered (a hit is a list in the cache or
    one already in flight for the previous batch, which this batch then shares);
    request_messages, response_messages: data messages this rank sent (requests it made, answers it served);
    header_messages: header slices sent (P - 1 per round);
    request_bytes, response_bytes: id bytes sent and list bytes received by this rank's requests;
    lists_served, entries_served: answers this rank gave to others;
    rounds: fetch rounds joined (all ranks join every round); fetch_rounds: rounds with own requests;
    sync_seconds: time inside rounds (header exchange, requests, serving); wait_seconds: blocked on answers;
    idle_seconds: time in rounds joined only to serve, after this rank ran out of work;
    cache_peak_bytes: largest cache size reached.
    """

    remote_uses: int = 0
    lookups: int = 0
    cache_hits: int = 0
    lists_fetched: int = 0
    entries_fetched: int = 0
    request_messages: int = 0
    response_messages: int = 0
    header_messages: int = 0
    request_bytes: int = 0
    response_bytes: int = 0
    lists_served: int = 0
    entries_served: int = 0
    rounds: int = 0
    fetch_rounds: int = 0
    sync_seconds: float = 0.0
    wait_seconds: float = 0.0
    idle_seconds: float = 0.0
    cache_peak_bytes: int = 0

    @property
    def cache_hit_rate(self) -> float:
        """cache hits / lookups, in [0, 1] (0 when nothing was looked up)."""
        return self.cache_hits / self.lookups if self.lookups else 0.0


class ListCache:
    """Least-recently-used cache of remote adjacency lists, bounded by ``capacity_bytes`` (0: off)."""

    def __init__(self, capacity_bytes: int) -> None:
        if capacity_bytes < 0:
            raise ValueError(f"cache capacity_bytes={capacity_bytes} must be >= 0")
        self.capacity = int(capacity_bytes)
        self.bytes = 0
        self.peak = 0
        self._lists: OrderedDict[int, np.ndarray] = OrderedDict()

    def get(self, v: int) -> np.ndarray | None:
        lst = self._lists.get(v)
        if lst is not None:
            self._lists.move_to_end(v)
        return lst

    def put(self, v: int, lst: np.ndarray) -> None:
        if self.capacity == 0 or lst.nbytes > self.capacity or v in self._lists:
            return
        self._lists[v] = lst
        self.bytes += lst.nbytes
        while self.bytes > self.capacity:
            _, old = self._lists.popitem(last=False)
            self.bytes -= old.nbytes
        self.peak = max(self.peak, self.bytes)

    def __len__(self) -> int:
        return len(self._lists)


@numba.njit(cache=True, nogil=True)
def _copy_segments(dst, dst_starts, src, src_starts, lengths):
    """``dst[dst_starts[i]:+lengths[i]] = src[src_starts[i]:+lengths[i]]`` for every segment i."""
    for i in range(lengths.shape[0]):
        a, b, n = dst_starts[i], src_starts[i], lengths[i]
        for j in range(n):
            dst[a + j] = src[b + j]


@dataclass
class Request:
    """The lists one batch needs: ``keys`` (vertex of each list row, int64), ``lidx`` (row of each use),
    and how each row is obtained: ``local`` mask, cached arrays by row, and the rows to fetch per owner."""

    keys: np.ndarray
    lidx: np.ndarray
    local: np.ndarray
    cached: dict[int, np.ndarray] = field(default_factory=dict)
    joined: dict[int, tuple[Ticket, int, int, int]] = field(default_factory=dict)  # row -> ticket, owner, offset, len
    fetch_rows: dict[int, np.ndarray] = field(default_factory=dict)  # owner -> rows of keys (ids ascending)

    @property
    def needs_round(self) -> bool:
        return bool(self.fetch_rows)


@dataclass
class Ticket:
    """A request whose answers are in flight: receive buffers per owner and the pending handle."""

    request: Request
    buffers: dict[int, torch.Tensor]
    pending: Any  # a torch.distributed Work handle (or None once answered)
    lengths: dict[int, np.ndarray] = field(default_factory=dict)  # owner -> list lengths, in request order
    done: bool = False

    def wait(self) -> float:
        """Block until the answers are here; return the seconds spent waiting (0 if already waited)."""
        if self.done or self.pending is None:
            self.done = True
            return 0.0
        start = time.perf_counter()
        self.pending.wait()
        self.done = True
        return time.perf_counter() - start


class Fetcher:
    """One rank's fetch engine (see module docstring). ``comm``: the world :class:`Comm`;
    ``local``: this rank's :class:`LocalGraph`; ``cache_bytes``: LRU capacity; ``dedup``: share one fetch
    among all uses in a batch (horizontal reuse)."""

    def __init__(self, comm: Comm, local: LocalGraph, *, cache_bytes: int, dedup: bool) -> None:
        if comm.size != local.partition.parts:
            raise ValueError(f"communicator has {comm.size} ranks but the partition has {local.partition.parts}")
        self.comm = comm
        self.local = local
        self.cache = ListCache(cache_bytes)
        self.dedup = dedup
        self.stats = FetchStats()
        self._serving: list = []  # (pending, tensors) of answers still being sent
        self._in_flight: dict[int, tuple[Ticket, int, int, int]] = {}  # vertex -> (ticket, owner, offset, length)

    # ---------------------------------------------------------------- planning
    def resolve(self, uses: np.ndarray) -> Request:
        """Plan the lists for ``uses`` (int64 vertex ids, one per embedding-list use, local ones included)."""
        uses = np.asarray(uses, dtype=np.int64)
        if self.dedup:
            keys, lidx = np.unique(uses, return_inverse=True)
        else:
            keys, lidx = uses, np.arange(uses.shape[0], dtype=np.int64)
        local = self.local.is_local(keys)
        req = Request(keys, lidx.astype(np.int64), local)
        remote_rows = np.flatnonzero(~local)
        self.stats.remote_uses += int((~local)[req.lidx].sum())
        self.stats.lookups += int(remote_rows.shape[0])
        misses: Any = []  # rows to fetch remotely, then their index array
        if self.cache.capacity:
            for row in remote_rows.tolist():
                v = int(keys[row])
                hit = self.cache.get(v)
                if hit is not None:
                    req.cached[row] = hit
                elif v in self._in_flight:  # asked for by the batch still in flight: join its answer
                    req.joined[row] = self._in_flight[v]
                else:
                    misses.append(row)
            misses = np.asarray(misses, dtype=np.int64)
            self.stats.cache_hits += len(req.cached) + len(req.joined)
        else:
            misses = remote_rows
        if misses.shape[0]:
            owners = self.local.partition.owner(keys[misses])
            for j in np.unique(owners).tolist():
                req.fetch_rows[int(j)] = misses[owners == j]
        return req

    # ---------------------------------------------------------------- one round
    def exchange(self, req: Request | None, state: int) -> tuple[Ticket | None, np.ndarray]:
        """Join one fetch round with ``req`` (None: only serve) and ``state``; return the ticket of this
        rank's answers (None without requests) and every rank's state (int64 ``(P,)``)."""
        comm, size, me = self.comm, self.comm.size, self.comm.rank
        start = time.perf_counter()
        self._drain_serving()
        header = torch.zeros((size, 2), dtype=torch.int64)
        header[:, 1] = state
        rows = req.fetch_rows if req is not None else {}
        for j, r in rows.items():
            header[j, 0] = r.shape[0]
        incoming = torch.empty_like(header)
        comm.all_to_all_single(incoming, header)
        self.stats.rounds += 1
        self.stats.header_messages += size - 1
        states = incoming[:, 1].numpy().copy()
        counts = incoming[:, 0].tolist()

        # requests out, requests in
        sends = [(torch.from_numpy(req.keys[r].astype(np.int32)), j) for j, r in rows.items()]
        inbox = [(torch.empty(c, dtype=torch.int32), i) for i, c in enumerate(counts) if c and i != me]
        comm.p2p(sends, inbox, tag=TAG_REQUEST).wait()
        self.stats.request_messages += len(sends)
        self.stats.request_bytes += sum(ids.numel() for ids, _ in sends) * ID_BYTES
        # serve: the lengths of the asked lists, then the lists themselves
        answers = []
        for ids, i in inbox:
            asked = ids.numpy().astype(np.int64)
            start_row, end_row = self.local.rows(asked)
            answers.append((torch.from_numpy((end_row - start_row).astype(np.int32)), i))
            lists = self.local.gather(asked)
            if lists.shape[0]:
                answers.append((torch.from_numpy(lists), i))
            self.stats.lists_served += ids.numel()
            self.stats.entries_served += lists.shape[0]
        self.stats.response_messages += len(answers)
        if answers:
            self._serving.append((comm.p2p(answers, (), tag=TAG_RESPONSE), answers))
        # our answers: lengths first (their count is ours), then post the list buffers and return
        len_bufs = {j: torch.empty(r.shape[0], dtype=torch.int32) for j, r in rows.items()}
        if len_bufs:
            comm.p2p((), [(b, j) for j, b in len_bufs.items()], tag=TAG_RESPONSE).wait()
        buffers, lengths = {}, {}
        for j, r in rows.items():
            lengths[j] = len_bufs[j].numpy().astype(np.int64)
            total = int(lengths[j].sum())
            if total:
                buffers[j] = torch.empty(total, dtype=torch.int32)
            self.stats.lists_fetched += r.shape[0]
            self.stats.entries_fetched += total
            self.stats.response_bytes += (total + r.shape[0]) * ID_BYTES
        pending = comm.p2p((), [(b, j) for j, b in buffers.items()], tag=TAG_RESPONSE) if buffers else None
        if rows:
            self.stats.fetch_rounds += 1
        seconds = time.perf_counter() - start
        if state == DONE:
            self.stats.idle_seconds += seconds
        else:
            self.stats.sync_seconds += seconds
        if req is None or not rows:
            return None, states
        ticket = Ticket(req, buffers, pending, lengths)
        if self.cache.capacity:
            for j, r in rows.items():
                offsets = np.cumsum(lengths[j]) - lengths[j]
                for v, off, n in zip(req.keys[r].tolist(), offsets.tolist(), lengths[j].tolist()):  # type: ignore[call-overload]  # torch types a row's tolist() as a scalar
                    self._in_flight[int(v)] = (ticket, j, int(off), int(n))
        return ticket, states

    def complete(self, req: Request, ticket: Ticket | None) -> tuple[np.ndarray, np.ndarray]:
        """Wait for ``ticket``'s answers (if any) and return the batch's lists as CSR
        ``(indptr int64 (len(keys) + 1,), vals int32)``, row i = N(keys[i]); fetched lists enter the cache."""
        if ticket is not None:
            self.stats.wait_seconds += ticket.wait()
        keys = req.keys
        lengths = np.zeros(keys.shape[0], dtype=np.int64)
        local_rows = np.flatnonzero(req.local)
        if local_rows.shape[0]:
            start, end = self.local.rows(keys[local_rows])
            lengths[local_rows] = end - start
        for row, lst in req.cached.items():
            lengths[row] = lst.shape[0]
        for row, (_, _, _, n) in req.joined.items():
            lengths[row] = n
        for j, r in req.fetch_rows.items():
            lengths[r] = ticket.lengths[j]
        indptr = np.zeros(keys.shape[0] + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        vals = np.empty(int(indptr[-1]), dtype=np.int32)
        if local_rows.shape[0]:
            _copy_segments(vals, indptr[local_rows], self.local.indices, start, lengths[local_rows])
        for row, lst in req.cached.items():
            vals[indptr[row] : indptr[row + 1]] = lst
        for row, (other, owner, offset, n) in req.joined.items():
            self.stats.wait_seconds += other.wait()
            vals[indptr[row] : indptr[row + 1]] = other.buffers[owner].numpy()[offset : offset + n]
        for j, r in req.fetch_rows.items():
            buf = ticket.buffers.get(j)
            if buf is None:
                continue
            data = buf.numpy()
            src = np.cumsum(lengths[r]) - lengths[r]
            _copy_segments(vals, indptr[r], data, src, lengths[r])
            if self.cache.capacity:
                for row, s in zip(r.tolist(), src.tolist()):
                    v = int(keys[row])
                    self.cache.put(v, data[s : s + lengths[row]].copy())
                    if self._in_flight.get(v, (None,))[0] is ticket:
                        del self._in_flight[v]
        self.stats.cache_peak_bytes = self.cache.peak
        return indptr, vals

    def _drain_serving(self) -> None:
        for pending, _ in self._serving:
            pending.wait()
        self._serving.clear()

    def close(self, ticket: Ticket | None = None) -> None:
        """Wait for everything still in flight (an abandoned ticket's answers, answers being served)."""
        if ticket is not None:
            ticket.wait()
        self._in_flight.clear()
        self._drain_serving()
