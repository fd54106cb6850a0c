"""How fidelity falls with width, depth and noise on a real device snapshot: the ``devices`` technique's
fidelity mode, the devices panel and notebook.

A family circuit U (GHZ or QFT) is transpiled to the device and compacted (:func:`device_circuit`, cached),
then repeated as the mirror ``U (U^dag U)^(depth-1)`` whose ideal output is ``U|0>``. Two fidelities:

- state fidelity ``F = <psi|rho|psi>`` with ``psi`` the ideal state (readout errors not included);
- Hellinger fidelity ``(sum_x sqrt(p_x q_x))**2`` of the ideal and the noisy outcome distributions
  (readout errors included), as ``qiskit.quantum_info.hellinger_fidelity``.

Either engine computes them from its own density matrix: ``ours`` (torch, all depths of a width in one
batched call) or ``aer`` (qiskit-aer density-matrix method with ``NoiseSpec.to_aer()``).

The panel's view (:func:`devices_view`) is three memoised sweeps of one setting (:class:`SweepKey`): fidelity vs
width, vs depth and vs noise scale (:data:`SCALES`); aer's sweeps are memoised the same way
(:func:`run_aer_sweeps`). Every cache of this module is cleared by :func:`clear_caches`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
import torch

from workbench.quantum.calibration import DeviceCalibration
from workbench.quantum.circuits import DeviceCircuit, family_circuit, mirror, transpile_to_device
from workbench.quantum.devices.config import NOISE_MODELS
from workbench.quantum.noise import NoiseSpec

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

Engine = Literal["ours", "aer"]
#: coherent model: over-rotation fraction and ZZ angle (rad) per two-qubit gate at scale 1
COHERENT_OVER_ROTATION = 0.02
COHERENT_ZZ = 0.02


def noise_for(model: str, calibration: DeviceCalibration, scale: float) -> NoiseSpec:
    """The :class:`NoiseSpec` of ``model`` for ``calibration`` at ``scale``. Uniform models take the device's
    medians: depolarizing ``p = e d/(d-1)`` from the median gate error e (so its average infidelity is e),
    thermal the median T1, T2 and gate durations, coherent a fixed over-rotation and ZZ."""
    m = calibration.medians()
    if model == "device":
        return NoiseSpec.device(calibration, scale=scale)
    if model == "device-no-readout":
        return NoiseSpec.device(calibration, scale=scale, readout=False)
    if model == "depolarizing":
        return NoiseSpec(
            depolarizing=2 * (m["error_1q"] or 0.0), depolarizing_2q=4 / 3 * (m["error_2q"] or 0.0), scale=scale
        )
    if model == "thermal":
        t1 = (m["t1_us"] or math.inf) * 1e-6
        t2 = min((m["t2_us"] or math.inf) * 1e-6, 2 * t1)
        return NoiseSpec(
            t1=t1,
            t2=t2,
            time_1q=(m["duration_1q_ns"] or 0.0) * 1e-9,
            time_2q=(m["duration_2q_ns"] or 0.0) * 1e-9,
            scale=scale,
        )
    if model == "coherent":
        return NoiseSpec(over_rotation=COHERENT_OVER_ROTATION, zz=COHERENT_ZZ, scale=scale)
    raise ValueError(f"noise_model={model!r} is unknown: valid values are {', '.join(NOISE_MODELS)}")


@functools.lru_cache(maxsize=256)
def device_circuit(device: str, family: str, width: int, seed: int = 0) -> DeviceCircuit:
    """``family`` on ``width`` qubits transpiled to ``device`` (optimisation level 1, ``seed``), compacted."""
    return transpile_to_device(family_circuit(family, width), device, seed=seed)


@dataclass(frozen=True)
class FidelityPoint:
    """One circuit's result: its width, depth, gate counts after transpilation, both fidelities, the engine."""

    width: int
    depth: int
    num_gates: int
    two_qubit_gates: int
    state_fidelity: float
    hellinger_fidelity: float
    engine: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _hellinger(p: np.ndarray, q: np.ndarray) -> float:
    return float(np.sum(np.sqrt(np.clip(p, 0, None) * np.clip(q, 0, None))) ** 2)


