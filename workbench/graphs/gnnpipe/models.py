"""Deep GCN and GCNII as pure functions of a parameter dict: the layers every execution mode shares.

Architecture (the brief's "deep GNNs (GCNII or deep residual GCNs, 16-64 layers)"; the paper's own text was not
readable, so depth and the GCNII hyper-parameters follow GCNII's Cora setting, Chen et al. ICML 2020):

    h0 = relu(x W_in + b_in)                                           input layer   (n, f) -> (n, d)
    gcn   layer l: h_l = h_{l-1} + relu(LN(A_hat drop_l(h_{l-1}) W_l + b_l))     (residual deep GCN: PyG GCNConv in
                   the "res" block of DeepGCNs, Li et al. ICCV 2019 = PyG DeepGCNLayer(block="res"): conv, norm,
                   activation, identity skip; LN: layer normalisation over the d features of each row without
                   learned scale or shift, row-local, so every mode computes it on the rows it owns)
    gcnii layer l: s = (1 - alpha) A_hat drop_l(h_{l-1}) + alpha h0
                   h_l = relu((1 - beta_l) s + beta_l s W_l),  beta_l = ln(lambda / l + 1)   (PyG GCN2Conv)
    logits = drop_{L+1}(h_L) W_out + b_out                             output layer  (n, d) -> (n, C)

x is kept sparse (bag-of-words rows) and gets no dropout, so the input layer is one sparse product (the one
departure from GCNII's recipe, which drops input features too). Dropout masks are a pure function of (seed, epoch, position): every process draws the same full (n, width) mask
and takes its rows, so a pipelined or partitioned run sees exactly the masks full-graph training sees.
The loss is ``sum of cross-entropies over the training nodes / number of training nodes`` in every mode (the
same summation, so K = 1 can be bit-identical).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

__all__ = [
    "ModelSpec",
    "init_params",
    "param_names",
    "stage_layers",
    "layer_forward",
    "dropout_mask",
    "forward_full",
    "input_layer",
    "loss_sum",
    "accuracy",
]


@dataclass(frozen=True)
class ModelSpec:
    """kind (gcn | gcnii), layers L, hidden d, in_dim f, classes C, alpha, lam, dropout p."""

    kind: str
    layers: int
    hidden: int
    in_dim: int
    classes: int
    alpha: float = 0.1
    lam: float = 0.5
    dropout: float = 0.5

    @property
    def message_width(self) -> int:
        """Columns one vertex sends between pipeline stages: h (gcn), h and h0 (gcnii)."""
        return self.hidden * (2 if self.kind == "gcnii" else 1)

    def beta(self, l: int) -> float:
        return math.log(self.lam / l + 1.0)


def param_names(spec: ModelSpec) -> list[str]:
    """Parameter names in a fixed order (the order of gradient all-reduce and of comparisons)."""
    names = ["in.W", "in.b"]
    for l in range(1, spec.layers + 1):
        names += [f"l{l}.W"] + ([f"l{l}.b"] if spec.kind == "gcn" else [])
    return names + ["out.W", "out.b"]


def init_params(spec: ModelSpec, seed: int, dtype: torch.dtype) -> dict[str, torch.Tensor]:
    """Glorot-uniform weights, zero biases, drawn in :func:`param_names` order from one seeded generator."""
    gen = torch.Generator().manual_seed(seed)
    shapes = {
        "in.W": (spec.in_dim, spec.hidden),
        "in.b": (spec.hidden,),
        "out.W": (spec.hidden, spec.classes),
        "out.b": (spec.classes,),
    }
    out = {}
    for name in param_names(spec):
        shape = shapes.get(name, (spec.hidden, spec.hidden) if name.endswith(".W") else (spec.hidden,))
        if len(shape) == 2:
            bound = math.sqrt(6.0 / (shape[0] + shape[1]))
            t = (torch.rand(shape, generator=gen, dtype=torch.float64) * 2 - 1) * bound
        else:
            t = torch.zeros(shape, dtype=torch.float64)
        out[name] = t.to(dtype)
    return out


def stage_layers(layers: int, stages: int) -> list[range]:
    """Graph layers 1..L split into ``stages`` consecutive blocks, sizes differing by at most one."""
    if not 1 <= stages <= layers:
        raise ValueError(f"workers={stages} is out of range: valid range is 1..{layers} (a stage needs a layer)")
    bounds = [1 + (layers * s) // stages for s in range(stages + 1)]
    return [range(bounds[s], bounds[s + 1]) for s in range(stages)]


def dropout_mask(
    seed: int, epoch: int, position: int, shape: tuple[int, int], p: float, dtype: torch.dtype
) -> torch.Tensor | None:
    """The scaled keep-mask (values 0 or 1/(1-p)) of ``position`` (0: input, l: layer l, L+1: output) at ``epoch``;
    None when p == 0. A pure function of its arguments."""
    if p <= 0.0:
        return None
    gen = torch.Generator().manual_seed((seed * 1_000_003 + epoch) * 1_009 + position)
    keep = torch.rand(shape, generator=gen, dtype=torch.float32) >= p
    return keep.to(dtype) / (1.0 - p)


def input_layer(params: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """``h0 = relu(x W_in + b_in)`` for some rows ``x`` (sparse COO or dense)."""
    xw = torch.sparse.mm(x, params["in.W"]) if x.is_sparse else x @ params["in.W"]
    return torch.relu(xw + params["in.b"])


def layer_forward(
    spec: ModelSpec,
    params: dict[str, torch.Tensor],
    l: int,
    agg: torch.Tensor,
    h_prev: torch.Tensor,
    h0: torch.Tensor | None,
) -> torch.Tensor:
    """Layer ``l`` on some rows: ``agg = A_hat[rows] @ drop_l(h_{l-1})`` (rows, d); ``h_prev``, ``h0``: the same rows."""
    if spec.kind == "gcn":  # residual: conv -> LN -> relu, added to the layer's input
        conv = agg @ params[f"l{l}.W"] + params[f"l{l}.b"]  # (rows, d)
        return h_prev + torch.relu(F.layer_norm(conv, (conv.shape[1],)))
    beta = spec.beta(l)
    s = (1.0 - spec.alpha) * agg + spec.alpha * h0
    return torch.relu((1.0 - beta) * s + beta * (s @ params[f"l{l}.W"]))


def _drop(t: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    return t if mask is None else t * mask


def forward_full(
    spec: ModelSpec,
    params: dict[str, torch.Tensor],
    adj: torch.Tensor,
    x: torch.Tensor,
    *,
    epoch: int = 0,
    seed: int = 0,
    train: bool = False,
) -> torch.Tensor:
    """Logits ``(n, C)`` of the whole graph (``adj``: sparse A_hat; ``x``: sparse or dense features).
    ``train``: apply dropout masks."""
    n, p = x.shape[0], spec.dropout if train else 0.0

    def mask(position: int, width: int):
        return dropout_mask(seed, epoch, position, (n, width), p, params["in.W"].dtype)

    h0 = input_layer(params, x)
    h = h0
    for l in range(1, spec.layers + 1):
        agg = adj @ _drop(h, mask(l, spec.hidden))
        h = layer_forward(spec, params, l, agg, h, h0)
    return _drop(h, mask(spec.layers + 1, spec.hidden)) @ params["out.W"] + params["out.b"]


def loss_sum(logits: torch.Tensor, y: torch.Tensor, n_train: int) -> torch.Tensor:
    """Sum of cross-entropies of ``logits`` rows against ``y`` divided by the global training count."""
    if logits.shape[0] == 0:
        return logits.sum() * 0.0
    return F.cross_entropy(logits, y, reduction="sum") / n_train


def accuracy(logits: torch.Tensor, y: torch.Tensor, index: torch.Tensor) -> float:
    """Share of ``index`` rows whose arg-max class equals ``y``."""
    if len(index) == 0:
        return float("nan")
    return float((logits[index].argmax(dim=1) == y[index]).double().mean())
