"""Single-process full-graph training (the exact baseline every distributed mode is compared with).

One Adam step per epoch on the loss of the whole graph; dropout masks from :func:`.models.dropout_mask`.
:class:`TrainSpec` holds what every mode shares (epochs, optimiser, seed, when to snapshot parameters), and
:func:`run_epochs` is every distributed worker's epoch loop (returning a :class:`WorkerRun`); the accuracy curves of every mode are computed from snapshots by the same exact full-graph forward
(:func:`curves`), so a mode's curve shows what its parameters do, not how it evaluates.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import torch

from workbench.graphs.gnnpipe.data import GraphData, adj_rows
from workbench.graphs.gnnpipe.models import ModelSpec, accuracy, forward_full, init_params, loss_sum, param_names

if TYPE_CHECKING:
    from workbench.distributed.comm import Comm

__all__ = [
    "TrainingTimeout",
    "Adam",
    "TrainSpec",
    "Snapshot",
    "TrainRun",
    "WorkerRun",
    "copy_params",
    "make_optimizer",
    "snapshot_epochs",
    "run_epochs",
    "train_full",
    "curves",
    "evaluate",
]


@dataclass(frozen=True)
class TrainSpec:
    """epochs, Adam lr and weight decay, seed (weights, masks, orders), eval_every (epochs between snapshots)."""

    epochs: int
    lr: float = 0.01
    weight_decay: float = 5e-4
    seed: int = 0
    eval_every: int = 5


@dataclass(frozen=True)
class Snapshot:
    """Parameters after ``epoch`` epochs (name -> tensor, detached copies)."""

    epoch: int
    params: dict[str, torch.Tensor]


@dataclass(frozen=True)
class TrainRun:
    """A finished training: final parameters, snapshots, training loss per epoch, wall seconds per epoch."""

    params: dict[str, torch.Tensor]
    snapshots: tuple[Snapshot, ...]
    losses: tuple[float, ...]
    epoch_seconds: tuple[float, ...]
    extra: dict = field(default_factory=dict)

    @property
    def seconds_per_epoch(self) -> float:
        """Median wall seconds of one epoch (the first, which warms caches, included only if it is alone)."""
        xs = sorted(self.epoch_seconds[1:] or self.epoch_seconds)
        return float(xs[len(xs) // 2])


@dataclass(frozen=True)
class WorkerRun:
    """One rank's training, as a distributed worker returns it: parameter snapshots (empty on ranks that keep
    none), per-epoch losses (NaN where the rank computes no loss), wall seconds and bytes sent per epoch, and the
    final parameters (the ones this rank owns)."""

    snapshots: tuple[Snapshot, ...]
    losses: tuple[float, ...]
    seconds: tuple[float, ...]
    sent: tuple[int, ...]
    params: dict[str, torch.Tensor]


class TrainingTimeout(ValueError):
    """The in-process training outlived its ``timeout_s`` (the CLI's ``--timeout-s``): a setting too large for the
    limit given, so a user error (exit 2); the message says what ran out and how far it got."""


class Adam:
    """Adam with L2 weight decay (Kingma & Ba; the update of ``torch.optim.Adam(weight_decay=...)``), per tensor:

    ``g += wd p; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2; p -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)``.

    Written out (instead of ``torch.optim``, whose import starts torch's compiler machinery and its temp folders in
    every worker) and elementwise per tensor, so a parameter gets the same update whichever process owns it.
    """

    def __init__(
        self, params: list[torch.Tensor], *, lr: float, weight_decay: float, betas=(0.9, 0.999), eps: float = 1e-8
    ) -> None:
        self.params, self.lr, self.wd, self.betas, self.eps = list(params), lr, weight_decay, betas, eps
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]
        self.t = 0

    @torch.no_grad()
    def step(self) -> None:
        self.t += 1
        b1, b2 = self.betas
        c1, c2 = 1 - b1**self.t, 1 - b2**self.t
        for p, m, v in zip(self.params, self.m, self.v):
            if p.grad is None:
                continue
            g = p.grad + self.wd * p if self.wd else p.grad
            m.mul_(b1).add_(g, alpha=1 - b1)
            v.mul_(b2).addcmul_(g, g, value=1 - b2)
            p.sub_(self.lr * (m / c1) / ((v / c2).sqrt() + self.eps))

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            p.grad = None


def make_optimizer(params: list[torch.Tensor], train: TrainSpec) -> Adam:
    """Adam at ``train.lr`` with ``train.weight_decay`` (see :class:`Adam`)."""
    return Adam(params, lr=train.lr, weight_decay=train.weight_decay)


def snapshot_epochs(train: TrainSpec) -> set[int]:
    """Epoch counts after which parameters are kept: 0, every ``eval_every``, and the last."""
    return {0, train.epochs, *range(train.eval_every, train.epochs + 1, train.eval_every)}


def copy_params(params: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Detached copies of ``params`` (name -> tensor)."""
    return {k: v.detach().clone() for k, v in params.items()}


