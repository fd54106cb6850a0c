"""GNNPipe: layer-level pipeline parallelism over P real processes, the graph cut into K chunks.

Stage s (process s) owns the consecutive graph layers ``stage_layers(L, P)[s]`` over the *whole* graph (stage 0
also the input layer, stage P-1 the output layer and the loss). Each epoch the K chunks enter the pipeline in
the epoch's chunk order; stage s receives chunk c's layer input from stage s-1, runs its layers on c's rows and
sends c's output to stage s+1, so stages work on different chunks at once.

Fresh vs historical neighbours. Layer l on chunk c (position i in the order) aggregates ``A_hat[c rows, :] @ z``
where the rows of z from chunks at positions <= i are this epoch's (fresh) layer-(l-1) values and the rows of
later chunks are **historical**: the values of the last refresh, at most ``staleness`` epochs old
(``staleness = 0``: no history, those edges are dropped). The convergence techniques:

- warm-up: the first ``warmup`` epochs run with one chunk (no staleness: exact full-graph steps through the
  same stages and messages), which also fills the history;
- chunk order: fixed, shuffled per epoch, or alternate, so that the stale edges are not always the same ones;
- the stale-gradient switch: the gradient a chunk sends back across a stale edge is dropped, or *deferred*:
  kept and added to the fresh value of the same vertex and layer in the next epoch's backward.

Backward runs in reverse chunk order. Stage s receives the gradient of chunk c's output, calls autograd from
that chunk (retaining the epoch's graph) and sends the gradient of c's input to stage s-1; every later chunk
that read c's fresh values has already deposited its share (reverse order), so c's input gradient is complete.
Each stage steps its own parameters (Adam); nothing is all-reduced.

Messages per epoch: each of the P-1 stage boundaries carries every vertex once forward and once backward,
``message_width`` columns (h; GCNII: h and h0), so ``2 (P - 1) n width itemsize`` bytes
(:func:`.volume.gnnpipe_bytes`), counted by :class:`~workbench.distributed.comm.Comm`. With K = 1 this is
full-graph training step for step (tested to fp64 exactness).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from workbench.distributed.comm import Comm
from workbench.graphs.gnnpipe.data import GraphData, adj_rows
from workbench.graphs.gnnpipe.full import TrainSpec, WorkerRun, make_optimizer, run_epochs
from workbench.graphs.gnnpipe.models import (
    ModelSpec,
    dropout_mask,
    init_params,
    input_layer,
    layer_forward,
    loss_sum,
    param_names,
    stage_layers,
)
from workbench.graphs.gnnpipe.partition import epoch_order

__all__ = ["PipeSpec", "stage_param_names", "pipeline_worker"]


@dataclass(frozen=True)
class PipeSpec:
    """The schedule: K chunks (``bounds`` of the contiguous numbering), chunk order, staleness bound, warm-up
    epochs, and the stale-gradient treatment (drop | deferred)."""

    bounds: tuple[int, ...]
    order: str = "shuffled"
    staleness: int = 1
    warmup: int = 0
    stale_gradients: str = "drop"

    @property
    def chunks(self) -> int:
        return len(self.bounds) - 1


def stage_param_names(spec: ModelSpec, stages: int, stage: int) -> list[str]:
    """Parameters stage ``stage`` owns: its layers' (plus the input layer on the first, the output on the last)."""
    own = stage_layers(spec.layers, stages)[stage]
    names = []
    for name in param_names(spec):
        prefix = name.split(".")[0]
        if (prefix == "in" and stage == 0) or (prefix == "out" and stage == stages - 1):
            names.append(name)
        elif prefix.startswith("l") and int(prefix[1:]) in own:
            names.append(name)
    return names


