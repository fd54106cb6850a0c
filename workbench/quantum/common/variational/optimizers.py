"""Optimisers of the variational layer: Adam on the noiseless simulator, parameter-shift gradients, SPSA.

- :func:`pretrain_noiseless`: Adam with cosine annealing on ``1 - |<psi|U(theta)|0>|**2`` through the
  statevector simulator (the authors' noise-unaware baseline: torchquantum ``train_state_prep.py``, Adam,
  lr 1e-2, cosine annealing), best of a few seeded restarts.
- :func:`parameter_shift_gradient`: ``(f(theta + s e_i) - f(theta - s e_i)) / (2 sin s)`` for every i in one
  batched call (exact for gates ``exp(-i theta P / 2)``, e.g. ``rz``; Mitarai et al. 2018, Schuld et al. 2019).
- :class:`SPSA`: simultaneous-perturbation stochastic approximation (Spall 1998: gains ``a/(k+1+A)**0.602``,
  ``c/(k+1)**0.101``), two evaluations per step.
- :func:`lbfgs_restarts`: batched multi-restart L-BFGS of a differentiable batched loss ``[R, P] -> [R]``
  (QGAS's VQE training), returning a :class:`Minimised`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor

from workbench.quantum.circuit import from_qiskit
from workbench.quantum.statevector import simulate_statevector

__all__ = ["pretrain_noiseless", "parameter_shift_gradient", "SPSA", "Pretrained", "Minimised", "lbfgs_restarts"]


@dataclass(frozen=True)
class Pretrained:
    """Result of :func:`pretrain_noiseless`: parameters ``[P]`` float64, noiseless fidelity, loss history."""

    theta: Tensor
    fidelity: float
    history: tuple[float, ...]


def pretrain_noiseless(
    circuit: object,
    target: Tensor,
    *,
    steps: int = 600,
    lr: float = 0.05,
    restarts: int = 3,
    seed: int = 0,
    progress: Callable[[float], None] | None = None,
) -> Pretrained:
    """Train ``circuit``'s parameters so that ``U(theta)|0>`` approaches ``target`` ``[2**n]`` on the noiseless
    statevector simulator (Adam, cosine-annealed lr, ``restarts`` seeded random starts in ``[0, 2 pi)``,
    batched as one ``[restarts, P]`` simulation). Returns the best restart."""
    if steps < 1 or restarts < 1:
        raise ValueError(f"steps={steps}, restarts={restarts}: valid values are >= 1")
    program = from_qiskit(circuit)
    gen = torch.Generator().manual_seed(seed)
    theta = torch.rand(restarts, program.num_parameters, generator=gen, dtype=torch.float64) * 2 * math.pi
    theta.requires_grad_(True)
    opt = torch.optim.Adam([theta], lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps)
    target = target.to(torch.complex128)
    history = []
    for i in range(steps):
        opt.zero_grad()
        state, _ = simulate_statevector(program, theta)  # [R, d]
        amp = state @ target.conj()
        infid = 1 - (amp.real**2 + amp.imag**2)  # [R]
        infid.sum().backward()
        opt.step()
        sched.step()
        history.append(float(infid.detach().min()))
        if progress is not None and i % 50 == 0:
            progress(i / steps)
    with torch.no_grad():
        state, _ = simulate_statevector(program, theta)
        amp = state @ target.conj()
        fid = amp.real**2 + amp.imag**2
    best = int(torch.argmax(fid))
    return Pretrained(theta.detach()[best].clone(), float(fid[best]), tuple(history))


def parameter_shift_gradient(f: Callable[[Tensor], Tensor], theta: Tensor, *, shift: float = math.pi / 2) -> Tensor:
    """Gradient ``[P]`` of ``f`` at ``theta`` ``[P]`` by the two-term shift rule; ``f`` maps a batch ``[B, P]``
    to ``[B]`` and is called once with ``B = 2P``."""
    p = theta.shape[-1]
    eye = torch.eye(p, dtype=theta.dtype) * shift
    batch = torch.cat([theta[None] + eye, theta[None] - eye])  # [2P, P]
    values = f(batch)
    return (values[:p] - values[p:]) / (2 * math.sin(shift))


@dataclass
class SPSA:
    """Minimise a noisy ``f`` (a batch ``[B, P] -> [B]``) by SPSA; :meth:`step` uses one call with B = 2.

    a, c: gain numerators; A: stability constant (Spall's rule of thumb: ~10 % of the iterations)."""

    a: float = 0.2
    c: float = 0.1
    A: float = 10.0
    alpha: float = 0.602
    gamma: float = 0.101
    seed: int = 0
    k: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self._rng = np.random.default_rng(self.seed)

    def step(self, f: Callable[[Tensor], Tensor], theta: Tensor) -> tuple[Tensor, float]:
        """One update; returns the new parameters and the mean of the two evaluations."""
        ak = self.a / (self.k + 1 + self.A) ** self.alpha
        ck = self.c / (self.k + 1) ** self.gamma
        delta = torch.as_tensor(self._rng.choice([-1.0, 1.0], size=theta.shape[-1]), dtype=theta.dtype)
        values = f(torch.stack([theta + ck * delta, theta - ck * delta]))
        grad = (values[0] - values[1]) / (2 * ck) * delta  # 1/delta_i = delta_i for +-1
        self.k += 1
        return theta - ak * grad, float(values.mean())


@dataclass(frozen=True)
class Minimised:
    """Result of :func:`lbfgs_restarts`: the best restart's final ``value`` and parameters ``params`` (``[P]``
    as floats), its value after each L-BFGS outer step (``curve``), and the number of loss+gradient evaluations
    (``evaluations``, each one call of the loss on the whole ``[R, P]`` batch)."""

    value: float
    params: tuple[float, ...]
    curve: tuple[float, ...]
    evaluations: int


def lbfgs_restarts(
    f: Callable[[Tensor], Tensor],
    num_parameters: int,
    *,
    steps: int = 30,
    restarts: int = 3,
    seed: int = 0,
) -> Minimised:
    """Minimise ``f`` (differentiable, ``theta [R, P] -> values [R]`` float64, the rows independent) from
    ``restarts`` starts at once: restart 0 at zero, the others uniform in ``[-pi, pi)`` from
    ``torch.Generator().manual_seed(seed)``. ``torch.optim.LBFGS`` (lr 1, up to 10 inner evaluations per outer
    step, strong-Wolfe line search, gradient tolerance 1e-9) runs on the summed values (the rows are independent,
    so the sum's gradient is each restart's own) for at most ``steps`` outer steps, stopping early when no
    restart's value moved by more than 1e-10 in a whole step; the restart of lowest final value is kept.
    Deterministic for a given seed.

    ValueError when ``num_parameters``, ``steps`` or ``restarts`` is below 1.
    """
    for name, value in (("num_parameters", num_parameters), ("steps", steps), ("restarts", restarts)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name}={value!r} is out of range: valid range is integers >= 1")
    gen = torch.Generator().manual_seed(seed)
    init = (torch.rand(restarts, num_parameters, generator=gen, dtype=torch.float64) * 2 - 1) * np.pi
    init[0] = 0.0
    theta = init.clone().requires_grad_(True)
    opt = torch.optim.LBFGS([theta], lr=1.0, max_iter=10, line_search_fn="strong_wolfe", tolerance_grad=1e-9)
    evaluations = 0
    curve = []

    def closure():
        nonlocal evaluations
        opt.zero_grad()
        total = f(theta).sum()
        total.backward()
        evaluations += 1
        return total

    for _ in range(steps):
        opt.step(closure)
        with torch.no_grad():
            curve.append(f(theta).detach())
        if len(curve) > 1 and float((curve[-2] - curve[-1]).abs().max()) < 1e-10:
            break  # no restart moved by more than 1e-10 in a whole L-BFGS step
    with torch.no_grad():
        final = f(theta)
    best = int(torch.argmin(final))
    return Minimised(
        value=float(final[best]),
        params=tuple(float(x) for x in theta[best].detach()),
        curve=tuple(float(c[best]) for c in curve),
        evaluations=evaluations,
    )
