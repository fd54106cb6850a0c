"""Training an ansatz: VQE (chemistry) or QAOA-style cost minimisation (combinatorial), on our torch simulator,
through the quantum area's shared variational layer (:mod:`workbench.quantum.common.variational`).

The energy of parameters ``theta`` is ``<psi(theta)| H |psi(theta)>`` with ``psi`` from the statevector
simulator (complex128) and ``H`` the problem's dense cost operator (at most 2**6 x 2**6 here):
:func:`~workbench.quantum.common.variational.losses.energy_function`. Training
(:func:`~workbench.quantum.common.variational.optimizers.lbfgs_restarts`): ``restarts`` parameter sets at once (a
batch ``[R, P]``: restart 0 starts at zero, the others uniform in [-pi, pi) from a seeded generator), each
minimised by L-BFGS (``torch.optim.LBFGS`` with strong-Wolfe line search on the summed energy: the restarts are
independent, so the sum's gradient is each restart's own), and the best restart kept. Deterministic for a
given seed; on one torch thread (:func:`workbench.threads.one_thread`).

:func:`noisy_energy` evaluates trained parameters under a device snapshot's noise: the bound circuit is
transpiled to the device (its basis, coupling map and layout) and run on a
:class:`~workbench.quantum.common.variational.machine.Machine` (density-matrix simulation with the snapshot's
calibrated noise) with an ideal measurement (no readout errors, noiseless basis changes: the noise of the
circuit, not of the readout). The cost operator, permuted to the physical qubits the transpiler chose, is
grouped into qubit-wise commuting Pauli settings
(:func:`~workbench.quantum.common.variational.shadows.term_settings`) and its energy read from the outcome
distribution in each setting (:func:`~workbench.quantum.common.variational.losses.pauli_energy`): by default the
exact probabilities (no sampling noise; not counted as executions), or ``shots`` sampled shots per setting
(counted by the machine).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from workbench.quantum.common.variational.losses import energy_function, pauli_energy
from workbench.quantum.common.variational.optimizers import lbfgs_restarts
from workbench.quantum.common.variational.shadows import term_settings
from workbench.threads import one_thread

if TYPE_CHECKING:
    from workbench.quantum.device import Device

__all__ = ["Training", "NoisyScore", "train", "noisy_energy", "permute_terms"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Training:
    """The outcome of training one ansatz: best ``energy``, its ``params`` (list, circuit.parameters order),
    the energy after each L-BFGS outer step of the best restart (``curve``) and the number of energy
    evaluations (``evaluations``, each a batch of ``restarts`` states)."""

    energy: float
    params: tuple[float, ...]
    curve: tuple[float, ...]
    evaluations: int


@dataclass(frozen=True)
class NoisyScore:
    """What :func:`noisy_energy` returns: the noisy ``energy``, the transpiled circuit's ``depth`` and
    ``two_qubit_gates``, the measurement ``settings`` the energy is read from (one circuit each), and the
    machine's counted ``executions`` (settings x shots; 0 for the exact, uncounted evaluation)."""

    energy: float
    depth: int
    two_qubit_gates: int
    settings: int
    executions: int


def train(
    circuit: Any,
    hamiltonian: np.ndarray,
    *,
    steps: int = 30,
    restarts: int = 3,
    seed: int = 0,
) -> Training:
    """Minimise the energy of ``circuit`` (with free parameters) for ``hamiltonian`` (see module docstring).

    steps: L-BFGS outer iterations (each up to 10 inner evaluations with line search); restarts: >= 1.
    ValueError (naming the parameter, its value and the valid range) for a bad argument.
    """
    with one_thread():
        out = lbfgs_restarts(
            energy_function(circuit, hamiltonian), circuit.num_parameters, steps=steps, restarts=restarts, seed=seed
        )
    return Training(energy=out.value, params=out.params, curve=out.curve, evaluations=out.evaluations)


def permute_terms(terms, mapping: dict[int, int], num_qubits: int) -> list[tuple[float, str]]:
    """Pauli terms with logical qubit ``q`` moved to ``mapping[q]`` on ``num_qubits`` qubits (qiskit labels)."""
    out = []
    for coeff, label in terms:
        n = len(label)
        new = ["I"] * num_qubits
        for q in range(n):
            new[num_qubits - 1 - mapping[q]] = label[n - 1 - q]
        out.append((coeff, "".join(new)))
    return out


def noisy_energy(
    circuit: Any,
    params: Any,
    terms,
    device: Device,
    *,
    seed: int = 0,
    scale: float = 1.0,
    shots: int | None = None,
) -> NoisyScore:
    """The energy of ``circuit`` bound to ``params`` on ``device`` (calibrated noise times ``scale``, density
    matrix, ideal measurement; see module docstring), with the transpiled circuit's structure. ``seed``: of the
    transpiler and of the shot sampler; ``shots``: None (default) reads the exact probabilities, N >= 1 samples
    N shots per setting (counted). ``scale=0`` gives the transpiled circuit without noise (the check that
    layout and permutation are right)."""
    from qiskit import transpile

    from workbench.quantum.circuits import compact
    from workbench.quantum.common.variational.machine import Machine
    from workbench.quantum.device import require_device

    dev = require_device(device)
    cal = dev.calibration
    if circuit.num_qubits > cal.num_qubits:
        raise ValueError(
            f"circuit has {circuit.num_qubits} qubits but device {dev.name} has {cal.num_qubits}: "
            f"valid widths are 1..{cal.num_qubits}"
        )
    bound = circuit.assign_parameters(list(params))
    tq = transpile(bound, backend=dev.backend, seed_transpiler=seed, optimization_level=1)
    final = tq.layout.final_index_layout()  # logical qubit q -> physical qubit final[q]
    small, physical = compact(tq)
    where = {p: i for i, p in enumerate(physical)}
    extra = [p for p in final if p not in where]
    if extra:  # a logical qubit the transpiler left idle: keep it in the simulation
        small, physical = _with_idle(tq, sorted(set(physical) | set(extra)))
        where = {p: i for i, p in enumerate(physical)}
    mapping = {q: where[final[q]] for q in range(circuit.num_qubits)}
    obs = permute_terms(terms, mapping, small.num_qubits)
    spec = dev.noise(physical, scale=scale)
    machine = Machine(small, noise=spec, shots=shots, seed=seed, measurement_noise=False)
    settings = term_settings([lbl for _, lbl in obs], small.num_qubits)
    theta = torch.zeros(0, dtype=torch.float64)  # the circuit is bound
    with one_thread():
        freqs = machine.probabilities(theta, settings) if shots is None else machine.measure(theta, settings)
        energy = float(pauli_energy(freqs, settings, obs))
    two = sum(1 for inst in small.data if len(inst.qubits) == 2)
    return NoisyScore(energy, int(small.depth()), int(two), int(settings.shape[0]), machine.executions)


def _with_idle(tq: Any, physical: list[int]):
    from qiskit import QuantumCircuit

    bit = {q: i for i, q in enumerate(tq.qubits)}
    new = {p: i for i, p in enumerate(physical)}
    out = QuantumCircuit(len(physical), global_phase=tq.global_phase)
    for inst in tq.data:
        if inst.name in ("measure", "barrier"):
            continue
        out.append(inst.operation, [new[bit[q]] for q in inst.qubits])
    return out, tuple(physical)