class _Stage:
    """One stage's state across epochs: parameters, optimiser, history and deferred stale gradients."""

    def __init__(self, comm: Comm, data: GraphData, spec: ModelSpec, train: TrainSpec, pipe: PipeSpec) -> None:
        self.comm, self.data, self.spec, self.train, self.pipe = comm, data, spec, train, pipe
        self.s, self.P = comm.rank, comm.size
        self.first, self.last = self.s == 0, self.s == self.P - 1
        self.layers = stage_layers(spec.layers, self.P)[self.s]
        dtype = data.x.dtype
        self.dtype = dtype
        full = init_params(spec, train.seed, dtype)
        self.names = stage_param_names(spec, self.P, self.s)
        self.params = {k: full[k].clone().requires_grad_() for k in self.names}
        self.opt = make_optimizer([self.params[k] for k in self.names], train)
        n, d = data.n, spec.hidden
        self.inputs = [l - 1 for l in self.layers]  # index j of the layer inputs h_j this stage aggregates
        self.hist = {j: torch.zeros(n, d, dtype=dtype) for j in self.inputs}
        self.deferred = {j: torch.zeros(n, d, dtype=dtype) for j in self.inputs}
        self.have_deferred = False
        self.cache: dict[tuple[int, ...], tuple] = {}

    def blocks(self, bounds: tuple[int, ...]):
        """Per chunk: its row slice, A_hat rows, feature rows (first stage), training rows (last stage)."""
        if bounds not in self.cache:
            out = []
            for c in range(len(bounds) - 1):
                rows = slice(bounds[c], bounds[c + 1])
                adj = adj_rows(self.data.adj, rows, self.dtype)
                x = self.data.feature_rows(rows) if self.first else None
                out.append((rows, adj, x, *self.data.train_rows(rows)))
            self.cache[bounds] = tuple(out)
        return self.cache[bounds]

    # ------------------------------------------------------------------------------------------ one epoch
    def epoch(self, epoch: int) -> float:
        """Train epoch ``epoch``: forward every chunk in the epoch's order, backward in reverse, one Adam step,
        then refresh the history; returns the loss (last stage) or NaN."""
        st = self.begin(epoch)
        self.forward(st)
        self.backward(st)
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        self.update_history(st, epoch)
        return float(sum(v.detach() for v in st.losses.values())) if self.last else float("nan")

    def begin(self, epoch: int) -> _EpochState:
        """The epoch's chunking, order, dropout masks and switches (warm-up: one chunk, no staleness)."""
        spec, pipe, data = self.spec, self.pipe, self.data
        n, d, p = data.n, spec.hidden, spec.dropout
        warm = epoch < pipe.warmup
        bounds = (0, n) if warm else pipe.bounds
        order = [0] if warm else epoch_order(len(bounds) - 1, pipe.order, self.train.seed, epoch)
        masks = {l: data.row_mask(dropout_mask(self.train.seed, epoch, l, (n, d), p, self.dtype)) for l in self.layers}
        out_mask = (
            data.row_mask(dropout_mask(self.train.seed, epoch, spec.layers + 1, (n, d), p, self.dtype))
            if self.last
            else None
        )
        use_hist = pipe.staleness >= 1
        deferred = pipe.stale_gradients == "deferred" and use_hist and not warm
        return _EpochState(warm, order, self.blocks(bounds), masks, out_mask, use_hist, deferred)

    def historical(self, st: _EpochState, j: int, c: int) -> torch.Tensor:
        """Chunk c's dropped historical h_j rows (zeros without history; a leaf when stale gradients are deferred)."""
        if (j, c) not in st.zhist:
            rows = st.blocks[c][0]
            if not st.use_hist:
                st.zhist[(j, c)] = torch.zeros(rows.stop - rows.start, self.spec.hidden, dtype=self.dtype)
            else:
                h = self.hist[j][rows]
                if st.deferred:
                    h = h.clone().requires_grad_()
                    st.hist_leaves[(j, c)] = h
                m = st.rows_mask(j + 1, rows)
                st.zhist[(j, c)] = h if m is None else h * m
        return st.zhist[(j, c)]

    def forward(self, st: _EpochState) -> None:
        """Every chunk through this stage's layers in the epoch's order: receive, aggregate fresh rows of chunks
        already computed and historical rows of later ones, send the output on (or compute the loss)."""
        spec, d, w = self.spec, self.spec.hidden, self.spec.message_width
        K, pending = len(st.blocks), []
        for i, c in enumerate(st.order):
            rows, adj, x, _, _ = st.blocks[c]
            if self.first:
                cur = input_layer(self.params, x)
                h0 = cur
            else:
                buf = torch.empty(rows.stop - rows.start, w, dtype=self.dtype)
                self.comm.p2p(recvs=[(buf, self.s - 1)]).wait()
                leaf = buf.requires_grad_()
                st.leaves[c] = leaf
                cur = leaf[:, :d]
                h0 = leaf[:, d:] if spec.kind == "gcnii" else None
            for l in self.layers:
                j = l - 1
                st.hfresh[(j, c)] = cur
                m = st.rows_mask(l, rows)
                st.zfresh[(j, c)] = cur if m is None else cur * m
                parts = [st.zfresh[(j, c2)] if st.pos[c2] <= i else self.historical(st, j, c2) for c2 in range(K)]
                z = parts[0] if K == 1 else torch.cat(parts, dim=0)  # (n, d) in row order
                agg = adj @ z  # (rows, d)
                cur = layer_forward(spec, self.params, l, agg, cur, h0)
            if self.last:
                _, _, _, local, y = st.blocks[c]
                hm = cur if st.out_mask is None else cur * st.out_mask[rows]
                logits = hm @ self.params["out.W"] + self.params["out.b"]  # all rows, as full-graph training
                st.losses[c] = loss_sum(logits[local], y, len(self.data.train))
            else:
                out = torch.cat([cur, h0], dim=1) if spec.kind == "gcnii" else cur
                st.outs[c] = out
                send = out.detach().contiguous()
                pending.append((self.comm.p2p(sends=[(send, self.s + 1)]), send))
        for handle, _ in pending:
            handle.wait()

    def backward(self, st: _EpochState) -> None:
        """Chunks in reverse order: receive the output gradient (or start from the loss), add deferred stale
        gradients, run autograd from the chunk and send its input gradient back."""
        pending = []
        for c in reversed(st.order):
            rows = st.blocks[c][0]
            tensors: list[torch.Tensor] = []
            grads: list[torch.Tensor] = []
            if self.last:
                tensors.append(st.losses[c])
                grads.append(torch.ones((), dtype=self.dtype))
            else:
                g = torch.empty(rows.stop - rows.start, self.spec.message_width, dtype=self.dtype)
                self.comm.p2p(recvs=[(g, self.s + 1)]).wait()
                tensors.append(st.outs[c])
                grads.append(g)
            if st.deferred and self.have_deferred:
                for j in self.inputs:
                    tensors.append(st.hfresh[(j, c)])
                    grads.append(self.deferred[j][rows])
            torch.autograd.backward(tensors, grads, retain_graph=True)
            if not self.first:
                leaf = st.leaves[c]
                grad = leaf.grad if leaf.grad is not None else torch.zeros_like(leaf)
                send = grad.contiguous()
                pending.append((self.comm.p2p(sends=[(send, self.s - 1)]), send))
        for handle, _ in pending:
            handle.wait()

    def update_history(self, st: _EpochState, epoch: int) -> None:
        """Keep the gradients that crossed stale edges (deferred) and refresh the history every ``staleness``
        epochs (and after warm-up epochs)."""
        n, d = self.data.n, self.spec.hidden
        if st.deferred:
            for j in self.inputs:
                new = torch.zeros(n, d, dtype=self.dtype)
                for (jj, c), leaf in st.hist_leaves.items():
                    if jj == j and leaf.grad is not None:
                        new[st.blocks[c][0]] = leaf.grad
                self.deferred[j] = new
            self.have_deferred = True
        else:
            self.have_deferred = False
        if st.use_hist and (st.warm or epoch % self.pipe.staleness == 0):
            for j in self.inputs:
                self.hist[j] = torch.cat([st.hfresh[(j, c)].detach() for c in range(len(st.blocks))], dim=0)


