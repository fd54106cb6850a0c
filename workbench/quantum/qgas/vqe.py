"""Training an ansatz: VQE (chemistry) or QAOA-style cost minimisation (combinatorial), on our torch simulator.

The energy of parameters ``theta`` is ``<psi(theta)| H |psi(theta)>`` with ``psi`` from
:func:`workbench.quantum.statevector.simulate_statevector` (complex128) and ``H`` the problem's dense cost
operator (at most 2**6 x 2**6 here). Training: ``restarts`` parameter sets at once (a batch ``[R, P]``: restart 0
starts at zero, the others uniform in [-pi, pi) from a seeded generator), each minimised by L-BFGS
(``torch.optim.LBFGS`` with strong-Wolfe line search on the summed energy: the restarts are independent, so
the sum's gradient is each restart's own), and the best restart kept. Deterministic for a given seed.

:func:`noisy_energy` evaluates trained parameters under a device snapshot's noise: the bound circuit is
transpiled to the device (its basis, coupling map and layout), simulated as a density matrix with the
snapshot's calibrated noise, and the cost operator, permuted to the physical qubits the transpiler chose, is
measured exactly (no shots: the noise's effect, not sampling noise).
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from workbench.quantum.circuit import from_qiskit
from workbench.quantum.statevector import simulate_statevector

__all__ = ["Training", "energy_function", "train", "noisy_energy", "permute_terms"]

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


def energy_function(circuit: Any, hamiltonian: np.ndarray):
    """``f(theta [R, P]) -> energies [R]`` (differentiable) for ``circuit`` and dense ``hamiltonian``."""
    program = from_qiskit(circuit)
    H = torch.as_tensor(np.asarray(hamiltonian), dtype=torch.complex128)  # [D, D]

    def energies(theta: torch.Tensor) -> torch.Tensor:
        psi, _ = simulate_statevector(program, theta)  # [R, D]
        return ((psi @ H.T) * psi.conj()).sum(-1).real  # [R]: sum_ij conj(psi_i) H_ij psi_j

    return energies


@contextlib.contextmanager
def one_thread():
    """Run torch on one intra-op thread inside the block, then restore the caller's setting. States here have
    at most 2**6 amplitudes: splitting such tiny kernels over threads only adds synchronisation (measured on
    the 2-core CI machine under load: 17 ms vs 117-150 ms per forward+backward of a 5-qubit, 32-gate ansatz)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


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
    """
    if steps < 1 or restarts < 1:
        raise ValueError(f"steps={steps}, restarts={restarts}: valid range is >= 1 for both")
    with one_thread():
        return _train(circuit, hamiltonian, steps, restarts, seed)


def _train(circuit: Any, hamiltonian: np.ndarray, steps: int, restarts: int, seed: int) -> Training:
    count = circuit.num_parameters
    f = energy_function(circuit, hamiltonian)
    gen = torch.Generator().manual_seed(seed)
    init = (torch.rand(restarts, count, generator=gen, dtype=torch.float64) * 2 - 1) * np.pi
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
    return Training(
        energy=float(final[best]),
        params=tuple(float(x) for x in theta[best].detach()),
        curve=tuple(float(c[best]) for c in curve),
        evaluations=evaluations,
    )


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
    circuit: Any, params: Any, terms, device: str, *, seed: int = 0, scale: float = 1.0
) -> tuple[float, int, int]:
    """``(energy, transpiled depth, transpiled two-qubit gates)`` of ``circuit`` bound to ``params`` on
    ``device`` (calibrated noise times ``scale``, density matrix, exact expectation; see module docstring).
    ``scale=0`` gives the transpiled circuit without noise (the check that layout and permutation are right)."""
    from qiskit import transpile

    from workbench.quantum import expectation
    from workbench.quantum.calibration import calibration_subset, fake_backend, load_calibration
    from workbench.quantum.circuits import compact
    from workbench.quantum.noise import NoiseSpec

    cal = load_calibration(device)
    if circuit.num_qubits > cal.num_qubits:
        raise ValueError(
            f"circuit has {circuit.num_qubits} qubits but device {device} has {cal.num_qubits}: "
            f"valid widths are 1..{cal.num_qubits}"
        )
    bound = circuit.assign_parameters(list(params))
    tq = transpile(bound, backend=fake_backend(device), seed_transpiler=seed, optimization_level=1)
    final = tq.layout.final_index_layout()  # logical qubit q -> physical qubit final[q]
    small, physical = compact(tq)
    where = {p: i for i, p in enumerate(physical)}
    extra = [p for p in final if p not in where]
    if extra:  # a logical qubit the transpiler left idle: keep it in the simulation
        small, physical = _with_idle(tq, sorted(set(physical) | set(extra)))
        where = {p: i for i, p in enumerate(physical)}
    mapping = {q: where[final[q]] for q in range(circuit.num_qubits)}
    obs = permute_terms(terms, mapping, small.num_qubits)
    spec = NoiseSpec.device(calibration_subset(cal, physical), scale=scale)
    with one_thread():
        energy = float(expectation(small, [(lbl, c) for c, lbl in obs], noise=spec))
    two = sum(1 for inst in small.data if len(inst.qubits) == 2)
    return energy, int(small.depth()), int(two)


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
