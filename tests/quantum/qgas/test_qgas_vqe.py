"""VQE training and scoring on our torch simulator.

References: qiskit ``Statevector(circuit).expectation_value(SparsePauliOp)`` for energies (to 1e-10, fp64);
exact diagonalisation for what training must reach (UCCSD on H2 and LiH is exact in these 2-electron spaces);
autograd through the simulator against central finite differences; the transpiled circuit without noise for
the layout permutation used under device noise.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from qiskit.quantum_info import SparsePauliOp, Statevector

from workbench.quantum.qgas.ansatze import excitation_generators, hardware_efficient, qaoa, uccsd
from workbench.quantum.qgas.problems import get_problem
from workbench.quantum.qgas.vqe import energy_function, noisy_energy, train


@pytest.mark.parametrize("name", ["lih", "h2", "maxcut", "portfolio"])
def test_energy_equals_qiskit_statevector_expectation(name):
    p = get_problem(name)
    circuit = hardware_efficient(p.num_qubits, reps=2)
    theta = torch.as_tensor(np.random.default_rng(5).uniform(-np.pi, np.pi, size=(3, circuit.num_parameters)))
    ours = energy_function(circuit, p.matrix())(theta)
    op = SparsePauliOp.from_list([(lbl, c) for c, lbl in p.terms])
    for row, value in zip(theta, ours):
        ref = Statevector(circuit.assign_parameters(row.tolist())).expectation_value(op).real
        assert float(value) == pytest.approx(ref, abs=1e-10)


def test_gradient_equals_finite_differences():
    p = get_problem("lih")
    circuit = hardware_efficient(4, reps=1)
    f = energy_function(circuit, p.matrix())
    theta = torch.linspace(-1, 1, circuit.num_parameters, dtype=torch.float64)[None].requires_grad_(True)
    f(theta).sum().backward()
    h = 1e-6
    for k in range(circuit.num_parameters):
        e = torch.zeros_like(theta)
        e[0, k] = h
        fd = (f(theta.detach() + e) - f(theta.detach() - e)) / (2 * h)
        assert float(theta.grad[0, k]) == pytest.approx(float(fd), abs=1e-7)  # O(h^2) + round-off / h


@pytest.mark.slow
@pytest.mark.parametrize("name", ["h2", "lih"])
def test_uccsd_reaches_the_exact_energy(name):
    p = get_problem(name)
    assert [n for n, _ in excitation_generators(4, 2)] == ["s0->2", "s1->3", "d01->23"]
    out = train(uccsd(4, p.hint), p.matrix(), steps=40, restarts=2)
    assert out.energy - p.exact == pytest.approx(0.0, abs=1e-7)


def test_training_is_deterministic_and_its_curve_does_not_rise():
    p = get_problem("portfolio")
    a = train(qaoa(p.terms, 4, layers=1), p.matrix(), steps=10, restarts=2, seed=3)
    b = train(qaoa(p.terms, 4, layers=1), p.matrix(), steps=10, restarts=2, seed=3)
    assert a == b
    assert all(y <= x + 1e-12 for x, y in zip(a.curve, a.curve[1:]))
    assert a.energy >= p.exact - 1e-12


@pytest.mark.slow
def test_noisy_energy_without_noise_is_the_trained_energy_and_noise_raises_it():
    p = get_problem("maxcut")  # 5 qubits on the 7-qubit fake_jakarta: layout and permutation matter
    circuit = hardware_efficient(5, reps=1)
    out = train(circuit, p.matrix(), steps=20, restarts=2)
    clean, depth, two = noisy_energy(circuit, out.params, p.terms, "fake_jakarta", scale=0.0)
    assert clean == pytest.approx(out.energy, abs=1e-9)
    assert two >= 4 and depth >= 1
    noisy = noisy_energy(circuit, out.params, p.terms, "fake_jakarta")[0]
    assert noisy > out.energy + 1e-3


def test_bad_training_arguments():
    p = get_problem("h2")
    with pytest.raises(ValueError, match=r"steps=0, restarts=1: valid range is >= 1"):
        train(hardware_efficient(4), p.matrix(), steps=0, restarts=1)
    with pytest.raises(ValueError, match=r"circuit has 4 qubits but device fake_armonk has 1: valid widths are 1..1"):
        noisy_energy(hardware_efficient(4), [0.0] * 8, p.terms, "fake_armonk")
