"""Optimisers for pulse VQE: gradient-free as the paper (COBYLA, Nelder-Mead, SPSA) and, as the workbench's
addition, gradients through the simulator (L-BFGS-B); several starts, the budget shared between them; progressive
growth as the authors' code (a mask: only the newest layer's parameters move, the earlier ones stay frozen).

Every objective is counted: ``Trace.evaluations`` is the number of energy evaluations (what a machine would run;
one gradient evaluation counts as one), ``Trace.best`` the best energy so far after each. The trace keeps the
*whole* parameter vector of its best evaluation (``best_x``; in a progressive stage, the frozen layers, the
stage's layer and identity layers for those not grown yet), so that the best energy, its parameters and its
schedule always describe one schedule.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.optimize

__all__ = ["Trace", "optimise", "multistart", "progressive", "spsa", "OPTIMISERS", "Gradient"]

OPTIMISERS = ("cobyla", "nelder-mead", "spsa", "gradient")

#: ``x -> (energy, d energy / d x)``: the exact energy and its gradient (the "gradient" optimiser's objective)
Gradient = Callable[[np.ndarray], tuple[float, np.ndarray]]


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

    @property
    def energy(self) -> float:
        """The best energy (the one ``best_x`` gives)."""
        return float(min(self.energies))

    def record(self, x: np.ndarray, e: float) -> None:
        """One evaluation: energy ``e`` of the full parameter vector ``x``."""
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
    grad: Gradient | None = None,
    seed: int = 0,
    embed: Callable[[np.ndarray], np.ndarray] | None = None,
) -> np.ndarray:
    """Minimise ``f`` over [0, 1]^d from ``x0`` with at most ``budget`` evaluations (recorded in ``trace``, each
    as ``embed(x)``: the full parameter vector ``x`` stands for; default ``x``). ``method="gradient"`` minimises
    ``grad`` (L-BFGS-B; it stops earlier when converged). Returns the best ``x`` of this call."""
    if method not in OPTIMISERS:
        raise ValueError(f"optimizer={method!r} is unknown: valid optimizers are {', '.join(OPTIMISERS)}")
    if budget < 1:
        raise ValueError(f"budget={budget} is out of range: valid range is >= 1 (evaluations)")
    if method == "gradient" and grad is None:
        raise ValueError("optimizer='gradient' needs a differentiable energy (grad=None)")
    stop = trace.evaluations + budget
    embed = embed or (lambda z: z)
    mine = Trace()  # this call's evaluations: its best x is what it returns

    class Budget(Exception):
        pass

    def note(x: np.ndarray, e: float) -> None:
        trace.record(embed(x), e)
        mine.record(x, e)

    def counted(x: np.ndarray) -> float:
        if trace.evaluations >= stop:
            raise Budget
        e = f(np.clip(x, 0, 1))
        note(np.clip(x, 0, 1), e)
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

            def fg(x: np.ndarray) -> tuple[float, np.ndarray]:
                if trace.evaluations >= stop:
                    raise Budget
                e, g = grad(np.clip(x, 0, 1))  # type: ignore[misc]  # checked above
                note(np.clip(x, 0, 1), e)
                return e, g

            scipy.optimize.minimize(fg, x0, jac=True, method="L-BFGS-B", bounds=bounds, options={"maxfun": budget})
    except Budget:
        pass
    return mine.best_x if mine.best_x is not None else np.array(x0)


def multistart(
    f: Callable[[np.ndarray], float],
    starts: list[np.ndarray],
    budget: int,
    method: str,
    trace: Trace,
    *,
    grad: Gradient | None = None,
    seed: int = 0,
    embed: Callable[[np.ndarray], np.ndarray] | None = None,
) -> np.ndarray:
    """:func:`optimise` from each of ``starts`` in turn, sharing ``budget``: start k gets the evaluations left
    divided by the starts left (what a converged start leaves over goes to the next). Returns the best ``x``."""
    best, best_e = np.array(starts[0]), np.inf
    stop = trace.evaluations + budget
    for k, x0 in enumerate(starts):
        share = (stop - trace.evaluations) // (len(starts) - k)
        if share < 1:
            break
        before = trace.evaluations
        x = optimise(f, x0, share, method, trace, grad=grad, seed=seed + k, embed=embed)
        e = min(trace.energies[before:])
        if e < best_e:
            best, best_e = x, e
    return best


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
    init_layer: Callable[[int, int], np.ndarray],
    identity: np.ndarray,
    budget: int,
    method: str,
    trace: Trace,
    *,
    make_grad: Callable[[int], Gradient] | None = None,
    starts: int = 1,
    seed: int = 0,
) -> np.ndarray:
    """Grow ``layers`` one at a time; stage l optimises only layer l's ``per_layer`` parameters (mask), with
    ``budget // layers`` evaluations shared by ``starts`` starts (``init_layer(layer, start)``); ``make_f(L)``
    (``make_grad(L)``) is the energy (and gradient) of an L-layer parameter vector; ``identity`` is a layer that
    plays nothing. Stage l freezes the best full vector so far (a stage that does not improve leaves an identity
    layer). Every evaluation is recorded as the full ``layers``-layer vector (identity layers not grown yet)."""
    x = np.zeros(0)
    for layer in range(layers):
        f_full = make_f(layer + 1)
        g_full = make_grad(layer + 1) if make_grad is not None else None
        frozen = x.copy()
        pad = np.tile(identity, layers - layer - 1)

        def f_new(z: np.ndarray, frozen=frozen, f_full=f_full) -> float:
            return f_full(np.concatenate([frozen, z]))

        def g_new(z: np.ndarray, frozen=frozen, g_full=g_full) -> tuple[float, np.ndarray]:
            e, g = g_full(np.concatenate([frozen, z]))  # type: ignore[misc]  # only with make_grad
            return e, g[len(frozen) :]

        def embed(z: np.ndarray, frozen=frozen, pad=pad) -> np.ndarray:
            return np.concatenate([frozen, z, pad])

        inits = [init_layer(layer, k) for k in range(starts)]
        multistart(f_new, inits, budget // layers, method, trace, grad=g_new if g_full is not None else None,
                   seed=seed + layer, embed=embed)  # fmt: skip
        best = trace.best_x if trace.best_x is not None else embed(inits[0])
        x = best[: (layer + 1) * per_layer]
    return trace.best_x if trace.best_x is not None else x
