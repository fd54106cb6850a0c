"""How random a served order is, beside ``RandomSampler`` as the reference distribution.

- per-batch label-histogram KL to uniform: ``KL(p_batch || uniform) = log C - H(p_batch)`` (nats), averaged
  over batches; a random batch of B records from C balanced classes has a small positive value of its own, so
  the figure to compare with is RandomSampler's, not 0;
- rank correlation (Spearman) of the serving position with the on-disk position (record id order): 1 for a
  sequential read, about 0 for a shuffle;
- chunk-mate spread: the standard deviation of the serving positions of the records of one chunk, over the
  epoch length, averaged over chunks (the brief's "distance between a sample's position and its chunk-mates'"):
  about 1/sqrt(12) = 0.289 for a full shuffle, near 0 when a chunk is served in one stretch (K = 1);
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
    chunkmate_spread: float | None = None


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


def chunkmate_spread(order: np.ndarray, chunk_of: np.ndarray) -> float:
    """Mean over chunks (of 2+ records) of the sample std (ddof 1) of its records' serving positions / epoch
    length."""
    order = np.asarray(order, dtype=np.int64)
    n = len(order)
    pos = np.empty(n, dtype=float)
    pos[order] = np.arange(n)
    chunks = np.asarray(chunk_of)[:n]
    counts = np.bincount(chunks)
    s1 = np.bincount(chunks, weights=pos)
    s2 = np.bincount(chunks, weights=pos * pos)
    keep = counts >= 2
    if not keep.any() or n < 2:
        return 0.0
    c = counts[keep]
    var = (s2[keep] - s1[keep] ** 2 / c) / (c - 1)  # the sample variance (ddof 1): chunks hold few records
    return float(np.sqrt(np.maximum(var, 0)).mean() / n)


def randomness(
    order: np.ndarray, labels: np.ndarray, classes: int, batch: int, *, tail: float = 0.1, chunk_of=None
) -> Randomness:
    """The figures above for one epoch's ``order`` (record ids; disk position = id; chunk table optional)."""
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
        chunkmate_spread=None if chunk_of is None else chunkmate_spread(order, chunk_of),
    )
