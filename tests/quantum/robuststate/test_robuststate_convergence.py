"""RobustState's convergence checks (slow: trains): under a known parameter over-rotation eps, fine-tuning
converges to theta* - eps; the machine's fidelity and error split against qiskit-aer's density matrix
(qiskit.quantum_info.state_fidelity)."""

from __future__ import annotations

import pytest
import torch

from workbench.quantum import statevector
from workbench.quantum.common.variational import CoherentErrors, Machine
from workbench.quantum.device import get_device
from workbench.quantum.robuststate.problem import evaluate, make_machine, make_problem, split_error
from workbench.quantum.robuststate.reference import aer_machine_density
from workbench.quantum.robuststate.straight_through import train_robuststate

pytestmark = pytest.mark.slow


def _identifiable_circuit():
    from qiskit import QuantumCircuit
    from qiskit.circuit import ParameterVector

    t = ParameterVector("t", 3)
    qc = QuantumCircuit(2)
    qc.ry(t[0], 0)
    qc.ry(t[1], 1)
    qc.cx(0, 1)
    qc.ry(t[2], 1)
    return qc


@pytest.mark.parametrize("shots", [None, 20_000])
def test_fine_tuning_converges_to_theta_minus_eps(shots: int | None) -> None:
    qc = _identifiable_circuit()
    star = torch.tensor([0.7, 1.9, -0.4], dtype=torch.float64)
    eps = torch.tensor([0.05, -0.08, 0.03], dtype=torch.float64)
    psi = statevector(qc, star)
    machine = Machine(qc, coherent=CoherentErrors(parameter_offset=tuple(eps.tolist())), shots=shots, seed=1)
    trace = train_robuststate(machine, star, psi, budget=10**12, bases=9, lr=0.03, max_steps=200, seed=0)
    err = (trace.theta - (star - eps)).abs().max()
    # exact probabilities: the fixed point is theta* - eps (Adam, cosine-annealed to 0); with 20k shots per
    # setting the shadow estimate's noise leaves ~1/sqrt(9 * 20000) ~ 2e-3 per component
    assert float(err) < (1e-4 if shots is None else 1e-2)
    assert trace.fidelity[-1] > (1 - 1e-8 if shots is None else 1 - 1e-4)
    assert machine.executions == 200 * 9 * (shots or 1)


def test_machine_fidelity_matches_aer_state_fidelity() -> None:
    from qiskit.quantum_info import DensityMatrix, state_fidelity

    pb = make_problem("w", 3, get_device("fake_perth"), blocks=3, coherent_strength=1.0, seed=2, pretrain_steps=60)
    machine = make_machine(pb, shots=100)
    ours = evaluate(machine, pb.theta0, pb.psi)
    ref = aer_machine_density(machine, pb.theta0)
    f_ref = state_fidelity(DensityMatrix(ref), pb.psi.numpy())
    assert abs(ours.fidelity - f_ref) < 1e-12
    ref_split = split_error(torch.as_tensor(ref), pb.psi)
    assert abs(ours.coherent_error - ref_split.coherent_error) < 1e-10
    assert ours.coherent_error + ours.incoherent_error == pytest.approx(1 - ours.fidelity, abs=1e-12)
