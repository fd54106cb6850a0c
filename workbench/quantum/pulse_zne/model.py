"""MODEL: what zero-noise extrapolation can recover when the noise is a pure exponential decay.

If incoherent noise takes ``E(lambda) = E_inf + D exp(-lambda x)`` (``x``: the decay per unit scale factor, about
``T / tau_eff`` for a schedule of duration ``T``; ``D = E0 - E_inf``), every linear extrapolation (Richardson,
least-squares linear or polynomial: ``E0_hat = sum_i w_i E(lambda_i)`` with ``sum_i w_i = 1``) leaves
``D |sum_i w_i exp(-lambda_i x) - 1|`` of an unmitigated ``D (1 - exp(-x))``, so its reduction is

    reduction(x) = 1 - |sum_i w_i exp(-lambda_i x) - 1| / (1 - exp(-x))

independently of ``E_inf`` and ``D``; the exponential fit is exact (reduction 1). The model ignores coherent
drift (the reversal's residue, which the noiseless ``E(lambda)`` of the study shows), shot noise and readout
error, which is why it is an upper bound to compare measured reductions with, labelled MODEL.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from workbench.quantum.pulse_zne.extrapolation import extrapolate

__all__ = ["weights", "reduction", "decay_per_fold"]


def weights(method: str, scale_factors: Sequence[float], *, order: int = 2) -> np.ndarray:
    """The linear weights ``w_i`` of ``method`` (richardson, linear, polynomial) at ``scale_factors``."""
    if method == "exponential":
        raise ValueError("method='exponential' is not linear in the data: it has no weights (its reduction is 1)")
    n = len(scale_factors)
    return np.array([extrapolate(method, scale_factors, np.eye(n)[i], order=order) for i in range(n)])


def reduction(x: float | np.ndarray, method: str, scale_factors: Sequence[float]) -> np.ndarray:
    """MODEL reduction of ``|E - E0|`` by ``method`` for decay ``x`` per unit scale factor (x > 0)."""
    x = np.asarray(x, dtype=float)
    if np.any(x <= 0):
        raise ValueError(f"x={x} is out of range: valid range is > 0 (decay per unit scale factor)")
    if method == "exponential":
        return np.ones_like(x)
    w = weights(method, scale_factors)
    lam = np.asarray(scale_factors, dtype=float)
    resid = np.abs(np.exp(-np.multiply.outer(x, lam)) @ w - 1)
    return 1 - resid / (1 - np.exp(-x))


def decay_per_fold(scale_factors: Sequence[float], energies: Sequence[float]) -> float:
    """``x`` of the exponential through three equally spaced points ``E(lambda)`` (``exp(-x h) = r``)."""
    lam = np.asarray(scale_factors, dtype=float)
    e = np.asarray(energies, dtype=float)
    if lam.size != 3 or not np.isclose(lam[1] - lam[0], lam[2] - lam[1]):
        raise ValueError(f"scale_factors={list(lam)} must be three equally spaced values")
    r = (e[2] - e[1]) / (e[1] - e[0])
    if not 0 < r < 1:
        raise ValueError(f"E(lambda)={list(e)} is not a decaying exponential (ratio {r:.3g})")
    return float(-np.log(r) / (lam[1] - lam[0]))
