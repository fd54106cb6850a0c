"""Per-chunk utility, the chunk budget plan, and the pruning schedule of FIITED.

Utility (our reading of the v2 abstract, "we prioritize embedding dimensions with higher frequencies and
gradients as more important"; the exact formula is not readable: ``papers/further/fiited.md`` section 4)::

    u[v, j] = EMA(accesses of vector v per step) * EMA(mean |dL/de[v, chunk j]| per access)

The gradient is taken at the lookup's *output*, so a pruned chunk (which reads as zero) still has the
gradient it would receive if it were grown back: that is what lets re-growth compare pruned and live chunks on
one scale. EMAs advance once per pruning interval (``ema = decay * ema + (1 - decay) * interval mean``), so
recency bias is bounded by the decay; nothing is pruned before the warm-up ends (the brief's pitfall:
gradient utility favours recently updated ids).

Plan (:func:`plan_chunks`): a vector keeps a *prefix* of its chunks (trailing chunks are pruned first). The
utility is made non-increasing along each vector (running minimum), chunk 0 is always kept (one chunk per
vector is the floor), and the ``budget`` best chunks overall are kept: a global threshold on utility, so a hot
id keeps more dimensions than a cold one. Without re-growth only live chunks compete.

Schedule (:func:`target_chunks`): warm-up steps at full size, then a prune event every ``interval`` steps
toward the budget, either at once (``one-shot``) or along Zhu & Gupta's cubic ramp (``gradual``:
``B(t) = B_end + (B_full - B_end) (1 - progress)^3`` over ``ramp`` of the remaining steps).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

__all__ = ["ChunkUtility", "plan_chunks", "target_chunks", "schedule_curve", "Schedule"]


class ChunkUtility:
    """Access-frequency and gradient-magnitude EMAs per (slot, chunk) (module docstring)."""

    def __init__(self, slots: int, n_chunks: int, chunk: int, *, decay: float) -> None:
        if not 0 <= decay < 1:
            raise ValueError(f"decay={decay} is out of range: valid range is 0..1 (exclusive of 1)")
        self.n_chunks, self.chunk, self.decay = n_chunks, chunk, decay
        self.freq = torch.zeros(slots)
        self.grad = torch.zeros(slots, n_chunks)
        self._count = torch.zeros(slots)
        self._gsum = torch.zeros(slots, n_chunks)
        self._steps = 0
        self.updates = 0

    def observe(self, slots: np.ndarray, output: torch.Tensor) -> None:
        """Hook the gradient of a lookup's ``output`` ``[..., d]`` for the vectors in ``slots`` ``[...]``."""
        idx = torch.from_numpy(np.ascontiguousarray(slots.reshape(-1)))
        self._count.index_add_(0, idx, torch.ones(idx.numel()))
        self._steps += 1

        def hook(grad: torch.Tensor) -> None:
            norms = grad.detach().reshape(-1, self.n_chunks, self.chunk).norm(dim=2)  # [n, nc]
            self._gsum.index_add_(0, idx, norms)

        output.register_hook(hook)

    def update(self) -> None:
        """Fold the interval's counts into the EMAs (first update: the interval means themselves)."""
        steps = max(self._steps, 1)
        rate = self._count / steps
        seen = self._count > 0
        mean_g = self._gsum / self._count.clamp(min=1).unsqueeze(1)
        if self.updates == 0:
            self.freq, self.grad = rate, mean_g
        else:
            self.freq = self.decay * self.freq + (1 - self.decay) * rate
            self.grad[seen] = self.decay * self.grad[seen] + (1 - self.decay) * mean_g[seen]
        self._count.zero_()
        self._gsum.zero_()
        self._steps = 0
        self.updates += 1

    def utility(self) -> np.ndarray:
        """``[slots, n_chunks]`` float64 utility."""
        return (self.freq.unsqueeze(1) * self.grad).double().numpy()


def plan_chunks(
    utility: np.ndarray,
    live: np.ndarray,
    occupied: np.ndarray,
    budget: int,
    *,
    regrow: bool,
    min_chunks: int = 1,
) -> np.ndarray:
    """Chunks to keep, ``[slots, n_chunks]`` bool, a prefix per vector, at most ``max(budget, forced)`` in all.

    utility: ``[S, nc]``; live: which chunks exist now; occupied: ``[S]`` slots holding a key; budget: chunks;
    min_chunks: 1 keeps chunk 0 of every vector (the one-chunk floor), 0 lets a vector drop to no chunk at all
    (it then reads its feature's shared default vector).
    """
    s, nc = utility.shape
    n_vec = int(occupied.sum()) if min_chunks else 0
    u = np.minimum.accumulate(np.nan_to_num(utility, nan=0.0), axis=1)
    if min_chunks:
        u[:, 0] = np.inf  # chunk 0 is always kept
    if not regrow:
        u[~live] = -np.inf
    u[~occupied] = -np.inf
    flat = u.reshape(-1)
    candidates = int(np.isfinite(flat).sum() + n_vec)  # finite ones plus the +inf chunk 0s
    k = min(max(budget, n_vec), candidates)
    chosen = np.zeros(flat.size, dtype=bool)
    if k > 0:
        chosen[np.argpartition(-flat, k - 1)[:k]] = True
    count = chosen.reshape(s, nc).sum(axis=1)
    return np.arange(nc)[None, :] < count[:, None]


@dataclass(frozen=True)
class Schedule:
    """When and to what FIITED prunes: warm-up steps, interval, ``one-shot`` or ``gradual`` (ramp: share of the
    steps after the warm-up over which the budget tightens)."""

    total_steps: int
    warmup: int
    interval: int
    kind: str = "gradual"
    ramp: float = 0.5

    def events(self) -> list[int]:
        """Steps (1-based, after that step's update) at which a prune event happens: the end of the warm-up,
        every ``interval`` steps after it, and the last step (so the final budget is always met)."""
        if self.warmup >= self.total_steps:
            return []
        steps = list(range(max(self.warmup, 1), self.total_steps + 1, self.interval))
        return steps if steps[-1] == self.total_steps else [*steps, self.total_steps]


def target_chunks(schedule: Schedule, step: int, full: int, final: int) -> int:
    """The chunk budget at prune event ``step``."""
    if schedule.kind == "one-shot":
        return final
    span = max(1.0, schedule.ramp * (schedule.total_steps - schedule.warmup))
    progress = min(1.0, max(0.0, (step - schedule.warmup) / span))
    return int(math.ceil(final + (full - final) * (1 - progress) ** 3))


def schedule_curve(schedule: Schedule, full: int, final: int) -> tuple[np.ndarray, np.ndarray]:
    """(steps, chunk budget in force after each step) for plotting: full until the first event."""
    steps = np.arange(0, schedule.total_steps + 1)
    budget = np.full(steps.size, float(full))
    current = float(full)
    events = set(schedule.events())
    for t in steps:
        if t in events:
            current = float(target_chunks(schedule, int(t), full, final))
        budget[t] = current
    return steps, budget
