"""Overlap of communication with compute: the two timelines the attention cost model needs.

Both are closed forms over numpy arrays (no Python loop over blocks), so the cluster model can sweep
1024 GPUs in milliseconds; ``tests/llm/mesh_attention/test_model.py`` checks each against a plain event-by-event
simulation.

1. :func:`lockstep_ring` -- a ring (Ring-Attention, the ring half of USP, StarTrail's sub-rings). At step k
   every rank computes one block while it receives the chunk for step k+1 (double buffering, as in
   ring-flash-attention). A rank can only forward what it has received, so ranks advance in lock step and a
   step lasts ``max(compute_k, max over ranks of transfer_k)``.

2. :func:`tile_timeline` -- a rank that owns a 2-D tile (Mesh-Attention). Every chunk it needs already sits on
   its owner at t=0, so all fetches are issued at once, in the order the greedy schedule prefetches them;
   fetches over NVLink and over the network travel on separate hardware, so there is one FIFO queue per
   link class (an assumption: a link serves the posted receives one after another, in posting order, rather
   than sharing its bandwidth among all of them). Blocks are computed in schedule order; the schedule waits
   for chunks one by one (in fetch order) and a block starts once the previous block is done and every
   chunk waited for so far has arrived: a fetch overlaps the compute of blocks that are already resident,
   and what cannot hide shows up as idle compute. Partial results (O+LSE in forward, dQ / dK,dV in
   backward) leave on outgoing FIFO queues (again one per link class) where the schedule posts them
   (``plan.greedy_schedule`` posts each as soon as its row / column is done). Any schedule of
   ``plan.SCHEDULES`` is timed the same way: ``"greedy-backlog"`` differs only in the order of its steps.

3. :func:`schedule_events` -- the same semantics, event by event, for one rank and a plain step list: every
   fetch, block and send with its start and end. Slow (Python), for tests, hand-checked cases and plots.

Recurrences and their closed forms (``c`` compute time, ``R`` ready time, ``E`` end time)::

    E_k = max(E_{k-1}, R_k) + c_k           ==  Cum_k + max_{j<=k} (R_j - Cum_{j-1}),   Cum_k = c_0 + .. + c_k
    queue FIFO: end_m = max(end_{m-1}, ready_m) + d_m   (same form, over the messages of one queue)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "RingTime",
    "TileTime",
    "compute_end_times",
    "fifo_end_times",
    "lockstep_ring",
    "schedule_events",
    "ring_backward_pass",
    "ring_forward_pass",
    "tile_timeline",
]


@dataclass(frozen=True)
class RingTime:
    """Result of :func:`lockstep_ring`: wall seconds, busy compute seconds, summed critical transfer seconds."""

    total: float
    compute: float
    comm: float

    @property
    def exposed(self) -> float:
        return self.total - self.compute


def lockstep_ring(block_seconds: float, step_comm_seconds: np.ndarray, tail_comm_seconds: float = 0.0) -> RingTime:
    """Wall time of a ring pass in lock step.

    Parameters: ``block_seconds`` compute of one step (s); ``step_comm_seconds[k]`` the slowest rank's
    transfers that run under step k (s; one entry per compute step, 0 where nothing travels);
    ``tail_comm_seconds`` a transfer that can only start after the last step (Ring backward's last dK/dV
    hop), fully exposed.

    ``total = sum_k max(block, comm_k) + tail``: a step ends when both its block and its transfers are done.
    Example: 4 steps of 1 ms with 3 ms KV hops under the first three -> 3 * 3 + 1 = 10 ms.
    """
    comm = np.asarray(step_comm_seconds, dtype=np.float64)
    if comm.ndim != 1 or len(comm) < 1:
        raise ValueError(f"step_comm_seconds has shape {comm.shape}: it needs one entry per step (at least one)")
    total = np.maximum(block_seconds, comm).sum() + tail_comm_seconds
    return RingTime(
        total=float(total), compute=float(len(comm) * block_seconds), comm=float(comm.sum() + tail_comm_seconds)
    )


def ring_forward_pass(steps: int, block_seconds: float, kv_seconds: float) -> RingTime:
    """Forward ring pass (``ring.ring_forward``): ``steps`` blocks; the KV hop for step k+1 travels under step k."""
    comm = np.zeros(steps)
    comm[: steps - 1] = kv_seconds
    return lockstep_ring(block_seconds, comm)


def ring_backward_pass(steps: int, block_seconds: float, kv_seconds: float, dkv_seconds: float) -> RingTime:
    """Backward ring pass (``ring.ring_backward``): the KV hop for step k+1 travels under step k (k <= steps-2);
    the dK/dV accumulator leaves after step k >= 1 and must arrive by the end of step k+1, so it shares the
    link with the KV hop under steps 2..steps-1; the one sent after the last step is exposed."""
    comm = np.zeros(steps)
    comm[: steps - 1] += kv_seconds
    comm[2:] += dkv_seconds
    return lockstep_ring(block_seconds, comm, dkv_seconds if steps >= 2 else 0.0)


def compute_end_times(ready: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """End time of each item processed in order by one server: ``E_k = max(E_{k-1}, ready_k) + cost_k``.

    ``ready`` and ``cost`` have shape (K, ...) (trailing axes are independent servers); E_{-1} = 0.
    Closed form: ``E_k = Cum_k + max_{j<=k}(ready_j - Cum_{j-1})``.
    """
    ready = np.asarray(ready, dtype=np.float64)
    cost = np.broadcast_to(np.asarray(cost, dtype=np.float64), ready.shape)
    if ready.shape[0] == 0:
        return ready.copy()
    cum = np.cumsum(cost, axis=0)
    before = cum - cost  # Cum_{k-1}
    slack = np.maximum.accumulate(np.maximum(ready - before, 0.0), axis=0)
    return cum + slack


def fifo_end_times(ready: np.ndarray, duration: np.ndarray, queue: np.ndarray, n_queues: int = 2) -> np.ndarray:
    """End times of messages on FIFO queues (one per link class), messages taken in the given order.

    ``ready``, ``duration``: shape (M, U); ``queue``: int array (M, U) with values 0..n_queues-1 (which queue
    message m of server u uses). A message starts at ``max(ready, end of the previous message of its
    queue)``. Order within a queue is the row order, so callers sort by ready time first when the sender
    is free to choose (first come, first served).
    """
    ready = np.asarray(ready, dtype=np.float64)
    duration = np.asarray(duration, dtype=np.float64)
    queue = np.asarray(queue)
    out = np.zeros_like(ready)
    for q in range(n_queues):
        on = queue == q
        # a message of another queue becomes a zero-cost item that is never waited for
        r = np.where(on, ready, -np.inf)
        d = np.where(on, duration, 0.0)
        end = compute_end_times(r, d)
        out = np.where(on, end, out)
    return out


@dataclass(frozen=True)
class TileTime:
    """Result of :func:`tile_timeline` for U ranks (arrays of shape (U,) or (X, U))."""

    compute_end: np.ndarray  # (U,) s: when the last block of the tile finishes
    compute_busy: np.ndarray  # (U,) s: sum of block compute
    fetch_arrival: np.ndarray  # (F, U) s: when each fetched chunk has arrived
    fetch_busy: np.ndarray  # (U,) s: sum of fetch durations (both queues)
    send_end: np.ndarray  # (X, U) s: when each partial result has arrived at its owner
    send_busy: np.ndarray  # (U,) s: sum of send durations


def tile_timeline(
    *,
    fetch_seconds: np.ndarray,
    fetch_queue: np.ndarray,
    wait_order: np.ndarray,
    segment_waits: np.ndarray,
    segment_seconds: np.ndarray,
    send_after_segment: np.ndarray,
    send_seconds: np.ndarray,
    send_queue: np.ndarray,
) -> TileTime:
    """Timeline of tile owners (vectorised over U ranks) following a fetch / wait / compute / send schedule.

    The schedule (``plan.greedy_schedule``) is cut into *segments*: maximal runs of compute steps between two
    wait or send steps. All fetches are posted at t=0 in schedule order.

    Parameters
    ----------
    fetch_seconds: (F, U) duration of each fetch (latency + bytes / bandwidth), in posting order.
    fetch_queue: (F, U) 0 = NVLink queue, 1 = network queue (FIFO each, running concurrently).
    wait_order: (W,) fetch indices in the order the schedule waits for them.
    segment_waits: (S,) how many waits precede segment s; its blocks start no earlier than the latest
        arrival among those waited chunks.
    segment_seconds: (S,) or (S, U) compute seconds of segment s (its blocks back to back).
    send_after_segment: (X,) the segment after which partial x is posted (-1: before any compute).
    send_seconds, send_queue: (X, U) duration and queue of each partial-result send; sends of one queue
        leave in schedule order (FIFO).

    Returns a :class:`TileTime`. Complexity O((F + S + X) * U).
    """
    fetch_seconds = np.asarray(fetch_seconds, dtype=np.float64)
    F, U = fetch_seconds.shape
    arrival = fifo_end_times(np.zeros((F, U)), fetch_seconds, fetch_queue)  # all posted at t=0
    wait_order = np.asarray(wait_order, dtype=np.int64)
    waited = np.zeros((len(wait_order) + 1, U))  # waited[k]: latest arrival among the first k waits
    if len(wait_order):
        waited[1:] = np.maximum.accumulate(arrival[wait_order], axis=0)
    segment_waits = np.asarray(segment_waits, dtype=np.int64)
    S = len(segment_waits)
    ready = waited[segment_waits]  # (S, U)
    cost = np.broadcast_to(np.asarray(segment_seconds, dtype=np.float64).reshape(S, -1), (S, U))
    end = compute_end_times(ready, cost)
    compute_end = end[-1] if S else np.zeros(U)

    after = np.asarray(send_after_segment, dtype=np.int64)
    X = len(after)
    send_seconds = np.asarray(send_seconds, dtype=np.float64).reshape(X, U)
    send_queue = np.asarray(send_queue).reshape(X, U)
    end_ext = np.vstack([np.zeros((1, U)), end])  # row 0: "before any compute"
    send_ready = end_ext[after + 1] if X else np.zeros((0, U))
    send_end = fifo_end_times(send_ready, send_seconds, send_queue)
    return TileTime(
        compute_end=compute_end,
        compute_busy=cost.sum(axis=0),
        fetch_arrival=arrival,
        fetch_busy=fetch_seconds.sum(axis=0),
        send_end=send_end,
        send_busy=send_seconds.sum(axis=0),
    )


def schedule_events(
    steps,
    *,
    block_seconds: float,
    fetch_seconds: dict[str, float],
    send_seconds: dict[str, float],
    fetch_queue: dict[str, int] | None = None,
    send_queue: dict[str, int] | None = None,
) -> list[tuple[str, str, float, float]]:
    """Event-by-event timeline of one rank following ``steps`` (``plan.greedy_schedule``), as
    :func:`tile_timeline` times it: every fetch is posted at t=0 and served FIFO on its queue (0 NVLink, 1
    network; by kind, default all on queue 1); a block starts when the previous block is done and every chunk
    waited for so far has arrived; a send starts when the block before it is done and its outgoing queue is
    free.

    Parameters: ``block_seconds`` one block; ``fetch_seconds`` / ``send_seconds`` seconds per message kind
    ("q", "kv"; "out", "dq", "dkv").

    Returns ``[(kind, label, start, end), ...]`` in step order, kind "fetch", "compute" or "send"; labels are
    ``"q1"``, ``"kv2"``, ``"(1,2)"``, ``"out1"``, ``"dkv2"``. The pass ends at the largest end.
    Example: ``schedule_events(plan.greedy_schedule(1, 2), block_seconds=1, fetch_seconds={"kv": 3},
    send_seconds={})`` -> fetch kv1 0-3, (0,0) 0-1, (0,1) 3-4.
    """
    fq = fetch_queue or {}
    sq = send_queue or {}
    events: list[tuple[str, str, float, float]] = []
    arrival: dict[tuple[str, int], float] = {}
    fetch_free = [0.0, 0.0]
    send_free = [0.0, 0.0]
    compute_free = 0.0
    waited = 0.0
    for s in steps:
        idx = s.row if s.kind in ("q", "out", "dq") else s.col
        if s.op == "fetch":
            queue = fq.get(s.kind, 1)
            start = fetch_free[queue]
            fetch_free[queue] = arrival[(s.kind, idx)] = start + float(fetch_seconds[s.kind])
            events.append(("fetch", f"{s.kind}{idx}", start, fetch_free[queue]))
        elif s.op == "wait":
            waited = max(waited, arrival[(s.kind, idx)])
        elif s.op == "compute":
            start = max(compute_free, waited)
            compute_free = start + float(block_seconds)
            events.append(("compute", f"({s.row},{s.col})", start, compute_free))
        elif s.op == "send":
            queue = sq.get(s.kind, 1)
            start = max(compute_free, send_free[queue])
            send_free[queue] = start + float(send_seconds[s.kind])
            events.append(("send", f"{s.kind}{idx}", start, send_free[queue]))
        else:
            raise ValueError(f"step op={s.op!r} is unknown: valid values are fetch, wait, compute, send")
    return events
