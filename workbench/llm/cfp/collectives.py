"""The resharding primitives as autograd functions over a counted :class:`~workbench.distributed.comm.Comm`.

Forward and backward of each (``p`` ranks on the axis, ``n`` local bytes):

=============  ===========================================  ============================================
primitive      forward                                      backward
=============  ===========================================  ============================================
allreduce      sum of partials (P -> R)                     identity (a replicated gradient)
reducescatter  sum, keep my chunk of ``dim`` (P -> S)       all-gather the gradient along ``dim``
allgather      concatenate every chunk of ``dim`` (S -> R)  keep my chunk of the gradient
slice          keep my chunk of ``dim`` (R -> S)            all-gather the gradient along ``dim``
alltoall       S(dim) -> S(dim2)                            S(dim2) -> S(dim)
grad_allreduce identity                                     all-reduce the (partial) gradient
=============  ===========================================  ============================================

Reduce-scatter is an all-to-all of the chunks followed by a local sum (Comm has no reduce-scatter; the bytes
are the ring reduce-scatter's ``(p-1) n / p``).
"""

from __future__ import annotations

import torch

from workbench.distributed.comm import Comm

__all__ = ["allreduce", "reducescatter", "allgather", "slice_", "alltoall", "grad_allreduce", "apply_step"]


def _gather(comm: Comm, x: torch.Tensor, dim: int) -> torch.Tensor:
    x = x.contiguous()
    out = x.new_empty((comm.size, *x.shape))
    comm.all_gather(out, x)
    return torch.cat(list(out.unbind(0)), dim=dim)


def _chunk(comm: Comm, x: torch.Tensor, dim: int) -> torch.Tensor:
    return x.chunk(comm.size, dim=dim)[comm.rank].contiguous()


def _reduce_scatter(comm: Comm, x: torch.Tensor, dim: int) -> torch.Tensor:
    send = torch.stack(x.chunk(comm.size, dim=dim)).contiguous()  # (p, *chunk)
    recv = torch.empty_like(send)
    comm.all_to_all_single(recv, send)
    return recv.sum(0)


def _all_to_all(comm: Comm, x: torch.Tensor, dim: int, dim2: int) -> torch.Tensor:
    send = torch.stack(x.chunk(comm.size, dim=dim2)).contiguous()  # piece j of dim2 goes to member j
    recv = torch.empty_like(send)
    comm.all_to_all_single(recv, send)
    return torch.cat(list(recv.unbind(0)), dim=dim)  # member k's chunk k of dim


class _AllReduce(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, comm):  # noqa: D102
        y = x.clone()
        comm.all_reduce(y)
        return y

    @staticmethod
    def backward(ctx, g):  # noqa: D102
        return g, None


class _ReduceScatter(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, comm, dim):  # noqa: D102
        ctx.comm, ctx.dim = comm, dim
        return _reduce_scatter(comm, x, dim)

    @staticmethod
    def backward(ctx, g):  # noqa: D102
        return _gather(ctx.comm, g, ctx.dim), None, None


class _AllGather(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, comm, dim):  # noqa: D102
        ctx.comm, ctx.dim = comm, dim
        return _gather(comm, x, dim)

    @staticmethod
    def backward(ctx, g):  # noqa: D102
        return _chunk(ctx.comm, g, ctx.dim), None, None


class _Slice(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, comm, dim):  # noqa: D102
        ctx.comm, ctx.dim = comm, dim
        return _chunk(comm, x, dim)

    @staticmethod
    def backward(ctx, g):  # noqa: D102
        return _gather(ctx.comm, g, ctx.dim), None, None


class _AllToAll(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, comm, dim, dim2):  # noqa: D102
        ctx.comm, ctx.dim, ctx.dim2 = comm, dim, dim2
        return _all_to_all(comm, x, dim, dim2)

    @staticmethod
    def backward(ctx, g):  # noqa: D102
        return _all_to_all(ctx.comm, g, ctx.dim2, ctx.dim), None, None, None


class _GradAllReduce(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, comm):  # noqa: D102
        ctx.comm = comm
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):  # noqa: D102
        g = g.clone()
        ctx.comm.all_reduce(g)
        return g, None


def allreduce(x: torch.Tensor, comm: Comm) -> torch.Tensor:
    return _AllReduce.apply(x, comm) if comm.size > 1 else x


def reducescatter(x: torch.Tensor, comm: Comm, dim: int) -> torch.Tensor:
    return _ReduceScatter.apply(x, comm, dim) if comm.size > 1 else x


def allgather(x: torch.Tensor, comm: Comm, dim: int) -> torch.Tensor:
    return _AllGather.apply(x, comm, dim) if comm.size > 1 else x


def slice_(x: torch.Tensor, comm: Comm, dim: int) -> torch.Tensor:
    return _Slice.apply(x, comm, dim) if comm.size > 1 else x


def alltoall(x: torch.Tensor, comm: Comm, dim: int, dim2: int) -> torch.Tensor:
    return _AllToAll.apply(x, comm, dim, dim2) if comm.size > 1 else x


def grad_allreduce(x: torch.Tensor, comm: Comm) -> torch.Tensor:
    return _GradAllReduce.apply(x, comm) if comm.size > 1 else x


def apply_step(x: torch.Tensor, step, comms: list[Comm]) -> torch.Tensor:
    """Run one :class:`~workbench.llm.cfp.sharding.Step` on the axis's communicator."""
    comm = comms[step.axis]
    if step.kind == "allreduce":
        return allreduce(x, comm)
    if step.kind == "reducescatter":
        return reducescatter(x, comm, step.dim)
    if step.kind == "allgather":
        return allgather(x, comm, step.dim)
    if step.kind == "slice":
        return slice_(x, comm, step.dim)
    if step.kind == "alltoall":
        return alltoall(x, comm, step.dim, step.dim2)
    raise ValueError(f"step kind {step.kind!r} is unknown")
