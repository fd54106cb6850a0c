"""The torch transmon simulator against qutip, scipy's ODE solver, analytic Rabi/T1/T2 and qiskit operators.

Tolerances: qutip mesolve/sesolve with our piecewise-constant coefficients <= 1e-6 (max abs density-matrix
entry); the piecewise-constant midpoint rule converges at second order to the continuous-frame propagator.
"""

import math

import numpy as np
import pytest
import torch
from qiskit import QuantumCircuit, transpile
from qiskit.quantum_info import Operator, random_unitary

from workbench.quantum.common.pulse.fidelity import average_gate_fidelity, from_qiskit, leakage
from workbench.quantum.common.pulse.hamiltonian import hamiltonian_steps, operators
from workbench.quantum.common.pulse.natives import (
    X_DURATION,
    X_SIGMA,
    calibrate,
    calibrate_single,
    circuit_schedule,
    frame_rotation,
)
from workbench.quantum.common.pulse.propagate import evolve_density, unitary
from workbench.quantum.common.pulse.reference import ode_unitary, qutip_evolve
from workbench.quantum.common.pulse.schedule import Play, Schedule
from workbench.quantum.common.pulse.waveforms import constant, drag, gaussian, gaussian_square
from workbench.quantum.device import load_pulse_device, pulse_device_names


@pytest.fixture(scope="module")
def pair():
    return load_pulse_device("fake_jakarta", (0, 1), levels=3)


@pytest.fixture(scope="module")
def natives(pair):
    return calibrate(pair)


def _rho(dim, entries):
    rho = np.zeros((dim, dim), complex)
    for (i, j), v in entries.items():
        rho[i, j] = v
    return rho


def test_device_is_read_from_the_backend_file(pair):
    assert pair.source.endswith("conf_jakarta.json")
    assert pair.omega[0] / (2 * math.pi) == pytest.approx(5.2366, abs=1e-3)  # GHz
    assert pair.anharmonicity[0] == pytest.approx(-2.1356, abs=1e-3)
    assert pair.dt == pytest.approx(0.2222, abs=1e-4)
    assert pair.coupling(0, 1) == pytest.approx(0.01229, abs=1e-5) and pair.coupling(1, 0) == pair.coupling(0, 1)
    assert len(pulse_device_names()) >= 40


def test_bad_device_and_qubits_are_refused():
    with pytest.raises(ValueError, match="device='nowhere' is unknown"):
        load_pulse_device("nowhere")
    with pytest.raises(ValueError, match="qubits=.*out of range.*0..6"):
        load_pulse_device("fake_jakarta", (0, 9))
    with pytest.raises(ValueError, match="levels=4"):
        load_pulse_device("fake_jakarta", (0,), levels=4)
    no_ham = [n for n in ("fake_sherbrooke", "fake_brisbane", "fake_kyiv") if n not in pulse_device_names()]
    if no_ham:
        with pytest.raises(ValueError, match="has no Hamiltonian data"):
            load_pulse_device(no_ham[0])


@pytest.mark.parametrize("noisy", [False, True])
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_density_matrix_matches_qutip_mesolve(pair, noisy):
    dev = pair if noisy else pair.noiseless()
    s = Schedule.of(
        [
            Play("d0", drag(160, 0.17, 40, 1.0, 0.3)),
            Play("u0-1", gaussian_square(301, 0.4, 64, 100.5, 1.0), 97),  # odd lengths and a fractional width
            Play("d1", drag(160, 0.1, 40, 0.5), 50, 0.01),
        ]
    )
    rho = _rho(9, {(0, 0): 0.7, (4, 4): 0.3, (0, 4): 0.3, (4, 0): 0.3})
    ours = evolve_density(torch.from_numpy(rho), hamiltonian_steps(dev, s), dev).numpy()
    ref = qutip_evolve(dev, s, rho)
    assert np.abs(ours - ref).max() <= 1e-6


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_piecewise_constant_converges_at_second_order_to_the_continuous_frames(pair):
    dev = pair.noiseless()
    s = Schedule.of([Play("d0", drag(64, 0.3, 16, 1.0, 0.3)), Play("u0-1", gaussian_square(80, 0.4, 16, 20, 1.0), 7)])
    exact = ode_unitary(dev, s)
    errs = [np.abs(unitary(hamiltonian_steps(dev, s, substeps=k)).numpy() - exact).max() for k in (2, 4, 8)]
    assert errs[1] < 2e-3
    assert 3.0 < errs[0] / errs[1] < 5.0 and 3.0 < errs[1] / errs[2] < 5.0


