"""How random a served order is, beside ``RandomSampler`` as the reference distribution.

- per-batch label-histogram KL to uniform: ``KL(p_batch || uniform) = log C - H(p_batch)`` (nats), averaged
  over batches; a random batch of B records from C balanced classes has a small positive value of its own, so
  the figure to compare with is RandomSampler's, not 0;
- rank correlation (Spearman) of the serving position with the on-disk position (record id order): 1 for a
  sequential read, about 0 for a shuffle;
- the end-of-epoch tail (the last ``tail`` share of the epoch) separately: when few chunks remain, a
  chunk-based order has fewer records to pick from (the pitfall the brief names).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import spearmanr


@dataclass(frozen=True)
class Randomness:
    label_kl: float
    label_kl_tail: float
    disk_order_spearman: float
    disk_order_spearman_tail: float


def batch_label_kl(order: np.ndarray, labels: np.ndarray, classes: int, batch: int) -> np.ndarray:
    """KL(batch label histogram || uniform) per full batch of ``order`` (nats)."""
    order = np.asarray(order)
    nb = len(order) // batch
    if nb == 0:
        return np.zeros(0)
    lab = labels[order[: nb * batch]].reshape(nb, batch)
    counts = np.stack([(lab == c).sum(1) for c in range(classes)], axis=1) / batch
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = -np.where(counts > 0, counts * np.log(counts), 0.0).sum(1)
    return np.log(classes) - ent


def _spearman(positions: np.ndarray, disk: np.ndarray) -> float:
    if len(positions) < 3:
        return 0.0
    rho = spearmanr(positions, disk).statistic
    return float(rho) if np.isfinite(rho) else 0.0


def randomness(order: np.ndarray, labels: np.ndarray, classes: int, batch: int, *, tail: float = 0.1) -> Randomness:
    """The figures above for one epoch's ``order`` (record ids; disk position = id)."""
    order = np.asarray(order, dtype=np.int64)
    n = len(order)
    kl = batch_label_kl(order, labels, classes, batch)
    start = int(np.floor(n * (1 - tail)))
    tail_kl = batch_label_kl(order[start:], labels, classes, batch)
    pos = np.arange(n)
    return Randomness(
        label_kl=float(kl.mean()) if len(kl) else 0.0,
        label_kl_tail=float(tail_kl.mean()) if len(tail_kl) else 0.0,
        disk_order_spearman=_spearman(pos, order),
        disk_order_spearman_tail=_spearman(pos[start:], order[start:]),
    )