class _EpochState:
    """One epoch of one stage: the schedule (chunks, order, masks, switches) and the tensors it builds, keyed
    by (layer input j, chunk): fresh dropped rows, fresh rows in the graph, historical rows and their leaves."""

    def __init__(self, warm, order, blocks, masks, out_mask, use_hist: bool, deferred: bool) -> None:  # noqa: D107
        self.warm, self.order, self.blocks, self.masks, self.out_mask = warm, order, blocks, masks, out_mask
        self.use_hist, self.deferred = use_hist, deferred
        self.pos = {c: i for i, c in enumerate(order)}
        self.zfresh: dict[tuple[int, int], torch.Tensor] = {}  # (j, chunk) -> this epoch's dropped h_j rows
        self.hfresh: dict[tuple[int, int], torch.Tensor] = {}  # (j, chunk) -> this epoch's h_j rows (in the graph)
        self.zhist: dict[tuple[int, int], torch.Tensor] = {}
        self.hist_leaves: dict[tuple[int, int], torch.Tensor] = {}
        self.outs: dict[int, torch.Tensor] = {}
        self.leaves: dict[int, torch.Tensor] = {}
        self.losses: dict[int, torch.Tensor] = {}

    def rows_mask(self, l: int, rows: slice) -> torch.Tensor | None:
        m = self.masks[l]
        return None if m is None else m[rows]


def pipeline_worker(
    rank: int, world: int, comm: Comm, data: GraphData, spec: ModelSpec, train: TrainSpec, pipe: PipeSpec
) -> WorkerRun:
    """The body of stage ``rank`` (see module docstring). Returns its parameter snapshots, per-epoch losses
    (last stage), seconds and bytes sent per epoch."""
    torch.set_num_threads(1)
    stage = _Stage(comm, data, spec, train, pipe)
    return run_epochs(comm, train, stage.params, stage.epoch, snapshots=True)
