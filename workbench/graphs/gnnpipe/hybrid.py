"""The hybrid of GNNPipe and graph parallelism: S pipeline stages x G graph-parallel ranks per stage, P = S G
real processes (gloo).

Global rank ``r = s G + g`` is rank g of stage s. Stage s owns the consecutive graph layers
``stage_layers(L, S)[s]`` (stage 0 also the input layer, stage S-1 the output layer and the loss), as a GNNPipe
stage does (:mod:`.pipeline`); inside the stage its G ranks split the vertices into the G contiguous parts of a
graph-parallel cut (the same parts in every stage) and run the stage's layers as graph parallelism does
(:mod:`.graph_parallel`): per layer the dropped layer input of the halo is exchanged inside the stage's group
(:func:`.graph_parallel.halo_exchange`, gradients back in the backward). Between stages, rank (s, g) sends its
part's layer output (h; GCNII: h and h0) to rank (s+1, g) and receives its gradient back. After the backward,
each stage's G ranks all-reduce the gradients of the stage's parameters and take the same Adam step.

One chunk per epoch (K = 1): no historical embeddings and no staleness, so this is full-graph training up to the
order of floating-point sums (tested <= 1e-12 in float64); G = 1 is GNNPipe with K = 1, S = 1 graph
parallelism. (Pipelining K > 1 chunks through the hybrid's stages is not implemented.)

Bytes per epoch (sent, all ranks; :func:`.volume.hybrid_bytes`): the S-1 stage boundaries carry every vertex once
each way, ``2 (S - 1) n width itemsize``; every layer exchanges the G-way halo H_G each way,
``2 L H_G d itemsize``; and stage s's group all-reduces its B_s parameter bytes, a ring of counted
point-to-point steps: ``sum_s 2 (G - 1) B_s``.
"""

from __future__ import annotations

import torch

from workbench.distributed.comm import Comm
from workbench.graphs.gnnpipe.data import GraphData
from workbench.graphs.gnnpipe.full import TrainSpec, WorkerRun, make_optimizer, run_epochs
from workbench.graphs.gnnpipe.graph_parallel import HaloPlan, all_reduce_grads, halo_exchange
from workbench.graphs.gnnpipe.models import (
    ModelSpec,
    dropout_mask,
    init_params,
    input_layer,
    layer_forward,
    loss_sum,
    stage_layers,
)
from workbench.graphs.gnnpipe.pipeline import stage_param_names

__all__ = ["check_grid", "stage_param_counts", "hybrid_worker"]


def check_grid(workers: int, stages: int, layers: int) -> int:
    """G, the graph-parallel ranks per stage, of ``stages`` x G = ``workers``.

    Raises ValueError (naming the value and the rule) when ``stages`` does not divide ``workers`` or a stage would
    get no layer (``stages`` > ``layers``).

    >>> check_grid(4, 2, 8)
    2
    """
    if not 1 <= stages <= layers:
        raise ValueError(
            f"stages={stages} is out of range: valid range is 1..{layers} (the layers; a stage needs a layer)"
        )
    if workers % stages:
        divisors = [s for s in range(1, min(workers, layers) + 1) if workers % s == 0]
        raise ValueError(
            f"stages={stages} does not divide workers={workers}: the hybrid runs stages x G graph-parallel "
            f"ranks = workers, so valid stages are {', '.join(map(str, divisors))}"
        )
    return workers // stages


def _param_numel(spec: ModelSpec, name: str) -> int:
    d = spec.hidden
    return {"in.W": spec.in_dim * d, "in.b": d, "out.W": d * spec.classes, "out.b": spec.classes}.get(
        name, d * d if name.endswith(".W") else d
    )


def stage_param_counts(spec: ModelSpec, stages: int) -> list[int]:
    """Parameters (elements) each of ``stages`` stages owns (:func:`.pipeline.stage_param_names`): the B_s of the
    hybrid's per-stage all-reduce, in elements (times itemsize for bytes)."""
    return [sum(_param_numel(spec, k) for k in stage_param_names(spec, stages, s)) for s in range(stages)]


