"""The slow, obvious GNNPipe: one process, whole-graph tensors, layer by layer over the whole graph.

No stages, no messages, no per-chunk autograd: for layer l and chunk c at position i of the epoch's order the
input is ``M_i * z_fresh + (1 - M_i) * z_hist`` with ``M_i`` the 0/1 row mask of the chunks at positions <= i,
and chunk c's output rows are ``layer(A_hat[c rows] @ input)`` (scipy row slices, no per-chunk concatenation). One backward of the summed loss (plus
``<h_j, G_j>`` for deferred stale gradients G_j) gives the gradients. :mod:`.pipeline` must reproduce its
parameters (the schedule's semantics, tested to fp64 rounding).
"""

from __future__ import annotations

import torch

from workbench.graphs.gnnpipe.data import GraphData
from workbench.graphs.gnnpipe.full import TrainSpec, make_optimizer
from workbench.graphs.gnnpipe.models import ModelSpec, dropout_mask, init_params, input_layer, loss_sum, param_names
from workbench.graphs.gnnpipe.partition import epoch_order
from workbench.graphs.gnnpipe.pipeline import PipeSpec

__all__ = ["reference_gnnpipe"]


def reference_gnnpipe(data: GraphData, spec: ModelSpec, train: TrainSpec, pipe: PipeSpec) -> dict[str, torch.Tensor]:
    """Final parameters of GNNPipe's schedule simulated in one process (``data`` in the chunks' contiguous numbering)."""
    dtype = data.x.dtype
    n, d, L = data.n, spec.hidden, spec.layers
    from workbench.graphs.gnnpipe.data import adj_rows

    row_blocks: dict[tuple[int, int], torch.Tensor] = {}
    x = data.x
    params = {k: v.clone().requires_grad_() for k, v in init_params(spec, train.seed, dtype).items()}
    opt = make_optimizer([params[k] for k in param_names(spec)], train)
    hist = [torch.zeros(n, d, dtype=dtype) for _ in range(L)]  # hist[j]: historical h_j, j = 0..L-1
    deferred = [torch.zeros(n, d, dtype=dtype) for _ in range(L)]
    have_deferred = False
    y_all = data.y
    for epoch in range(train.epochs):
        warm = epoch < pipe.warmup
        bounds = (0, n) if warm else pipe.bounds
        K = len(bounds) - 1
        order = [0] if warm else epoch_order(K, pipe.order, train.seed, epoch)
        use_hist = pipe.staleness >= 1
        defer = pipe.stale_gradients == "deferred" and use_hist and not warm
        leaves = [hist[j].clone().requires_grad_(defer) for j in range(L)]
        h0 = input_layer(params, x)
        h = h0
        hs = []
        for l in range(1, L + 1):
            hs.append(h)
            m = data.row_mask(dropout_mask(train.seed, epoch, l, (n, d), spec.dropout, dtype))
            z_fresh = h if m is None else h * m
            hist_l = leaves[l - 1] if m is None else leaves[l - 1] * m
            z_hist = hist_l if use_hist else torch.zeros(n, d, dtype=dtype)
            out = torch.zeros(n, d, dtype=dtype)
            seen = torch.zeros(n, 1, dtype=dtype)
            for c in order:
                lo, hi = bounds[c], bounds[c + 1]
                seen = seen.clone()
                seen[lo:hi] = 1.0
                mixed = seen * z_fresh + (1 - seen) * z_hist
                if (lo, hi) not in row_blocks:
                    row_blocks[(lo, hi)] = adj_rows(data.adj, slice(lo, hi), dtype).to_sparse_coo()
                agg = row_blocks[(lo, hi)] @ mixed
                if spec.kind == "gcn":
                    conv = agg @ params[f"l{l}.W"] + params[f"l{l}.b"]
                    rows = h[lo:hi] + torch.relu(torch.nn.functional.layer_norm(conv, (d,)))
                else:
                    beta = spec.beta(l)
                    s = (1.0 - spec.alpha) * agg + spec.alpha * h0[lo:hi]
                    rows = torch.relu((1.0 - beta) * s + beta * (s @ params[f"l{l}.W"]))
                out = out.index_put((torch.arange(lo, hi),), rows)
            h = out
        m = data.row_mask(dropout_mask(train.seed, epoch, L + 1, (n, d), spec.dropout, dtype))
        logits = (h if m is None else h * m) @ params["out.W"] + params["out.b"]
        loss = loss_sum(logits[data.train], y_all[data.train], len(data.train))
        if defer and have_deferred:
            loss = loss + sum((hs[j] * deferred[j]).sum() for j in range(L))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if defer:
            deferred = [leaf.grad if leaf.grad is not None else torch.zeros(n, d, dtype=dtype) for leaf in leaves]
            have_deferred = True
        else:
            have_deferred = False
        if use_hist and (warm or epoch % pipe.staleness == 0):
            hist = [t.detach().clone() for t in hs]
    return {k: v.detach().clone() for k, v in params.items()}
