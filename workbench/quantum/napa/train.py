"""Optimisers for pulse VQE: gradient-free as the paper (COBYLA, Nelder-Mead, SPSA) and, as the workbench's
addition, gradients through the simulator; progressive growth as the authors' code (a mask: only the newest
layer's parameters move, the earlier ones stay frozen).

Every objective is counted: ``Trace.evaluations`` is the number of energy evaluations (what a machine would run),
``Trace.best`` the best energy so far after each.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.optimize

__all__ = ["Trace", "optimise", "progressive", "spsa", "OPTIMISERS"]

OPTIMISERS = ("cobyla", "nelder-mead", "spsa", "gradient")


@dataclass
class Trace:
    """Energies in evaluation order and the parameters of the best one."""

    energies: list[float] = field(default_factory=list)
    best_x: np.ndarray | None = None

    @property
    def evaluations(self) -> int:
        return len(self.energies)

    @property
    def best(self) -> np.ndarray:
        return np.minimum.accumulate(np.array(self.energies)) if self.energies else np.array([])

    def record(self, x: np.ndarray, e: float) -> None:
        if not self.energies or e < min(self.energies):
            self.best_x = np.array(x, dtype=float)
        self.energies.append(float(e))


def spsa(f: Callable[[np.ndarray], float], x0: np.ndarray, budget: int, *, seed: int = 0, a: float = 0.05,
         c: float = 0.05) -> np.ndarray:  # fmt: skip
    """Simultaneous-perturbation stochastic approximation in the box [0, 1] (2 evaluations per step; Spall's
    gains a_k = a / (k + 1 + 10)^0.602, c_k = c / (k + 1)^0.101)."""
    rng = np.random.default_rng(seed)
    x = np.array(x0, dtype=float)
    for k in range(max(budget // 2, 1)):
        ak, ck = a / (k + 11) ** 0.602, c / (k + 1) ** 0.101
        delta = rng.choice([-1.0, 1.0], size=x.size)
        g = (f(np.clip(x + ck * delta, 0, 1)) - f(np.clip(x - ck * delta, 0, 1))) / (2 * ck) * delta
        x = np.clip(x - ak * g, 0, 1)
    return x


def optimise(
    f: Callable[[np.ndarray], float],
    x0: np.ndarray,
    budget: int,
    method: str,
    trace: Trace,
    *,
    grad: Callable[[np.ndarray], tuple[float, np.ndarray]] | None = None,
    seed: int = 0,
) -> np.ndarray:
    """Minimise ``f`` over [0, 1]^d from ``x0`` with at most ``budget`` evaluations (recorded in ``trace``)."""
    if method not in OPTIMISERS:
        raise ValueError(f"optimizer={method!r} is unknown: valid optimizers are {', '.join(OPTIMISERS)}")
    if budget < 1:
        raise ValueError(f"budget={budget} is out of range: valid range is >= 1 (evaluations)")
    stop = trace.evaluations + budget

    class Budget(Exception):
        pass

    def counted(x: np.ndarray) -> float:
        if trace.evaluations >= stop:
            raise Budget
        e = f(np.clip(x, 0, 1))
        trace.record(np.clip(x, 0, 1), e)
        return e

    bounds = [(0.0, 1.0)] * len(x0)
    try:
        if method == "cobyla":
            # COBYLA wants at least d + 2 evaluations (scipy warns and raises maxiter itself); the budget is
            # kept by `counted`, which stops the run at `budget` evaluations whatever maxiter says
            scipy.optimize.minimize(counted, x0, method="COBYLA", bounds=bounds,
                                    options={"rhobeg": 0.1, "maxiter": max(budget, len(x0) + 2)})  # fmt: skip
        elif method == "nelder-mead":
            scipy.optimize.minimize(counted, x0, method="Nelder-Mead", bounds=bounds,
                                    options={"maxfev": budget, "initial_simplex": _simplex(x0)})  # fmt: skip
        elif method == "spsa":
            spsa(counted, x0, budget, seed=seed)
        else:
            if grad is None:
                raise ValueError("optimizer='gradient' needs a differentiable energy")

            def fg(x: np.ndarray) -> tuple[float, np.ndarray]:
                if trace.evaluations >= stop:
                    raise Budget
                e, g = grad(np.clip(x, 0, 1))
                trace.record(np.clip(x, 0, 1), e)
                return e, g

            scipy.optimize.minimize(fg, x0, jac=True, method="L-BFGS-B", bounds=bounds, options={"maxfun": budget})
    except Budget:
        pass
    return trace.best_x if trace.best_x is not None else np.array(x0)


def _simplex(x0: np.ndarray, step: float = 0.1) -> np.ndarray:
    pts = [np.array(x0, dtype=float)]
    for i in range(len(x0)):
        p = np.array(x0, dtype=float)
        p[i] = p[i] + step if p[i] + step <= 1 else p[i] - step
        pts.append(p)
    return np.array(pts)


def progressive(
    make_f: Callable[[int], Callable[[np.ndarray], float]],
    per_layer: int,
    layers: int,
    init_layer: Callable[[int], np.ndarray],
    budget: int,
    method: str,
    trace: Trace,
    *,
    seed: int = 0,
) -> np.ndarray:
    """Grow ``layers`` one at a time; stage l optimises only layer l's ``per_layer`` parameters (mask), with
    ``budget // layers`` evaluations; ``make_f(L)`` is the energy of an L-layer parameter vector."""
    x = np.zeros(0)
    for layer in range(layers):
        f_full = make_f(layer + 1)
        frozen = x.copy()

        def f_new(z: np.ndarray, frozen=frozen, f_full=f_full) -> float:
            return f_full(np.concatenate([frozen, z]))

        stage = Trace()
        z = optimise(f_new, init_layer(layer), budget // layers, method, stage, seed=seed + layer)
        for e in stage.energies:
            trace.energies.append(e)
        x = np.concatenate([frozen, z])
        trace.best_x = x
    return x
