"""The variational layer's classifier pieces: the gate-list ansatz, the ``Z`` readout and the gradient-variance
diagnostic. References: qiskit ``Statevector`` probabilities and ``SparsePauliOp`` expectation values, the
closed-form gradient of ``cos``, a hand-built circuit."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from workbench.quantum import probabilities
from workbench.quantum.common.variational import (
    ANGLES,
    Gate,
    GateAnsatz,
    GateBuilder,
    gradient_variance,
    z_expectations,
    z_signs,
)


def _ansatz() -> GateAnsatz:
    b = GateBuilder()
    for name, qubits in [("ry", (0,)), ("u3", (1,)), ("cx", (0, 1)), ("crx", (1, 2)), ("cu3", (2, 0)), ("rzz", (0, 2))]:
        b.add(name, *qubits)
    return GateAnsatz(3, tuple(b.gates), b.count, (b.count,), "mixed")


def test_gate_ansatz_circuit_equals_qiskit_gates_and_grows_by_blocks():
    from qiskit import QuantumCircuit
    from qiskit.quantum_info import Operator

    a = _ansatz()
    assert a.num_parameters == sum(ANGLES[g.name] for g in a.gates) == 9 and a.cx_count() == 1 + 2 + 2 + 2
    w = np.random.default_rng(0).uniform(0, 2 * math.pi, a.num_parameters)
    ref = QuantumCircuit(3)
    ref.ry(w[0], 0)
    ref.u(w[1], w[2], w[3], 1)
    ref.cx(0, 1)
    ref.crx(w[4], 1, 2)
    ref.cu(w[5], w[6], w[7], 0, 2, 0)
    ref.rzz(w[8], 0, 2)
    ours = Operator(a.circuit().assign_parameters(w))
    assert ours.equiv(Operator(ref))  # u3 / cu3 are written with rz/ry/cx: equal up to global phase
    grown = a.then([Gate("rx", (2,), 0), Gate("cz", (0, 1))], 1)
    assert grown.num_parameters == 10 and grown.block_sizes == (9, 1) and grown.gates[-2].first == 9
    assert grown.gates[-1].first == -1 and grown.num_blocks == 2


@pytest.mark.parametrize("qubits", [[0], [2, 0], [1, 2, 0]])
def test_z_expectations_equal_qiskit_pauli_expectations(qubits):
    from qiskit.quantum_info import SparsePauliOp, Statevector

    a = _ansatz()
    w = torch.as_tensor(np.random.default_rng(1).uniform(0, 2 * math.pi, (4, a.num_parameters)))
    probs = probabilities(a.circuit(), w)
    ours = z_expectations(probs, qubits, scale=5.0)
    for b in range(4):
        sv = Statevector(a.circuit().assign_parameters(w[b].numpy()))
        ref = [sv.expectation_value(SparsePauliOp.from_sparse_list([("Z", [q], 1.0)], 3)).real for q in qubits]
        np.testing.assert_allclose(ours[b].numpy(), 5.0 * np.array(ref), atol=1e-12)
    assert z_signs(3, qubits).shape == (8, len(qubits))


def test_z_expectations_refuse_a_qubit_outside_the_distribution():
    with pytest.raises(ValueError, match=r"qubits=\[3\]: valid range is 0..2"):
        z_expectations(torch.full((8,), 1 / 8), [3])
    with pytest.raises(ValueError, match="valid sizes are powers of 2"):
        z_expectations(torch.full((6,), 1 / 6), [0])


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_gradient_variance_of_cos_matches_the_closed_form():
    # L = sum_i cos(theta_i): dL/dtheta_i = -sin(theta_i), Var over U[0, 2 pi) = 1/2
    v = gradient_variance(lambda t: torch.cos(t).sum(), 3, draws=4000, seed=0)
    assert abs(v - 0.5) < 0.03
    again = gradient_variance(lambda t: torch.cos(t).sum(), 3, draws=4000, seed=0)
    assert again == v
    assert math.isnan(gradient_variance(lambda t: t.sum(), 0))
    with pytest.raises(ValueError, match="draws=1 is out of range"):
        gradient_variance(lambda t: t.sum(), 2, draws=1)
