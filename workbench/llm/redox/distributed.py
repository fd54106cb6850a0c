"""The distributed protocol: P real processes (``torch.distributed`` gloo through
:func:`workbench.distributed.run_workers`), each owning whole chunks, serving equal global batches, with
opportunistic remote prefetch and no record served twice.

Ownership (the brief leaves it to us): the epoch's chunks, in the order the RandomSampler request stream first
reaches them, are dealt round-robin to the ranks. Each rank runs the local protocol
(:func:`~workbench.llm.redox.redox.plan_local`) over its own chunks with K resident and its own prefetch thread:
its *stream* is the order in which it gives its records out, every chunk read once.

Serving: every step each rank serves ``batch`` records (the last step fewer, split evenly). A rank takes them
from its own stream; when its stream runs short (ranks own different numbers of records: sizes vary, chunks hold
different counts), the ranks with the most records left donate from their streams (:func:`schedule`, computed
identically by every rank from the record counts, which are checked with an all-gather). Donated records
travel as bytes over gloo and are prefetched: the transfer for step s+1 is posted before step s is served and
waited for only at step s+1 (opportunistic remote prefetch). A record leaves its owner's stream exactly once,
whether served there or sent, so no record is served twice; the receiving rank checks each record's header
against the index.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from workbench.llm.redox.dataset import HEADER, RedoxStore
from workbench.llm.redox.io import ColdReader, drop_cache, proc_read_bytes
from workbench.llm.redox.redox import (
    EpochServer,
    Plan,
    epoch_seed,
    first_request_order,
    partition_chunks,
    plan_local,
    request_stream,
)


@dataclass(frozen=True)
class Step:
    """One step's serving: own[r] records rank r serves from its own stream, give[d][r] records d sends r."""

    own: tuple[int, ...]
    give: tuple[tuple[int, ...], ...]


def owned_counts(store: RedoxStore, world: int, seed: int, epoch: int) -> list[int]:
    requests = request_stream(store.n, seed, epoch)
    parts = partition_chunks(first_request_order(requests, store.chunk), world)
    return [int(sum(len(store.chunk_records[c]) for c in p)) for p in parts]


