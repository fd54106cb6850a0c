"""NAPA's runs (``experiment.vqe``) and the CLI: the energy, parameters and duration a run reports describe one
schedule (reference: re-evaluating the returned parameters with the energy routine), the gradient optimiser is
reachable from the CLI, and the readout-folded operator the gradient uses equals the term-by-term measurement."""

from __future__ import annotations

import json

import numpy as np
import pytest

from workbench.quantum.napa import experiment
from workbench.quantum.napa.config import NapaConfig
from workbench.quantum.napa.energy import energy_of_state, measured_hamiltonian
from workbench.quantum.napa.hamiltonians import load


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """Runs computed here, not read from the disk cache (the calibrated pulses still come from theirs)."""
    monkeypatch.setattr(experiment, "cache_dir", lambda *parts: tmp_path)
    experiment.clear_caches()
    yield
    experiment.clear_caches()


def _reevaluated(config: NapaConfig, run: experiment.VqeRun) -> tuple[float, float]:
    ansatz, measure, _ = experiment.napa_objective(config)
    x = np.array(run.params)
    return measure(x), ansatz.duration_ns(x)


@pytest.mark.parametrize(
    "settings",
    [
        dict(optimizer="cobyla", progressive=True, start="random", layers=2, budget=6, starts=1),
        dict(optimizer="gradient", progressive=False, start="hartree-fock", layers=1, budget=3, starts=2),
    ],
    ids=["cobyla-progressive", "gradient"],
)
def test_a_run_reports_one_schedule(fresh, settings):
    config = NapaConfig(**settings)
    run = experiment.vqe(config)
    e, ns = _reevaluated(config, run)
    # the same energy routine on the same parameters: equal up to summation order
    assert e == pytest.approx(run.energy, abs=1e-10) and ns == pytest.approx(run.duration_ns, abs=1e-9)
    assert len(run.params) == experiment.napa_objective(config)[0].num_params
    assert run.energy == min(run.trace) and run.evaluations == len(run.trace) <= config.budget
    assert run.correlation == pytest.approx((run.hf - run.energy) / (run.hf - run.exact))


def test_the_gradients_operator_is_the_measured_energy_with_readout_error():
    """Reference: ``energy_of_state``'s term-by-term measurement with each qubit's confusion matrix."""
    from workbench.quantum.device import get_device

    dev = get_device("fake_jakarta").transmons((0, 1), levels=3)
    assert any(dev.readout_p01) and any(dev.readout_p10)
    rng = np.random.default_rng(4)
    a = rng.normal(size=(9, 9)) + 1j * rng.normal(size=(9, 9))
    rho = a @ a.conj().T
    rho /= np.trace(rho)
    h = load("LiH", 1.5)
    folded = _folded(rho)
    for readout in (True, False):
        ours = float(np.real(np.trace(folded @ measured_hamiltonian(dev, h.terms, readout=readout))))
        assert ours == pytest.approx(energy_of_state(dev, rho, h.terms, readout=readout), abs=1e-12)


def _folded(rho: np.ndarray) -> np.ndarray:
    from workbench.quantum.napa.energy import fold_leakage

    perm = [0, 2, 1, 3]  # big-endian |q0 q1> -> qiskit order
    return fold_leakage(rho, 3)[np.ix_(perm, perm)]


def test_the_cli_runs_the_gradient_optimiser(fresh, capsys, monkeypatch):
    from workbench.cli import main
    from workbench.quantum.napa import runner

    monkeypatch.setattr(runner, "baseline", lambda config, kind: experiment.VqeRun(
        kind, 0.0, -1.0, 1.0, -0.9, 100.0, 1, (0.0,), (0.5,)))  # fmt: skip  # the baselines are tested elsewhere
    assert main(["run", "napa", "--optimizer", "gradient", "--layers", "1", "--budget", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["optimizer"] == "gradient" and 1 <= out["evaluations"] <= 3
    config = NapaConfig(optimizer="gradient", layers=1, budget=3)
    e, ns = _reevaluated(config, experiment.vqe(config))
    assert out["energy"] == pytest.approx(e, abs=1e-10) and out["duration_ns"] == pytest.approx(ns)
    assert main(["run", "napa", "--optimizer", "gradient", "--shots", "100"]) == 2
    assert "shots=100 with optimizer='gradient'" in capsys.readouterr().err


@pytest.mark.slow  # ~60 COBYLA evaluations of 2-layer schedules: a minute on a loaded machine
def test_the_reported_quito_run_is_one_schedule(fresh):
    """The case #26 reported: fake_quito, 2 layers, budget 60, the paper's progressive COBYLA: the CLI printed
    stage 1's energy (-1.091671 Ha) with stage 2's parameters (-1.037640 Ha) and duration (504.9 ns)."""
    config = NapaConfig(device="fake_quito", layers=2, budget=60, optimizer="cobyla", progressive=True,
                        start="random", starts=1)  # fmt: skip
    run = experiment.vqe(config)
    e, ns = _reevaluated(config, run)
    assert e == pytest.approx(run.energy, abs=1e-10) and ns == pytest.approx(run.duration_ns, abs=1e-9)
