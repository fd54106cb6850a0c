"""Training and evaluation of QuEst's models: split by circuit, MSE loss, Adam, early stopping on the
validation RMSE (the best epoch's weights are kept), metrics per sample kind.

The split is by circuit group (an algorithm circuit's noise draws stay together; random circuits are all
distinct), 80/10/10, from a seed, so no test circuit is seen in training (the brief's leakage pitfall).
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch
from torch import Tensor, nn

from workbench.quantum.quest.batching import NormalizedSet
from workbench.quantum.quest.dataset import KINDS, QuestDataset

__all__ = ["Split", "split_by_group", "TrainSettings", "fit", "predict_indices", "metrics", "metrics_by_kind", "History"]


@dataclass(frozen=True, eq=False)
class Split:
    """Sample indices ``[k]`` (int64) of each part."""

    train: Tensor
    val: Tensor
    test: Tensor


def split_by_group(data: QuestDataset, seed: int = 42, fractions: tuple[float, float] = (0.8, 0.1)) -> Split:
    """80/10/10 split of the circuit groups (every sample of a group in one part), reproducible from ``seed``."""
    groups = data.meta["group"].numpy()
    unique = np.unique(groups)
    order = np.random.default_rng(seed).permutation(unique)
    n_train = int(round(fractions[0] * len(order)))
    n_val = int(round(fractions[1] * len(order)))
    if len(order) >= 3:
        n_train, n_val = min(max(n_train, 1), len(order) - 2), max(n_val, 1)
    part = {int(g): 0 if i < n_train else 1 if i < n_train + n_val else 2 for i, g in enumerate(order)}
    which = np.array([part[int(g)] for g in groups])
    pick = lambda k: torch.from_numpy(np.flatnonzero(which == k)).long()  # noqa: E731
    return Split(pick(0), pick(1), pick(2))


@dataclass(frozen=True)
class TrainSettings:
    """The paper's optimiser (Adam, lr 5e-4, weight decay 1e-4); epochs and batch size are ours (the paper
    trains 100 epochs with batches of 1,000 on ~45k samples)."""

    epochs: int = 300
    batch_size: int = 128
    lr: float = 5e-4
    weight_decay: float = 1e-4
    patience: int = 30
    seed: int = 42


@dataclass
class History:
    """Per epoch: training and validation RMSE; the best epoch (1-based) and wall seconds."""

    train_rmse: list[float] = field(default_factory=list)
    val_rmse: list[float] = field(default_factory=list)
    best_epoch: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {"train_rmse": self.train_rmse, "val_rmse": self.val_rmse, "best_epoch": self.best_epoch,
                "seconds": self.seconds}


@torch.no_grad()
def predict_indices(model: nn.Module, data: NormalizedSet, indices: Tensor, chunk: int = 2048) -> Tensor:
    """Model outputs ``[k]`` for samples ``indices``."""
    model.eval()
    parts = [model(data.batch(indices[i:i + chunk])) for i in range(0, len(indices), chunk)]
    return torch.cat(parts) if parts else torch.zeros(0)


def _rmse(a: Tensor, b: Tensor) -> float:
    return float(torch.sqrt(torch.mean((a - b) ** 2))) if len(a) else math.nan


def fit(model: nn.Module, data: NormalizedSet, split: Split, settings: TrainSettings = TrainSettings(), *,
        progress: bool = False, on_epoch: Callable[[int, float, float], None] | None = None) -> History:
    """Train ``model`` in place (best validation epoch kept); ``on_epoch(epoch, train_rmse, val_rmse)``."""
    from tqdm.auto import tqdm

    torch.manual_seed(settings.seed)
    generator = torch.Generator().manual_seed(settings.seed)
    opt = torch.optim.Adam(model.parameters(), lr=settings.lr, weight_decay=settings.weight_decay)
    history, best, best_state, waited = History(), math.inf, None, 0
    start = time.perf_counter()
    bar = tqdm(range(1, settings.epochs + 1), desc=type(model).__name__, unit="epoch", disable=not progress)
    for epoch in bar:
        model.train()
        order = split.train[torch.randperm(len(split.train), generator=generator)]
        total, count = 0.0, 0
        for i in range(0, len(order), settings.batch_size):
            idx = order[i:i + settings.batch_size]
            loss = nn.functional.mse_loss(model(data.batch(idx)), data.target[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
            count += len(idx)
        train_rmse = math.sqrt(total / max(count, 1))
        val_rmse = _rmse(predict_indices(model, data, split.val), data.target[split.val])
        history.train_rmse.append(train_rmse)
        history.val_rmse.append(val_rmse)
        bar.set_postfix(train=f"{train_rmse:.4f}", val=f"{val_rmse:.4f}")
        if on_epoch is not None:
            on_epoch(epoch, train_rmse, val_rmse)
        if val_rmse < best or best_state is None:
            best, best_state, waited, history.best_epoch = val_rmse, copy.deepcopy(model.state_dict()), 0, epoch
        else:
            waited += 1
            if waited >= settings.patience:
                break
    bar.close()
    if best_state is not None:
        model.load_state_dict(best_state)
    history.seconds = time.perf_counter() - start
    return history


def metrics(pred: Tensor, true: Tensor) -> dict[str, float]:
    """RMSE, MAE, R^2 and Spearman rank correlation of predictions against labels (NaN when empty)."""
    from scipy.stats import spearmanr

    pred, true = pred.double(), true.double()
    n = len(true)
    if n == 0:
        return {"n": 0, "rmse": math.nan, "mae": math.nan, "r2": math.nan, "spearman": math.nan}
    resid = float(torch.sum((pred - true) ** 2))
    spread = float(torch.sum((true - true.mean()) ** 2))
    rho = float(spearmanr(pred.numpy(), true.numpy()).statistic) if n > 2 else math.nan
    return {"n": n, "rmse": math.sqrt(resid / n), "mae": float(torch.mean(torch.abs(pred - true))),
            "r2": 1 - resid / spread if spread > 0 else math.nan, "spearman": rho}


def metrics_by_kind(pred: Tensor, data: QuestDataset, indices: Tensor) -> dict[str, dict[str, float]]:
    """:func:`metrics` of ``pred`` (for ``indices``) on all samples and per kind (random, algorithm)."""
    true = data.pst[indices]
    kind = data.meta["kind"][indices]
    out = {"all": metrics(pred, true)}
    for k, name in enumerate(KINDS):
        mask = kind == k
        out[name] = metrics(pred[mask], true[mask])
    return out
