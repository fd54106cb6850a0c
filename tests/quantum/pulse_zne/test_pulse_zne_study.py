"""Pulse ZNE end to end. References: the simulator's true process fidelity (channel of S vs the nominal unitary)
for the estimator; the noiseless energy of the same ansatz for ZNE; NAPA's ``energy`` for our energy; mitiq's
``fold_global`` + ``RichardsonFactory`` for the gate-level baseline."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from workbench.quantum.common.pulse.calibrated import calibrated_natives
from workbench.quantum.device import get_device, load_pulse_device
from workbench.quantum.napa.ansatz import PulseAnsatz
from workbench.quantum.napa.energy import energy
from workbench.quantum.napa.hamiltonians import load
from workbench.quantum.pulse_zne import study
from workbench.quantum.pulse_zne.estimator import echo_decay, fit_echo_decay
from workbench.quantum.pulse_zne.extrapolation import richardson
from workbench.quantum.pulse_zne.zne import energy_at, gate_zne, scaled_energies

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def problem():
    natives = calibrated_natives(get_device("fake_jakarta"), 0, 1)
    ham = load("H2", 0.735)
    ansatz = PulseAnsatz(natives, 1)
    x = ansatz.initial(3, scale=0.5)
    x[6] = 0.0  # shortest CR (256 dt per half)
    return natives, ham, ansatz, x


def test_energy_matches_napa_at_time_scale_one(problem):
    natives, ham, ansatz, x = problem
    s = ansatz.schedule(x)
    assert energy_at(natives.device, s, ham.terms) == pytest.approx(energy(natives.device, s, ham.terms), abs=1e-12)


def test_estimator_tracks_noise_and_drift_and_misses_amplitude_errors():
    val = study.estimator_validity(get_device("fake_jakarta"), 0)
    assert val["correlation"]["noise"] > 0.99
    assert val["correlation"]["detuning"] > 0.99
    amp = np.array(val["rows"]["amplitude"])
    assert amp[:, 1].min() > 0.995  # F_est stays high ...
    assert amp[:, 2].min() < 0.97  # ... while the true fidelity of the 20% miscalibrated pulse drops


@pytest.mark.slow  # ~8 s: five bare CR pulses on a 3-level pair
def test_a_perfect_bare_cr_misleads_the_input_averaged_estimator():
    """Noiseless bare CR: true fidelity ~1, F_est from |00> ~1, but S S^R leaves a control Z phase phi (AC Stark
    shift, even in the amplitude) and the input-averaged echo fidelity is then (8 (1 + cos phi) + 4) / 20 (a
    diagonal diag(1, 1, e^{i phi}, e^{i phi}) against I), down to ~0.4 at phi ~ 2.1 rad."""
    rows = study.bare_cr_echo(get_device("fake_jakarta"))
    for r in rows:
        assert r["true_fidelity"] > 0.99 and r["f_est_from_00"] > 0.99
        phi = r["control_z_phase"]
        assert r["echo_fidelity"] == pytest.approx((8 * (1 + np.cos(phi)) + 4) / 20, abs=0.05)  # + target phases
    assert min(r["echo_fidelity"] for r in rows) < 0.5


def test_echo_decay_error_per_pulse_scales_with_noise():
    dev = load_pulse_device("fake_jakarta", (0,), levels=2)
    reps = (1, 2, 4, 8, 16, 32, 64)
    s = study._test_pulse()
    err = {eta: fit_echo_decay(np.array(reps), echo_decay(dev.scaled_noise(eta), s, reps), 2)["error_per_pulse"]
           for eta in (10.0, 40.0)}  # fmt: skip
    assert err[40.0] / err[10.0] == pytest.approx(4.0, rel=0.15)


def test_folding_zne_without_drift_recovers_the_noiseless_energy(problem):
    natives, ham, ansatz, x = problem
    # two-level transmons without exchange coupling, SNPs only (the CR is dropped): S^R is exactly U(S)^dagger
    flat = dataclasses.replace(load_pulse_device("fake_jakarta", (0, 1), levels=2), couplings=())
    y = x.copy()
    y[4] = 0.0
    clean = scaled_energies(flat.noiseless(), ansatz, y, ham.terms, "folding", (1, 3, 5), readout=False)
    assert np.ptp(clean) < 1e-9
    noisy = flat.scaled_noise(100).with_readout((0.0, 0.0), (0.0, 0.0))
    e = scaled_energies(noisy, ansatz, y, ham.terms, "folding", (1, 3, 5), readout=False)
    before, after = abs(e[0] - clean[0]), abs(richardson((1, 3, 5), e) - clean[0])
    assert before > 5e-3
    assert after < before / 5


def test_folding_with_cr_and_drift_is_biased_without_noise(problem):
    natives, ham, ansatz, x = problem
    clean = scaled_energies(natives.device.noiseless(), ansatz, x, ham.terms, "folding", (1, 3), readout=False)
    assert abs(clean[1] - clean[0]) > 1e-2  # the echo does not undo the CR's frame drift: a coherent bias


def test_stretching_keeps_the_noiseless_energy(problem):
    natives, ham, ansatz, x = problem
    clean = natives.device.noiseless()
    e = scaled_energies(clean, ansatz, x, ham.terms, "stretching", (1, 2), readout=False)
    assert abs(e[1] - e[0]) < 2e-2  # drift (coupling, Stark shifts) changes with the stretch: small, not zero


def test_gate_level_zne_with_mitiq_reduces_the_error(problem):
    natives, ham, _, _ = problem
    noisy = natives.device.scaled_noise(30).with_readout((0.0, 0.0), (0.0, 0.0))
    g = gate_zne(natives, noisy, ham.terms, (1, 3), "richardson")
    assert abs(g["mitigated"] - ham.exact) < abs(g["unmitigated"] - ham.exact)
    assert g["duration_ns"][1] > 2.5 * g["duration_ns"][0]
