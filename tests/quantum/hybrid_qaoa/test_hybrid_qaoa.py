"""Hybrid gate-pulse QAOA: instances vs brute force, the mixed gate/pulse simulator vs qiskit Statevector and
vs the explicit pulse schedule, channel folding, bad input, the comparison and its cache.

Tolerances: noiseless expected cuts agree with the ideal circuit to 1e-4 (the calibrated SX pulses' residual
error is ~1e-6); the frame-composed gate mixer equals the explicitly phase-shifted schedule to 1e-10.
"""

import itertools

import numpy as np
import pytest
import torch
from qiskit.quantum_info import Statevector

from workbench.quantum.common.pulse.hamiltonian import hamiltonian_steps
from workbench.quantum.common.pulse.natives import X_DURATION
from workbench.quantum.common.pulse.propagate import channels, dissipator
from workbench.quantum.common.pulse.schedule import Schedule
from workbench.quantum.device import get_device
from workbench.quantum.hybrid_qaoa.circuits import qaoa_circuit, qaoa_layout
from workbench.quantum.hybrid_qaoa.config import HybridQaoaConfig
from workbench.quantum.hybrid_qaoa.maxcut import cut_values, max_cut, parse_graph
from workbench.quantum.hybrid_qaoa.simulate import Evaluator, calibrated_sx, fold_to_qubit


def _ideal(graph, gammas, betas):
    qc, g, b = qaoa_circuit(graph, len(gammas))
    bound = qc.assign_parameters({**dict(zip(g, gammas)), **dict(zip(b, betas))})
    return float(Statevector(bound).probabilities() @ cut_values(graph))


@pytest.mark.parametrize("spec", ["0-1,1-2,2-3,3-0,0-2", "ring-5", "random-5-s3", "0-1:2.5,1-2,2-0:0.5"])
def test_cut_values_and_brute_force(spec):
    g = parse_graph(spec)
    values = cut_values(g)
    for x in range(2**g.n):
        bits = [(x >> i) & 1 for i in range(g.n)]
        assert values[x] == pytest.approx(sum(w for u, v, w in g.edges if bits[u] != bits[v]))
    best = max(sum(w for u, v, w in g.edges if s[u] != s[v]) for s in itertools.product((0, 1), repeat=g.n))
    assert max_cut(g)[0] == pytest.approx(best)


def test_bad_graphs_and_settings_are_refused():
    for spec, words in [
        ("0-1,2-3", "is disconnected"),
        ("", "has no edges"),
        ("1-1", "self-loop"),
        ("0-1:-2", r"valid weights are in \(0, 1e\+06\]"),
        ("0-1:1e400,1-2", r"graph='0-1:1e400,1-2': edge '0-1:1e400' has weight inf: valid weights"),
        ("0-1:1e7,1-2", "valid weights are in"),
        ("0-1:1e-.5", "unreadable weight"),
        ("0_1", "cannot read edge"),
    ]:
        with pytest.raises(ValueError, match=words):
            parse_graph(spec)
    with pytest.raises(ValueError, match="graph='complete-8' has 8 nodes: valid range on fake_jakarta is 2..7"):
        HybridQaoaConfig(graph="complete-8")
    with pytest.raises(ValueError, match="p=4 is out of range"):
        HybridQaoaConfig(p=4)


@pytest.mark.parametrize("spec,p", [("ring-4", 1), ("0-1,1-2,2-3,3-0,0-2", 2)])
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_noiseless_gate_and_gate_equivalent_hybrid_match_the_ideal_circuit(spec, p):
    """Over the whole mixer range (rx(2 beta), 2 beta beyond pi included): the gate mixer to 1e-4 (calibrated SX
    pulses), the calibrated gate-equivalent hybrid to 2e-4 (p = 2: the trailing Z a routing swap carries on)."""
    g = parse_graph(spec)
    ev = Evaluator(qaoa_layout(g, p, get_device("fake_jakarta")), noisy=False, mixer_dt=128)
    for gamma, beta in [(0.7, 0.4), (1.1, 1.49), (2.3, -1.2), (0.4, 2.5), (2.9, 0.9)]:
        gammas, betas = [gamma, 1.7 - gamma][:p], [beta, 0.6 * beta][:p]
        x = np.array(gammas + betas)
        ideal = _ideal(g, gammas, betas)
        assert ev.expected_cut("gate", x) == pytest.approx(ideal, abs=1e-4), (gamma, beta)
        assert ev.expected_cut("hybrid", ev.hybrid_from_gate(x)) == pytest.approx(ideal, abs=2e-4), (gamma, beta)
    zero = ev.hybrid_from_gate(np.array([0.7] * p + [0.0] * p))  # a zero-rotation mixer is the identity
    assert ev.expected_cut("hybrid", zero) == pytest.approx(_ideal(g, [0.7] * p, [0.0] * p), abs=1e-6)


