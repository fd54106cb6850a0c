"""What the pulse-ZNE panel and notebook show: reversal exactness, where the fidelity estimator holds and where it
misleads, echo decay, and the ZNE sweeps (the paper's claims: :mod:`workbench.quantum.pulse_zne.claims`).

The sweeps and their extrapolation are the experiment's (:mod:`workbench.quantum.pulse_zne.experiment`, shared with
the runner): ``sweep`` (heavy, cached on disk), ``cached_sweep`` (cheap) and ``zne_view`` are re-exported here for
the panel; :func:`training_view` says where the trained ansatz came from (the shipped record of
:mod:`workbench.quantum.pulse_zne.record`, or trained here) and optionally trains it again to compare.
:func:`clear_caches` empties the memory caches.
"""

from __future__ import annotations

import cmath
import functools
import json
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from workbench.quantum.common.pulse.calibrated import cached_natives
from workbench.quantum.common.pulse.device import PulseDevice
from workbench.quantum.common.pulse.hamiltonian import hamiltonian_steps
from workbench.quantum.common.pulse.natives import CR_SIGMA, calibration_warnings
from workbench.quantum.common.pulse.propagate import unitary
from workbench.quantum.common.pulse.schedule import Play, Schedule
from workbench.quantum.common.pulse.waveforms import drag, gaussian_square
from workbench.quantum.device import Device
from workbench.quantum.pulse_zne import experiment
from workbench.quantum.pulse_zne.config import PulseZneConfig
from workbench.quantum.pulse_zne.estimator import (
    echo,
    echo_decay,
    echo_error,
    echo_infidelity,
    fit_echo_decay,
    nominal_unitary,
    process_fidelity,
    return_probability,
)
from workbench.quantum.pulse_zne.experiment import FOLD_GRID, STRETCH_GRID, ZneOutcome, cached_sweep, sweep, zne_view
from workbench.quantum.pulse_zne.zne import RECORDED_TRAINING

__all__ = [
    "FOLD_GRID",
    "STRETCH_GRID",
    "sweep",
    "cached_sweep",
    "ZneOutcome",
    "zne_view",
    "TrainingView",
    "training_view",
    "recorded_command",
    "reversal_exactness",
    "estimator_validity",
    "bare_cr_echo",
    "CR_AMPS",
    "echo_decay_scan",
    "calibration_notes",
    "clear_caches",
]


@dataclass(frozen=True, kw_only=True)
class TrainingView:
    """The trained ansatz every sweep plays: its noiseless and the exact energy (Ha), COBYLA evaluations, where it
    came from (``source``: the shipped record and its command, or trained here), and with a retraining the
    differences of the retrained one from it (``retrained_*``; None without)."""

    energy: float
    exact: float
    evaluations: int
    duration_ns: float
    source: str
    retrained_energy_diff: float | None = None
    retrained_max_abs_dx: float | None = None


def training_view(
    config: PulseZneConfig, *, retrain: bool = False, on_evaluation: Callable[[int, int], None] | None = None
) -> TrainingView:
    """The trained ansatz of ``config`` (:func:`experiment.trained`); ``retrain``: train it again from scratch
    (``config.budget`` evaluations, ``on_evaluation(i, n)`` after each; about a CPU-minute at the defaults) and
    compare with the one the sweeps use."""
    tr = experiment.trained(config)
    natives, ham = experiment.pulse_problem(config)
    shipped = experiment.recorded(config)
    source = (f"the recorded training in {RECORDED_TRAINING.name} ({recorded_command()})" if shipped is not None
              else "trained here (or read from the disk cache of an earlier training)")  # fmt: skip
    diff = dx = None
    if retrain:
        fresh = experiment.trained(config, on_evaluation, recorded=False)
        diff, dx = abs(fresh.energy - tr.energy), float(np.max(np.abs(fresh.x - tr.x)))
    return TrainingView(energy=tr.energy, exact=ham.exact, evaluations=tr.evaluations,
                        duration_ns=tr.ansatz.schedule(tr.x).duration * natives.device.dt, source=source,
                        retrained_energy_diff=diff, retrained_max_abs_dx=dx)  # fmt: skip


def recorded_command() -> str:
    """The command that wrote the shipped trainings (from the file itself)."""
    return json.loads(RECORDED_TRAINING.read_text())["command"]


def _test_pulse(amp: float = 0.13, phase: float = 0.3, detuning: float = 0.0) -> Schedule:
    return Schedule.of([Play("d0", drag(160, amp, 40, 1.0, phase), 0, detuning)])


@functools.lru_cache(maxsize=8)
def reversal_exactness(device: Device) -> dict[str, float]:
    """``max |U(S S^R) - I|`` and the echo's infidelity for a DRAG pulse on: one 2-level transmon (no drift),
    with a 1 MHz detuning, one 3-level transmon (anharmonic drift), a coupled 3-level pair; and the
    one-layer ansatz on the pair."""
    d2 = device.transmons((0,), levels=2)
    d3 = device.transmons((0,), levels=3)
    pair = device.transmons((0, 1), levels=3)
    s = _test_pulse()
    det = _test_pulse(detuning=2 * np.pi * 1e-3)
    return {
        "two_level_max_abs": echo_error(d2, s),
        "two_level_infidelity": echo_infidelity(d2, s),
        "detuned_1mhz_max_abs": echo_error(d2, det),
        "detuned_1mhz_infidelity": echo_infidelity(d2, det),
        "three_level_infidelity": echo_infidelity(d3, s),
        "coupled_pair_infidelity": echo_infidelity(pair, s),
    }


