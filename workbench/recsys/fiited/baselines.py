"""The embedding tables FIITED is compared with, each sized to the same memory budget.

Every table maps per-feature ids ``[B, F]`` to ``[B, F, dim]`` (what :class:`workbench.recsys.dlrm.DLRM`
consumes) and reports ``embedding_bytes``: the stored weights plus whatever index it needs to find a row,
counted the same way for all (4-byte floats, 4-byte row indices; the ids themselves, which every method
receives, are not counted). ``budget`` below is ``budget_fraction x (rows x dim x 4 B)``, the full table.

| name | what (source) | index counted |
|---|---|---|
| ``full`` | one ``dim``-vector per id (DLRM) | none |
| ``uniform`` | every id at ``floor(f * dim)`` dims (zero-padded to ``dim``) | none |
| ``row-prune`` | the most frequent ids keep full vectors, the rest share one out-of-vocabulary row per feature; frequencies counted on the training set in advance | 4 B per id |
| ``mixed-dim`` | ids bucketed by frequency rank (top 0.1 %, 1 %, 5 %, 20 %, 50 %, 100 %), bucket b at ``d_b = d (p_b / p_0)^alpha`` projected to ``d`` (Ginart et al., MD embeddings), alpha set by bisection to meet the budget | 4 B per id |
| ``hashing`` | the hashing trick: ``floor(f * rows)`` shared rows, ``row = hash(id) mod M`` (Weinberger et al.) | none |
| ``elem-prune`` | in-training element-wise magnitude pruning on FIITED's schedule, stored as CSR (4 B value + 1 B column per kept element, 4 B per row pointer). **Inferred stand-in** for the paper's unnamed "state-of-the-art in-training embedding pruning method" (only the abstracts were readable) | row pointers, column bytes |
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from workbench.recsys.fiited.vhpi import hash_keys

__all__ = [
    "BASELINES",
    "FullEmbedding",
    "UniformEmbedding",
    "RowPrunedEmbedding",
    "MixedDimEmbedding",
    "HashedEmbedding",
    "ElementPrunedEmbedding",
    "mixed_dims",
    "MD_BUCKETS",
]

BASELINES = ("full", "uniform", "row-prune", "mixed-dim", "hashing", "elem-prune")
MD_BUCKETS = (0.001, 0.01, 0.05, 0.2, 0.5, 1.0)  # cumulative shares of ids (by frequency rank) per bucket
FLOAT, INDEX = 4, 4


def _offsets(cards: tuple[int, ...]) -> torch.Tensor:
    return torch.tensor(np.concatenate([[0], np.cumsum(cards)[:-1]]), dtype=torch.int64)


def _table(rows: int, dim: int, gen: torch.Generator, std: float) -> nn.Embedding:
    emb = nn.Embedding(rows, dim, sparse=True)
    with torch.no_grad():
        emb.weight.copy_(torch.randn(rows, dim, generator=gen) * std)
    return emb


class _Base(nn.Module):
    def __init__(self, cards: tuple[int, ...], dim: int) -> None:
        super().__init__()
        self.cards, self.dim, self.rows = tuple(cards), dim, int(sum(cards))
        self.register_buffer("offsets", _offsets(cards), persistent=False)

    def global_rows(self, ids: torch.Tensor) -> torch.Tensor:
        return torch.as_tensor(ids) + self.offsets  # [B, F]

    def after_step(self, step: int) -> None:
        """Called after every optimizer step (in-training methods prune here)."""

    def dims(self) -> np.ndarray:
        """Dimension of every id's vector (global row order)."""
        return np.full(self.rows, self.dim)


class FullEmbedding(_Base):
    """One ``dim``-vector per id: the unpruned table every budget is a fraction of."""

    def __init__(self, cards, dim, gen, std=0.05) -> None:
        super().__init__(cards, dim)
        self.table = _table(self.rows, dim, gen, std)

    def forward(self, ids):
        return self.table(self.global_rows(ids))

    def embedding_bytes(self) -> int:
        return self.rows * self.dim * FLOAT


class UniformEmbedding(_Base):
    """Every id at ``small`` dimensions, zero-padded to ``dim`` (equivalent to a ``small``-wide table)."""

    def __init__(self, cards, dim, small, gen, std=0.05) -> None:
        super().__init__(cards, dim)
        self.small = small
        self.table = _table(self.rows, small, gen, std)

    def forward(self, ids):
        return F.pad(self.table(self.global_rows(ids)), (0, self.dim - self.small))

    def embedding_bytes(self) -> int:
        return self.rows * self.small * FLOAT

    def dims(self):
        return np.full(self.rows, self.small)


class RowPrunedEmbedding(_Base):
    """The ``keep`` most frequent ids keep full vectors; the others read their feature's shared OOV row."""

    def __init__(self, cards, dim, keep: np.ndarray, gen, std=0.05) -> None:
        super().__init__(cards, dim)
        kept = np.flatnonzero(keep)
        feature_of = np.repeat(np.arange(len(cards)), cards)
        remap = len(kept) + feature_of  # OOV row of each id's feature
        remap[kept] = np.arange(len(kept))
        self.kept = len(kept)
        self.register_buffer("remap", torch.from_numpy(remap.astype(np.int64)), persistent=False)
        self.table = _table(self.kept + len(cards), dim, gen, std)

    def forward(self, ids):
        return self.table(self.remap[self.global_rows(ids)])

    def embedding_bytes(self) -> int:
        return (self.kept + len(self.cards)) * self.dim * FLOAT + self.rows * INDEX

    def dims(self):
        out = np.zeros(self.rows, dtype=np.int64)
        out[self.remap.numpy() < self.kept] = self.dim
        return out