def run_epochs(
    comm: Comm, train: TrainSpec, params: dict[str, torch.Tensor], epoch: Callable[[int], float], *, snapshots: bool
) -> WorkerRun:
    """A worker's epoch loop: ``epoch(e)`` trains epoch ``e`` and returns its loss; each epoch's wall seconds and
    the bytes ``comm`` sent are recorded, and ``params`` are snapshotted at :func:`snapshot_epochs` when
    ``snapshots``."""
    keep = snapshot_epochs(train)
    snaps = [Snapshot(0, copy_params(params))] if snapshots else []
    losses, seconds, sent = [], [], []
    for e in range(train.epochs):
        before = comm.bytes_sent
        start = time.perf_counter()
        losses.append(epoch(e))
        seconds.append(time.perf_counter() - start)
        sent.append(comm.bytes_sent - before)
        if snapshots and e + 1 in keep:
            snaps.append(Snapshot(e + 1, copy_params(params)))
    return WorkerRun(tuple(snaps), tuple(losses), tuple(seconds), tuple(sent), copy_params(params))


def train_full(data: GraphData, spec: ModelSpec, train: TrainSpec, *, timeout_s: float | None = None) -> TrainRun:
    """Train on the whole graph in this process; returns the final parameters and snapshots.

    ``timeout_s``: wall-clock limit in seconds (None: none), checked after every epoch; raises
    :class:`TrainingTimeout` naming the limit and the epochs done when it runs out.
    """
    dtype = data.x.dtype
    params = {k: v.clone().requires_grad_() for k, v in init_params(spec, train.seed, dtype).items()}
    names = param_names(spec)
    opt = make_optimizer([params[k] for k in names], train)
    adj = adj_rows(data.adj, slice(0, data.n), dtype)
    keep = snapshot_epochs(train)
    snaps = [Snapshot(0, copy_params(params))]
    losses, seconds = [], []
    y_train, n_train = data.y[data.train], len(data.train)
    x = data.feature_rows(slice(0, data.n))
    began = time.perf_counter()
    for epoch in range(train.epochs):
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        logits = forward_full(spec, params, adj, x, epoch=epoch, seed=train.seed, train=True)
        loss = loss_sum(logits[data.train], y_train, n_train)
        loss.backward()
        opt.step()
        seconds.append(time.perf_counter() - start)
        losses.append(float(loss.detach()))
        if epoch + 1 in keep:
            snaps.append(Snapshot(epoch + 1, copy_params(params)))
        if timeout_s is not None and epoch + 1 < train.epochs and time.perf_counter() - began > timeout_s:
            raise TrainingTimeout(
                f"timeout_s={timeout_s:g} ran out in the full-graph training (this process, {spec.kind} "
                f"L={spec.layers} d={spec.hidden}) after {epoch + 1} of {train.epochs} epochs "
                f"({time.perf_counter() - began:.1f} s): raise --timeout-s or train a smaller setting"
            )
    return TrainRun(
        params=copy_params(params), snapshots=tuple(snaps), losses=tuple(losses), epoch_seconds=tuple(seconds)
    )


def evaluate(
    data: GraphData, spec: ModelSpec, params: dict[str, torch.Tensor], adj: torch.Tensor | None = None
) -> dict[str, float]:
    """Train / validation / test accuracy of ``params`` by the exact full-graph forward (no dropout)."""
    adj = adj_rows(data.adj, slice(0, data.n), data.x.dtype) if adj is None else adj
    with torch.no_grad():
        logits = forward_full(spec, params, adj, data.feature_rows(slice(0, data.n)))
    return {
        "train": accuracy(logits, data.y, data.train),
        "val": accuracy(logits, data.y, data.val),
        "test": accuracy(logits, data.y, data.test),
    }


def curves(data: GraphData, spec: ModelSpec, run: TrainRun) -> dict[str, list[float]]:
    """Accuracy curves of a run: ``{"epoch": [...], "train": [...], "val": [...], "test": [...]}``."""
    adj = adj_rows(data.adj, slice(0, data.n), data.x.dtype)
    out: dict[str, list[float]] = {"epoch": [], "train": [], "val": [], "test": []}
    for snap in run.snapshots:
        acc = evaluate(data, spec, snap.params, adj)
        out["epoch"].append(snap.epoch)
        for key in ("train", "val", "test"):
            out[key].append(acc[key])
    return out
