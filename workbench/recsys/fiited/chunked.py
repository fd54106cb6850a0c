"""Chunked embeddings on a VHPI table: the lookup (as ``nn.Embedding`` / ``nn.EmbeddingBag``) and the sparse
Adagrad step whose state lives in the pool beside the weights.

Lookup: keys -> slots (hash probe) -> physical rows ``[..., nc]`` -> ``F.embedding(pool, rows)`` ->
``[..., nc, c]`` -> ``[..., d]``. A pruned chunk points at the pool's zero row, so it reads as zeros and the
vector's effective dimension is its number of live chunks times ``c``. A vector with no chunk at all reads its
feature's shared default vector (``defaults`` ``[F, d]``, trained like the MLPs) when the module has them. The bag form runs
``F.embedding_bag`` once per chunk position over the pool (same kernel and summation order as
``nn.EmbeddingBag`` on a ``d``-wide table), so with nothing pruned both forms equal the dense modules bit for
bit, outputs and gradients (``tests/recsys/fiited/test_fiited_chunked.py``).

The pool's gradient is sparse (one row per touched physical chunk). :func:`adagrad_step` applies torch's
sparse Adagrad update (``torch.optim.Adagrad`` with ``lr_decay = 0``, ``initial_accumulator_value = 0``:
``state += g^2; w -= lr * g / (sqrt(state) + eps)``) with the state held in ``table.state``, so optimizer state
is pruned, freed, moved and counted with its chunk; the tests check it equals ``torch.optim.Adagrad`` on an
``nn.Embedding(sparse=True)`` step for step.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from workbench.recsys.fiited.vhpi import VHPITable

__all__ = ["ChunkedEmbedding", "adagrad_step", "feature_keys"]

KEY_SHIFT = 40  # key = feature << 40 | id: ids below 2^40, features below 2^23


def feature_keys(ids: np.ndarray) -> np.ndarray:
    """64-bit keys of per-feature ids ``[..., F]``: ``f << 40 | id`` (distinct across features)."""
    ids = np.asarray(ids, dtype=np.int64)
    return ids | (np.arange(ids.shape[-1], dtype=np.int64) << KEY_SHIFT)


class ChunkedEmbedding(nn.Module):
    """Embedding vectors of ``dim`` floats in chunks of ``chunk``, stored in a :class:`VHPITable`.

    keys: every key the table holds (inserted up front, each with all its chunks allocated and initialised
    from ``init`` ``[n_keys, dim]``, default ``N(0, init_std^2)`` from ``generator``); load_factor: keys / slots.
    ``forward`` takes per-feature ids ``[B, F]`` (keys made by :func:`feature_keys`) when ``by_feature``,
    else raw keys of any shape. ``on_output(slots, output)`` (optional) sees each lookup's slots and output
    tensor (the utility tracker hooks the output's gradient there).
    """

    def __init__(
        self,
        keys: np.ndarray,
        *,
        dim: int,
        chunk: int,
        load_factor: float = 0.75,
        init: torch.Tensor | None = None,
        init_std: float = 0.05,
        generator: torch.Generator | None = None,
        by_feature: bool = True,
        ptr_bytes: int = 4,
        n_defaults: int = 0,
    ) -> None:
        super().__init__()
        if not 0 < load_factor <= 1:
            raise ValueError(f"load_factor={load_factor} is out of range: valid range is 0..1")
        keys = np.asarray(keys, dtype=np.int64).reshape(-1)
        n = keys.size
        slots = max(1, int(np.ceil(n / load_factor)))
        self.table = VHPITable(slots=slots, dim=dim, chunk=chunk, pool=n * (dim // chunk), ptr_bytes=ptr_bytes)
        self.dim, self.chunk = dim, chunk
        self.by_feature = by_feature
        self.on_output: Callable[[np.ndarray, torch.Tensor], None] | None = None
        # one shared default vector per feature, read by ids with no chunk (n_defaults = 0: none)
        self.defaults = nn.Parameter(torch.zeros(n_defaults, dim)) if n_defaults else None
        self.empty = np.zeros(self.table.slots, dtype=bool)  # slots whose key owns no chunk (refresh_empty)
        placed = self.table.insert(keys)
        if init is None:
            init = torch.randn(n, dim, generator=generator) * init_std
        nc = dim // chunk
        self.table.alloc(np.repeat(placed, nc), np.tile(np.arange(nc), n), init.reshape(n * nc, chunk))

    def slots_of(self, ids: np.ndarray | torch.Tensor) -> np.ndarray:
        ids = ids.numpy() if isinstance(ids, torch.Tensor) else np.asarray(ids)
        keys = feature_keys(ids) if self.by_feature else ids
        slots = self.table.lookup(keys)
        if np.any(slots < 0):
            bad = np.asarray(keys).reshape(-1)[np.argmax(slots.reshape(-1) < 0)]
            raise KeyError(f"key {int(bad)} is not in the table")
        return slots

    def _weight(self) -> torch.Tensor:
        w = self.table.weight
        if not w.requires_grad:
            w.requires_grad_(True)
        return w

    def forward(self, ids: torch.Tensor | np.ndarray) -> torch.Tensor:
        slots = self.slots_of(ids)  # [...]
        rows = self.table.physical(slots)  # [..., nc]
        out = F.embedding(rows, self._weight(), sparse=True)  # [..., nc, c]
        out = out.reshape(*slots.shape, self.dim)  # [..., d]
        if self.defaults is not None and self.empty.any():
            empty = torch.from_numpy(self.empty[slots])  # [B, F]
            out = torch.where(empty.unsqueeze(-1), self.defaults.expand(*slots.shape, self.dim), out)
        if self.on_output is not None and out.requires_grad:
            self.on_output(slots, out)
        return out

    def refresh_empty(self) -> int:
        """Recompute which occupied slots own no chunk (after a prune event); returns how many."""
        self.empty = (self.table.keys >= 0) & (self.table.chunk_counts() == 0)
        return int(self.empty.sum())

    def bag(self, keys: torch.Tensor | np.ndarray, offsets: torch.Tensor, mode: str = "sum") -> torch.Tensor:
        """``nn.EmbeddingBag``'s 1-D input form over raw keys: ``[n_bags, d]``."""
        keys = keys.numpy() if isinstance(keys, torch.Tensor) else np.asarray(keys)
        slots = self.table.lookup(keys)
        if np.any(slots < 0):
            raise KeyError("a key is not in the table")
        rows = self.table.physical(slots)  # [n, nc]
        w = self._weight()
        parts = [
            F.embedding_bag(rows[:, j].contiguous(), w, offsets, mode=mode, sparse=mode != "max")
            for j in range(rows.shape[1])
        ]  # nc x [n_bags, c]
        return torch.cat(parts, dim=1)  # [n_bags, d]

    def dims(self) -> np.ndarray:
        """Effective dimension of every stored vector, in slot order of the occupied slots."""
        occupied = self.table.keys >= 0
        return self.table.chunk_counts()[occupied] * self.chunk


@torch.no_grad()
def adagrad_step(table: VHPITable, *, lr: float, eps: float = 1e-10) -> int:
    """One sparse Adagrad step on the pool from ``table.weight.grad`` (then cleared); the zero row's gradient is
    dropped. Returns the number of physical chunks updated."""
    grad = table.weight.grad
    if grad is None:
        return 0
    table.weight.grad = None
    if grad.is_sparse:
        grad = grad.coalesce()
        idx, val = grad.indices()[0], grad.values()
    else:
        idx = torch.nonzero(grad.abs().sum(dim=1)).reshape(-1)
        val = grad[idx]
    keep = idx != table.capacity
    idx, val = idx[keep], val[keep]
    # the same operations, in the same order, as torch.optim.Adagrad's sparse branch (so results are bit-equal)
    sparse = torch.sparse_coo_tensor(idx.unsqueeze(0), val.pow(2), table.state.shape, check_invariants=False)
    table.state.add_(sparse)
    std = table.state.sparse_mask(
        torch.sparse_coo_tensor(idx.unsqueeze(0), val, table.state.shape, check_invariants=False).coalesce()
    )
    std_values = std._values().sqrt_().add_(eps)
    table.weight.add_(
        torch.sparse_coo_tensor(idx.unsqueeze(0), val / std_values, table.state.shape, check_invariants=False),
        alpha=-lr,
    )
    return int(idx.numel())
