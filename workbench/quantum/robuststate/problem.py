"""One state-preparation problem on one device: target, placed ansatz, machine noise, pre-trained parameters,
and the evaluation of a parameter vector on the machine (true fidelity, coherent and incoherent error).

Error split (ours; the paper's slide 10 plots "coherent" and "incoherent" error without a formula): with
``lambda_max`` the largest eigenvalue of the machine's state rho and ``F = <psi|rho|psi>``,
``1 - F = (1 - lambda_max) + (lambda_max - F)``. The first term (the distance of rho from the nearest pure
state) is the *incoherent* error, unchanged by any unitary retuning; the second (how far rho's dominant
eigenvector points away from the target) is the *coherent* error, which retuning the parameters can remove.
Both are >= 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from workbench.quantum.calibration import DeviceCalibration
from workbench.quantum.common.variational import (
    Ansatz,
    CoherentErrors,
    Machine,
    connected_layout,
    device_edges,
    pretrain_noiseless,
)
from workbench.quantum.device import Device
from workbench.quantum.noise import NoiseSpec
from workbench.quantum.robuststate.targets import target_state

__all__ = ["Problem", "Evaluation", "make_problem", "make_machine", "evaluate", "split_error"]


@dataclass(frozen=True, kw_only=True)
class Problem:
    """target name and state ``psi`` ``[2**n]``; ``layout`` (physical qubits of ``device``); ``calibration``
    of those qubits (renumbered); ``ansatz``; machine noise (``noise``; scale 0 when incoherent noise is off) and
    ``coherent`` errors; ``theta0`` the noiselessly pre-trained parameters and their noiseless fidelity."""

    target: str
    psi: Tensor
    device: str
    layout: tuple[int, ...]
    calibration: DeviceCalibration
    ansatz: Ansatz
    noise: NoiseSpec | None
    coherent: CoherentErrors
    theta0: Tensor
    noiseless_fidelity: float


@dataclass(frozen=True, kw_only=True)
class Evaluation:
    """True state fidelity on the machine and its split (see the module docstring)."""

    fidelity: float
    coherent_error: float
    incoherent_error: float


def make_problem(
    target: str,
    qubits: int,
    device: Device,
    *,
    blocks: int,
    coherent_strength: float,
    incoherent: bool = True,
    seed: int = 0,
    pretrain_steps: int = 350,
    pretrained: tuple[Tensor, float] | None = None,
) -> Problem:
    """Build the problem. Pre-training (noiseless; ~3-10 s on 2 cores at 4-5 qubits) is skipped when
    ``pretrained`` = (theta0, noiseless fidelity) is given (it depends only on target, layout, blocks, seed)."""
    layout = connected_layout(device.calibration, qubits)
    sub = device.subset(layout)
    ansatz = Ansatz(num_qubits=qubits, edges=device_edges(sub), blocks=blocks)
    psi = target_state(target, qubits, seed=seed)
    coherent = CoherentErrors.draw(qubits, ansatz.edges, strength=coherent_strength, seed=10_000 + seed)
    if pretrained is None:
        pre = pretrain_noiseless(ansatz.circuit(), psi, steps=pretrain_steps, seed=seed)
        pretrained = (pre.theta, pre.fidelity)
    return Problem(
        target=target,
        psi=psi,
        device=device.name,
        layout=layout,
        calibration=sub,
        ansatz=ansatz,
        # incoherent off: the calibration stays (scale 0: no channels) so gate durations, hence detuning
        # phases, are the device's
        noise=NoiseSpec.device(sub, scale=1.0 if incoherent else 0.0),
        coherent=coherent,
        theta0=pretrained[0],
        noiseless_fidelity=pretrained[1],
    )


def make_machine(problem: Problem, *, shots: int | None, seed: int = 0, coherent: bool = True) -> Machine:
    """A fresh (zero-count) machine for ``problem`` (``coherent=False``: its incoherent noise only)."""
    return Machine(
        problem.ansatz.circuit(),
        noise=problem.noise,
        coherent=problem.coherent if coherent else None,
        shots=shots,
        seed=seed,
    )


def split_error(rho: Tensor, psi: Tensor) -> Evaluation:
    """Fidelity, coherent and incoherent error of ``rho`` ``[d, d]`` against pure ``psi``."""
    rho = rho.detach().to(torch.complex128)
    f = float(torch.einsum("i,ij,j->", psi.conj(), rho, psi).real)
    lam = float(torch.linalg.eigvalsh((rho + rho.conj().T) / 2)[-1])
    return Evaluation(fidelity=f, coherent_error=max(lam - f, 0.0), incoherent_error=max(1 - lam, 0.0))


def evaluate(machine: Machine, theta: Tensor, psi: Tensor) -> Evaluation:
    """:func:`split_error` of the machine's true state at ``theta`` (not counted)."""
    with torch.no_grad():
        return split_error(machine.density(theta.detach()), psi)


def readout_mitigated(machine: Machine, freqs: Tensor, enabled: bool) -> Tensor:
    """``freqs`` ``[..., 2**n]`` with the inverse confusion matrices applied (when ``enabled`` and the machine
    has readout error); the result sums to 1 but may have small negative entries."""
    inv = machine.readout_inverse() if enabled else None
    if inv is None:
        return freqs
    from workbench.quantum.density import apply_readout

    n = machine.num_qubits
    shape = freqs.shape
    return apply_readout(freqs.reshape(-1, shape[-1]), inv, n).reshape(shape)


def settings_rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(20_000 + seed)
