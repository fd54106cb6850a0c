"""The devices panel's and notebook's views: three memoised fidelity sweeps of one setting (:class:`SweepKey`):
fidelity vs width, vs depth and vs noise scale (:data:`SCALES`), by our engine and (on request) qiskit-aer's
(:func:`run_aer_sweeps`). The fidelity computation itself (what the runner's fidelity mode calls too) is
:mod:`workbench.quantum.devices.experiment`, re-exported here. Every memo of both modules is cleared by
:func:`clear_caches`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from workbench.quantum.device import Device
from workbench.quantum.devices.experiment import (
    Engine,
    FidelityPoint,
    device_circuit,
    fidelity_points,
    fidelity_vs_scale,
    noise_for,
)

__all__ = [
    "noise_for",
    "device_circuit",
    "FidelityPoint",
    "fidelity_points",
    "fidelity_vs_scale",
    "SCALES",
    "SWEEPS",
    "SweepKey",
    "sweep",
    "DevicesView",
    "devices_view",
    "run_aer_sweeps",
    "clear_caches",
]


# ---- memoised sweeps: what the devices panel draws ----------------------------------------------------------------
#: noise scales of the scale sweep (the panel's third figure)
SCALES = (0.0, 0.5, 1.0, 2.0, 4.0, 8.0)
#: the sweeps of one view, in the order of the panel's figures
SWEEPS = ("width", "depth", "scale")


@dataclass(frozen=True)
class SweepKey:
    """Everything a sweep of one setting depends on (calibrations come from qiskit-ibm-runtime's snapshots, not
    from the data directory, so no directory enters the key)."""

    device: Device
    family: str
    width: int
    depth: int
    noise_model: str
    scale: float
    seed: int

    @classmethod
    def of(cls, config: Any) -> SweepKey:
        """The key of a :class:`~workbench.quantum.devices.config.DevicesConfig` (or any object with its fields)."""
        return cls(
            config.resolved_device(),
            config.family,
            int(config.width),
            int(config.depth),
            config.noise_model,
            float(config.noise_scale),
            int(config.seed),
        )


@functools.lru_cache(maxsize=2048)
def _point(key: SweepKey, engine: Engine) -> FidelityPoint:
    return fidelity_points(
        key.device, key.family, key.noise_model, key.scale, [key.width], [key.depth], engine=engine, seed=key.seed
    )[0]


@functools.lru_cache(maxsize=512)
def _by_width(key: SweepKey, engine: Engine) -> tuple[FidelityPoint, ...]:
    """Widths 2..width at ``depth`` (each width memoised on its own through ``_point``)."""
    return tuple(_point(dataclasses.replace(key, width=w), engine) for w in range(2, key.width + 1))


@functools.lru_cache(maxsize=512)
def _by_depth(key: SweepKey, engine: Engine) -> tuple[FidelityPoint, ...]:
    """Depths 1..depth at ``width`` (one batched call for ours)."""
    return tuple(
        fidelity_points(
            key.device,
            key.family,
            key.noise_model,
            key.scale,
            [key.width],
            range(1, key.depth + 1),
            engine=engine,
            seed=key.seed,
        )
    )


@functools.lru_cache(maxsize=512)
def _by_scale(key: SweepKey, engine: Engine) -> tuple[FidelityPoint, ...]:
    """Noise scales :data:`SCALES` at ``width`` and ``depth`` (one batched call for ours); the key's scale is 0
    (the sweep replaces it, see :func:`sweep`)."""
    return tuple(
        fidelity_vs_scale(
            key.device, key.family, key.noise_model, SCALES, key.width, key.depth, engine=engine, seed=key.seed
        )
    )


def sweep(kind: str, key: SweepKey, engine: Engine = "ours") -> tuple[FidelityPoint, ...]:
    """One memoised sweep of setting ``key``: ``kind`` is 'width' (2..width), 'depth' (1..depth) or 'scale'
    (:data:`SCALES`; it does not depend on the key's scale, so it is memoised once for all scales)."""
    if kind == "width":
        return _by_width(key, engine)
    if kind == "depth":
        return _by_depth(key, engine)
    if kind == "scale":
        return _by_scale(dataclasses.replace(key, scale=0.0), engine)
    raise ValueError(f"kind={kind!r} is unknown: valid values are {', '.join(map(repr, SWEEPS))}")


def clear_caches() -> None:
    """Forget every memoised sweep, point and transpiled circuit of this module."""
    for cached in (_point, _by_width, _by_depth, _by_scale, device_circuit):
        cached.cache_clear()


@dataclass(frozen=True)
class DevicesView:
    """One redraw of the devices panel: our sweeps (width, depth, scale; see :data:`SWEEPS`), aer's (None until
    it has run for this setting), the x values of each sweep and the validated config."""

    config: Any  # DevicesConfig
    ours: tuple[tuple[FidelityPoint, ...], ...]
    aer: tuple[tuple[FidelityPoint, ...], ...] | None

    @property
    def xs(self) -> tuple[list[float], ...]:
        """x values of each sweep: widths, depths, noise scales."""
        return ([p.width for p in self.ours[0]], [p.depth for p in self.ours[1]], list(SCALES))

    @property
    def max_abs_diff_vs_aer(self) -> float | None:
        """Largest |ours - aer| over both fidelities of every point (None before aer has run)."""
        if self.aer is None:
            return None
        return max(
            abs(a.state_fidelity - b.state_fidelity) + abs(a.hellinger_fidelity - b.hellinger_fidelity)
            for part_a, part_b in zip(self.ours, self.aer)
            for a, b in zip(part_a, part_b)
        )


def devices_view(config: Any, *, with_aer: bool = False) -> DevicesView:
    """Our fidelity sweeps of a fidelity-mode ``config`` (memoised), and aer's when ``with_aer``."""
    key = SweepKey.of(config)
    ours = tuple(sweep(kind, key, "ours") for kind in SWEEPS)
    aer = tuple(sweep(kind, key, "aer") for kind in SWEEPS) if with_aer else None
    return DevicesView(config, ours, aer)


def run_aer_sweeps(config: Any, on_step: Callable[[int], None] | None = None) -> None:
    """Run (and memoise) qiskit-aer's three sweeps of ``config``; ``on_step(i)`` after the i-th (1..3)."""
    key = SweepKey.of(config)
    for i, kind in enumerate(SWEEPS, 1):
        sweep(kind, key, "aer")
        if on_step is not None:
            on_step(i)
