"""One training run: a method's embedding table inside the same DLRM, trained on CTR data, evaluated by AUC.

Methods: ``fiited`` (chunked VHPI table, utility-driven pruning to the budget during training) and the
baselines of :mod:`workbench.recsys.fiited.baselines`, all at ``budget_fraction`` of the full table's bytes.
Every method trains the same network (same seed for the MLPs and the batch order) with Adagrad at one
learning rate: sparse Adagrad for the tables (FIITED's state lives in its chunk pool), dense for the MLPs.

Epochs and early stopping: the pruning schedule (FIITED, elem-prune) runs within the first epoch, so every
method meets its budget from the end of epoch 1 on; after each epoch the validation rows' log-loss is computed
and the model of the best epoch is kept; training stops after ``patience`` epochs without improvement (no
validation rows: every epoch runs and the last is kept).

FIITED's bytes are the *served* table's (:class:`~workbench.recsys.fiited.vhpi.ServedMemory`): the live chunks,
a VHPI index over the ids that keep a chunk (keys and pointers, at the load factor) and, when ids may drop to no
chunk (``min_chunks = 0``), one shared default vector per feature. The budget at each prune event is met in
those bytes. Training memory (the warm-up's full-size pool, optimizer state, the free list, the utility EMAs)
is reported apart (``extra["training"]``).
"""

from __future__ import annotations

import copy
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

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
from workbench.recsys.fiited.vhpi import KEY_BYTES, served_memory
from workbench.recsys.samples import CTRData

__all__ = [
    "Settings",
    "MethodRun",
    "train_method",
    "fiited_floor",
    "check_budget",
    "id_frequencies",
    "METHODS",
    "PTR_BYTES",
]

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
    min_chunks: int = 0
    patience: int = 1


@dataclass
class MethodRun:
    """What one run gives: AUC and log-loss on the test rows, the table's bytes, per-id dims and frequencies,
    the epochs run and the best one, and for FIITED the memory counters, the budget per step and the invariant
    check."""

    name: str
    auc: float
    logloss: float
    embedding_bytes: int
    seconds: float
    steps: int
    dims: np.ndarray
    freq: np.ndarray
    extra: dict = field(default_factory=dict)
    epochs_run: int = 1
    best_epoch: int = 1


def id_frequencies(data: CTRData) -> np.ndarray:
    """Occurrences of every id in ``data`` (global row order: feature 0's ids, then feature 1's, ...)."""
    offsets = np.concatenate([[0], np.cumsum(data.cardinalities)[:-1]])
    return np.bincount((data.sparse + offsets).reshape(-1), minlength=int(sum(data.cardinalities)))


def fiited_floor(rows: int, settings: Settings, n_features: int = 26) -> tuple[int, int]:
    """(least served bytes of a FIITED table, its index bytes): with ``min_chunks = 1`` one chunk per id plus the
    keys and pointers of every id; with ``min_chunks = 0`` the shared default vectors alone."""
    if settings.min_chunks == 0:
        return n_features * settings.dim * 4, 0
    m = served_memory(
        live_chunks=rows,
        ids=rows,
        n_chunks=settings.dim // settings.chunk,
        chunk=settings.chunk,
        load_factor=settings.load_factor,
        ptr_bytes=PTR_BYTES,
        default_bytes=0,
    )
    return m.total_bytes, m.pointer_bytes + m.key_bytes


def check_budget(rows: int, settings: Settings, budget_fraction: float, n_features: int = 26) -> None:
    """ValueError naming ``budget_fraction`` when the budget is below FIITED's least table (:func:`fiited_floor`)."""
    full = rows * settings.dim * 4
    floor, _ = fiited_floor(rows, settings, n_features)
    if budget_fraction * full < floor:
        what = "one chunk per row" if settings.min_chunks else "the shared default vectors (one per feature)"
        raise ValueError(
            f"budget_fraction={budget_fraction:g} is below {what}: {rows:,} rows at chunk={settings.chunk} "
            f"with the VHPI keys and pointers need {floor:,} B = {floor / full:.4f} of the full {full:,} B table; "
            f"valid range is {math.ceil(floor / full * 1e4) / 1e4:g}..1 at dim={settings.dim}, "
            f"load_factor={settings.load_factor:g}, min_chunks={settings.min_chunks}"
        )