def test_rabi_angle_is_drive_times_area_and_a_pi_pulse_flips_zero():
    dev = load_pulse_device("fake_jakarta", (0,), levels=2).noiseless()
    area = float(gaussian(X_DURATION, 1.0, X_SIGMA).real.sum())
    for theta in (0.3, math.pi / 2, math.pi, 2.5):
        amp = theta / (dev.drive[0] * area * dev.dt)
        u = unitary(hamiltonian_steps(dev, Schedule.of([Play("d0", gaussian(X_DURATION, amp, X_SIGMA))])))
        assert float(abs(u[1, 0]) ** 2) == pytest.approx(math.sin(theta / 2) ** 2, abs=1e-10)
    # phase pi/2 rotates about +Y: |0> -> (|0> + |1>)/sqrt2 with a real positive amplitude on |1>
    amp = (math.pi / 2) / (dev.drive[0] * area * dev.dt)
    u = unitary(hamiltonian_steps(dev, Schedule.of([Play("d0", gaussian(X_DURATION, amp, X_SIGMA, math.pi / 2))])))
    assert u[1, 0].numpy() == pytest.approx(1 / math.sqrt(2), abs=1e-9)


def test_zero_amplitude_is_the_drift_only():
    one = load_pulse_device("fake_jakarta", (0,), levels=3)
    u = unitary(hamiltonian_steps(one, Schedule.of([Play("d0", constant(100, 0.0))])))
    t = 100 * one.dt
    expected = np.diag([1, 1, np.exp(-1j * one.anharmonicity[0] * t)])  # n(n-1)/2 * anharm on level 2
    assert np.abs(u.numpy() - expected).max() < 1e-12
    assert float(average_gate_fidelity(u, torch.eye(2), 1, 3)) == pytest.approx(1.0, abs=1e-12)


def test_t1_and_t2_decay_analytically():
    dev = load_pulse_device("fake_jakarta", (0,), levels=2)
    t1, t2 = dev.t1[0], dev.t2[0]
    idle = Schedule.of([Play("d0", constant(2000, 0.0))])
    steps = hamiltonian_steps(dev, idle, substeps=1)
    t = 2000 * dev.dt
    excited = evolve_density(torch.tensor([[0, 0], [0, 1]], dtype=torch.complex128), steps, dev)
    assert float(excited[1, 1].real) == pytest.approx(math.exp(-t / t1), rel=1e-9)
    plus = evolve_density(torch.full((2, 2), 0.5, dtype=torch.complex128), steps, dev)
    assert float(abs(plus[0, 1])) == pytest.approx(0.5 * math.exp(-t / t2), rel=1e-9)


def test_drag_reduces_leakage_and_gate_error_in_three_levels():
    dev = load_pulse_device("fake_jakarta", (0,), levels=3).noiseless()
    # a short pi pulse (32 dt = 7.1 ns) leaks to |2>; the DRAG quadrature near beta = -1/(2 anharm dt) cuts it
    area = float(gaussian(32, 1.0, 8).real.sum())
    amp = math.pi / (dev.drive[0] * area * dev.dt)

    def leak(beta):
        return float(leakage(unitary(hamiltonian_steps(dev, Schedule.of([Play("d0", drag(32, amp, 8, beta))]))), 1, 3))

    assert min(leak(b) for b in np.linspace(0.5, 2.5, 9)) < 0.5 * leak(0.0)
    # the calibrated X (amp, beta, detuning) has a far smaller error than the same amplitude without DRAG
    x = calibrate_single(dev, 0, "x")
    target = from_qiskit(Operator(_x()), 1)
    plain = unitary(hamiltonian_steps(dev, Schedule.of([Play("d0", drag(X_DURATION, x.amp, X_SIGMA, 0.0))])))
    assert 1 - x.fidelity < 0.1 * (1 - float(average_gate_fidelity(plain, target, 1, 3)))
    assert x.beta == pytest.approx(-1 / (2 * dev.anharmonicity[0] * dev.dt), rel=0.3)


