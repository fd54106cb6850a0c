"""``Comm``: the one object through which the distributed kernels move tensors, counting every byte.

Wraps a ``torch.distributed`` process group (gloo on CPU, NCCL on CUDA; the same calls). Kernels receive a
``Comm`` as an argument (no global state). Each instance knows its members as global ranks; peers are given
as *member indices* (0..size-1). Sub-communicators made by :meth:`Comm.split` share the byte counter of their
parent, so a rank's total is counted once whatever group a transfer used.

Counting rule: a message of ``numel`` elements counts ``numel * element_size`` bytes sent on the sender and
received on the receiver; a rank's transfer to itself counts 0 (an all-to-all keeps its own slice). The
all-reduce is a ring of point-to-point steps, so its bytes are counted as they are sent, like every other
transfer (:func:`ring_all_reduce_bytes` is the closed form they equal).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
import torch.distributed as dist


@dataclass
class ByteCounter:
    """Bytes and messages moved by this rank; ``sent_to[peer]``/``recv_from[peer]`` by global peer rank."""

    sent: int = 0
    recv: int = 0
    messages_sent: int = 0
    sent_to: dict[int, int] = field(default_factory=dict)
    recv_from: dict[int, int] = field(default_factory=dict)

    def add_send(self, peer: int, nbytes: int) -> None:
        self.sent += nbytes
        self.messages_sent += 1
        self.sent_to[peer] = self.sent_to.get(peer, 0) + nbytes

    def add_recv(self, peer: int, nbytes: int) -> None:
        self.recv += nbytes
        self.recv_from[peer] = self.recv_from.get(peer, 0) + nbytes

    def snapshot(self) -> dict[str, int]:
        return {"sent": self.sent, "recv": self.recv, "messages_sent": self.messages_sent}


def _nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


class Pending:
    """Handles of point-to-point operations in flight (posted by :meth:`Comm.p2p`).

    :meth:`wait_recv` blocks until the i-th receive of the batch has landed (so compute can start on the
    first chunk while later ones are still in flight); :meth:`wait` until everything has completed.
    Backends that return one handle for the whole batch (NCCL) simply wait for all of it.
    """

    def __init__(self, works: list, n_sends: int = 0, n_recvs: int = 0) -> None:
        self._works = list(works)
        self._per_op = len(self._works) == n_sends + n_recvs
        self._n_sends = n_sends
        self._done = [False] * len(self._works)

    def _wait(self, index: int) -> None:
        if not self._done[index]:
            self._works[index].wait()
            self._done[index] = True

    def wait_recv(self, i: int) -> None:
        if not self._per_op:
            self.wait()
            return
        self._wait(self._n_sends + i)

    def wait(self) -> None:
        for index in range(len(self._works)):
            self._wait(index)


class Comm:
    """A process group plus a byte counter.

    Parameters:
        group: the ``torch.distributed`` group for collectives (None: the default world group).
        ranks: global ranks of the members, in member order (None: all ranks of ``group``).
        counter: a shared :class:`ByteCounter` (None: a new one).

    Attributes:
        rank: this process's member index; size: number of members; ranks: their global ranks.
    """

    def __init__(
        self,
        group: dist.ProcessGroup | None = None,
        *,
        ranks: Sequence[int] | None = None,
        counter: ByteCounter | None = None,
    ) -> None:
        if not dist.is_initialized():
            raise RuntimeError(
                "torch.distributed is not initialised: start workers with workbench.distributed.run_workers"
            )
        self.group = group
        if ranks is None:
            ranks = dist.get_process_group_ranks(group) if group is not None else range(dist.get_world_size())
        self.ranks = tuple(int(r) for r in ranks)
        me = dist.get_rank()
        if me not in self.ranks:
            raise ValueError(f"this process (global rank {me}) is not a member of ranks={self.ranks}")
        self.rank = self.ranks.index(me)
        self.size = len(self.ranks)
        self.counter = counter if counter is not None else ByteCounter()
        self._splits: dict = {}

    # ------------------------------------------------------------------ counters
    @property
    def bytes_sent(self) -> int:
        return self.counter.sent

    @property
    def bytes_recv(self) -> int:
        return self.counter.recv

    def reset_counters(self) -> None:
        """Zero the (shared) counter."""
        self.counter.sent = self.counter.recv = self.counter.messages_sent = 0
        self.counter.sent_to.clear()
        self.counter.recv_from.clear()

    # ------------------------------------------------------------------ point to point
    def p2p(
        self,
        sends: Sequence[tuple[torch.Tensor, int]] = (),
        recvs: Sequence[tuple[torch.Tensor, int]] = (),
        *,
        tag: int = 0,
    ) -> Pending:
        """Post sends ``(tensor, peer)`` and receives ``(buffer, peer)`` as one ``batch_isend_irecv``; async.

        Peers are member indices and must differ from ``self.rank``. All ranks must post matching operations
        in the same order per peer pair; one call per phase on every rank keeps the code deadlock-free under
        NCCL. Returns a :class:`Pending`; buffers may be read only after ``wait()``.
        """
        ops: list[dist.P2POp] = []
        for tensor, peer in sends:
            self._check_peer(peer)
            if not tensor.is_contiguous():
                raise ValueError("p2p send tensors must be contiguous")
            ops.append(dist.P2POp(dist.isend, tensor, self.ranks[peer], tag=tag))
            self.counter.add_send(self.ranks[peer], _nbytes(tensor))
        for buffer, peer in recvs:
            self._check_peer(peer)
            if not buffer.is_contiguous():
                raise ValueError("p2p receive buffers must be contiguous")
            ops.append(dist.P2POp(dist.irecv, buffer, self.ranks[peer], tag=tag))
            self.counter.add_recv(self.ranks[peer], _nbytes(buffer))
        if not ops:
            return Pending([])
        return Pending(list(dist.batch_isend_irecv(ops)), len(sends), len(recvs))

    def _check_peer(self, peer: int) -> None:
        if not 0 <= peer < self.size or peer == self.rank:
            raise ValueError(f"peer={peer} is invalid for member {self.rank} of a group of size {self.size}")

    # ------------------------------------------------------------------ collectives
    def all_to_all_single(self, output: torch.Tensor, input: torch.Tensor) -> None:
        """Equal-split all-to-all along dim 0 (``input.shape[0] == size``); counts all but the kept slice."""
        if input.shape[0] != self.size or output.shape != input.shape:
            raise ValueError(f"all_to_all_single needs dim 0 == size={self.size}; got {tuple(input.shape)}")
        if self.size == 1:
            output.copy_(input)
            return
        slice_bytes = _nbytes(input) // self.size
        for peer in range(self.size):
            if peer != self.rank:
                self.counter.add_send(self.ranks[peer], slice_bytes)
                self.counter.add_recv(self.ranks[peer], slice_bytes)
        dist.all_to_all_single(output, input.contiguous(), group=self.group)

    def all_gather(self, output: torch.Tensor, input: torch.Tensor) -> None:
        """``output[m] = input of member m`` (``output.shape == (size, *input.shape)``)."""
        if self.size == 1:
            output[0].copy_(input)
            return
        nbytes = _nbytes(input)
        for peer in range(self.size):
            if peer != self.rank:
                self.counter.add_send(self.ranks[peer], nbytes)
                self.counter.add_recv(self.ranks[peer], nbytes)
        dist.all_gather(list(output.unbind(0)), input.contiguous(), group=self.group)

    def all_reduce(self, tensor: torch.Tensor) -> None:
        """Sum in place over the members, as a ring of counted point-to-point steps (every byte counted as sent).

        The flat tensor is cut into ``size`` chunks (``torch.tensor_split``: sizes differ by at most one element).
        Reduce-scatter: in step ``t`` (0..size-2) member r sends chunk ``(r - t) % size`` to member r+1 and adds
        the chunk it receives from r-1; after size-1 steps member r holds the sum of chunk ``(r + 1) % size``.
        All-gather: size-1 more steps pass the summed chunks around the ring. Member r sends every chunk but
        ``r + 1`` once and every chunk but ``r + 2`` once: ``2 N - c_{r+1} - c_{r+2}`` elements of N, and all
        members together ``2 (size - 1) N`` (:func:`ring_all_reduce_bytes`). Every member ends with the same
        values (each chunk is summed on one member, then copied), summed in ring order.
        """
        if self.size == 1:
            return
        flat = tensor.reshape(-1) if tensor.is_contiguous() else tensor.contiguous().reshape(-1)
        chunks = list(torch.tensor_split(flat, self.size))
        nxt, prev = (self.rank + 1) % self.size, (self.rank - 1) % self.size
        for t in range(self.size - 1):  # reduce-scatter
            send, recv = chunks[(self.rank - t) % self.size], chunks[(self.rank - t - 1) % self.size]
            buf = torch.empty_like(recv)
            self._ring_step(send, buf, nxt, prev)
            recv.add_(buf)
        for t in range(self.size - 1):  # all-gather
            send, recv = chunks[(self.rank + 1 - t) % self.size], chunks[(self.rank - t) % self.size]
            buf = torch.empty_like(recv)
            self._ring_step(send, buf, nxt, prev)
            recv.copy_(buf)
        if not tensor.is_contiguous():  # flat was a copy
            tensor.copy_(flat.view(tensor.shape))

    def _ring_step(self, send: torch.Tensor, buf: torch.Tensor, nxt: int, prev: int) -> None:
        """One ring step: ``send`` to member ``nxt`` while ``buf`` arrives from ``prev`` (an empty chunk, when
        there are fewer elements than members, is neither sent nor received: both sides know its size)."""
        sends = [(send.contiguous(), nxt)] if send.numel() else []
        recvs = [(buf, prev)] if buf.numel() else []
        self.p2p(sends, recvs).wait()

    def barrier(self) -> None:
        if self.size > 1:
            dist.barrier(group=self.group)

    # ------------------------------------------------------------------ sub-groups
    def split(self, partition: Sequence[Sequence[int]], *, collective: bool = True) -> Comm:
        """The sub-communicator of the part that contains this rank (member indices in, shared counter).

        ``collective=True`` creates a real process group per part (needed for all-to-all); every member of
        ``self`` must call ``split`` with the same partition. ``collective=False`` makes a light view for
        point-to-point only (no group creation, no synchronisation).
        """
        flat = sorted(m for part in partition for m in part)
        if flat != list(range(self.size)):
            raise ValueError(f"partition={partition!r} must cover members 0..{self.size - 1} exactly once")
        key = tuple(tuple(part) for part in partition), collective
        if key in self._splits:
            return self._splits[key]
        mine = None
        for part in partition:
            global_ranks = [self.ranks[m] for m in part]
            group = None
            if collective and len(part) > 1:
                group = dist.new_group(global_ranks)
            if self.rank in part:
                mine = (group, global_ranks)
        assert mine is not None
        group, global_ranks = mine
        if group is None:
            sub: Comm = _View(global_ranks, self.counter)
        else:
            sub = Comm(group, ranks=global_ranks, counter=self.counter)
        self._splits[key] = sub
        return sub


def ring_all_reduce_bytes(numel: int, size: int, itemsize: int) -> tuple[int, ...]:
    """Bytes each member sends in :meth:`Comm.all_reduce` of ``numel`` elements of ``itemsize`` bytes over
    ``size`` members: ``(2 N - c_{r+1} - c_{r+2}) itemsize`` for member r (c: the ``tensor_split`` chunk sizes);
    their sum is ``2 (size - 1) N itemsize``.

    >>> ring_all_reduce_bytes(10, 3, 8)  # chunks 4, 3, 3
    (112, 104, 104)
    """
    if size <= 1:
        return (0,) * max(size, 1)
    c = [numel // size + (1 if i < numel % size else 0) for i in range(size)]
    return tuple((2 * numel - c[(r + 1) % size] - c[(r + 2) % size]) * itemsize for r in range(size))


class _View(Comm):
    """Point-to-point-only sub-communicator (no process group of its own; its all-reduce is point-to-point too)."""

    def __init__(self, ranks: Sequence[int], counter: ByteCounter) -> None:  # noqa: D107
        self.group = None
        self.ranks = tuple(ranks)
        self.rank = self.ranks.index(dist.get_rank())
        self.size = len(self.ranks)
        self.counter = counter
        self._splits = {}

    def _no_group(self, name: str) -> None:
        raise RuntimeError(f"{name} needs a process group; this view has none (use split(..., collective=True))")

    def all_to_all_single(self, output: torch.Tensor, input: torch.Tensor) -> None:
        if self.size > 1:
            self._no_group("all_to_all_single")
        super().all_to_all_single(output, input)

    def all_gather(self, output: torch.Tensor, input: torch.Tensor) -> None:
        if self.size > 1:
            self._no_group("all_gather")
        super().all_gather(output, input)

    def barrier(self) -> None:
        if self.size > 1:
            self._no_group("barrier")