def _schedule(steps: int, s: Settings) -> Schedule:
    return Schedule(
        total_steps=steps, warmup=int(round(s.warmup * steps)), interval=s.interval, kind=s.schedule, ramp=s.ramp
    )


@dataclass
class _Fiited:
    """FIITED's training state: the module, its utility tracker and what the budget controller needs."""

    emb: ChunkedEmbedding
    util: ChunkUtility
    key_of_row: np.ndarray
    n_features: int
    full_bytes: int  # served bytes with every chunk of every id
    budget_bytes: int
    settings: Settings
    extra: dict

    @property
    def table(self) -> Any:
        return self.emb.table

    def served(self, keep: np.ndarray | None = None) -> Any:
        """Served memory of the current table, or of a plan ``keep`` ``[S, nc]``."""
        s = self.settings
        counts = self.table.chunk_counts() if keep is None else keep.sum(axis=1)
        return served_memory(
            live_chunks=int(counts.sum()),
            ids=int((counts > 0).sum()),
            n_chunks=s.dim // s.chunk,
            chunk=s.chunk,
            load_factor=s.load_factor,
            ptr_bytes=PTR_BYTES,
            default_bytes=self.n_features * s.dim * 4 if s.min_chunks == 0 else 0,
        )


def _build_fiited(cards: tuple[int, ...], s: Settings, budget: float, gen: torch.Generator) -> _Fiited:
    keys = np.concatenate(
        [
            feature_keys(np.stack([np.zeros(c, dtype=np.int64)] * f + [np.arange(c)], axis=1))[:, f]
            for f, c in enumerate(cards)
        ]
    )
    emb = ChunkedEmbedding(
        keys,
        dim=s.dim,
        chunk=s.chunk,
        load_factor=s.load_factor,
        generator=gen,
        ptr_bytes=PTR_BYTES,
        n_defaults=len(cards) if s.min_chunks == 0 else 0,
    )
    util = ChunkUtility(emb.table.slots, s.dim // s.chunk, s.chunk, decay=s.decay)
    emb.on_output = util.observe
    state = _Fiited(emb, util, keys, len(cards), 0, int(budget), s, {})
    state.full_bytes = state.served().total_bytes
    mem = emb.table.memory()
    state.extra.update(peak_pool_bytes=mem.pool_tensor_bytes, budget_curve=[(0, state.full_bytes)], regrown=0)
    return state


def _build_baseline(
    method: str, train: CTRData, s: Settings, budget: float, freq: np.ndarray, gen: torch.Generator, targets: Callable
) -> tuple[nn.Module, dict]:
    cards = train.cardinalities
    rows = int(sum(cards))
    extra: dict = {}
    if method == "full":
        emb: nn.Module = FullEmbedding(cards, s.dim, gen)
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
        emb = HashedEmbedding(cards, s.dim, max(1, int(budget / (s.dim * 4))), gen)
    else:  # elem-prune
        emb = ElementPrunedEmbedding(cards, s.dim, gen, targets)
    return emb, extra


def _plan_within(state: _Fiited, target_bytes: float) -> np.ndarray:
    """The utility plan with the most chunks whose served bytes fit ``target_bytes`` (bisection on the chunk
    count: the plan grows monotonically with it)."""
    s = state.settings
    table = state.table
    u, live, occupied = state.util.utility(), table.ptr >= 0, table.keys >= 0

    def plan(k: int) -> np.ndarray:
        return plan_chunks(u, live, occupied, k, regrow=s.regrow, min_chunks=s.min_chunks)

    lo, hi = 0, int(occupied.sum()) * (s.dim // s.chunk)
    if state.served(plan(hi)).total_bytes <= target_bytes:
        return plan(hi)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if state.served(plan(mid)).total_bytes <= target_bytes else (lo, mid - 1)
    return plan(lo)


def _prune_event(state: _Fiited, sched: Schedule, step: int) -> None:
    """Re-plan the chunks at a prune event: free the dropped ones, grow the re-admitted ones (zero weights,
    zero optimizer state), compact the pool to the live size."""
    table, extra = state.table, state.extra
    state.util.update()
    target = target_chunks(sched, step, state.full_bytes, state.budget_bytes)
    keep = _plan_within(state, target)
    live = table.ptr >= 0
    drop_s, drop_c = np.nonzero(live & ~keep)
    grow_s, grow_c = np.nonzero(keep & ~live)
    table.free_chunks(drop_s, drop_c)
    table.alloc(grow_s, grow_c)
    extra["peak_pool_bytes"] = max(extra["peak_pool_bytes"], table.memory().pool_tensor_bytes)
    table.compact()
    state.emb.refresh_empty()
    extra["regrown"] += int(grow_s.size)
    extra["budget_curve"].append((step, int(state.served().total_bytes)))


def _fiited_result(state: _Fiited, s: Settings) -> tuple[int, np.ndarray]:
    """Check the table's invariants, fill ``extra`` with the served and the training memory; (bytes, dims)."""
    table, extra = state.table, state.extra
    table.check_invariants()
    mem = table.memory()
    served = state.served()
    dims = table.chunk_counts()[table.lookup(state.key_of_row)] * s.chunk
    nc = s.dim // s.chunk
    extra.update(
        live_chunks=mem.live_chunks,
        weight_bytes=mem.weight_bytes,
        pointer_bytes=served.pointer_bytes,
        key_bytes=served.key_bytes,
        default_bytes=served.default_bytes,
        served_ids=served.ids,
        zero_chunk_ids=int((dims == 0).sum()),
        optimizer_bytes=mem.optimizer_bytes,
        free_list_bytes=mem.free_list_bytes,
        pool_tensor_bytes=mem.pool_tensor_bytes,
        counter_matches_pool=bool(
            mem.pool_tensor_bytes == mem.weight_bytes and mem.live_chunks == int((table.ptr >= 0).sum())
        ),
        budget_bytes=int(state.budget_bytes),
        training={
            # the warm-up holds every chunk of every id: pool weights and Adagrad state at full size
            "peak_pool_bytes": int(extra["peak_pool_bytes"]),
            "peak_optimizer_bytes": int(extra["peak_pool_bytes"]),
            "pointer_bytes": table.slots * nc * PTR_BYTES,
            "key_bytes": table.slots * KEY_BYTES,
            "free_list_bytes": int(extra["peak_pool_bytes"] // (s.chunk * 4) * 8),
            "utility_bytes": table.slots * (nc + 1) * 4 * 2,  # EMAs and the interval sums, float32
        },
    )
    extra["training"]["peak_bytes"] = int(sum(extra["training"].values()))
    return served.total_bytes, dims


def _step(model: DLRM, opt: Any, train: CTRData, idx: np.ndarray) -> None:
    logit = model(torch.from_numpy(train.dense[idx]), torch.from_numpy(train.sparse[idx]))
    loss = F.binary_cross_entropy_with_logits(logit, torch.from_numpy(train.label[idx]))
    if opt is not None:
        opt.zero_grad(set_to_none=True)
    loss.backward()
    if opt is not None:
        opt.step()


def _val_logloss(model: DLRM, val: CTRData) -> float:
    model.eval()
    _, ll = evaluate(val.label, predict(model, val.dense, val.sparse))
    model.train()
    return ll


def train_method(
    method: str,
    train: CTRData,
    test: CTRData,
    settings: Settings,
    budget_fraction: float,
    *,
    val: CTRData | None = None,
    progress: Callable[[int, int], None] | None = None,
    floor_check: bool = True,
) -> MethodRun:
    """Train ``method`` (one of :data:`METHODS`) on ``train``, stop early on ``val`` (module docstring) and
    evaluate on ``test``.

    Raises ValueError for an unknown method or a budget below FIITED's least table (the other methods are
    checked against it too, so every method of a run meets the same budget). ``floor_check=False`` lets a
    baseline other than FIITED run below FIITED's floor.
    """
    if method not in METHODS:
        raise ValueError(f"method={method!r} is not allowed: valid values are {', '.join(map(repr, METHODS))}")
    s = settings
    cards = train.cardinalities
    rows = int(sum(cards))
    if floor_check or method == "fiited":
        check_budget(rows, s, budget_fraction, len(cards))
    budget = budget_fraction * rows * s.dim * 4
    torch.manual_seed(s.seed)
    gen = torch.Generator().manual_seed(s.seed + 1)
    freq = id_frequencies(train)
    steps_per_epoch = max(1, math.ceil(train.rows / s.batch_size))
    sched = _schedule(steps_per_epoch, s)  # pruning happens within the first epoch
    events = set(sched.events())
    state: _Fiited | None = None
    if method == "fiited":
        state = _build_fiited(cards, s, budget, gen)
        emb, extra = state.emb, state.extra
    else:
        full_nnz, final_nnz = rows * s.dim, int(max(1, (budget - (rows + 1) * 4) // 5))

        def targets(t: int) -> int | None:
            return target_chunks(sched, t, full_nnz, final_nnz) if t in events else None

        emb, extra = _build_baseline(method, train, s, budget, freq, gen, targets)
    model = DLRM(num_dense=train.dense.shape[1], num_sparse=len(cards), dim=s.dim, embedding=emb)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adagrad(params, lr=s.lr) if params else None
    if isinstance(emb, ElementPrunedEmbedding):
        emb.optimizer = opt
    start = time.perf_counter()
    model, epochs_run, best_epoch, steps = _fit(model, opt, train, val, s, state, sched, events, progress)
    seconds = time.perf_counter() - start
    model.eval()
    auc, logloss = evaluate(test.label, predict(model, test.dense, test.sparse))
    if state is not None:
        state.emb = model.embedding
        nbytes, dims = _fiited_result(state, s)
    else:
        nbytes, dims = int(model.embedding.embedding_bytes()), np.asarray(model.embedding.dims())
    run = MethodRun(method, auc, logloss, int(nbytes), seconds, steps, dims, freq, extra, epochs_run, best_epoch)
    return run


def _fit(
    model: DLRM,
    opt: Any,
    train: CTRData,
    val: CTRData | None,
    s: Settings,
    state: _Fiited | None,
    sched: Schedule,
    events: set[int],
    progress: Callable[[int, int], None] | None,
) -> tuple[DLRM, int, int, int]:
    """The epochs with early stopping: (the kept model, epochs run, best epoch, steps run)."""
    rng = np.random.default_rng(s.seed)
    steps_per_epoch = max(1, math.ceil(train.rows / s.batch_size))
    best, best_ll, best_epoch, step, epoch = model, math.inf, 0, 0, 0
    model.train()
    for epoch in range(1, s.epochs + 1):
        order = rng.permutation(train.rows)
        for b in range(steps_per_epoch):
            _step(model, opt, train, order[b * s.batch_size : (b + 1) * s.batch_size])
            step += 1
            if state is not None:
                adagrad_step(state.table, lr=s.lr)
                if epoch == 1 and step in events:
                    _prune_event(state, sched, step)
            else:
                model.embedding.after_step(step)
            if progress is not None:
                progress(step, steps_per_epoch * s.epochs)
        if val is None or val.rows == 0:
            best, best_epoch = model, epoch
            continue
        ll = _val_logloss(model, val)
        if ll < best_ll:
            best_ll, best_epoch = ll, epoch
            best = copy.deepcopy(model) if epoch < s.epochs else model
        elif epoch - best_epoch >= s.patience:
            break
    return best, epoch, best_epoch, step