def mixed_dims(freq: np.ndarray, dim: int, budget: float) -> tuple[np.ndarray, np.ndarray, float]:
    """MD embedding plan: (bucket of each id, dims per bucket, alpha) meeting ``budget`` bytes if any alpha in
    0..8 does (else the smallest plan: 1 dim for all buckets below the top)."""
    order = np.argsort(-freq, kind="stable")
    n = freq.size
    bounds = [0, *[max(1, int(math.ceil(q * n))) for q in MD_BUCKETS]]
    bucket = np.empty(n, dtype=np.int64)
    means: Any = []  # per-bucket means, then their array
    for b, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):
        bucket[order[lo:hi]] = b
        means.append(float(freq[order[lo:hi]].mean()) + 1.0 if hi > lo else 1.0)
    sizes = np.bincount(bucket, minlength=len(MD_BUCKETS))
    means = np.array(means)

    def plan(alpha: float) -> np.ndarray:
        return np.clip(np.round(dim * (means / means[0]) ** alpha), 1, dim).astype(np.int64)

    def cost(d: np.ndarray) -> float:
        return float((sizes * d).sum() * FLOAT + sum(int(x) * dim * FLOAT for x in d if x < dim) + n * INDEX)

    lo, hi = 0.0, 8.0
    if cost(plan(lo)) <= budget:
        return bucket, plan(lo), lo
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if cost(plan(mid)) <= budget else (mid, hi)
    return bucket, plan(hi), hi


class MixedDimEmbedding(_Base):
    """Frequency-bucketed mixed dimensions with a projection per bucket (Ginart et al.)."""

    def __init__(self, cards, dim, bucket: np.ndarray, bucket_dims: np.ndarray, gen, std=0.05) -> None:
        super().__init__(cards, dim)
        self.bucket_dims = [int(d) for d in bucket_dims]
        index = np.zeros(self.rows, dtype=np.int64)
        for b in range(len(bucket_dims)):
            members = np.flatnonzero(bucket == b)
            index[members] = np.arange(members.size)
        self.register_buffer("bucket", torch.from_numpy(bucket.astype(np.int64)), persistent=False)
        self.register_buffer("index", torch.from_numpy(index), persistent=False)
        sizes = np.bincount(bucket, minlength=len(bucket_dims))
        self.tables = nn.ModuleList(_table(max(int(s), 1), d, gen, std) for s, d in zip(sizes, self.bucket_dims))
        self.projections = nn.ModuleList(
            nn.Identity() if d == dim else nn.Linear(d, dim, bias=False) for d in self.bucket_dims
        )
        self.sizes = sizes

    def forward(self, ids):
        rows = self.global_rows(ids).reshape(-1)
        b, i = self.bucket[rows], self.index[rows]
        out = torch.zeros(rows.numel(), self.dim)
        for k, (table, proj) in enumerate(zip(self.tables, self.projections)):
            sel = torch.nonzero(b == k).reshape(-1)
            if sel.numel():
                out = out.index_put((sel,), proj(table(i[sel])))
        return out.reshape(*ids.shape, self.dim)

    def embedding_bytes(self) -> int:
        proj = sum(d * self.dim * FLOAT for d in self.bucket_dims if d < self.dim)
        return int((self.sizes * np.array(self.bucket_dims)).sum()) * FLOAT + proj + self.rows * INDEX

    def dims(self):
        return np.array(self.bucket_dims)[self.bucket.numpy()]


class HashedEmbedding(_Base):
    """The hashing trick: ``buckets`` shared rows, ``row = splitmix64(global id) mod buckets``."""

    def __init__(self, cards, dim, buckets: int, gen, std=0.05) -> None:
        super().__init__(cards, dim)
        self.buckets = buckets
        where = (hash_keys(np.arange(self.rows, dtype=np.int64)) % np.uint64(buckets)).astype(np.int64)
        self.register_buffer("where", torch.from_numpy(where), persistent=False)
        self.table = _table(buckets, dim, gen, std)

    def forward(self, ids):
        return self.table(self.where[self.global_rows(ids)])

    def embedding_bytes(self) -> int:
        return self.buckets * self.dim * FLOAT


class ElementPrunedEmbedding(_Base):
    """Full table pruned element-wise by magnitude during training at the schedule's events (module docstring).

    ``targets(step) -> kept elements or None`` is the schedule; pruned elements and their Adagrad state are
    zeroed and stay zero (masked after every step)."""

    def __init__(self, cards, dim, gen, targets, std=0.05) -> None:
        super().__init__(cards, dim)
        self.table = _table(self.rows, dim, gen, std)
        self.register_buffer("mask", torch.ones(self.rows, dim, dtype=torch.bool), persistent=False)
        self.targets = targets
        self.optimizer: torch.optim.Optimizer | None = None

    def forward(self, ids):
        return self.table(self.global_rows(ids))

    @torch.no_grad()
    def after_step(self, step: int) -> None:
        target = self.targets(step)
        w = self.table.weight
        if target is not None and target < int(self.mask.sum()):
            score = w.abs().masked_fill(~self.mask, -1.0).reshape(-1)
            keep = torch.zeros(score.numel(), dtype=torch.bool)
            keep[torch.topk(score, target, sorted=False).indices] = True
            self.mask &= keep.reshape(self.mask.shape)
        if not bool(self.mask.all()):
            w.mul_(self.mask)
            if self.optimizer is not None and w in self.optimizer.state:
                self.optimizer.state[w]["sum"].mul_(self.mask)

    def nnz(self) -> int:
        return int(self.mask.sum())

    def embedding_bytes(self) -> int:
        return self.nnz() * (FLOAT + 1) + (self.rows + 1) * INDEX

    def dims(self):
        return self.mask.sum(dim=1).numpy()
