"""Bayesian optimisation on the machine: a Gaussian-process loop (scikit-learn) around the pre-trained point.

The search space is ``theta0 + delta``, ``delta`` in ``[-radius, radius]**P``. Each evaluation is one shadow
fidelity estimate (``bases x shots`` executions). The GP (Matern 5/2 with a fitted white-noise term, normalised
targets) is refitted after every evaluation; the next point maximises expected improvement over candidates
drawn around the best point so far (scale radius/4) and uniformly in the box. The estimate at the best
observed point is biased upward by the noise (the usual BO caveat); the trace reports the true fidelity.
"""

from __future__ import annotations

import warnings

import numpy as np
import torch
from scipy.stats import norm
from torch import Tensor

from workbench.quantum.common.variational import Machine
from workbench.quantum.robuststate.trace import Progress, Recorder, Trace, shadow_fidelity_batch

__all__ = ["train_bo"]


def _expected_improvement(mu: np.ndarray, sd: np.ndarray, best: float) -> np.ndarray:
    sd = np.maximum(sd, 1e-12)
    z = (mu - best) / sd
    return (mu - best) * norm.cdf(z) + sd * norm.pdf(z)


def train_bo(
    machine: Machine,
    theta0: Tensor,
    psi: Tensor,
    *,
    budget: int,
    bases: int,
    mitigate: bool = True,
    seed: int = 0,
    radius: float = 0.25,
    candidates: int = 256,
    max_evaluations: int = 60,
    progress: Progress = None,
) -> Trace:
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel

    rng = np.random.default_rng(50_000 + seed)
    rec = Recorder("bo", machine, psi, budget, progress)
    p = theta0.shape[-1]
    n = machine.num_qubits
    cost = bases * (machine.shots or 1)
    base = theta0.detach().numpy().astype(np.float64)
    xs: list[np.ndarray] = []
    ys: list[float] = []
    rec.record(theta0, force=True)
    best_theta = theta0.detach().clone()

    def observe(delta: np.ndarray) -> float:
        settings = rng.integers(0, 3, size=(bases, n))
        t = torch.as_tensor(base + delta)[None]
        return float(shadow_fidelity_batch(machine, t, settings, psi, mitigate=mitigate)[0])

    kernel = ConstantKernel(0.01, (1e-6, 1.0)) * Matern(
        length_scale=radius, length_scale_bounds=(1e-2, 1e2), nu=2.5
    ) + WhiteKernel(1e-3, (1e-8, 1e-1))
    while rec.affordable(cost) and len(xs) < max_evaluations:
        if not xs:
            delta = np.zeros(p)
        else:
            gp = GaussianProcessRegressor(kernel=kernel, normalize_y=True, random_state=seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                gp.fit(np.stack(xs), np.asarray(ys))
            mu_obs = gp.predict(np.stack(xs))
            incumbent = int(np.argmax(mu_obs))
            local = xs[incumbent] + rng.normal(0, radius / 4, size=(candidates // 2, p))
            wide = rng.uniform(-radius, radius, size=(candidates - candidates // 2, p))
            cand = np.clip(np.concatenate([local, wide]), -radius, radius)
            mu, sd = gp.predict(cand, return_std=True)
            delta = cand[int(np.argmax(_expected_improvement(mu, sd, float(mu_obs[incumbent]))))]
            best_theta = torch.as_tensor(base + xs[incumbent])
        xs.append(delta)
        ys.append(observe(delta))
        rec.trace.steps += 1
        rec.record(best_theta)
    if xs:
        gp = GaussianProcessRegressor(kernel=kernel, normalize_y=True, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            gp.fit(np.stack(xs), np.asarray(ys))
        best_theta = torch.as_tensor(base + xs[int(np.argmax(gp.predict(np.stack(xs))))])
    return rec.finish(best_theta)
