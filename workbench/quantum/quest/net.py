"""QuEst's graph transformer and its two baselines (authors' ``Simple_Model``, ``Global_Model``, ``Liu_Model``),
in plain torch.

:class:`TransformerConv` is the graph transformer layer of Shi et al. (2021) as torch-geometric's
``TransformerConv(d_in, d_out)`` computes it with one head, ``root_weight=True`` and no edge features::

    x_i' = W_skip x_i + sum_{j -> i} alpha_ij W_value x_j,
    alpha_ij = softmax_j( (W_query x_i) . (W_key x_j) / sqrt(d_out) )   over the edges j -> i

(a node without incoming edges keeps only ``W_skip x_i``; parallel edges count once each).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from workbench.quantum.quest.encoding import GLOBAL_FEATURES, LIU_FEATURES, NODE_FEATURES, PHYSICAL_COLUMN

#: the paper's global features (depth, width, rz, x, sx and two-qubit counts), the only globals the baselines read
PAPER_GLOBALS = 6

__all__ = [
    "GraphBatch",
    "TransformerConv",
    "QuestTransformer",
    "GlobalMLP",
    "LiuMLP",
    "MODELS",
    "ABLATIONS",
    "NOISE_COLUMNS",
    "NOISE_GLOBALS",
    "DURATION_COLUMN",
    "build_model",
    "mean_pool",
    "infer",
]


@dataclass(frozen=True, eq=False)
class GraphBatch:
    """Graphs stacked into one: ``x [N, 29]`` (normalised), ``edge_index [2, E]`` (global node indices),
    ``batch [N]`` graph of each node, ``globals [B, 8]``, ``liu [B, 110]`` (normalised)."""

    x: Tensor
    edge_index: Tensor
    batch: Tensor
    globals: Tensor
    liu: Tensor

    @property
    def num_graphs(self) -> int:
        return int(self.globals.shape[0])


def mean_pool(x: Tensor, batch: Tensor, num_graphs: int) -> Tensor:
    """Mean of ``x [N, d]`` over the nodes of each graph: ``[B, d]``."""
    sums = torch.zeros(num_graphs, x.shape[1], dtype=x.dtype, device=x.device).index_add_(0, batch, x)
    counts = torch.bincount(batch, minlength=num_graphs).clamp_min(1).to(x.dtype)
    return sums / counts[:, None]


class TransformerConv(nn.Module):
    """One-head graph transformer convolution (see the module docstring); ``[N, d_in] -> [N, d_out]``."""

    def __init__(self, d_in: int, d_out: int) -> None:
        super().__init__()
        self.query, self.key, self.value = nn.Linear(d_in, d_out), nn.Linear(d_in, d_out), nn.Linear(d_in, d_out)
        self.skip = nn.Linear(d_in, d_out)
        self.scale = 1.0 / math.sqrt(d_out)

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        src, dst = edge_index[0], edge_index[1]
        n = x.shape[0]
        score = (self.query(x)[dst] * self.key(x)[src]).sum(-1) * self.scale
        peak = torch.full((n,), -math.inf, dtype=x.dtype, device=x.device)
        peak = peak.scatter_reduce(0, dst, score.detach(), reduce="amax", include_self=True)
        weight = torch.exp(score - peak[dst])
        total = torch.zeros(n, dtype=x.dtype, device=x.device).index_add_(0, dst, weight)
        alpha = weight / total[dst]
        messages = alpha[:, None] * self.value(x)[src]
        out = torch.zeros(n, messages.shape[1], dtype=x.dtype, device=x.device).index_add_(0, dst, messages)
        return out + self.skip(x)


def _mlp(*sizes: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class QuestTransformer(nn.Module):
    """``layers`` x TransformerConv(30->30)+ReLU, mean pool, concat MLP(9->12->12) of the globals, then
    MLP(42->128->128->1) (the paper's 24/6/36 widened by encoding versions 2 and 3's columns). Returns ``[B]``. ``drop_columns``: node-feature columns set to 0 (their standardised
    mean) before the first layer, for ablations."""

    def __init__(self, layers: int = 2, drop_columns: tuple[int, ...] = (), drop_globals: tuple[int, ...] = ()) -> None:
        super().__init__()
        self.drop_columns = list(drop_columns)
        self.drop_globals = list(drop_globals)
        self.convs = nn.ModuleList(TransformerConv(NODE_FEATURES, NODE_FEATURES) for _ in range(layers))
        self.global_mlp = nn.Sequential(nn.Linear(GLOBAL_FEATURES, 12), nn.ReLU(), nn.Linear(12, 12), nn.ReLU())
        self.head = _mlp(NODE_FEATURES + 12, 128, 128, 1)

    def forward(self, g: GraphBatch) -> Tensor:
        x = g.x
        if self.drop_columns:
            x = x.clone()
            x[:, self.drop_columns] = 0
        glob = g.globals
        if self.drop_globals:
            glob = glob.clone()
            glob[:, self.drop_globals] = 0
        for conv in self.convs:
            x = torch.relu(conv(x, g.edge_index))  # [N, 29]
        pooled = mean_pool(x, g.batch, g.num_graphs)  # [B, 29]
        return self.head(torch.cat([pooled, self.global_mlp(glob)], dim=1)).squeeze(-1)  # [B]


class GlobalMLP(nn.Module):
    """Baseline: MLP(6->128->128->1) on the paper's global features only (depth, width, gate counts: no noise;
    the calibration sums of the workbench's encoding are the transformer's)."""

    def __init__(self) -> None:
        super().__init__()
        self.net = _mlp(PAPER_GLOBALS, 128, 128, 1)

    def forward(self, g: GraphBatch) -> Tensor:
        return self.net(g.globals[:, :PAPER_GLOBALS]).squeeze(-1)


class LiuMLP(nn.Module):
    """Baseline ("simple NN" of Liu and Zhou): MLP(116->128->128->1) on the paper's globals and per-qubit /
    per-pair gate counts (no noise)."""

    def __init__(self) -> None:
        super().__init__()
        self.net = _mlp(PAPER_GLOBALS + LIU_FEATURES, 128, 128, 1)

    def forward(self, g: GraphBatch) -> Tensor:
        return self.net(torch.cat([g.globals[:, :PAPER_GLOBALS], g.liu], dim=1)).squeeze(-1)


MODELS = ("transformer", "global", "liu")
#: the paper's ablation that matters most here: the transformer without the device-noise node features
ABLATIONS = ("no-noise",)
#: node-feature columns carrying device noise: T1/T2 of qubits a and b, gate error, readout P(0|1), P(1|0),
#: duration, relaxation infidelity, effective error and echo cost (the topological index is kept)
NOISE_COLUMNS = tuple(range(PHYSICAL_COLUMN, PHYSICAL_COLUMN + 10)) + (PHYSICAL_COLUMN + 11,)
#: global columns carrying device noise: the three calibration sums
NOISE_GLOBALS = (6, 7, 8)
#: the raw gate duration: the transformer reads it only through the relaxation columns (r and max(error, r)).
#: Fed raw, it let the model extrapolate wildly on a snapshot whose durations lie far outside the training
#: devices' (fake_toronto's 5-8 us cx, 35 standard deviations out: held-out RMSE 0.38 there, 0.01-0.07 elsewhere)
DURATION_COLUMN = PHYSICAL_COLUMN + 7


def build_model(name: str, layers: int = 2) -> nn.Module:
    """A fresh model: ``transformer`` (QuEst), ``global`` or ``liu`` (baselines), ``no-noise`` (ablation)."""
    if name == "transformer":
        return QuestTransformer(layers, (DURATION_COLUMN,))
    if name == "no-noise":
        return QuestTransformer(layers, NOISE_COLUMNS, NOISE_GLOBALS)
    if name == "global":
        return GlobalMLP()
    if name == "liu":
        return LiuMLP()
    raise ValueError(f"model={name!r} is unknown: valid models are {', '.join(MODELS + ABLATIONS)}")


def _linear_seq(seq: nn.Sequential, x: Tensor) -> Tensor:
    for layer in seq:
        x = F.linear(x, layer.weight, layer.bias) if isinstance(layer, nn.Linear) else torch.relu(x)
    return x


def _conv_fast(conv: TransformerConv, x: Tensor, src: Tensor, dst: Tensor) -> Tensor:
    """:meth:`TransformerConv.forward` op for op (bit-identical), without the sub-module calls."""
    n = x.shape[0]
    score = (
        F.linear(x, conv.query.weight, conv.query.bias)[dst] * F.linear(x, conv.key.weight, conv.key.bias)[src]
    ).sum(-1) * conv.scale
    peak = torch.full((n,), -math.inf, dtype=x.dtype, device=x.device)
    peak = peak.scatter_reduce(0, dst, score.detach(), reduce="amax", include_self=True)
    weight = torch.exp(score - peak[dst])
    total = torch.zeros(n, dtype=x.dtype, device=x.device).index_add_(0, dst, weight)
    alpha = weight / total[dst]
    messages = alpha[:, None] * F.linear(x, conv.value.weight, conv.value.bias)[src]
    out = torch.zeros(n, messages.shape[1], dtype=x.dtype, device=x.device).index_add_(0, dst, messages)
    return out + F.linear(x, conv.skip.weight, conv.skip.bias)


def infer(model: nn.Module, g: GraphBatch) -> Tensor:
    """``model(g)`` for prediction: the same operations in the same order (bit-identical, tested), without
    PyTorch's per-module call machinery (hooks, ~20 sub-module calls), which is most of the time for one small
    graph. Call under ``torch.inference_mode()``."""
    if isinstance(model, QuestTransformer):
        x, glob = g.x, g.globals
        if model.drop_columns:
            x = x.clone()
            x[:, model.drop_columns] = 0
        if model.drop_globals:
            glob = glob.clone()
            glob[:, model.drop_globals] = 0
        src, dst = g.edge_index[0], g.edge_index[1]
        for conv in model.convs:
            x = torch.relu(_conv_fast(conv, x, src, dst))
        pooled = mean_pool(x, g.batch, g.num_graphs)
        return _linear_seq(model.head, torch.cat([pooled, _linear_seq(model.global_mlp, glob)], dim=1)).squeeze(-1)
    if isinstance(model, GlobalMLP):
        return _linear_seq(model.net, g.globals[:, :PAPER_GLOBALS]).squeeze(-1)
    if isinstance(model, LiuMLP):
        return _linear_seq(model.net, torch.cat([g.globals[:, :PAPER_GLOBALS], g.liu], dim=1)).squeeze(-1)
    return model(g)