@pytest.mark.slow  # transpiles a layout and propagates 30 pulses
def test_equivalent_pulse_is_rx_up_to_a_trailing_z():
    """The calibrated pulse's qubit block (an independent propagation: scipy expm of the 3-level Hamiltonian
    sample by sample) equals ``Rz(c) Rx(angle)`` to 1e-5 over the whole range; the bare area rule does not."""
    from scipy.linalg import expm

    ev = Evaluator(qaoa_layout(parse_graph("0-1,1-2"), 1, get_device("fake_jakarta")), noisy=False, mixer_dt=128)
    t = ev.transmons[0]
    a = np.diag(np.sqrt([1.0, 2.0]), 1)
    n = a.T @ a

    def block(theta, phase):
        env = ev.mixer_pulse(0, theta, phase).envelopes(t, 1)
        ((_, samples),) = env.values()
        u = np.eye(3, dtype=complex)
        for d in samples.numpy():
            h = t.anharmonicity[0] / 2 * (n @ n - n) + t.drive[0] / 2 * (d * a.T + np.conj(d) * a)
            u = expm(-1j * t.dt * h) @ u
        return u[:2, :2]

    def distance_to_rx_after_z(u, angle):  # min over c of || u - e^{i g} Rz(c) Rx(angle) ||
        rx = np.array([[np.cos(angle / 2), -1j * np.sin(angle / 2)], [-1j * np.sin(angle / 2), np.cos(angle / 2)]])
        m = u @ rx.conj().T  # should be diagonal: a global phase times Rz(c)
        return max(abs(m[0, 1]), abs(m[1, 0]), abs(abs(m[0, 0]) - 1), abs(abs(m[1, 1]) - 1))

    for angle in (0.3, -1.0, 2.0, 2.98, -3.1):
        assert distance_to_rx_after_z(block(*ev.equivalent_pulse(0, angle)), angle) < 1e-5, angle
    assert distance_to_rx_after_z(block(2.98, 0.0), 2.98) > 1e-3  # what the calibration corrects


def test_gate_mixer_by_frames_equals_the_phase_shifted_schedule():
    ev = Evaluator(qaoa_layout(parse_graph("ring-4"), 1, get_device("fake_jakarta")), noisy=True, mixer_dt=128)
    beta = 0.37
    composed = ev.gate_mixer(0, beta)
    q = ev.mixed_qubits(0)[0]
    sx = calibrated_sx(ev.layout.device, ev.layout.active[q], 3)
    frame, t, plays = 0.0, 0, []
    param = ev.layout.betas[0]
    for name, angle in ev.layout.mixers[0][q]:
        if name == "rz":
            frame += float(angle.bind({param: beta})) if hasattr(angle, "bind") else float(angle)
        else:
            plays.append(sx.play(t, -frame))
            t += X_DURATION
    dev = ev.transmons[q]
    steps = hamiltonian_steps(dev, Schedule.of(plays), substeps=1)
    proc = channels(steps.h[None], steps.step_ns, dissipator(dev, steps.step_ns / 2)[None])[0]
    u = torch.diag(torch.exp(1j * frame * torch.arange(3, dtype=torch.float64)).to(torch.complex128))
    explicit = fold_to_qubit(torch.kron(u, u.conj()) @ proc, 3)
    assert float((explicit - composed[q]).abs().max()) < 1e-10


def test_folding_keeps_trace_and_reads_leakage_as_one():
    s = torch.eye(9, dtype=torch.complex128)
    s[:, 4] = 0
    s[8, 4] = 1  # |1><1| -> |2><2|
    folded = fold_to_qubit(s, 3)
    one = torch.tensor([0, 0, 0, 1], dtype=torch.complex128)  # vec |1><1|
    assert torch.allclose(folded @ one, one)
    for k in range(4):
        unit = torch.zeros(4, dtype=torch.complex128)
        unit[k] = 1
        out = (folded @ unit).reshape(2, 2)
        assert complex(out.trace()) == pytest.approx(1.0 if k in (0, 3) else 0.0)


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_noise_lowers_the_ratio_and_the_comparison_is_cached(tmp_path, monkeypatch):
    from workbench.quantum.hybrid_qaoa import study

    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path))
    study.clear_caches()
    config = HybridQaoaConfig(graph="ring-4", budget=8, grid=2)
    noisy = study.compare(config)
    quiet = study.compare(config.replace(noise="none"))
    assert 0 < noisy.approx_ratio_gate < quiet.approx_ratio_gate <= 1 + 1e-9
    assert len(noisy.trace_gate) == 8 and np.all(np.diff(noisy.trace_gate) >= 0)
    assert noisy.mixer_reduction == pytest.approx(0.6)
    assert sum(noisy.cut_distribution_hybrid.values()) == pytest.approx(1.0)
    study.clear_caches()
    again = study.cached_comparison(config)  # from disk
    assert again is not None and again.approx_ratio_hybrid == noisy.approx_ratio_hybrid
    study.clear_caches()


@pytest.mark.slow  # trains four small comparisons
def test_a_duration_sweep_shares_the_gate_side_and_changes_nothing(tmp_path, monkeypatch):
    # the gate QAOA never plays the hybrid's mixer: a sweep over mixer_dt trains it once. Reference: each
    # comparison computed alone (memory and disk caches emptied), which must be identical field by field
    from dataclasses import asdict

    from workbench.quantum.hybrid_qaoa import experiment, study

    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "shared"))
    study.clear_caches()
    base = HybridQaoaConfig(graph="ring-4", budget=8, grid=2)
    calls = []
    real_train = experiment.train
    monkeypatch.setattr(experiment, "train", lambda ev, kind, *a: calls.append(kind) or real_train(ev, kind, *a))
    ticks: list[tuple[int, int]] = []
    shared = [
        study.compare(base),
        study.compare(base.replace(mixer_dt=32), on_evaluation=lambda i, n: ticks.append((i, n))),
        study.compare(base.replace(mixer_dt=64)),
    ]
    assert calls == ["gate", "hybrid", "hybrid", "hybrid"]
    # the progress counts the shared gate side at once (grid 2 x 2 and the gate's COBYLA), then each hybrid step
    gate_side = 4 + len(shared[0].trace_gate)
    assert ticks[0] == (gate_side, 4 + 2 * 8) and ticks[-1][0] == gate_side + len(shared[1].trace_hybrid)
    for config, got in zip((base, base.replace(mixer_dt=32), base.replace(mixer_dt=64)), shared):
        monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / f"alone-{config.mixer_dt}"))
        study.clear_caches()
        assert asdict(study.compare(config)) == asdict(got)
    study.clear_caches()
