"""Graph parallelism (the baseline GNNPipe is compared with): P processes, each owning a part of the vertices
(METIS or random, renumbered to contiguous rows) through *all* layers, exchanging halo embeddings every layer.

Per layer, rank r sends to rank q the dropped layer input rows q's vertices read (``halo[q][r]``), receives its
own halo and aggregates ``A_hat[own rows, own + halo columns] @ [z_own; z_halo]``. The exchange is an autograd
function: its backward sends the halo gradients back to their owners, who add them to their rows. After the
backward, the parameter gradients are summed by one all-reduce (a flat vector), and every rank takes the same
Adam step: no staleness, so this is full-graph training up to the order of floating-point sums.

Bytes per epoch: ``2 L H d itemsize`` for the halos (H: the total halo size, :func:`.partition.halo_pairs`;
forward and backward) plus the all-reduce, a ring of counted point-to-point steps: ``2 (P - 1) B`` for B bytes of
parameters (:func:`.volume.graph_parallel_bytes`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import torch

from workbench.distributed.comm import Comm
from workbench.graphs.gnnpipe.data import GraphData, to_torch_sparse
from workbench.graphs.gnnpipe.full import TrainSpec, WorkerRun, make_optimizer, run_epochs
from workbench.graphs.gnnpipe.models import (
    ModelSpec,
    dropout_mask,
    init_params,
    input_layer,
    layer_forward,
    loss_sum,
    param_names,
)
from workbench.graphs.gnnpipe.partition import halo_sets

__all__ = ["HaloPlan", "halo_plan", "halo_exchange", "all_reduce_grads", "graph_parallel_worker"]


class HaloPlan:
    """What rank ``r`` sends and receives: ``send[q]`` (local own rows q reads), ``recv_sizes[q]``, and the local
    adjacency ``adj`` over columns ``[own rows; halo from rank 0; halo from rank 1; ...]``."""

    def __init__(self, data: GraphData, bounds: tuple[int, ...], r: int, dtype: torch.dtype) -> None:
        halos = halo_sets(data.indptr, data.indices, bounds)
        lo, hi = bounds[r], bounds[r + 1]
        self.rows = slice(lo, hi)
        self.own = hi - lo
        self.send = [torch.from_numpy(halos[q][r] - lo) for q in range(len(bounds) - 1)]
        mine = halos[r]
        self.recv_sizes = [len(h) for h in mine]
        cols = np.concatenate([np.arange(lo, hi), *mine]).astype(np.int64)
        local = np.full(data.n, -1, dtype=np.int64)
        local[cols] = np.arange(len(cols))
        block = data.adj[lo:hi].tocoo()
        mapped = local[block.col]
        if (mapped < 0).any():
            raise RuntimeError("halo plan misses a column the rows read")
        a = sp.csr_matrix((block.data, (block.row, mapped)), shape=(hi - lo, len(cols)))
        self.adj = to_torch_sparse(a, dtype)


def halo_plan(data: GraphData, bounds: tuple[int, ...], r: int, dtype: torch.dtype) -> HaloPlan:
    return HaloPlan(data, bounds, r, dtype)


class _Exchange(torch.autograd.Function):
    """``[z_own; halo]`` forward (rows sent to their readers); backward returns halo gradients to owners."""

    @staticmethod
    def forward(ctx, z: torch.Tensor, comm: Comm, plan: HaloPlan) -> torch.Tensor:  # z: (own, d)
        ctx.comm, ctx.plan = comm, plan
        d = z.shape[1]
        sends = [(z[idx].contiguous(), q) for q, idx in enumerate(plan.send) if q != comm.rank and len(idx)]
        bufs = [(torch.empty(k, d, dtype=z.dtype), q) for q, k in enumerate(plan.recv_sizes) if q != comm.rank and k]
        comm.p2p(sends, bufs).wait()
        received = {q: b for b, q in bufs}
        parts = [z] + [received[q] for q in range(comm.size) if q in received]
        return torch.cat(parts, dim=0)  # (own + halo, d)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):  # grad: (own + halo, d)
        comm, plan = ctx.comm, ctx.plan
        d = grad.shape[1]
        own = grad[: plan.own].clone()
        sends, offset = [], plan.own
        for q, k in enumerate(plan.recv_sizes):
            if q != comm.rank and k:
                sends.append((grad[offset : offset + k].contiguous(), q))
                offset += k
        bufs = [
            (torch.empty(len(idx), d, dtype=grad.dtype), q)
            for q, idx in enumerate(plan.send)
            if q != comm.rank and len(idx)
        ]
        comm.p2p(sends, bufs).wait()
        for b, q in bufs:
            own.index_add_(0, plan.send[q], b)
        return own, None, None


def halo_exchange(z: torch.Tensor, comm: Comm, plan: HaloPlan) -> torch.Tensor:
    """``[z_own; halo]`` (own + halo, d) from this rank's dropped layer input ``z`` (own, d): the halo rows arrive
    from their owners (forward) and their gradients go back to them (backward), every byte through ``comm``."""
    return _Exchange.apply(z, comm, plan)


def all_reduce_grads(comm: Comm, params: dict[str, torch.Tensor], names: list[str]) -> None:
    """Sum the gradients of ``params[k]`` (k in ``names``) over ``comm``'s ranks by one all-reduce of a flat vector;
    a parameter without a gradient contributes zeros."""
    flat = torch.cat(
        [(params[k].grad if params[k].grad is not None else torch.zeros_like(params[k])).reshape(-1) for k in names]
    )
    comm.all_reduce(flat)
    offset = 0
    for k in names:
        size = params[k].numel()
        params[k].grad = flat[offset : offset + size].view_as(params[k]).clone()
        offset += size


def graph_parallel_worker(
    rank: int, world: int, comm: Comm, data: GraphData, spec: ModelSpec, train: TrainSpec, bounds: tuple[int, ...]
) -> WorkerRun:
    """Rank ``rank``'s training (see module docstring): snapshots (rank 0), losses, seconds and bytes per epoch."""
    torch.set_num_threads(1)
    dtype = data.x.dtype
    plan = HaloPlan(data, bounds, rank, dtype)
    rows = plan.rows
    names = param_names(spec)
    params = {k: v.clone().requires_grad_() for k, v in init_params(spec, train.seed, dtype).items()}
    opt = make_optimizer([params[k] for k in names], train)
    x = data.feature_rows(rows)
    local, y = data.train_rows(rows)
    n, d, p = data.n, spec.hidden, spec.dropout

    def epoch(e: int) -> float:
        h0 = input_layer(params, x)
        h = h0
        for l in range(1, spec.layers + 1):
            mask = data.row_mask(dropout_mask(train.seed, e, l, (n, d), p, dtype))
            z = h if mask is None else h * mask[rows]
            agg = plan.adj @ halo_exchange(z, comm, plan)
            h = layer_forward(spec, params, l, agg, h, h0)
        mask = data.row_mask(dropout_mask(train.seed, e, spec.layers + 1, (n, d), p, dtype))
        hm = h if mask is None else h * mask[rows]
        logits = hm @ params["out.W"] + params["out.b"]
        loss = loss_sum(logits[local], y, len(data.train))
        loss.backward()
        all_reduce_grads(comm, params, names)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return float(loss.detach())

    return run_epochs(comm, train, params, epoch, snapshots=rank == 0)
