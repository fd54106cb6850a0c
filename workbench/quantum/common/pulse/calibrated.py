"""Calibrated native pulses of a device pair, memoised and cached on disk.

Calibrating X/SX on two transmons and the ECR between them takes seconds (longer on a weakly coupled pair, whose
CR length adapts to reach the fidelity target: :func:`~workbench.quantum.common.pulse.natives.calibrate_ecr_adaptive`); every pulse technique (pulse-sim,
NAPA, pulse ZNE) needs the same result, so it is kept in memory and as JSON under ``cache_dir("pulse")``
(written atomically; a damaged file is recalibrated and overwritten), keyed by device, qubits, levels and
:data:`CALIBRATION_VERSION`. :func:`clear_calibration_cache` empties the memory cache.
"""

from __future__ import annotations

import functools
import json
from dataclasses import asdict

from workbench.atomic import atomic_write
from workbench.data import cache_dir
from workbench.quantum.common.pulse.natives import (
    CrossResonance,
    NativeGates,
    SingleQubitPulse,
    calibrate_ecr_adaptive,
    calibrate_single,
)
from workbench.quantum.device import Device

__all__ = ["CALIBRATION_VERSION", "calibrated_natives", "cached_natives", "clear_calibration_cache"]

#: bump when the calibration procedure changes (invalidates the disk cache)
CALIBRATION_VERSION = 2  # 2: the ECR's CR length adapts to reach ECR_TARGET (calibrate_ecr_adaptive)


def _cache_file(device: str, qubits: tuple[int, int], levels: int):
    return cache_dir("pulse") / f"natives-v{CALIBRATION_VERSION}-{device}-{qubits[0]}-{qubits[1]}-L{levels}.json"


def cached_natives(device: Device, qubit: int, target: int, levels: int = 3) -> NativeGates | None:
    """The calibrated natives of the pair if calibrated before (memory or disk), else None (cheap: for panels)."""
    pair = device.transmons((qubit, target), levels=levels)
    path = _cache_file(pair.name, (qubit, target), levels)
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
        x = {int(k): SingleQubitPulse(**v) for k, v in data["x"].items()}
        sx = {int(k): SingleQubitPulse(**v) for k, v in data["sx"].items()}
        e = data["ecr"]
        ecr = CrossResonance(**{**e, "pre": tuple(e["pre"]), "post": tuple(e["post"])})
        return NativeGates(pair, x, sx, {(0, 1): ecr})
    except (ValueError, KeyError, TypeError):
        return None  # a stale or damaged cache file: calibrate again and overwrite it


@functools.lru_cache(maxsize=16)
def calibrated_natives(device: Device, qubit: int, target: int, levels: int = 3) -> NativeGates:
    """X and SX on both qubits and the ECR ``qubit -> target`` of a device pair, found in our simulator (the
    pair re-indexed 0 = ``qubit``, 1 = ``target``); read from the disk cache when calibrated before."""
    hit = cached_natives(device, qubit, target, levels)
    if hit is not None:
        return hit
    pair = device.transmons((qubit, target), levels=levels)
    path = _cache_file(pair.name, (qubit, target), levels)
    x = {q: calibrate_single(pair, q, "x") for q in (0, 1)}
    sx = {q: calibrate_single(pair, q, "sx", beta0=x[q].beta) for q in (0, 1)}
    ecr = calibrate_ecr_adaptive(pair, 0, 1, x[0])
    data = {"x": {q: asdict(p) for q, p in x.items()}, "sx": {q: asdict(p) for q, p in sx.items()}, "ecr": asdict(ecr)}
    with atomic_write(path, "w", encoding="utf-8") as f:
        json.dump(data, f)
    return NativeGates(pair, x, sx, {(0, 1): ecr})


def clear_calibration_cache() -> None:
    """Empty the memory cache (the disk cache stays: delete cache_dir('pulse') to recalibrate)."""
    calibrated_natives.cache_clear()
