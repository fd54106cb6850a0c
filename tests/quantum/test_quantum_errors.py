"""Bad input fails early with a message naming the value and the rule. Reference: the message texts."""

from __future__ import annotations

import math

import pytest
import torch
from qiskit import QuantumCircuit
from qiskit.circuit import Gate, Parameter
from qiskit.circuit.library import MCXGate

from workbench.quantum import NoiseSpec, density_matrix, probabilities, statevector
from workbench.quantum.circuits import transpile_to_device
from workbench.quantum.device import get_device
from workbench.quantum.gates import gate_matrix


def _circuit(n: int = 2) -> QuantumCircuit:
    qc = QuantumCircuit(n)
    qc.h(0)
    return qc


def test_unsupported_gates_name_the_gate_and_suggest_transpile():
    qc = QuantumCircuit(5)
    qc.append(MCXGate(4), range(5))
    with pytest.raises(
        ValueError,
        match=r"instruction 0 \(mcx on qubits \[0, 1, 2, 3, 4\]\): gate 'mcx' is not "
        r"supported: supported gates are .*qiskit.transpile",
    ):
        statevector(qc)
    custom = QuantumCircuit(1)
    custom.append(Gate("mygate", 1, []), [0])
    with pytest.raises(ValueError, match="gate 'mygate' is not supported"):
        probabilities(custom, noise=NoiseSpec(depolarizing=0.1))
    with pytest.raises(ValueError, match="gate 'nope' is not supported"):
        gate_matrix("nope")


def test_too_many_qubits():
    with pytest.raises(
        ValueError, match=r"num_qubits=29 is too many for the statevector simulator: valid range is 0..28"
    ):
        statevector(QuantumCircuit(29))
    with pytest.raises(
        ValueError, match=r"num_qubits=14 is too many for the density-matrix simulator: valid range is 0..13"
    ):
        density_matrix(_circuit(14), noise=NoiseSpec(depolarizing=0.01))
    with pytest.raises(ValueError, match=r"batch=4096 x 2\*\*20 amplitudes is too large"):
        theta = Parameter("t")
        qc = QuantumCircuit(20)
        qc.rx(theta, 0)
        statevector(qc, torch.zeros(4096, 1))


def test_circuit_wider_than_device():
    with pytest.raises(ValueError, match=r"circuit has 6 qubits but device fake_lima has 5: valid widths are 1..5"):
        probabilities(_circuit(6), noise="fake_lima")
    with pytest.raises(ValueError, match=r"circuit has 9 qubits but device fake_jakarta has 7"):
        transpile_to_device(_circuit(9), get_device("fake_jakarta"))


def test_device_noise_needs_a_transpiled_circuit():
    with pytest.raises(
        ValueError,
        match=r"h on qubits \[0\] has no calibration on fake_lima .*transpile the circuit "
        r"to the device first, or use strict=False",
    ):
        probabilities(_circuit(2), noise="fake_lima")
    probabilities(_circuit(2), noise=NoiseSpec.device(get_device("fake_lima"), strict=False))  # allowed when asked


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"depolarizing": -0.1}, r"depolarizing\*scale=-0.1 is out of range: valid range is 0..1.33333"),
        ({"depolarizing": 0.5, "scale": 3}, r"depolarizing\*scale=1.5 is out of range"),
        ({"depolarizing_2q": 2.0}, r"depolarizing_2q\*scale=2 is out of range: valid range is 0..1.06667"),
        ({"t1": 0.0}, r"t1=0 is out of range: valid range is 1e-12..inf \(s\)"),
        ({"t1": 10e-6, "t2": 30e-6}, r"t2=3e-05 > 2\*t1=2e-05 is unphysical: valid range is 0 < t2 <= 2\*t1 \(s\)"),
        ({"readout_p01": 1.5}, r"readout_p01\*scale=1.5 is out of range: valid range is 0..1"),
        ({"over_rotation": 2.0}, r"over_rotation=2 is out of range: valid range is -1..1"),
        ({"zz": 4.0}, r"zz=4 is out of range: valid range is -3.14159..3.14159"),
        ({"scale": -1.0}, r"scale=-1 is out of range: valid range is 0..1e\+06"),
        ({"scale": math.nan}, r"scale=nan is out of range"),
    ],
)
def test_bad_noise_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        NoiseSpec(**kwargs)


def test_device_noise_does_not_mix_with_uniform_rates_and_unknown_device():
    with pytest.raises(ValueError, match="a device calibration sets depolarizing, T1/T2 and readout itself"):
        NoiseSpec.device(get_device("fake_lima")).replace(depolarizing=0.01)
    with pytest.raises(ValueError, match=r"device='fake_nowhere' is unknown: valid devices are .*fake_jakarta"):
        get_device("fake_nowhere")
    with pytest.raises(TypeError, match=r"NoiseSpec.device\('fake_lima'\): pass a Device or a DeviceCalibration"):
        NoiseSpec.device("fake_lima")  # a name is resolved at the config boundary, not by the noise model
    with pytest.raises(TypeError, match=r"device='fake_jakarta' is a str: pass a Device"):
        transpile_to_device(_circuit(2), "fake_jakarta")
    with pytest.raises(TypeError, match="noise must be a NoiseSpec, a device name or None"):
        probabilities(_circuit(), noise=0.1)


def test_bad_params():
    theta = Parameter("theta")
    qc = QuantumCircuit(1)
    qc.rx(theta, 0)
    with pytest.raises(ValueError, match=r"params=None but the circuit has 1 free parameter\(s\) \(theta\)"):
        statevector(qc)
    with pytest.raises(ValueError, match=r"params has shape \[3\]: expected \[1\] or \[B, 1\]"):
        statevector(qc, torch.zeros(3))
    with pytest.raises(ValueError, match=r"missing \['theta'\], unknown \['phi'\]"):
        statevector(qc, {"phi": 0.1})
    nonlinear = QuantumCircuit(1)
    nonlinear.rx(theta * theta, 0)
    with pytest.raises(ValueError, match="is not affine in its parameters"):
        statevector(nonlinear, [0.1])
    with pytest.raises(ValueError, match=r"dtype=torch.float64 is not supported"):
        statevector(_circuit(), dtype=torch.float64)


def test_mid_circuit_measurement_and_non_unitary_statevector():
    qc = QuantumCircuit(1, 1)
    qc.measure(0, 0)
    qc.x(0)
    with pytest.raises(ValueError, match="acts on a qubit that was already measured; only final measurements"):
        statevector(qc)
    reset = QuantumCircuit(1)
    reset.reset(0)
    with pytest.raises(ValueError, match="reset on qubits \\[0\\] is not unitary: use density_matrix"):
        statevector(reset)
    assert torch.allclose(density_matrix(reset)[0, 0].real, torch.tensor(1.0, dtype=torch.float64))
