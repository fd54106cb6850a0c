"""The shared variational layer against independent references: qiskit-aer density matrices and
probabilities (machine), qiskit's Statevector (ansatz), the exact Pauli-tomography identity (shadows),
autograd (parameter shift), and counting rules (circuits x shots)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from workbench.quantum.calibration import calibration_subset, load_calibration
from workbench.quantum.common.variational import (
    SPSA,
    Ansatz,
    CoherentErrors,
    Machine,
    all_settings,
    connected_layout,
    device_edges,
    fidelity_to_pure,
    parameter_shift_gradient,
    pretrain_noiseless,
    random_settings,
    shadow_density,
    shadow_fidelity,
    state_fidelity,
)
from workbench.quantum.device import get_device
from workbench.quantum.noise import NoiseSpec


def _device_machine(n: int, *, strength: float = 1.0, shots: int | None = None, device: str = "fake_lagos"):
    cal = load_calibration(device)
    sub = calibration_subset(cal, connected_layout(cal, n))
    ansatz = Ansatz(num_qubits=n, edges=device_edges(sub), blocks=n)
    coherent = CoherentErrors.draw(n, ansatz.edges, strength=strength, seed=3)
    machine = Machine(ansatz.circuit(), noise=NoiseSpec.device(sub), coherent=coherent, shots=shots, seed=1)
    theta = torch.as_tensor(np.random.default_rng(7).uniform(0, 2 * math.pi, ansatz.num_parameters))
    return machine, theta, sub


def test_ansatz_native_gates_and_parameters() -> None:
    a = Ansatz(num_qubits=5, edges=((0, 1), (1, 2), (1, 3), (3, 4)), blocks=7)
    ops = a.circuit().count_ops()
    assert set(ops) == {"rz", "sx", "cx"}
    assert ops["cx"] == 7 and a.num_parameters == 3 * 5 + 6 * 7 == len(a.circuit().parameters)
    assert a.block_edges()[4] == (0, 1)  # cycles over the edges


def test_ansatz_matches_qiskit_statevector() -> None:
    from qiskit.quantum_info import Statevector

    from workbench.quantum import statevector

    a = Ansatz(num_qubits=3, edges=((0, 1), (2, 1)), blocks=3)
    theta = np.random.default_rng(0).uniform(-3, 3, a.num_parameters)
    ours = statevector(a.circuit(), torch.as_tensor(theta)).numpy()
    ref = Statevector(a.circuit().assign_parameters(theta)).data
    np.testing.assert_allclose(ours, ref, atol=1e-12)  # complex128 round-off over ~40 gates


def test_ansatz_bad_input() -> None:
    with pytest.raises(ValueError, match="edge"):
        Ansatz(num_qubits=2, edges=((0, 2),), blocks=1)
    with pytest.raises(ValueError, match="blocks=-1"):
        Ansatz(num_qubits=2, edges=((0, 1),), blocks=-1)


@pytest.mark.parametrize("device,n", [("fake_nairobi", 5), ("fake_hanoi", 4), ("fake_lima", 3)])
def test_connected_layout_is_connected(device: str, n: int) -> None:
    cal = load_calibration(device)
    layout = connected_layout(cal, n)
    sub = calibration_subset(cal, layout)
    edges = device_edges(sub)
    assert len(layout) == n and len(edges) >= n - 1
    reach, frontier = {0}, [0]
    while frontier:
        q = frontier.pop()
        for a, b in edges:
            for x, y in ((a, b), (b, a)):
                if x == q and y not in reach:
                    reach.add(y)
                    frontier.append(y)
    assert reach == set(range(n))


def test_layout_wider_than_device_is_refused() -> None:
    with pytest.raises(ValueError, match="qubits=6 is wider than device fake_lima"):
        connected_layout(load_calibration("fake_lima"), 6)


@pytest.mark.parametrize("n", [2, 3])
def test_machine_density_and_probabilities_match_aer(n: int) -> None:
    from qiskit.quantum_info import DensityMatrix, state_fidelity

    from workbench.quantum.aer import aer_density_matrix, aer_probabilities

    machine, theta, sub = _device_machine(n, strength=2.0)
    noise = NoiseSpec.device(sub)
    ours = machine.density(theta).numpy()
    ref = aer_density_matrix(machine.qiskit_circuit(theta), noise)
    np.testing.assert_allclose(ours, ref, atol=1e-12)
    psi = np.random.default_rng(1).normal(size=2**n) + 0j
    psi /= np.linalg.norm(psi)
    f_ours = float(fidelity_to_pure(torch.as_tensor(ours), torch.as_tensor(psi)))
    f_ref = state_fidelity(DensityMatrix(ref), psi)
    assert abs(f_ours - f_ref) < 1e-12
    settings = random_settings(n, 4, np.random.default_rng(2))
    probs = machine.probabilities(theta, settings).numpy()
    ref_p = aer_probabilities([machine.qiskit_circuit(theta, s) for s in settings], noise)
    np.testing.assert_allclose(probs, ref_p, atol=1e-12)
    assert machine.executions == 0  # evaluation is not counted


def test_coherent_errors_change_the_state_and_zero_strength_does_not() -> None:
    m1, theta, _ = _device_machine(3, strength=1.0)
    m0, _, _ = _device_machine(3, strength=0.0)
    assert CoherentErrors.draw(3, ((0, 1),), strength=0.0, seed=1).is_zero
    plain = m1.without_coherent().density(theta)
    assert torch.allclose(m0.density(theta), plain, atol=1e-14)
    assert (m1.density(theta) - plain).abs().max() > 1e-3


def test_counting_and_sampling() -> None:
    machine, theta, _ = _device_machine(3, shots=500)
    settings = random_settings(3, 6, np.random.default_rng(0))
    freqs = machine.measure(theta, settings)
    assert freqs.shape == (6, 8) and machine.circuits == 6 and machine.executions == 6 * 500
    np.testing.assert_allclose(freqs.sum(-1).numpy(), 1.0, atol=1e-12)
    assert np.allclose((freqs.numpy() * 500) % 1, 0)  # whole counts
    machine.measure(torch.stack([theta, theta + 0.1]), settings)
    assert machine.circuits == 18 and machine.executions == 18 * 500 and machine.calls == 2
    # sampled frequencies agree with the exact probabilities within 5 sigma of the multinomial
    exact = machine.probabilities(theta, settings)
    big = Machine(machine.circuit, noise=machine.noise, coherent=machine.coherent, shots=200_000, seed=5)
    f = big.measure(theta, settings)
    sigma = torch.sqrt(exact * (1 - exact) / 200_000) + 1e-9
    assert float(((f - exact).abs() / sigma).max()) < 5.5


def test_machine_bad_input() -> None:
    a = Ansatz(num_qubits=2, edges=((0, 1),), blocks=1)
    with pytest.raises(ValueError, match="shots=0 is out of range"):
        Machine(a.circuit(), shots=0)
    wide = Ansatz(num_qubits=6, edges=((0, 1),), blocks=1)
    with pytest.raises(ValueError, match="circuit has 6 qubits but device fake_lima has 5"):
        Machine(wide.circuit(), noise=NoiseSpec.device(get_device("fake_lima")))
    with pytest.raises(ValueError, match="coherent_strength=-1"):
        CoherentErrors.draw(2, ((0, 1),), strength=-1, seed=0)


@pytest.mark.parametrize("n", [1, 3])
def test_shadows_from_all_settings_reconstruct_rho_exactly(n: int) -> None:
    """Averaging the shadow snapshot over all 3**n settings with exact probabilities is the linear inversion of
    Pauli tomography: it returns rho to round-off (here: a noisy, coherent-error state, readout off)."""
    if n == 1:
        a = Ansatz(num_qubits=1, edges=(), blocks=0)
        machine = Machine(a.circuit(), noise=NoiseSpec.depolarizing_noise(0.05), shots=None)
        theta = torch.tensor([0.3, 1.1, -0.7], dtype=torch.float64)
    else:
        machine, theta, sub = _device_machine(n, strength=1.5)
        machine = Machine(machine.circuit, noise=NoiseSpec.device(sub, readout=False), coherent=machine.coherent)
    settings = all_settings(n)
    # the basis-change gates are noisy on the machine: compare with the state *after* ideal basis changes
    ideal = Machine(machine.circuit, noise=None, coherent=None, shots=None)
    rho_ideal = ideal.density(theta)
    rec = shadow_density(ideal.probabilities(theta, settings), settings)
    np.testing.assert_allclose(rec.numpy(), rho_ideal.numpy(), atol=1e-13)
    rho = machine.density(theta)
    # with noisy basis changes the reconstruction is close but not exact (the pitfall the brief names)
    rec_noisy = shadow_density(machine.probabilities(theta, settings), settings)
    assert 1e-6 < float((rec_noisy - rho).abs().max()) < 0.1


def test_shadow_fidelity_estimate_is_validated_against_true_fidelity() -> None:
    machine, theta, sub = _device_machine(4, strength=1.0, shots=256)
    psi = machine.without_coherent().density(theta)
    psi = torch.linalg.eigh(psi)[1][:, -1]  # a target the state is close to
    true = float(fidelity_to_pure(machine.density(theta), psi))
    z = []
    for seed in range(6):
        settings = random_settings(4, 64, np.random.default_rng(seed))
        ideal = Machine(
            machine.circuit, noise=NoiseSpec.device(sub, readout=False), coherent=machine.coherent, shots=256, seed=seed
        )
        est, err = shadow_fidelity(ideal.measure(theta, settings), settings, psi)
        z.append((float(est) - true) / float(err))
    # basis-change noise biases the estimate slightly: |z| within 4 for every seed, mean |z| small
    assert max(abs(x) for x in z) < 4 and abs(np.mean(z)) < 2.5


def test_parameter_shift_equals_autograd() -> None:
    from workbench.quantum import statevector

    a = Ansatz(num_qubits=3, edges=((0, 1), (1, 2)), blocks=2)
    target = torch.as_tensor(np.exp(1j * np.arange(8)) / math.sqrt(8))
    theta = torch.as_tensor(np.random.default_rng(3).uniform(0, 6, a.num_parameters))

    def f(batch):
        return state_fidelity(statevector(a.circuit(), batch), target)

    ps = parameter_shift_gradient(f, theta)
    t = theta.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(f(t[None])[0], t)
    np.testing.assert_allclose(ps.numpy(), grad.numpy(), atol=1e-12)  # exact rule: fp64 round-off


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_pretrain_reaches_target_and_spsa_descends() -> None:
    a = Ansatz(num_qubits=2, edges=((0, 1),), blocks=2)
    bell = torch.tensor([1, 0, 0, 1], dtype=torch.complex128) / math.sqrt(2)
    pre = pretrain_noiseless(a.circuit(), bell, steps=120, restarts=2, seed=0)
    assert pre.fidelity > 1 - 1e-6
    opt = SPSA(a=0.5, c=0.1, seed=1)
    x = torch.ones(5, dtype=torch.float64)
    for _ in range(200):
        x, _ = opt.step(lambda b: (b**2).sum(-1), x)
    assert float((x**2).sum()) < 0.05


# ---- the VQE part of the layer (QGAS): energies, Pauli settings and their readout, multi-restart L-BFGS -------
PAULI_SUM = [(0.5, "IIII"), (-0.8, "ZIIZ"), (0.3, "XXYY"), (-0.3, "YYXX"), (0.2, "IXIZ"), (0.7, "YIII"), (0.1, "XYZI")]


def _pauli_matrix(label: str) -> np.ndarray:
    mats = {"I": np.eye(2), "X": np.array([[0, 1], [1, 0]]), "Y": np.array([[0, -1j], [1j, 0]]), "Z": np.diag([1, -1])}
    out = np.ones((1, 1))
    for ch in label:  # qiskit order: the leftmost letter is the most significant qubit
        out = np.kron(out, mats[ch])
    return out


def test_term_settings_measure_every_label_in_few_qubit_wise_commuting_groups() -> None:
    from workbench.quantum.common.variational import term_settings

    labels = [lbl for _, lbl in PAULI_SUM]
    settings = term_settings(labels)
    assert settings.shape[1] == 4 and settings.dtype == np.int64
    letter = {"Z": 0, "X": 1, "Y": 2}
    for lbl in labels:
        support = [(q, letter[ch]) for q, ch in enumerate(reversed(lbl)) if ch != "I"]
        assert any(all(row[q] == b for q, b in support) for row in settings), lbl
    # first fit, columns = qubits 0..3: ZIIZ and IXIZ; XXYY; YYXX and YIII; XYZI (clashes with every group)
    assert settings.tolist() == [[0, 0, 1, 0], [2, 2, 1, 1], [1, 1, 2, 2], [0, 0, 2, 1]]
    assert term_settings(["II"]).tolist() == [[0, 0]]  # identity only: one (Z) setting
    with pytest.raises(ValueError, match="term label 'XQ' is not a Pauli string of 2 letters"):
        term_settings(["ZZ", "XQ"])


def test_pauli_energy_from_ideal_measurements_equals_the_trace_with_the_state() -> None:
    """With ``measurement_noise=False`` the machine's outcome probabilities are those of its noisy state, so the
    energy read from them equals ``Tr(rho H)`` (dense H built from Kronecker products) to round-off."""
    from workbench.quantum.common.variational import pauli_energy, term_settings

    machine, theta, sub = _device_machine(4, strength=1.0, shots=None)
    ideal = Machine(
        machine.circuit, noise=machine.noise, coherent=machine.coherent, shots=None, measurement_noise=False
    )
    assert ideal.readout_inverse() is None and machine.readout_inverse() is not None
    rho = ideal.density(theta).numpy()
    H = sum(c * _pauli_matrix(lbl) for c, lbl in PAULI_SUM)
    ref = float(np.trace(rho @ H).real)
    for settings in (term_settings([lbl for _, lbl in PAULI_SUM]), all_settings(4)):
        value = float(pauli_energy(ideal.probabilities(theta, settings), settings, PAULI_SUM))
        assert abs(value - ref) < 1e-12
    # a batch of parameter sets gives a batch of energies
    batch = torch.stack([theta, theta + 0.2])
    settings = term_settings([lbl for _, lbl in PAULI_SUM])
    values = pauli_energy(ideal.probabilities(batch, settings), settings, PAULI_SUM)
    assert values.shape == (2,) and abs(float(values[0]) - ref) < 1e-12
    # with measurement noise (noisy basis changes, readout errors) the reading is biased
    noisy = float(pauli_energy(machine.probabilities(theta, settings), settings, PAULI_SUM))
    assert abs(noisy - ref) > 1e-3
    with pytest.raises(ValueError, match="term 'XXXX' is measured by none of the 4 settings"):
        pauli_energy(ideal.probabilities(theta, settings), settings, [(1.0, "XXXX")])


def test_sampled_pauli_energy_is_within_its_exact_multinomial_spread() -> None:
    from workbench.quantum.common.variational import pauli_energy, term_settings

    machine, theta, _ = _device_machine(4, strength=1.0, shots=None)
    settings = term_settings([lbl for _, lbl in PAULI_SUM])
    probs = machine.probabilities(theta, settings).numpy()
    exact = float(pauli_energy(torch.as_tensor(probs), settings, PAULI_SUM))
    # the estimate is sum over settings of the mean of g_s(x) = sum_k c_k sign_k(x) (its terms): exact variance
    x = np.arange(16)
    letter = {"Z": 0, "X": 1, "Y": 2}
    g = np.zeros_like(probs)
    for c, lbl in PAULI_SUM:
        support = [(q, letter[ch]) for q, ch in enumerate(reversed(lbl)) if ch != "I"]
        if support:
            s = next(i for i, row in enumerate(settings) if all(row[q] == b for q, b in support))
            parity = sum((x >> q) & 1 for q, _ in support) % 2
            g[s] += c * (1 - 2 * parity)
    shots = 4000
    var = sum(float(p @ gs**2 - (p @ gs) ** 2) for p, gs in zip(probs, g)) / shots
    z = []
    for seed in range(8):
        m = Machine(machine.circuit, noise=machine.noise, coherent=machine.coherent, shots=shots, seed=seed)
        z.append((float(pauli_energy(m.measure(theta, settings), settings, PAULI_SUM)) - exact) / math.sqrt(var))
        assert m.executions == len(settings) * shots
    assert max(abs(v) for v in z) < 4.5 and abs(np.mean(z)) < 4.5 / math.sqrt(8)


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_energy_function_and_lbfgs_restarts() -> None:
    from workbench.quantum.common.variational import Minimised, energy_function, lbfgs_restarts

    a = Ansatz(num_qubits=2, edges=((0, 1),), blocks=2)
    H = sum(c * _pauli_matrix(lbl) for c, lbl in [(1.0, "ZZ"), (0.5, "XI"), (-0.4, "YY")])
    f = energy_function(a.circuit(), H)
    theta = torch.as_tensor(np.random.default_rng(0).uniform(-3, 3, (3, a.num_parameters)))
    from workbench.quantum import statevector

    psi = statevector(a.circuit(), theta).numpy()
    np.testing.assert_allclose(f(theta).numpy(), np.einsum("ri,ij,rj->r", psi.conj(), H, psi).real, atol=1e-12)
    out = lbfgs_restarts(f, a.num_parameters, steps=40, restarts=3, seed=2)
    assert isinstance(out, Minimised) and len(out.params) == a.num_parameters
    assert out.value == pytest.approx(float(np.linalg.eigvalsh(H)[0]), abs=1e-8)  # this ansatz reaches the minimum
    assert out == lbfgs_restarts(f, a.num_parameters, steps=40, restarts=3, seed=2)  # deterministic
    assert out.curve[-1] == out.value and all(y <= x + 1e-12 for x, y in zip(out.curve, out.curve[1:]))
    # restart 0 starts at zero: with one restart and one step the result depends on no seed
    one = [lbfgs_restarts(f, a.num_parameters, steps=1, restarts=1, seed=s) for s in (0, 9)]
    assert one[0] == one[1]
    for kw, name in ((dict(steps=0), "steps=0"), (dict(restarts=0), "restarts=0")):
        with pytest.raises(ValueError, match=f"{name} is out of range: valid range is integers >= 1"):
            lbfgs_restarts(f, a.num_parameters, **kw)
    with pytest.raises(ValueError, match="num_parameters=0 is out of range"):
        lbfgs_restarts(f, 0)
    with pytest.raises(ValueError, match=r"hamiltonian has shape \[2, 2\]: expected \[4, 4\]"):
        energy_function(a.circuit(), np.eye(2))
