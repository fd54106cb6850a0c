"""What the pulse-ZNE runner and study both run: the calibrated problem, the noiselessly trained ansatz, the
played device, the sweep ``E(lambda)`` (noisy and noiseless) and one extrapolation's outcome.

Nothing is computed twice: :func:`trained` is keyed by what the training depends on (not the noise scale, shared by
every noise setting; the shipped record of :mod:`workbench.quantum.pulse_zne.record` or the disk cache when there);
:func:`energies` memoises every ``E(lambda)`` point (the noiseless ones shared by every noise scale), so the runner
reuses a sweep's points and the extrapolations only read them; :func:`sweep` (folding at 1, 3, 5, 7 and stretching at
1..5 for one noise setting) is kept as JSON under ``cache_dir("pulse_zne")`` (atomic writes).
:func:`clear_caches` empties the memory caches.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from workbench.atomic import atomic_write
from workbench.data import cache_dir
from workbench.quantum.common.pulse.calibrated import calibrated_natives
from workbench.quantum.common.pulse.device import PulseDevice
from workbench.quantum.napa.hamiltonians import load
from workbench.quantum.pulse_zne.config import PulseZneConfig
from workbench.quantum.pulse_zne.extrapolation import EXTRAPOLATIONS, extrapolate, extrapolate_noting
from workbench.quantum.pulse_zne.zne import TrainedAnsatz, recorded_training, scaled_energies, train_key, trained_ansatz

__all__ = [
    "FOLD_GRID",
    "STRETCH_GRID",
    "pulse_problem",
    "trained",
    "recorded",
    "played_device",
    "TRAIN_FIELDS",
    "SWEEP_FIELDS",
    "missing_points",
    "energies",
    "sweep",
    "cached_sweep",
    "ZneOutcome",
    "outcome",
    "zne_view",
    "clear_caches",
]

FOLD_GRID = (1, 3, 5, 7)
STRETCH_GRID = (1.0, 2.0, 3.0, 4.0, 5.0)
SWEEP_VERSION = 2


def pulse_problem(config: PulseZneConfig):
    """``(calibrated natives of the device pair, molecular Hamiltonian)`` of ``config``."""
    natives = calibrated_natives(config.resolved_device(), config.qubit, config.target)
    ham = load(config.molecule, config.bond_length)
    return natives, ham


#: what a training depends on; a sweep adds the noise it is played under
TRAIN_FIELDS = ("molecule", "bond_length", "device", "qubit", "target", "layers", "budget")
SWEEP_FIELDS = (*TRAIN_FIELDS, "noise_scale", "readout")


def _only(config: PulseZneConfig, fields: Sequence[str]) -> PulseZneConfig:
    """``config`` with every field but ``fields`` at its default (a memo key that other fields do not split)."""
    return PulseZneConfig(**{k: getattr(config, k) for k in fields})


_TRAINED: dict[PulseZneConfig, TrainedAnsatz] = {}


def trained(
    config: PulseZneConfig, on_evaluation: Callable[[int, int], None] | None = None, *, recorded: bool = True
) -> TrainedAnsatz:
    """The noiselessly trained ansatz of ``config`` (molecule, device pair, layers, budget; not the noise):
    memoised; the shipped record when it matches (``recorded``), else the disk cache, else trained.
    ``recorded=False``: trained again from scratch (neither record nor cache read or written; not memoised)."""
    key = _only(config, TRAIN_FIELDS)
    if recorded and key in _TRAINED:
        return _TRAINED[key]
    natives, ham = pulse_problem(key)
    tr = trained_ansatz(natives, ham.terms, layers=key.layers, budget=key.budget, on_evaluation=on_evaluation,
                        recorded=recorded, cache=recorded)  # fmt: skip
    if recorded:
        _TRAINED[key] = tr
    return tr


def recorded(config: PulseZneConfig) -> dict | None:
    """The shipped training that :func:`trained` reads for ``config`` (None: it trains or reads the disk cache)."""
    natives, ham = pulse_problem(config)
    return recorded_training(train_key(natives, ham.terms, config.layers, config.budget, 0))


def played_device(config: PulseZneConfig, device: PulseDevice) -> PulseDevice:
    """``device`` with T1/T2 divided by ``noise_scale`` (0: none) and its readout error only if ``readout``."""
    noisy = device.scaled_noise(config.noise_scale) if config.noise_scale else device.noiseless()
    return noisy if config.readout else noisy.with_readout((0.0,) * noisy.num_qubits, (0.0,) * noisy.num_qubits)


#: (config's sweep or training fields, method, lambda, noisy) -> E (Ha); noiseless points are keyed by the training
#: fields (the other fields at their defaults, so ``noisy`` tells them from the default noise scale's noisy points)
_POINTS: dict[tuple[PulseZneConfig, str, float, bool], float] = {}


def _point_key(
    config: PulseZneConfig, method: str, factor: float, noisy: bool
) -> tuple[PulseZneConfig, str, float, bool]:
    return _only(config, SWEEP_FIELDS if noisy else TRAIN_FIELDS), method, float(factor), noisy


def missing_points(config: PulseZneConfig, method: str, factors: Sequence[float], *, noisy: bool) -> list[float]:
    """The factors of ``factors`` whose ``E(lambda)`` is not memoised yet (cheap)."""
    return [float(f) for f in factors if _point_key(config, method, f, noisy) not in _POINTS]


def energies(
    config: PulseZneConfig, method: str, factors: Sequence[float], *, noisy: bool,
    on_point: Callable[[int, int], None] | None = None,
) -> np.ndarray:  # fmt: skip
    """``E(lambda)`` (Ha) at ``factors`` by ``method`` of the trained ansatz, played under ``config``'s noise
    (``noisy``) or noiselessly without readout error; every point memoised, only the missing ones simulated
    (``on_point(i, n)`` after each of them)."""
    todo = missing_points(config, method, factors, noisy=noisy)
    if todo:
        natives, ham = pulse_problem(config)
        tr = trained(config)
        device = played_device(config, natives.device) if noisy else natives.device.noiseless()
        values = scaled_energies(device, tr.ansatz, tr.x, ham.terms, method, todo, readout=noisy and config.readout,
                                 on_point=on_point)  # fmt: skip
        for f, e in zip(todo, values):
            _POINTS[_point_key(config, method, f, noisy)] = float(e)
    return np.array([_POINTS[_point_key(config, method, f, noisy)] for f in factors])


def _sweep_key(config: PulseZneConfig) -> str:
    key = json.dumps([SWEEP_VERSION, config.molecule, config.bond_length, config.device, config.qubit, config.target,
                      config.noise_scale, config.readout, config.layers, config.budget, FOLD_GRID, STRETCH_GRID])  # fmt: skip
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def _remember(key: PulseZneConfig, data: dict) -> dict:
    """Keep the sweep ``data`` of ``key`` in memory, its points too (the runner's and other views' reuse)."""
    _SWEEPS[key] = data
    for method in ("folding", "stretching"):
        for noisy in (True, False):
            for f, e in zip(data[method]["scale_factors"], data[method]["noisy" if noisy else "noiseless"]):
                _POINTS.setdefault(_point_key(key, method, f, noisy), float(e))
    return data


def cached_sweep(config: PulseZneConfig) -> dict | None:
    """The sweep of ``config`` if computed before (memory or disk), else None (cheap)."""
    key = _only(config, SWEEP_FIELDS)
    if key in _SWEEPS:
        return _SWEEPS[key]
    path = cache_dir("pulse_zne") / f"sweep-{_sweep_key(key)}.json"
    if path.exists():
        try:
            return _remember(key, json.loads(path.read_text()))
        except (ValueError, KeyError, TypeError):
            return None
    return None


_SWEEPS: dict[PulseZneConfig, dict] = {}
_GRIDS = (("folding", FOLD_GRID), ("stretching", STRETCH_GRID))


def sweep(config: PulseZneConfig, on_point: Callable[[int, int], None] | None = None) -> dict:
    """``E(lambda)`` noisy and noiseless for folding on :data:`FOLD_GRID` and stretching on :data:`STRETCH_GRID`,
    the exact and the trained noiseless energy (Ha), durations (ns); memoised and cached on disk.
    ``on_point(i, n)``: after each of the ``n`` points not memoised before."""
    hit = cached_sweep(config)
    if hit is not None:
        return hit
    key = _only(config, SWEEP_FIELDS)
    natives, ham = pulse_problem(key)
    tr = trained(key)
    total = sum(len(missing_points(key, m, g, noisy=n)) for m, g in _GRIDS for n in (True, False))
    done = [0]

    def tick(_i: int, _n: int) -> None:
        done[0] += 1
        if on_point:
            on_point(done[0], total)

    out = {
        "exact": ham.exact,
        "trained_noiseless": tr.energy,
        "duration_ns": tr.ansatz.schedule(tr.x).duration * natives.device.dt,
    }
    for method, grid in _GRIDS:
        out[method] = {
            "scale_factors": list(grid),
            "noisy": energies(key, method, grid, noisy=True, on_point=tick).tolist(),
            "noiseless": energies(key, method, grid, noisy=False, on_point=tick).tolist(),
        }
    path = cache_dir("pulse_zne") / f"sweep-{_sweep_key(key)}.json"
    with atomic_write(path, "w", encoding="utf-8") as f:
        json.dump(out, f)
    return _remember(key, out)


@dataclass(frozen=True, kw_only=True)
class ZneOutcome:
    """One ZNE: the factors, noisy and noiseless energies there, the extrapolated energy and the errors (Ha).

    ``ideal_*``: against the ansatz's noiseless energy (what ZNE aims at); ``all_methods``: extrapolation ->
    mitigated error; ``fallback``: why the chosen extrapolation was replaced (None: it was not);
    ``coherent_bias``: noiseless ``E(last factor) - E(first)``, the scaling's own error without any noise
    (drift the reversal does not undo); ``curve``: the whole sweep, both methods (None outside a sweep)."""

    method: str
    extrapolation: str
    scale_factors: tuple[float, ...]
    energies: tuple[float, ...]
    noiseless_energies: tuple[float, ...]
    coherent_bias: float
    mitigated: float
    fallback: str | None
    exact: float
    trained_noiseless: float
    unmitigated_error: float
    mitigated_error: float
    reduction: float
    ideal_unmitigated_error: float
    ideal_mitigated_error: float
    ideal_reduction: float
    all_methods: dict[str, float]
    curve: dict[str, dict[str, list[float]]] | None = None


def _errors_by_method(factors: Sequence[float], energies: Sequence[float], exact: float) -> dict[str, float]:
    out = {}
    for name in EXTRAPOLATIONS:
        try:
            out[name] = abs(extrapolate(name, factors, energies) - exact)
        except (ValueError, RuntimeError):
            out[name] = float("nan")
    return out


def outcome(
    config: PulseZneConfig,
    energies: Sequence[float],
    noiseless: Sequence[float],
    *,
    exact: float,
    trained_noiseless: float,
    unmitigated: float | None = None,
    curve: dict | None = None,
) -> ZneOutcome:
    """Extrapolate ``energies`` (at ``config.factors()``) with ``config.extrapolation``; ``unmitigated``: the
    energy at lambda = 1 (default: the first energy)."""  # fmt: skip
    factors = config.factors()
    energies = tuple(float(e) for e in energies)
    mitigated, fallback = extrapolate_noting(config.extrapolation, factors, energies)
    first = energies[0] if unmitigated is None else float(unmitigated)
    un, err = abs(first - exact), abs(mitigated - exact)
    iun, ierr = abs(first - trained_noiseless), abs(mitigated - trained_noiseless)
    return ZneOutcome(
        method=config.method, extrapolation=config.extrapolation, scale_factors=tuple(factors), energies=energies,
        noiseless_energies=tuple(float(e) for e in noiseless), coherent_bias=float(noiseless[-1] - noiseless[0]),
        mitigated=mitigated, fallback=fallback, exact=exact, trained_noiseless=trained_noiseless,
        unmitigated_error=un, mitigated_error=err, reduction=1 - err / un if un else float("nan"),
        ideal_unmitigated_error=iun, ideal_mitigated_error=ierr, ideal_reduction=1 - ierr / iun if iun else float("nan"),
        all_methods=_errors_by_method(factors, energies, exact), curve=curve,
    )  # fmt: skip


def zne_view(config: PulseZneConfig, data: dict) -> ZneOutcome:
    """Extrapolate the sweep ``data`` at ``config``'s factors (each must be on the sweep's grid)."""
    factors = config.factors()
    grid = data[config.method]["scale_factors"]
    missing = [f for f in factors if f not in grid]
    if missing:
        raise ValueError(
            f"scale_factors={config.scale_factors!r}: {', '.join(f'{v:g}' for v in missing)} not in the cached "
            f"{config.method} sweep (valid values are {', '.join(f'{v:g}' for v in grid)})"
        )
    pick = [grid.index(f) for f in factors]
    return outcome(
        config, [data[config.method]["noisy"][i] for i in pick], [data[config.method]["noiseless"][i] for i in pick],
        exact=data["exact"], trained_noiseless=data["trained_noiseless"], unmitigated=data[config.method]["noisy"][0],
        curve={m: data[m] for m in ("folding", "stretching")},
    )  # fmt: skip


def clear_caches() -> None:
    """Empty the memory caches (the disk cache stays: delete cache_dir('pulse_zne') to recompute)."""
    _SWEEPS.clear()
    _POINTS.clear()
    _TRAINED.clear()
