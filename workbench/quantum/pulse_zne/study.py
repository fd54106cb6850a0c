"""What the pulse-ZNE panel, notebook and CLI show: reversal exactness, estimator validity, ZNE sweeps
(the paper's claims: :mod:`workbench.quantum.pulse_zne.claims`).

Caches: :func:`sweep` (``E(lambda)`` for folding at 1, 3, 5, 7 and stretching at 1..5 for one noise setting) and
:func:`trained` are memoised in memory and kept as JSON under ``cache_dir("pulse_zne")`` (atomic writes); the
panel's :func:`zne_view` only extrapolates a cached sweep. :func:`clear_caches` empties the memory caches.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from workbench.atomic import atomic_write
from workbench.data import cache_dir
from workbench.quantum.device import Device, get_device
from workbench.quantum.napa.hamiltonians import load
from workbench.quantum.pulse.calibrated import calibrated_natives
from workbench.quantum.pulse.device import PulseDevice
from workbench.quantum.pulse.schedule import Play, Schedule
from workbench.quantum.pulse.waveforms import drag
from workbench.quantum.pulse_zne.config import PulseZneConfig
from workbench.quantum.pulse_zne.estimator import (
    echo_decay,
    echo_error,
    echo_infidelity,
    fit_echo_decay,
    nominal_unitary,
    process_fidelity,
    return_probability,
)
from workbench.quantum.pulse_zne.extrapolation import EXTRAPOLATIONS, extrapolate
from workbench.quantum.pulse_zne.zne import TrainedAnsatz, scaled_energies, trained_ansatz

__all__ = [
    "FOLD_GRID",
    "STRETCH_GRID",
    "trained",
    "sweep",
    "ZneView",
    "zne_view",
    "reversal_exactness",
    "estimator_validity",
    "echo_decay_scan",
    "clear_caches",
    "pulse_problem",
]

FOLD_GRID = (1, 3, 5, 7)
STRETCH_GRID = (1.0, 2.0, 3.0, 4.0, 5.0)
SWEEP_VERSION = 2


def pulse_problem(config: PulseZneConfig):
    """``(calibrated natives of the device pair, molecular Hamiltonian)`` of ``config``."""
    natives = calibrated_natives(get_device(config.device), config.qubit, config.target)
    ham = load(config.molecule, config.bond_length)
    return natives, ham


@functools.lru_cache(maxsize=16)
def trained(config: PulseZneConfig, on_evaluation: Callable[[int, int], None] | None = None) -> TrainedAnsatz:
    """The noiselessly trained ansatz of ``config`` (molecule, device pair, budget)."""
    natives, ham = pulse_problem(config)
    return trained_ansatz(natives, ham.terms, layers=config.layers, budget=config.budget, on_evaluation=on_evaluation)


def _sweep_key(config: PulseZneConfig) -> str:
    key = json.dumps([SWEEP_VERSION, config.molecule, config.bond_length, config.device, config.qubit, config.target,
                      config.noise_scale, config.readout, config.layers, config.budget, FOLD_GRID, STRETCH_GRID])  # fmt: skip
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def _sweep_config(config: PulseZneConfig) -> PulseZneConfig:
    """The fields a sweep depends on (others at their defaults), so that panel changes reuse it."""
    keep = ("molecule", "bond_length", "device", "qubit", "target", "noise_scale", "readout", "layers", "budget")
    return PulseZneConfig(**{k: getattr(config, k) for k in keep})


def cached_sweep(config: PulseZneConfig) -> dict | None:
    """The sweep of ``config`` if computed before (memory or disk), else None (cheap)."""
    key = _sweep_config(config)
    if key in _SWEEPS:
        return _SWEEPS[key]
    path = cache_dir("pulse_zne") / f"sweep-{_sweep_key(key)}.json"
    if path.exists():
        try:
            data = json.loads(path.read_text())
            _SWEEPS[key] = data
            return data
        except ValueError:
            return None
    return None


_SWEEPS: dict[PulseZneConfig, dict] = {}


def sweep(config: PulseZneConfig, on_point: Callable[[int, int], None] | None = None) -> dict:
    """``E(lambda)`` noisy and noiseless for folding on :data:`FOLD_GRID` and stretching on :data:`STRETCH_GRID`,
    the exact and the trained noiseless energy (Ha), durations (ns); memoised and cached on disk."""
    hit = cached_sweep(config)
    if hit is not None:
        return hit
    key = _sweep_config(config)
    natives, ham = pulse_problem(key)
    tr = trained(key)
    dev = natives.device
    noisy = dev.scaled_noise(key.noise_scale) if key.noise_scale else dev.noiseless()
    if not key.readout:
        noisy = noisy._replace_readout((0.0,) * 2, (0.0,) * 2)
    total = 2 * (len(FOLD_GRID) + len(STRETCH_GRID))
    done = [0]

    def tick(_i: int, _n: int) -> None:
        done[0] += 1
        if on_point:
            on_point(done[0], total)

    out = {
        "exact": ham.exact,
        "trained_noiseless": tr.energy,
        "duration_ns": tr.ansatz.schedule(tr.x).duration * dev.dt,
    }
    for method, grid in (("folding", FOLD_GRID), ("stretching", STRETCH_GRID)):
        out[method] = {
            "scale_factors": list(grid),
            "noisy": scaled_energies(noisy, tr.ansatz, tr.x, ham.terms, method, grid, readout=key.readout,
                                     on_point=tick).tolist(),
            "noiseless": scaled_energies(dev.noiseless(), tr.ansatz, tr.x, ham.terms, method, grid, readout=False,
                                         on_point=tick).tolist(),
        }  # fmt: skip
    path = cache_dir("pulse_zne") / f"sweep-{_sweep_key(key)}.json"
    with atomic_write(path, "w", encoding="utf-8") as f:
        json.dump(out, f)
    _SWEEPS[key] = out
    return out


@dataclass(frozen=True)
class ZneView:
    """One setting's ZNE: the factors used, their energies, the extrapolated energy, errors vs exact (Ha)."""

    method: str
    extrapolation: str
    scale_factors: tuple[float, ...]
    energies: tuple[float, ...]
    mitigated: float
    exact: float
    trained_noiseless: float
    unmitigated_error: float
    mitigated_error: float
    reduction: float
    ideal_unmitigated_error: float  # against the ansatz's noiseless energy (what ZNE aims at)
    ideal_mitigated_error: float
    ideal_reduction: float
    all_methods: dict[str, float]  # extrapolation -> mitigated error
    curve: dict[str, list[float]]  # the whole grid of both methods, noisy and noiseless


