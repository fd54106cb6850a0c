"""One training run: a method's embedding table inside the same DLRM, trained on CTR data, evaluated by AUC.

Methods: ``fiited`` (chunked VHPI table, utility-driven pruning to the budget during training) and the
baselines of :mod:`workbench.recsys.fiited.baselines`, all at ``budget_fraction`` of the full table's bytes.
Every method trains the same network (same seed for the MLPs and the batch order) with Adagrad at one
learning rate: sparse Adagrad for the tables (FIITED's state lives in its chunk pool), dense for the MLPs.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from workbench.recsys.dlrm import DLRM, evaluate, predict
from workbench.recsys.fiited.baselines import (
    ElementPrunedEmbedding,
    FullEmbedding,
    HashedEmbedding,
    MixedDimEmbedding,
    RowPrunedEmbedding,
    UniformEmbedding,
    mixed_dims,
)
from workbench.recsys.fiited.chunked import ChunkedEmbedding, adagrad_step, feature_keys
from workbench.recsys.fiited.utility import ChunkUtility, Schedule, plan_chunks, target_chunks
from workbench.recsys.samples import CTRData

__all__ = ["Settings", "MethodRun", "train_method", "fiited_floor", "id_frequencies", "METHODS"]

log = logging.getLogger(__name__)

METHODS = ("fiited", "full", "uniform", "row-prune", "mixed-dim", "hashing", "elem-prune")
PTR_BYTES = 4


@dataclass(frozen=True)
class Settings:
    """Training and pruning settings shared by every method (see :class:`~workbench.recsys.fiited.config.FiitedConfig`)."""

    dim: int = 64
    chunk: int = 16
    epochs: int = 1
    batch_size: int = 1024
    lr: float = 0.05
    seed: int = 0
    decay: float = 0.9
    warmup: float = 0.2
    interval: int = 50
    schedule: str = "gradual"
    ramp: float = 0.5
    regrow: bool = True
    load_factor: float = 0.8


@dataclass
class MethodRun:
    """What one run gives: AUC and log-loss on the test rows, the table's bytes, per-id dims and frequencies,
    and for FIITED the memory counters, the budget per step and the invariant check."""

    name: str
    auc: float
    logloss: float
    embedding_bytes: int
    seconds: float
    steps: int
    dims: np.ndarray
    freq: np.ndarray
    extra: dict = field(default_factory=dict)


def id_frequencies(data: CTRData) -> np.ndarray:
    """Occurrences of every id in ``data`` (global row order: feature 0's ids, then feature 1's, ...)."""
    offsets = np.concatenate([[0], np.cumsum(data.cardinalities)[:-1]])
    return np.bincount((data.sparse + offsets).reshape(-1), minlength=int(sum(data.cardinalities)))


def _slots_needed(rows: int, load_factor: float) -> int:
    return max(1, int(math.ceil(rows / load_factor)))


def fiited_floor(rows: int, settings: Settings) -> tuple[int, int]:
    """(bytes of one chunk per id plus the pointer array, pointer bytes): the least a FIITED table can hold."""
    nc = settings.dim // settings.chunk
    pointers = _slots_needed(rows, settings.load_factor) * nc * PTR_BYTES
    return rows * settings.chunk * 4 + pointers, pointers


def check_budget(rows: int, settings: Settings, budget_fraction: float) -> None:
    """ValueError naming ``budget_fraction`` when the budget is below one chunk per row (plus pointers)."""
    full = rows * settings.dim * 4
    floor, _ = fiited_floor(rows, settings)
    if budget_fraction * full < floor:
        raise ValueError(
            f"budget_fraction={budget_fraction:g} is below one chunk per row: {rows:,} rows x {settings.chunk} floats "
            f"+ the VHPI pointers need {floor:,} B = {floor / full:.4f} of the full {full:,} B table; valid range is "
            f"{math.ceil(floor / full * 1e4) / 1e4:g}..1 at dim={settings.dim}, chunk={settings.chunk}, "
            f"load_factor={settings.load_factor:g}"
        )


def _schedule(steps: int, s: Settings) -> Schedule:
    return Schedule(
        total_steps=steps, warmup=int(round(s.warmup * steps)), interval=s.interval, kind=s.schedule, ramp=s.ramp
    )


def train_method(
    method: str,
    train: CTRData,
    test: CTRData,
    settings: Settings,
    budget_fraction: float,
    *,
    progress: Callable[[int, int], None] | None = None,
    floor_check: bool = True,
) -> MethodRun:
    """Train ``method`` (one of :data:`METHODS`) on ``train`` and evaluate on ``test``.

    Raises ValueError for an unknown method or a budget below one chunk per row (FIITED's floor; the other
    methods are checked against it too, so every method of a run meets the same budget). ``floor_check=False``
    lets a baseline other than FIITED run below FIITED's floor (the equal-AUC comparison of the claims).
    """
    if method not in METHODS:
        raise ValueError(f"method={method!r} is not allowed: valid values are {', '.join(map(repr, METHODS))}")
    s = settings
    cards = train.cardinalities
    rows = int(sum(cards))
    if floor_check or method == "fiited":
        check_budget(rows, s, budget_fraction)
    full_bytes = rows * s.dim * 4
    budget = budget_fraction * full_bytes
    torch.manual_seed(s.seed)
    gen = torch.Generator().manual_seed(s.seed + 1)
    freq = id_frequencies(train)
    n_train = train.rows
    steps_per_epoch = max(1, math.ceil(n_train / s.batch_size))
    steps = steps_per_epoch * s.epochs
    sched = _schedule(steps, s)
    events = set(sched.events())
    extra: dict = {}
    util = None
    table = None
    if method == "fiited":
        keys = np.concatenate(
            [
                feature_keys(np.stack([np.zeros(c, dtype=np.int64)] * f + [np.arange(c)], axis=1))[:, f]
                for f, c in enumerate(cards)
            ]
        )
        emb = ChunkedEmbedding(
            keys, dim=s.dim, chunk=s.chunk, load_factor=s.load_factor, generator=gen, ptr_bytes=PTR_BYTES
        )
        table = emb.table
        nc = s.dim // s.chunk
        util = ChunkUtility(table.slots, nc, s.chunk, decay=s.decay)
        emb.on_output = util.observe
        full_chunks = rows * nc
        mem0 = table.memory()
        final_chunks = int((budget - mem0.pointer_bytes) // (s.chunk * 4))
        extra.update(peak_pool_bytes=mem0.pool_tensor_bytes, budget_curve=[(0, full_chunks)], key_of_row=keys)
    elif method == "full":
        emb = FullEmbedding(cards, s.dim, gen)
    elif method == "uniform":
        emb = UniformEmbedding(cards, s.dim, max(1, int(budget // (rows * 4))), gen)
    elif method == "row-prune":
        k = int(max(0, (budget - rows * 4) // (s.dim * 4) - len(cards)))
        keep = np.zeros(rows, dtype=bool)
        keep[np.argsort(-freq, kind="stable")[:k]] = True
        emb = RowPrunedEmbedding(cards, s.dim, keep, gen)
    elif method == "mixed-dim":
        bucket, dims, alpha = mixed_dims(freq, s.dim, budget)
        emb = MixedDimEmbedding(cards, s.dim, bucket, dims, gen)
        extra["alpha"] = alpha
    elif method == "hashing":
        emb = HashedEmbedding(cards, s.dim, max(1, int(budget_fraction * rows)), gen)
    else:  # elem-prune
        final_nnz = int(max(1, (budget - (rows + 1) * 4) // 5))
        full_nnz = rows * s.dim
        emb = ElementPrunedEmbedding(
            cards, s.dim, gen, lambda t: target_chunks(sched, t, full_nnz, final_nnz) if t in events else None
        )
    model = DLRM(num_dense=train.dense.shape[1], num_sparse=len(cards), dim=s.dim, embedding=emb)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adagrad(params, lr=s.lr) if params else None
    if isinstance(emb, ElementPrunedEmbedding):
        emb.optimizer = opt
    rng = np.random.default_rng(s.seed)
    start = time.perf_counter()
    step = 0
    model.train()
    for _ in range(s.epochs):
        order = rng.permutation(n_train)
        for b in range(steps_per_epoch):
            idx = order[b * s.batch_size : (b + 1) * s.batch_size]
            dense = torch.from_numpy(train.dense[idx])
            ids = torch.from_numpy(train.sparse[idx])
            logit = model(dense, ids)
            loss = F.binary_cross_entropy_with_logits(logit, torch.from_numpy(train.label[idx]))
            if opt is not None:
                opt.zero_grad(set_to_none=True)
            loss.backward()
            if opt is not None:
                opt.step()
            step += 1
            if table is not None:
                adagrad_step(table, lr=s.lr)
                if step in events:
                    _prune_event(emb, util, sched, step, full_chunks, final_chunks, s.regrow, extra)
            else:
                emb.after_step(step)
            if progress is not None:
                progress(step, steps)
    seconds = time.perf_counter() - start
    model.eval()
    prob = predict(model, test.dense, test.sparse)
    auc, logloss = evaluate(test.label, prob)
    if table is not None:
        mem = table.memory()
        table.check_invariants()
        slots = table.lookup(extra.pop("key_of_row"))
        dims = table.chunk_counts()[slots] * s.chunk
        extra.update(
            live_chunks=mem.live_chunks,
            pointer_bytes=mem.pointer_bytes,
            optimizer_bytes=mem.optimizer_bytes,
            key_bytes=mem.key_bytes,
            pool_tensor_bytes=mem.pool_tensor_bytes,
            weight_bytes=mem.weight_bytes,
            counter_matches_pool=bool(
                mem.pool_tensor_bytes == mem.weight_bytes and mem.live_chunks == int((table.ptr >= 0).sum())
            ),
            budget_bytes=int(budget),
        )
        nbytes = mem.embedding_bytes
    else:
        nbytes = int(emb.embedding_bytes())
        dims = np.asarray(emb.dims())
        extra.pop("key_of_row", None)
    return MethodRun(method, auc, logloss, int(nbytes), seconds, steps, dims, freq, extra)


def _prune_event(
    emb: ChunkedEmbedding,
    util: ChunkUtility,
    sched: Schedule,
    step: int,
    full: int,
    final: int,
    regrow: bool,
    extra: dict,
) -> None:
    """Re-plan the chunks at a prune event: free the dropped ones, grow the re-admitted ones (zero weights,
    zero optimizer state), compact the pool to the live size."""
    table = emb.table
    util.update()
    target = target_chunks(sched, step, full, final)
    live = table.ptr >= 0
    occupied = table.keys >= 0
    keep = plan_chunks(util.utility(), live, occupied, target, regrow=regrow)
    drop_s, drop_c = np.nonzero(live & ~keep)
    grow_s, grow_c = np.nonzero(keep & ~live)
    table.free_chunks(drop_s, drop_c)
    table.alloc(grow_s, grow_c)
    extra["peak_pool_bytes"] = max(extra["peak_pool_bytes"], table.memory().pool_tensor_bytes)
    table.compact()
    extra.setdefault("regrown", 0)
    extra["regrown"] += int(grow_s.size)
    extra["budget_curve"].append((step, int(table.live)))
