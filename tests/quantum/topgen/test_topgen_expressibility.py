"""Expressibility and Meyer-Wallach. References: qiskit ``Statevector`` / ``state_fidelity`` / ``partial_trace``
per state (``topgen.reference``), scipy ``quad`` for the Haar bin probabilities, exact facts (product states
MW 0, GHZ MW 1, idle KL = (2^n - 1) ln bins, Haar-random states KL ~ 0), and Sim et al.'s circuits 1, 2, 9."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from workbench.quantum import statevector
from workbench.quantum.circuits import ghz
from workbench.quantum.topgen.expressibility import (
    describe,
    fidelities,
    haar_bin_probabilities,
    idle_kl,
    kl_to_haar,
    meyer_wallach,
)
from workbench.quantum.topgen.reference import reference_fidelities, reference_kl, reference_meyer_wallach
from workbench.quantum.topgen.study import SIM_PUBLISHED
from workbench.quantum.topgen.templates import circuit_by_name, from_qasm, sim_circuit

QASM3 = """OPENQASM 3.0;
include "stdgates.inc";
input angle a;
input angle b;
qubit[3] q;
ry(a) q[0];
cx q[0], q[1];
rz(b) q[2];
cx q[1], q[2];
"""


@pytest.mark.parametrize(("name", "qubits"), [("sim-1", 3), ("sim-2", 5), ("sim-9", 4)])
def test_fidelities_equal_qiskit_state_fidelity(name, qubits):
    circuit = circuit_by_name(name, qubits, 2)
    ours = fidelities(circuit, 37, torch.Generator().manual_seed(3)).numpy()
    ref = reference_fidelities(circuit, 37, seed=3)
    np.testing.assert_allclose(ours, ref, atol=1e-12)  # complex128 amplitudes: round-off only


def test_fidelities_of_a_qasm3_template_equal_qiskit():
    circuit = from_qasm(QASM3)
    assert circuit.num_parameters == 2
    np.testing.assert_allclose(
        fidelities(circuit, 11, torch.Generator().manual_seed(0)).numpy(),
        reference_fidelities(circuit, 11, 0),
        atol=1e-12,
    )


def test_qasm2_without_parameters_gets_one_per_rotation():
    circuit = from_qasm('OPENQASM 2.0; include "qelib1.inc"; qreg q[2]; rx(0.1) q[0]; cx q[0],q[1]; rz(0.3) q[1];')
    assert circuit.num_parameters == 2


@pytest.mark.parametrize("qubits", [1, 3, 5])
def test_meyer_wallach_equals_partial_trace_reference(qubits):
    g = torch.Generator().manual_seed(qubits)
    states = torch.randn(7, 2**qubits, dtype=torch.complex128, generator=g)
    states = states / states.norm(dim=1, keepdim=True)
    ours = meyer_wallach(states, qubits).numpy()
    ref = [reference_meyer_wallach(s.numpy()) for s in states]
    np.testing.assert_allclose(ours, ref, atol=1e-12)


@pytest.mark.parametrize("qubits", [2, 3, 4, 5])
def test_meyer_wallach_product_zero_and_ghz_one(qubits):
    product = sim_circuit(1, qubits)
    theta = torch.rand(9, product.num_parameters, dtype=torch.float64) * 2 * math.pi
    assert meyer_wallach(statevector(product, theta), qubits).abs().max() < 1e-12
    assert abs(float(meyer_wallach(statevector(ghz(qubits))[None], qubits)[0]) - 1.0) < 1e-12


@pytest.mark.parametrize(("qubits", "bins"), [(2, 75), (3, 7), (4, 75)])
def test_haar_bins_equal_quadrature_and_kl_equals_reference(qubits, bins):
    from scipy.integrate import quad

    n = 2**qubits
    q = haar_bin_probabilities(qubits, bins)
    ref = [quad(lambda f: (n - 1) * (1 - f) ** (n - 2), j / bins, (j + 1) / bins)[0] for j in range(bins)]
    np.testing.assert_allclose(q, ref, rtol=1e-9, atol=1e-15)
    fid = np.random.default_rng(0).beta(1, n - 1, size=501)
    assert kl_to_haar(fid, qubits, bins) == pytest.approx(reference_kl(fid, qubits, bins), rel=1e-7, abs=1e-12)


def test_idle_circuit_gets_the_upper_bound_and_haar_states_nearly_zero():
    from qiskit import QuantumCircuit

    assert describe(QuantumCircuit(4), pairs=300).expressibility_kl == pytest.approx(15 * math.log(75), rel=1e-12)
    assert idle_kl(4) == pytest.approx(15 * math.log(75), rel=1e-12)
    g = torch.Generator().manual_seed(1)
    a = torch.randn(5000, 16, dtype=torch.complex128, generator=g)
    b = torch.randn(5000, 16, dtype=torch.complex128, generator=g)
    a, b = a / a.norm(dim=1, keepdim=True), b / b.norm(dim=1, keepdim=True)
    fid = (a.conj() * b).sum(1).abs() ** 2
    # finite-sample bias of a 75-bin histogram KL with 5000 samples is about (bins - 1) / (2 N) = 0.0074
    assert kl_to_haar(fid, 4, 75) < 0.03


@pytest.mark.parametrize("name", ["sim-1", "sim-2", "sim-9"])
def test_sim_circuits_on_four_qubits_match_the_published_values(name):
    # one seed here; 0.04 nats is about 3 standard deviations of the KL over seeds at 5000 pairs (0.012-0.027)
    d = describe(sim_circuit(int(name[-1]), 4), pairs=5000, bins=75, seed=0)
    published = SIM_PUBLISHED[name]
    assert abs(d.expressibility_kl - published["expressibility_kl"]) <= 0.04
    if published["mw_checked"]:
        assert d.meyer_wallach == pytest.approx(published["meyer_wallach"], abs=1e-9)


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_sim_2_meyer_wallach_agrees_with_qiskit_partial_traces_not_with_the_transcribed_value():
    from qiskit.quantum_info import Statevector

    from workbench.quantum.topgen.reference import reference_meyer_wallach

    qc = sim_circuit(2, 4)
    rng = np.random.default_rng(3)
    values = [
        reference_meyer_wallach(Statevector(qc.assign_parameters(rng.uniform(0, 2 * np.pi, 8)))) for _ in range(400)
    ]
    d = describe(qc, pairs=2000, bins=75, seed=0)
    assert d.meyer_wallach == pytest.approx(np.mean(values), abs=0.03)
    assert abs(d.meyer_wallach - SIM_PUBLISHED["sim-2"]["meyer_wallach"]) > 0.1


def test_sim_2_expressibility_equals_sim_1_a_fixed_unitary_keeps_fidelities():
    f1 = fidelities(sim_circuit(1, 4), 500, torch.Generator().manual_seed(5))
    f2 = fidelities(sim_circuit(2, 4), 500, torch.Generator().manual_seed(5))
    np.testing.assert_allclose(f1.numpy(), f2.numpy(), atol=1e-12)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("sim-7", "circuit='sim-7' is unknown"),
        ("OPENQASM 2.0; qreg q[1]; nope q[0];", "circuit: not a valid OpenQASM 2 program"),
        ("", "not OpenQASM"),
    ],
)
def test_bad_circuits_are_refused_naming_them(text, words):
    with pytest.raises(ValueError, match=words):
        if text:
            circuit_by_name(text, 4)
        else:
            from_qasm(text)
