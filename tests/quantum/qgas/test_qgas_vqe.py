"""VQE training and scoring on our torch simulator, through the shared variational layer.

References: qiskit ``Statevector(circuit).expectation_value(SparsePauliOp)`` for energies (to 1e-10, fp64);
exact diagonalisation for what training must reach (UCCSD on H2 and LiH is exact in these 2-electron spaces);
autograd through the simulator against central finite differences; the transpiled circuit without noise for
the layout permutation used under device noise; the previous noisy scoring (``Tr(rho O)`` of the transpiled
circuit's density matrix, kept here as :func:`_reference_noisy_energy`) for the machine's Pauli-setting readout;
the exact probabilities and the multinomial spread for the shot-sampled score.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from qiskit.quantum_info import SparsePauliOp, Statevector

from workbench.quantum.common.variational import energy_function
from workbench.quantum.device import get_device
from workbench.quantum.qgas.ansatze import excitation_generators, hardware_efficient, qaoa, uccsd
from workbench.quantum.qgas.problems import get_problem
from workbench.quantum.qgas.vqe import _with_idle, noisy_energy, permute_terms, train


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
    clean = noisy_energy(circuit, out.params, p.terms, get_device("fake_jakarta"), scale=0.0)
    assert clean.energy == pytest.approx(out.energy, abs=1e-9)
    assert clean.two_qubit_gates >= 4 and clean.depth >= 1
    assert clean.settings == 1 and clean.executions == 0  # MaxCut is diagonal: one Z setting, exact: uncounted
    noisy = noisy_energy(circuit, out.params, p.terms, get_device("fake_jakarta")).energy
    assert noisy > out.energy + 1e-3


def test_bad_training_arguments():
    p = get_problem("h2")
    with pytest.raises(ValueError, match=r"steps=0 is out of range: valid range is integers >= 1"):
        train(hardware_efficient(4), p.matrix(), steps=0, restarts=1)
    with pytest.raises(ValueError, match=r"restarts=0 is out of range: valid range is integers >= 1"):
        train(hardware_efficient(4), p.matrix(), steps=3, restarts=0)
    with pytest.raises(ValueError, match=r"hamiltonian has shape \[4, 4\]: expected \[16, 16\]"):
        train(hardware_efficient(4), np.eye(4), steps=3)
    with pytest.raises(ValueError, match=r"shots=0 is out of range: valid values are None \(exact\) or integers >= 1"):
        ansatz = hardware_efficient(4)
        noisy_energy(ansatz, [0.0] * ansatz.num_parameters, p.terms, get_device("fake_jakarta"), shots=0)
    with pytest.raises(ValueError, match=r"circuit has 4 qubits but device fake_armonk has 1: valid widths are 1..1"):
        noisy_energy(hardware_efficient(4), [0.0] * 8, p.terms, get_device("fake_armonk"))


def _reference_noisy_energy(circuit, params, terms, device, *, seed=0, scale=1.0):
    """The noisy score as QGAS computed it before the machine: ``Tr(rho O)`` of the transpiled circuit's density
    matrix (``workbench.quantum.expectation``, no readout errors), the independent reference."""
    from qiskit import transpile

    from workbench.quantum import expectation
    from workbench.quantum.calibration import calibration_subset, fake_backend, load_calibration
    from workbench.quantum.circuits import compact
    from workbench.quantum.noise import NoiseSpec

    cal = load_calibration(device)
    tq = transpile(
        circuit.assign_parameters(list(params)),
        backend=fake_backend(device),
        seed_transpiler=seed,
        optimization_level=1,
    )
    final = tq.layout.final_index_layout()
    small, physical = compact(tq)
    if any(p not in physical for p in final):
        small, physical = _with_idle(tq, sorted(set(physical) | set(final)))
    where = {p: i for i, p in enumerate(physical)}
    obs = permute_terms(terms, {q: where[final[q]] for q in range(circuit.num_qubits)}, small.num_qubits)
    spec = NoiseSpec.device(calibration_subset(cal, physical), scale=scale)
    return float(expectation(small, [(lbl, c) for c, lbl in obs], noise=spec))


@pytest.mark.parametrize(
    "device,problem,ansatz,seed",
    [
        ("fake_jakarta", "h2", "uccsd", 0),  # cx basis; X/Y terms: 5 settings
        ("fake_jakarta", "lih", "hea", 3),
        ("fake_kyiv", "lih", "hea", 0),  # ecr basis
        ("fake_aachen", "h2", "hea", 1),  # cz basis
        ("fake_almaden", "maxcut", "hea", 0),  # u1/u2/u3 basis; 5 of 20 qubits
        ("fake_fractional", "portfolio", "qaoa", 2),  # rx/rzz in the basis
    ],
)
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_noisy_energy_on_the_machine_equals_the_density_matrix_expectation(device, problem, ansatz, seed):
    p = get_problem(problem)
    circuit = {
        "uccsd": lambda: uccsd(p.num_qubits, p.hint),
        "hea": lambda: hardware_efficient(p.num_qubits, reps=2),
        "qaoa": lambda: qaoa(p.terms, p.num_qubits, layers=1),
    }[ansatz]()
    params = np.random.default_rng(seed).uniform(-np.pi, np.pi, circuit.num_parameters).tolist()
    ours = noisy_energy(circuit, params, p.terms, get_device(device), seed=seed)
    ref = _reference_noisy_energy(circuit, params, p.terms, device, seed=seed)
    assert ours.energy == pytest.approx(ref, abs=1e-9)
    assert ours.executions == 0 and ours.settings >= 1
    half = noisy_energy(circuit, params, p.terms, get_device(device), seed=seed, scale=0.5).energy
    assert half == pytest.approx(
        _reference_noisy_energy(circuit, params, p.terms, device, seed=seed, scale=0.5), abs=1e-9
    )


def test_sampled_noisy_energy_is_counted_seeded_and_within_the_multinomial_spread():
    from workbench.quantum.qgas.vqe import NoisyScore

    p = get_problem("h2")
    circuit = uccsd(4, p.hint)
    params = [0.3, -0.2, 0.1]
    exact = noisy_energy(circuit, params, p.terms, get_device("fake_jakarta"))
    shots = 20_000
    a = noisy_energy(circuit, params, p.terms, get_device("fake_jakarta"), shots=shots, seed=4)
    b = noisy_energy(circuit, params, p.terms, get_device("fake_jakarta"), shots=shots, seed=4)
    assert isinstance(a, NoisyScore) and a == b  # seeded
    assert exact.settings == a.settings == 5  # Z..Z, and the four XXYY-type terms of H2 apart
    assert a.executions == 5 * shots and exact.executions == 0
    # each setting's estimate is a mean of `shots` i.i.d. values bounded by B = sum |c_k| over the non-identity
    # terms, so its standard deviation is at most B / sqrt(shots); over the settings at most B sqrt(K / shots)
    # (the exact spread is checked in tests/quantum/common/variational)
    bound = sum(abs(c) for c, lbl in p.terms if set(lbl) != {"I"})
    sigma = bound * np.sqrt(a.settings / shots)
    assert abs(a.energy - exact.energy) < 5 * sigma
    assert abs(a.energy - exact.energy) > 0  # sampled, not exact