def _x():
    qc = QuantumCircuit(1)
    qc.x(0)
    return qc


def test_fidelity_uses_the_adjoint_not_the_inverse_rotation():
    """NAPA's tutorial took |Tr(U V)|, which scores the inverse rotation as perfect."""
    sx = from_qiskit(Operator(QuantumCircuit(1).compose(QuantumCircuit(1))), 1)
    qc = QuantumCircuit(1)
    qc.sx(0)
    v = from_qiskit(Operator(qc), 1)
    assert float(average_gate_fidelity(v, v, 1, 2)) == pytest.approx(1.0)
    assert float(average_gate_fidelity(v.mH, v, 1, 2)) < 0.7
    assert sx.shape == (2, 2)


@pytest.mark.slow  # several seconds (the slow lane, CI, runs it)
def test_calibrated_natives_and_compiled_circuits_match_qiskit(pair, natives):
    assert natives.x[0].fidelity > 0.9999 and natives.sx[1].fidelity > 0.9999
    assert natives.ecr[(0, 1)].fidelity > 0.998
    for qc in (_cx(), _random_two_qubit()):
        tq = transpile(qc, basis_gates=["ecr", "rz", "sx", "x"], coupling_map=[[0, 1]], seed_transpiler=0)
        sched, frames = circuit_schedule(tq, natives)
        u = frame_rotation(frames, pair) @ unitary(hamiltonian_steps(pair, sched))
        assert float(average_gate_fidelity(u, from_qiskit(Operator(qc), 2), 2, 3)) > 0.99


def _cx():
    qc = QuantumCircuit(2)
    qc.cx(0, 1)
    return qc


def _random_two_qubit():
    qc = QuantumCircuit(2)
    qc.append(random_unitary(4, seed=3), [0, 1])
    return qc


def test_amplitude_above_the_limit_and_bad_channels_are_refused(pair):
    with pytest.raises(ValueError, match="amplitude=1.2 on channel d0 is above the device's limit"):
        hamiltonian_steps(pair, Schedule.of([Play("d0", constant(10, 1.2))]))
    with pytest.raises(ValueError, match="channel='u0-0' needs two different qubits"):
        hamiltonian_steps(pair, Schedule.of([Play("u0-0", constant(10, 0.1))]))
    with pytest.raises(ValueError, match="channel='d5' names qubit 5"):
        hamiltonian_steps(pair, Schedule.of([Play("d5", constant(10, 0.1))]))


def test_gradients_flow_to_amplitude_phase_detuning_and_width(pair):
    amp = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
    phase = torch.tensor(0.2, dtype=torch.float64, requires_grad=True)
    det = torch.tensor(0.01, dtype=torch.float64, requires_grad=True)
    width = torch.tensor(40.0, dtype=torch.float64, requires_grad=True)
    s = Schedule.of([Play("d0", gaussian_square(120, amp, 16, width, phase), 0, det)])
    u = unitary(hamiltonian_steps(pair.noiseless(), s))
    p1 = (u[3, 0].abs() ** 2) + (u[4, 0].abs() ** 2) + (u[5, 0].abs() ** 2)
    grads = torch.autograd.grad(p1, (amp, phase, det, width))
    assert all(torch.isfinite(g) and g != 0 for g in grads)
    # check d p1 / d amp by central differences
    eps = 1e-6

    def p1_of(a):
        s = Schedule.of([Play("d0", gaussian_square(120, a, 16, 40.0, 0.2), 0, 0.01)])
        v = unitary(hamiltonian_steps(pair.noiseless(), s))
        return float(sum(abs(v[k, 0]) ** 2 for k in (3, 4, 5)))

    fd = (p1_of(0.3 + eps) - p1_of(0.3 - eps)) / (2 * eps)
    assert float(grads[0]) == pytest.approx(fd, rel=1e-5)
    assert operators(2, 3).dim == 9
