"""Training both ansaetze with the same optimiser and the same evaluation budget.

A coarse grid over one shared ``(gamma, beta)`` (every layer alike) picks the start; the gate QAOA then runs
COBYLA from it, and the hybrid from the same point mapped to pulses (rotation ``2 beta`` about X), each with
``budget`` evaluations (scipy COBYLA, ``rhobeg`` 0.2 rad: every parameter is an angle). The grid's evaluations
are counted once, shared.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.optimize

from workbench.quantum.hybrid_qaoa.simulate import Evaluator

__all__ = ["Training", "grid_start", "train"]


@dataclass(frozen=True)
class Training:
    """The best expected cut found, its parameters, and the best-so-far after every evaluation."""

    kind: str
    best_cut: float
    params: np.ndarray
    trace: np.ndarray
    evaluations: int


def grid_start(evaluator: Evaluator, points: int) -> tuple[np.ndarray, int]:
    """The best gate parameters on a ``points x points`` grid of ``gamma in (0, pi)``, ``beta in (0, pi/2)``."""
    p = evaluator.layout.p
    best, arg = -np.inf, None
    for g in np.linspace(0, np.pi, points + 2)[1:-1]:
        for b in np.linspace(0, np.pi / 2, points + 2)[1:-1]:
            x = np.array([g] * p + [b] * p)
            value = evaluator.expected_cut("gate", x)
            if value > best:
                best, arg = value, x
    assert arg is not None, "points >= 1 and a finite expected cut"
    return arg, points * points


def train(evaluator: Evaluator, kind: str, start: np.ndarray, budget: int) -> Training:
    """COBYLA on ``kind`` ("gate" or "hybrid") from ``start`` for at most ``budget`` evaluations."""
    trace: list[float] = []

    def loss(x: np.ndarray) -> float:
        value = evaluator.expected_cut(kind, x)
        trace.append(value)
        return -value

    res = scipy.optimize.minimize(loss, start, method="COBYLA", options={"maxiter": budget, "rhobeg": 0.2})
    best = float(np.max(trace))
    return Training(kind, best, np.asarray(res.x), np.maximum.accumulate(np.array(trace)), len(trace))
