"""Feature standardisation and mini-batches of graphs.

:class:`Normalizer` is fitted on the training samples only: the continuous node columns (T1/T2, errors,
topological index) are standardised; the globals and the Liu counts are ``log1p``-ed, then standardised (the
authors feed raw SI values, e.g. T1 ~ 1e-4 s; the brief leaves normalisation to us). One-hot columns are kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from workbench.quantum.quest.dataset import QuestDataset
from workbench.quantum.quest.encoding import CONTINUOUS_COLUMNS, CircuitGraph, EncodedBatch
from workbench.quantum.quest.net import GraphBatch

__all__ = ["Normalizer", "NormalizedSet", "graphs_batch", "encoded_batch"]


_COLUMNS = (
    slice(CONTINUOUS_COLUMNS[0], CONTINUOUS_COLUMNS[-1] + 1)
    if CONTINUOUS_COLUMNS == tuple(range(CONTINUOUS_COLUMNS[0], CONTINUOUS_COLUMNS[-1] + 1))
    else list(CONTINUOUS_COLUMNS)
)


def _segments(ptr: Tensor, indices: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Rows of the segments ``ptr[i]:ptr[i+1]`` for each ``i`` in ``indices``, concatenated: ``(row ids,
    segment lengths, offset of each segment in the concatenation)``."""
    starts = ptr[indices]
    counts = ptr[indices + 1] - starts
    offsets = torch.cumsum(counts, 0) - counts
    ids = torch.arange(int(counts.sum())) - torch.repeat_interleave(offsets - starts, counts)
    return ids, counts, offsets


def _moments(x: Tensor) -> tuple[Tensor, Tensor]:
    mean = x.mean(0)
    std = x.std(0, unbiased=False)
    return mean, torch.where(std > 1e-8, std, torch.ones_like(std))


@dataclass(frozen=True, eq=False)
class Normalizer:
    """Means and standard deviations: ``node`` over :data:`CONTINUOUS_COLUMNS`, ``globals`` and ``liu`` after
    ``log1p``."""

    node_mean: Tensor
    node_std: Tensor
    global_mean: Tensor
    global_std: Tensor
    liu_mean: Tensor
    liu_std: Tensor

    @classmethod
    def fit(cls, data: QuestDataset, indices: Tensor) -> Normalizer:
        nodes, _, _ = _segments(data.node_ptr, indices)
        cols = list(CONTINUOUS_COLUMNS)
        nm, ns = _moments(data.x[nodes][:, cols].double())
        gm, gs = _moments(torch.log1p(data.globals[indices].double()))
        lm, ls = _moments(torch.log1p(data.liu[indices].double()))
        return cls(nm.float(), ns.float(), gm.float(), gs.float(), lm.float(), ls.float())

    def nodes(self, x: Tensor) -> Tensor:
        out = x.clone()
        cols = _COLUMNS  # the continuous columns are one contiguous run: a slice, not a gather
        out[:, cols] = (x[:, cols] - self.node_mean) / self.node_std
        return out

    def globals(self, g: Tensor) -> Tensor:
        return (torch.log1p(g) - self.global_mean) / self.global_std

    def liu(self, v: Tensor) -> Tensor:
        return (torch.log1p(v) - self.liu_mean) / self.liu_std

    def to_dict(self) -> dict[str, Tensor]:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, d: dict[str, Tensor]) -> Normalizer:
        return cls(**d)


@dataclass(frozen=True, eq=False)
class NormalizedSet:
    """A whole dataset normalised once, cut into :class:`GraphBatch` es by sample indices."""

    x: Tensor
    node_ptr: Tensor
    edges: Tensor
    edge_ptr: Tensor
    globals: Tensor
    liu: Tensor
    target: Tensor

    @classmethod
    def build(cls, data: QuestDataset, norm: Normalizer) -> NormalizedSet:
        return cls(
            norm.nodes(data.x),
            data.node_ptr,
            data.edges,
            data.edge_ptr,
            norm.globals(data.globals),
            norm.liu(data.liu),
            data.pst.float(),
        )

    def batch(self, indices: Tensor) -> GraphBatch:
        node_ids, counts, offsets = _segments(self.node_ptr, indices)  # offsets: first node of each graph
        edge_ids, e_counts, _ = _segments(self.edge_ptr, indices)
        graph_of_node = torch.repeat_interleave(torch.arange(len(indices)), counts)
        shift = torch.repeat_interleave(offsets, e_counts)
        return GraphBatch(
            self.x[node_ids], self.edges[:, edge_ids] + shift, graph_of_node, self.globals[indices], self.liu[indices]
        )


def graphs_batch(graphs: list[CircuitGraph], norm: Normalizer) -> GraphBatch:
    """One normalised batch of freshly encoded graphs (for prediction)."""
    counts = torch.tensor([g.x.shape[0] for g in graphs])
    offsets = torch.cumsum(counts, 0) - counts
    x = torch.from_numpy(np.concatenate([g.x for g in graphs], axis=0))
    edges = torch.cat([torch.from_numpy(g.edges) + int(o) for g, o in zip(graphs, offsets)], dim=1)
    batch = torch.repeat_interleave(torch.arange(len(graphs)), counts)
    glob = torch.from_numpy(np.stack([g.globals for g in graphs]))
    liu = torch.from_numpy(np.stack([g.liu for g in graphs]))
    return GraphBatch(norm.nodes(x), edges, batch, norm.globals(glob), norm.liu(liu))


def encoded_batch(enc: EncodedBatch, norm: Normalizer) -> GraphBatch:
    """One normalised batch of a stacked :class:`~workbench.quantum.quest.encoding.EncodedBatch` (equal to
    :func:`graphs_batch` of its graphs: the same tensors, with no per-graph work)."""
    sizes = torch.from_numpy(np.diff(enc.node_ptr))
    batch = torch.repeat_interleave(torch.arange(len(enc)), sizes)
    return GraphBatch(
        norm.nodes(torch.from_numpy(enc.x)),
        torch.from_numpy(enc.edges),
        batch,
        norm.globals(torch.from_numpy(enc.globals)),
        norm.liu(torch.from_numpy(enc.liu)),
    )