def schedule(counts: list[int], batch: int) -> list[Step]:
    """Per step, who serves what (see module docstring). Deterministic from the counts; every step serves
    ``min(P * batch, left)`` records split evenly (ranks below the remainder get one more)."""
    world = len(counts)
    rem = list(counts)
    left = sum(rem)
    steps = []
    while left > 0:
        g = min(world * batch, left)
        quota = [g // world + (r < g % world) for r in range(world)]
        own = [min(q, x) for q, x in zip(quota, rem)]
        rem = [x - o for x, o in zip(rem, own)]
        give = [[0] * world for _ in range(world)]
        for r in range(world):
            need = quota[r] - own[r]
            while need > 0:
                d = max(range(world), key=lambda k: (rem[k], -k))
                x = min(need, rem[d])
                give[d][r] += x
                rem[d] -= x
                need -= x
        steps.append(Step(tuple(own), tuple(tuple(row) for row in give)))
        left -= g
    return steps


def _post(comm, step: Step, outgoing: dict[int, list[tuple[int, bytes]]], lengths: dict[int, np.ndarray]):
    """Post this rank's payload sends and receives of one exchange (sizes already known); returns handles."""
    sends, recvs, bufs = [], [], {}
    for peer, items in outgoing.items():
        sends.append((torch.frombuffer(bytearray(b"".join(b for _, b in items)), dtype=torch.uint8), peer))
    for peer, lens in lengths.items():
        bufs[peer] = torch.empty(int(lens.sum()), dtype=torch.uint8)
        recvs.append((bufs[peer], peer))
    return comm.p2p(sends, recvs, tag=1), bufs


def _exchange_headers(comm, me: int, step: Step, outgoing: dict[int, list[tuple[int, bytes]]]):
    """Round 1 of an exchange: (record id, length) of every donated record, so receivers size their buffers."""
    world = comm.size
    sends, recvs, ids = [], [], {}
    for peer, items in outgoing.items():
        sends.append((torch.tensor([[i, len(b)] for i, b in items], dtype=torch.int64), peer))
    for peer in range(world):
        x = step.give[peer][me] if peer != me else 0
        if x:
            ids[peer] = torch.empty((x, 2), dtype=torch.int64)
            recvs.append((ids[peer], peer))
    comm.p2p(sends, recvs, tag=0).wait()
    return {peer: t.numpy() for peer, t in ids.items()}


def _own_plan(
    store: RedoxStore, rank: int, world: int, resident: int, seed: int, epoch: int
) -> tuple[np.ndarray, Plan]:
    """This rank's chunks (array of chunk ids) and the local protocol's plan over the requests they hold."""
    requests = request_stream(store.n, seed, epoch)
    mine = partition_chunks(first_request_order(requests, store.chunk), world)[rank]
    own_chunk = np.zeros(store.n_chunks, dtype=bool)
    own_chunk[mine] = True
    plan = plan_local(
        requests[own_chunk[store.chunk[requests]]],
        store.chunk,
        resident,
        epoch_seed(seed, epoch) ^ (0xD15 + 7919 * rank),
    )
    return mine, plan


def _agreed_schedule(
    comm, store: RedoxStore, rank: int, world: int, batch: int, seed: int, epoch: int, root: str
) -> list[Step]:
    """The epoch's :func:`schedule`, after an all-gather has checked that every rank counts the same records
    (ValueError otherwise: the ranks would derive different schedules)."""
    counts = torch.tensor(owned_counts(store, world, seed, epoch), dtype=torch.int64)
    gathered = torch.empty((world, world), dtype=torch.int64)
    comm.all_gather(gathered, counts)  # every rank must derive the same schedule
    if not all(torch.equal(gathered[r], counts) for r in range(world)):
        raise ValueError(f"rank {rank}: the ranks disagree on the record counts (different datasets at root={root}?)")
    return schedule(counts.tolist(), batch)


def _received_ids(store: RedoxStore, lengths: dict[int, np.ndarray], bufs: dict[int, torch.Tensor]) -> list[int]:
    """Record ids of one exchange's received payloads (peers in rank order), each checked against the index.

    ``lengths[peer]``: [x, 2] (record id, bytes) rows; ``bufs[peer]``: the concatenated records (uint8)."""
    got = []
    for peer, meta in sorted(lengths.items()):
        data = bufs[peer].numpy().tobytes()
        off = 0
        for i, n in meta.tolist():
            store.check_record(data[off : off + n], int(i), store.root / f"(from rank {peer})")
            got.append(int(i))
            off += n
    return got


def epoch_worker(
    rank: int, world: int, comm, root: str, resident: int, batch: int, seed: int, epoch: int, cold: bool
) -> dict:
    """One rank's epoch (run by :func:`workbench.distributed.run_workers`); returns what it served and read."""
    store = RedoxStore(root)
    mine, plan = _own_plan(store, rank, world, resident, seed, epoch)
    steps = _agreed_schedule(comm, store, rank, world, batch, seed, epoch, root)
    if cold:
        drop_cache(store.chunk_path(int(c)) for c in mine)
    reader = ColdReader(cold=cold)
    proc0 = proc_read_bytes()
    stream = iter(plan.order.tolist())
    server = EpochServer(store, reader, plan, resident, lambda i, label, payload: bytes(payload))

    def take(n: int) -> list[tuple[int, bytes]]:
        out = []
        for _ in range(n):
            i = next(stream)
            payload = server.serve(i)
            out.append((i, HEADER.pack(b"RDX1", i, int(store.label[i]), int(store.length[i])) + payload))
        return out

    def start_exchange(s: int):
        step = steps[s]
        outgoing = {r: take(step.give[rank][r]) for r in range(world) if r != rank and step.give[rank][r]}
        lengths = _exchange_headers(comm, rank, step, outgoing)
        pending, bufs = _post(comm, step, outgoing, {p: v[:, 1] for p, v in lengths.items()})
        return pending, bufs, lengths, sum(len(v) for v in outgoing.values())

    served_steps: list[list[int]] = []
    remote_in = remote_out = 0
    try:
        inflight = start_exchange(0) if steps else None
        for s in range(len(steps)):
            mine_now = [i for i, _ in take(steps[s].own[rank])]
            assert inflight is not None  # started before step 0, restarted for every next step
            pending, bufs, lengths, sent = inflight
            remote_out += sent
            nxt = start_exchange(s + 1) if s + 1 < len(steps) else None  # remote prefetch for the next step
            pending.wait()
            got = _received_ids(store, lengths, bufs)
            remote_in += len(got)
            served_steps.append(mine_now + got)
            tally = torch.tensor([len(served_steps[-1])], dtype=torch.int64)
            comm.all_gather(torch.empty((world, 1), dtype=torch.int64), tally)  # the step's global batch is done
            inflight = nxt
    finally:
        server.close()
    proc1 = proc_read_bytes()
    return {
        "rank": rank,
        "served": served_steps,
        "chunk_reads": dict(server.prefetcher.reads),
        "owned_chunks": [int(c) for c in mine],
        "bytes_read_counted": reader.bytes,
        "bytes_read_proc": None if proc0 is None or proc1 is None else proc1 - proc0,
        "remote_in": remote_in,
        "remote_out": remote_out,
        "comm_bytes_sent": comm.bytes_sent,
        "comm_bytes_recv": comm.bytes_recv,
        "peak_resident": server.prefetcher.peak,
    }


@dataclass(frozen=True)
class DistributedRun:
    """The distributed epoch across P processes, checked."""

    processes: int
    exactly_once: bool
    chunks_read_once: bool
    steps: int
    batch_per_rank: int
    balanced: bool
    remote_records: int
    comm_bytes: int
    bytes_read: int
    bytes_source: str
    peak_resident: int
    served_per_rank: list[int]


def run_distributed(
    root,
    *,
    processes: int,
    resident: int,
    batch: int,
    seed: int = 0,
    epoch: int = 0,
    cold: bool = True,
    timeout_s: float = 120.0,
) -> tuple[DistributedRun, list[dict]]:
    """One epoch of the distributed protocol on ``processes`` gloo processes; checked in the parent."""
    from workbench.distributed.launch import run_workers

    store = RedoxStore(root)  # refuse a bad dataset before forking
    out = run_workers(
        epoch_worker,
        processes,
        str(root),
        resident,
        batch,
        seed,
        epoch,
        cold,
        timeout_s=timeout_s,
        oom_hint="try a smaller setting (fewer --workers, smaller --records or --chunk-kb)",
    )
    served = np.array([i for r in out for step in r["served"] for i in step], dtype=np.int64)
    reads: dict[int, int] = {}
    for r in out:
        for c, k in r["chunk_reads"].items():
            reads[c] = reads.get(c, 0) + k
    steps = len(out[0]["served"])
    sizes = [[len(r["served"][s]) for r in out] for s in range(steps)]
    balanced = all(max(x) - min(x) <= 1 for x in sizes)
    proc = [r["bytes_read_proc"] for r in out]
    use_proc = all(p is not None for p in proc) and (not cold or sum(proc) > 0)
    return DistributedRun(
        processes=processes,
        exactly_once=bool(len(served) == store.n and np.array_equal(np.sort(served), np.arange(store.n))),
        chunks_read_once=bool(sorted(reads) == list(range(store.n_chunks)) and set(reads.values()) == {1}),
        steps=steps,
        batch_per_rank=batch,
        balanced=balanced,
        remote_records=sum(r["remote_in"] for r in out),
        comm_bytes=sum(r["comm_bytes_sent"] for r in out),
        bytes_read=int(sum(proc) if use_proc else sum(r["bytes_read_counted"] for r in out)),
        bytes_source="/proc/self/io" if use_proc else "counted",
        peak_resident=max(r["peak_resident"] for r in out),
        served_per_rank=[sum(len(s) for s in r["served"]) for r in out],
    ), out