def _scenario(dev: PulseDevice, kind: str, value: float) -> tuple[PulseDevice, Schedule]:
    if kind == "noise":
        return dev.scaled_noise(value), _test_pulse()
    if kind == "amplitude":
        return dev, _test_pulse(amp=0.13 * (1 + value))
    return dev, _test_pulse(detuning=2 * np.pi * 1e-3 * value)


SCENARIOS = {
    "noise": (1.0, 3.0, 10.0, 30.0, 100.0, 300.0),  # T1/T2 divided by
    "amplitude": (-0.2, -0.1, -0.05, 0.05, 0.1, 0.2),  # relative amplitude error (device noise x 1)
    "detuning": (0.25, 0.5, 1.0, 2.0, 4.0, 8.0),  # MHz drift of the qubit frequency vs the drive
}


@functools.lru_cache(maxsize=8)
def estimator_validity(device: Device, qubit: int = 0) -> dict:
    """F_est (S then S^R from |0>) and the true average gate fidelity of S against the nominal pulse's unitary,
    one 3-level transmon with the device's T1/T2, as noise, amplitude error and detuning vary; Pearson
    correlations per scenario and for noise + detuning together."""
    dev = device.transmons((qubit,), levels=3)
    target = nominal_unitary(dev, _test_pulse())
    rows = {}
    for kind, values in SCENARIOS.items():
        pts = []
        for v in values:
            d, s = _scenario(dev, kind, v)
            pts.append((v, return_probability(d, s), process_fidelity(d, s, target)))
        rows[kind] = pts
    corr = {}
    for kind, pts in rows.items():
        a = np.array(pts)
        corr[kind] = float(np.corrcoef(a[:, 1], a[:, 2])[0, 1])
    both = np.array(rows["noise"] + rows["detuning"])
    corr["noise+detuning"] = float(np.corrcoef(both[:, 1], both[:, 2])[0, 1])
    return {"rows": rows, "correlation": corr}


CR_AMPS = (0.1, 0.2, 0.3, 0.45, 0.6)  # bare CR amplitudes (GaussianSquare, 560 dt, sigma 64 dt)


@functools.lru_cache(maxsize=8)
def bare_cr_echo(device: Device, control: int = 0, target: int = 1) -> list[dict[str, float]]:
    """A bare CR pulse (no echo, no cancellation tone) on a coupled 3-level pair, *noiseless*: its true fidelity
    against its own nominal unitary is ~1, yet S^R does not undo it. Reversal negates the amplitude, but the
    control's AC Stark shift grows with amplitude squared and keeps its sign, so S S^R leaves a Z phase on the
    control (rad, ``control_z_phase``) that grows with the amplitude. ``F_est`` from |00> cannot see a Z phase
    (stays ~1); averaged over inputs (``echo_fidelity`` = average gate fidelity of S S^R against I) the estimator
    reports as low as ~0.4 for this perfect pulse: where the estimator misleads."""
    pair = device.transmons((control, target), levels=3).noiseless()
    rows = []
    for amp in CR_AMPS:
        s = Schedule.of([Play("u0-1", gaussian_square(560, amp, CR_SIGMA, 560 - 4 * CR_SIGMA), 0)])
        u = unitary(hamiltonian_steps(pair, echo(s, 1), substeps=2))
        ten, zero = complex(u[3, 3]), complex(u[0, 0])  # |10> and |00> (3 levels per transmon)
        rows.append({
            "amp": amp,
            "f_est_from_00": return_probability(pair, s),
            "echo_fidelity": 1.0 - echo_infidelity(pair, s),
            "true_fidelity": process_fidelity(pair, s, nominal_unitary(pair, s)),
            "control_z_phase": cmath.phase(ten / zero),
        })  # fmt: skip
    return rows


@functools.lru_cache(maxsize=8)
def echo_decay_scan(device: Device, noise: tuple[float, ...] = (10.0, 30.0, 100.0), levels: int = 2) -> dict:
    """Echo decay ``(S S^R)^m``, m = 1..128, and the fitted error per pulse at several noise scales, on one transmon
    with ``levels`` levels (2: no drift, the decay is the noise's; 3: the anharmonic drift's coherent residue
    adds up over the repetitions and dominates at low noise)."""
    dev = device.transmons((0,), levels=levels)
    reps = (1, 2, 4, 8, 16, 32, 64, 128)
    out = {}
    for eta in noise:
        p = echo_decay(dev.scaled_noise(eta), _test_pulse(), reps)
        out[eta] = {"repetitions": list(reps), "p_return": p.tolist(), **fit_echo_decay(np.array(reps), p, 2)}
    return out


def calibration_notes(config: PulseZneConfig) -> tuple[str, ...]:
    """Warnings of the ansatz pair's calibration (ECR below its fidelity target), if calibrated before (cheap)."""
    natives = cached_natives(config.resolved_device(), config.qubit, config.target, 3)
    return calibration_warnings(natives) if natives is not None else ()


def clear_caches() -> None:
    """Empty the memory caches (the disk cache stays: delete cache_dir('pulse_zne') to recompute)."""
    experiment.clear_caches()
    for f in (reversal_exactness, estimator_validity, bare_cr_echo, echo_decay_scan):
        f.cache_clear()