def hybrid_worker(
    rank: int,
    world: int,
    comm: Comm,
    data: GraphData,
    spec: ModelSpec,
    train: TrainSpec,
    bounds: tuple[int, ...],
    stages: int,
) -> WorkerRun:
    """Rank ``rank`` = (stage ``rank // G``, part ``rank % G``) of the hybrid (see module docstring).

    ``data``: renumbered so that part g is rows ``bounds[g]:bounds[g+1]`` (G = len(bounds) - 1 parts);
    ``world`` must equal ``stages * G``. Returns the stage's parameters, snapshots (part 0 of each stage; others
    empty), per-epoch losses (last stage: its part's share), seconds and bytes sent per epoch.
    """
    torch.set_num_threads(1)
    G = len(bounds) - 1
    if stages * G != world:
        raise ValueError(f"stages={stages} x parts={G} != workers={world}: the hybrid needs stages x G = workers")
    s, g = divmod(rank, G)
    group = comm.split([list(range(t * G, (t + 1) * G)) for t in range(stages)])  # stage s's G ranks (all-reduce)
    pipe = comm.split([list(range(h, world, G)) for h in range(G)], collective=False)  # part g across stages
    first, last = s == 0, s == stages - 1
    dtype = data.x.dtype
    plan = HaloPlan(data, bounds, g, dtype)
    rows, own = plan.rows, plan.own
    layers = stage_layers(spec.layers, stages)[s]
    names = stage_param_names(spec, stages, s)
    full = init_params(spec, train.seed, dtype)
    params = {k: full[k].clone().requires_grad_() for k in names}
    opt = make_optimizer([params[k] for k in names], train)
    x = data.feature_rows(rows) if first else None
    local, y = data.train_rows(rows)
    n, d, w, p = data.n, spec.hidden, spec.message_width, spec.dropout

    def epoch(e: int) -> float:
        # ---------------------------------------------------------------- forward through this stage's layers
        if first:
            h0 = input_layer(params, x)  # (own, d)
            h = h0
        else:
            buf = torch.empty(own, w, dtype=dtype)
            pipe.p2p(recvs=[(buf, s - 1)]).wait()
            leaf = buf.requires_grad_()
            h = leaf[:, :d]
            h0 = leaf[:, d:] if spec.kind == "gcnii" else None
        for l in layers:
            mask = data.row_mask(dropout_mask(train.seed, e, l, (n, d), p, dtype))
            z = h if mask is None else h * mask[rows]  # (own, d)
            agg = plan.adj @ halo_exchange(z, group, plan)  # (own, d)
            h = layer_forward(spec, params, l, agg, h, h0)
        # ---------------------------------------------------------------- loss, or the boundary both ways
        if last:
            mask = data.row_mask(dropout_mask(train.seed, e, spec.layers + 1, (n, d), p, dtype))
            hm = h if mask is None else h * mask[rows]
            logits = hm @ params["out.W"] + params["out.b"]  # (own, C)
            loss = loss_sum(logits[local], y, len(data.train))
            loss.backward()
            value = float(loss.detach())
        else:
            out = torch.cat([h, h0], dim=1) if spec.kind == "gcnii" else h  # (own, w)
            send = out.detach().contiguous()
            grad = torch.empty(own, w, dtype=dtype)
            handle = pipe.p2p(sends=[(send, s + 1)])
            pipe.p2p(recvs=[(grad, s + 1)]).wait()
            handle.wait()
            torch.autograd.backward([out], [grad])
            value = float("nan")
        if not first:
            gin = leaf.grad if leaf.grad is not None else torch.zeros_like(leaf)
            pipe.p2p(sends=[(gin.contiguous(), s - 1)]).wait()
        # ---------------------------------------------------------------- the stage's gradient all-reduce
        all_reduce_grads(group, params, names)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return value

    return run_epochs(comm, train, params, epoch, snapshots=g == 0)
