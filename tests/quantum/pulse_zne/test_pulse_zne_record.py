"""Nothing computed twice, and the shipped training is current. References: a counting fake of the simulator for
the memo (each E(lambda) point simulated once, the noiseless ones shared by the noise scales); for the record, the
recorded command's quick form (:func:`workbench.quantum.pulse_zne.record.quick_check`: the first COBYLA evaluations
and the energy of the recorded parameters, recomputed with today's calibration and simulator)."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import numpy as np
import pytest

from workbench.quantum.pulse_zne import experiment, record
from workbench.quantum.pulse_zne.config import PulseZneConfig
from workbench.quantum.pulse_zne.zne import RECORDED_TRAINING


class _Device:
    """What the experiment asks of a device: a noiseless copy, a noisier one, readout removal and dt."""

    dt = 0.25
    num_qubits = 2

    def __init__(self, noise: float = 1.0) -> None:
        self.noise = noise

    def noiseless(self) -> _Device:
        return _Device(0.0)

    def scaled_noise(self, eta: float) -> _Device:
        return _Device(eta)

    def with_readout(self, *_a) -> _Device:
        return self


def _energy(noise: float, method: str, lam: float) -> float:
    return -1.1 + 0.01 * noise * lam + (0.001 if method == "stretching" else 0.0)


@pytest.fixture
def counting(monkeypatch, tmp_path):
    """The experiment on a fake problem: every simulated point is logged as (noise, method, lambda)."""
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path))
    calls: list[tuple[float, str, float]] = []

    def scaled(device, _ansatz, _x, _terms, method, factors, *, readout, on_point=None):
        assert not readout
        out = []
        for i, f in enumerate(factors):
            calls.append((device.noise, method, float(f)))
            out.append(_energy(device.noise, method, f))
            if on_point:
                on_point(i + 1, len(factors))
        return np.array(out)

    schedule = SimpleNamespace(duration=2816)
    tr = SimpleNamespace(ansatz=SimpleNamespace(schedule=lambda x: schedule), x=np.zeros(3), energy=-1.1)
    monkeypatch.setattr(experiment, "scaled_energies", scaled)
    monkeypatch.setattr(experiment, "pulse_problem", lambda c: (SimpleNamespace(device=_Device()),
                                                                 SimpleNamespace(exact=-1.13, terms=())))  # fmt: skip
    monkeypatch.setattr(experiment, "trained", lambda c, *a, **k: tr)
    experiment.clear_caches()
    yield calls
    experiment.clear_caches()


def test_each_point_is_simulated_once_and_noiseless_points_are_shared(counting):
    grid = len(experiment.FOLD_GRID) + len(experiment.STRETCH_GRID)
    first = experiment.sweep(PulseZneConfig(noise_scale=10.0))
    assert len(counting) == 2 * grid  # noisy and noiseless
    experiment.sweep(PulseZneConfig(noise_scale=30.0))
    assert len(counting) == 3 * grid  # the noiseless curve is the first sweep's
    assert {c[0] for c in counting[2 * grid :]} == {30.0}
    # the runner's points, another extrapolation, another method: read, not simulated
    config = PulseZneConfig(noise_scale=10.0, extrapolation="linear", scale_factors="1,3,5")
    assert experiment.energies(config, "folding", (1, 3, 5), noisy=True).tolist() == [
        _energy(10.0, "folding", f) for f in (1, 3, 5)
    ]
    for ext in ("richardson", "linear", "exponential"):
        experiment.zne_view(PulseZneConfig(noise_scale=10.0, extrapolation=ext), first)
    assert len(counting) == 3 * grid
    assert first["stretching"]["noiseless"] == [_energy(0.0, "stretching", f) for f in experiment.STRETCH_GRID]
    # a fresh process reads the sweep from disk (its points too)
    experiment.clear_caches()
    experiment.energies(PulseZneConfig(noise_scale=30.0), "stretching", (2.0, 4.0), noisy=True)
    assert len(counting) == 3 * grid + 2
    assert experiment.sweep(PulseZneConfig(noise_scale=30.0))["folding"]["noisy"][1] == _energy(30.0, "folding", 3)


def test_sweep_progress_counts_only_the_points_it_simulates(counting):
    experiment.sweep(PulseZneConfig(noise_scale=10.0))
    ticks = []
    experiment.sweep(PulseZneConfig(noise_scale=100.0), on_point=lambda i, n: ticks.append((i, n)))
    grid = len(experiment.FOLD_GRID) + len(experiment.STRETCH_GRID)
    assert ticks == [(i, grid) for i in range(1, grid + 1)]


def test_the_shipped_training_is_the_default_setting_of_the_recorded_command():
    data = json.loads(RECORDED_TRAINING.read_text())
    assert data["command"] == record.COMMAND
    (rec,) = data["records"]
    d = PulseZneConfig()
    assert (rec["molecule"], rec["bond_length"], rec["device"], tuple(rec["qubits"])) == (
        d.molecule, d.bond_length, d.device, (d.qubit, d.target))  # fmt: skip
    assert (rec["layers"], rec["budget"], rec["seed"]) == (d.layers, d.budget, record.SEED)
    assert 0 < rec["evaluations"] <= d.budget + 1 and len(rec["first_losses"]) == record.QUICK_EVALUATIONS
    assert rec["energy"] <= min(rec["first_losses"])  # training lowered the energy
    assert all(0.0 <= v <= 1.0 for v in rec["x"]) and math.isfinite(rec["energy"])


@pytest.mark.slow  # the pair's calibration (~20 s when not cached) and 11 noiseless evaluations
def test_the_shipped_training_is_current():
    """Today's calibration has the record's key, the same COBYLA run starts with the recorded losses and the recorded
    parameters still give the recorded energy. Same code on the same CPU is bit-equal; 1e-8 Ha allows last-bit
    differences of another CPU's BLAS over ten COBYLA steps (a stale record differs by mHa)."""
    diff = record.quick_check()
    assert diff["first_losses"] < 1e-8
    assert diff["energy"] < 1e-8