def _gates(circuit: Any) -> tuple[int, int]:
    counts = [inst for inst in circuit.data if inst.name not in ("barrier", "measure")]
    return len(counts), sum(1 for inst in counts if len(inst.qubits) == 2)


def fidelity_points(
    device: str,
    family: str,
    noise_model: str,
    scale: float,
    widths: Sequence[int],
    depths: Sequence[int],
    *,
    engine: Engine = "ours",
    seed: int = 0,
) -> list[FidelityPoint]:
    """Fidelities of every (width, depth) pair (see the module docstring), widths outer, depths inner."""
    from workbench.quantum import density_matrix, statevector
    from workbench.quantum.aer import aer_density_matrix, aer_noise_model, readout_from_model
    from workbench.quantum.density import apply_readout

    out = []
    for width in widths:
        dc = device_circuit(device, family, int(width), seed)
        spec = noise_for(noise_model, dc.calibration, scale)
        psi = statevector(dc.circuit).numpy()
        ideal = np.abs(psi) ** 2
        circuits = [mirror(dc.circuit, int(d)) for d in depths]
        n = dc.circuit.num_qubits
        if engine == "ours":
            rhos = density_matrix(circuits, noise=spec).numpy()
            confusion = spec.readout_matrices(n)
        elif engine == "aer":
            rhos = np.stack([aer_density_matrix(c, spec) for c in circuits])
            confusion = readout_from_model(aer_noise_model(spec, circuits), n)
        else:
            raise ValueError(f"engine={engine!r} is unknown: valid values are 'ours', 'aer'")
        for d, circuit, rho in zip(depths, circuits, rhos):
            probs = np.real(np.diagonal(rho)).copy()
            if confusion is not None:
                probs = apply_readout(torch.as_tensor(probs)[None], confusion, n)[0].numpy()
            total, two = _gates(circuit)
            out.append(
                FidelityPoint(
                    int(width),
                    int(d),
                    total,
                    two,
                    float(np.real(psi.conj() @ rho @ psi)),
                    _hellinger(ideal, probs),
                    engine,
                )
            )
    return out


def fidelity_vs_scale(
    device: str,
    family: str,
    noise_model: str,
    scales: Sequence[float],
    width: int,
    depth: int,
    *,
    engine: Engine = "ours",
    seed: int = 0,
) -> list[FidelityPoint]:
    """Fidelity of one circuit (``width``, ``depth``) at each noise scale; ours runs all scales in one batch
    (same circuit, a different noise per row)."""
    if engine == "aer":
        return [
            fidelity_points(device, family, noise_model, s, [width], [depth], engine="aer", seed=seed)[0]
            for s in scales
        ]
    from workbench.quantum import density_matrix, statevector
    from workbench.quantum.density import apply_readout

    dc = device_circuit(device, family, int(width), seed)
    psi = statevector(dc.circuit).numpy()
    ideal = np.abs(psi) ** 2
    circuit = mirror(dc.circuit, int(depth))
    specs = [noise_for(noise_model, dc.calibration, float(s)) for s in scales]
    rhos = density_matrix([circuit] * len(specs), noise=specs).numpy()
    n = dc.circuit.num_qubits
    total, two = _gates(circuit)
    out = []
    for spec, rho in zip(specs, rhos):
        probs = np.real(np.diagonal(rho)).copy()
        confusion = spec.readout_matrices(n)
        if confusion is not None:
            probs = apply_readout(torch.as_tensor(probs)[None], confusion, n)[0].numpy()
        out.append(
            FidelityPoint(
                int(width),
                int(depth),
                total,
                two,
                float(np.real(psi.conj() @ rho @ psi)),
                _hellinger(ideal, probs),
                engine,
            )
        )
    return out


# ---- memoised sweeps: what the devices panel draws ----------------------------------------------------------------
#: noise scales of the scale sweep (the panel's third figure)
SCALES = (0.0, 0.5, 1.0, 2.0, 4.0, 8.0)
#: the sweeps of one view, in the order of the panel's figures
SWEEPS = ("width", "depth", "scale")


@dataclass(frozen=True)
class SweepKey:
    """Everything a sweep of one setting depends on (calibrations come from qiskit-ibm-runtime's snapshots, not
    from the data directory, so no directory enters the key)."""

    device: str
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
            config.device,
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