def zne_view(config: PulseZneConfig, data: dict) -> ZneView:
    """Extrapolate the sweep ``data`` at ``config``'s factors (each must be on the sweep's grid)."""
    factors = config.factors()
    grid = data[config.method]["scale_factors"]
    missing = [f for f in factors if f not in grid]
    if missing:
        raise ValueError(
            f"scale_factors={config.scale_factors!r}: {', '.join(f'{v:g}' for v in missing)} not in the cached "
            f"{config.method} sweep (valid values are {', '.join(f'{v:g}' for v in grid)})"
        )
    energies = [data[config.method]["noisy"][grid.index(f)] for f in factors]
    exact = data["exact"]
    mitigated = extrapolate(config.extrapolation, factors, energies)
    un = abs(energies[0] - exact) if factors[0] == 1 else abs(data[config.method]["noisy"][0] - exact)
    errs = {}
    for name in EXTRAPOLATIONS:
        try:
            errs[name] = abs(extrapolate(name, factors, energies) - exact)
        except (ValueError, RuntimeError):
            errs[name] = float("nan")
    err = abs(mitigated - exact)
    ideal = data["trained_noiseless"]
    iun, ierr = abs(data[config.method]["noisy"][0] - ideal), abs(mitigated - ideal)
    return ZneView(config.method, config.extrapolation, tuple(factors), tuple(energies), mitigated, exact, ideal,
                   un, err, 1 - err / un if un else float("nan"), iun, ierr, 1 - ierr / iun if iun else float("nan"),
                   errs, {m: data[m] for m in ("folding", "stretching")})  # fmt: skip


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


def clear_caches() -> None:
    """Empty the memory caches (the disk cache stays: delete cache_dir('pulse_zne') to recompute)."""
    _SWEEPS.clear()
    for f in (trained, reversal_exactness, estimator_validity, echo_decay_scan):
        f.cache_clear()
