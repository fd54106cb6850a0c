"""Headless runner of the ``devices`` technique: ``workbench run devices [--mode fidelity ...] --json``.

``mode="list"`` prints ``{"devices": [{"name", "num_qubits", "two_qubit_gate", "basis_gates", "median_*",
"coupling_map", ...}, ...]}`` for every device snapshot of qiskit-ibm-runtime; ``mode="fidelity"`` adds
``"fidelity"``: GHZ/QFT state and Hellinger fidelity vs width and vs depth on one device, from our simulator,
qiskit-aer, or both side by side (with their largest difference).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from workbench.quantum.calibration import device_summary, list_devices
from workbench.quantum.devices.config import DevicesConfig
from workbench.quantum.devices.experiment import FidelityPoint, fidelity_points
from workbench.registry import Technique
from workbench.results import Result

__all__ = ["Sweeps", "FidelityResult", "DevicesResult", "run", "format_table", "TECHNIQUE"]


@dataclass(frozen=True, kw_only=True)
class Sweeps:
    """One engine's sweeps: widths 2..width at ``depth``, then depths 1..depth at ``width``."""

    by_width: tuple[FidelityPoint, ...]
    by_depth: tuple[FidelityPoint, ...]


@dataclass(frozen=True, kw_only=True)
class FidelityResult(Result):
    """``"fidelity"`` of the fidelity mode: the setting, the first engine's sweeps, and with ``engine="both"``
    aer's sweeps (``aer``) and the largest difference over both fidelities of every point."""

    OMIT_NONE = ("aer", "max_abs_diff_vs_aer")

    family: str
    noise_model: str
    noise_scale: float
    width: int
    depth: int
    by_width: tuple[FidelityPoint, ...]
    by_depth: tuple[FidelityPoint, ...]
    aer: Sweeps | None = None
    max_abs_diff_vs_aer: float | None = None


@dataclass(frozen=True, kw_only=True)
class DevicesResult(Result):
    """What ``workbench run devices`` prints: list mode has ``count`` and ``devices``; fidelity mode ``engine``,
    the one device and ``fidelity``. ``devices`` holds :func:`~workbench.quantum.calibration.device_summary`'s
    objects."""

    OMIT_NONE = ("engine", "count", "fidelity")

    technique: str = "devices"
    mode: str
    engine: str | None = None
    count: int | None = None
    devices: tuple[Mapping[str, Any], ...]
    fidelity: FidelityResult | None = None


def _sweeps(config: DevicesConfig, engine: str) -> Sweeps:
    common = dict(
        device=config.device,
        family=config.family,
        noise_model=config.noise_model,
        scale=config.noise_scale,
        engine=engine,
        seed=config.seed,
    )
    return Sweeps(
        by_width=tuple(fidelity_points(widths=range(2, config.width + 1), depths=[config.depth], **common)),
        by_depth=tuple(fidelity_points(widths=[config.width], depths=range(1, config.depth + 1), **common)),
    )


def _max_abs_diff(ours: Sweeps, aer: Sweeps) -> float:
    return max(
        abs(getattr(a, key) - getattr(b, key))
        for part in ("by_width", "by_depth")
        for a, b in zip(getattr(ours, part), getattr(aer, part))
        for key in ("state_fidelity", "hellinger_fidelity")
    )


def run(config: DevicesConfig) -> DevicesResult:
    """The result ``workbench run devices`` prints (see the module docstring)."""
    if config.mode == "list":
        if config.device == "all":
            devices = list_devices(min_qubits=config.min_qubits, max_qubits=config.max_qubits, coupling=config.coupling)
        else:
            devices = [device_summary(config.resolved_device().calibration, coupling=config.coupling)]
        return DevicesResult(mode="list", count=len(devices), devices=tuple(devices))
    engines = ("ours", "aer") if config.engine == "both" else (config.engine,)
    sweeps = {engine: _sweeps(config, engine) for engine in engines}
    both = len(engines) == 2
    fidelity = FidelityResult(
        family=config.family,
        noise_model=config.noise_model,
        noise_scale=config.noise_scale,
        width=config.width,
        depth=config.depth,
        by_width=sweeps[engines[0]].by_width,
        by_depth=sweeps[engines[0]].by_depth,
        aer=sweeps["aer"] if both else None,
        max_abs_diff_vs_aer=_max_abs_diff(sweeps["ours"], sweeps["aer"]) if both else None,
    )
    return DevicesResult(
        mode="fidelity",
        engine=config.engine,
        devices=(device_summary(config.resolved_device().calibration, coupling=config.coupling),),
        fidelity=fidelity,
    )


def _num(x: Any, fmt: str) -> str:
    return "-" if x is None else format(x, fmt)


def format_table(result: dict[str, Any]) -> str:
    """Devices as a table (list mode), or the fidelity sweeps (fidelity mode)."""
    lines = [
        f"{'device':<20}{'qubits':>7}{'2q gate':>8}{'T1 us':>8}{'T2 us':>8}{'err 1q':>10}{'err 2q':>10}"
        f"{'readout':>9}  calibrated"
    ]
    for d in result["devices"]:
        lines.append(
            f"{d['name']:<20}{d['num_qubits']:>7}{d['two_qubit_gate'] or '-':>8}"
            f"{_num(d['median_t1_us'], '.0f'):>8}{_num(d['median_t2_us'], '.0f'):>8}"
            f"{_num(d['median_error_1q'], '.2e'):>10}{_num(d['median_error_2q'], '.2e'):>10}"
            f"{_num(d['median_readout_error'], '.3f'):>9}  {d['calibration_date'][:10]}"
        )
    if result["mode"] == "fidelity":
        f = result["fidelity"]
        lines += [
            "",
            f"{f['family']} on {result['devices'][0]['name']}, noise {f['noise_model']} x{f['noise_scale']:g} "
            f"({result['engine']})",
            f"{'width':>6}{'depth':>6}{'gates':>7}{'2q':>5}{'state F':>10}{'Hellinger F':>13}",
        ]
        for part in ("by_width", "by_depth"):
            for p in f[part]:
                lines.append(
                    f"{p['width']:>6}{p['depth']:>6}{p['num_gates']:>7}{p['two_qubit_gates']:>5}"
                    f"{p['state_fidelity']:>10.4f}{p['hellinger_fidelity']:>13.4f}"
                )
        if "max_abs_diff_vs_aer" in f:
            lines.append(f"largest |ours - aer| over all fidelities: {f['max_abs_diff_vs_aer']:.2e}")
    return "\n".join(lines)


TECHNIQUE = Technique(
    name="devices",
    config=DevicesConfig,
    run=run,
    format_table=format_table,
    panel="widgets.quantum.devices:DevicesPanel",
    notebook="notebooks/quantum/devices.ipynb",
    #: one small fidelity point (GHZ on 2 qubits, depth 1, our simulator): well under a second
    smoke={"mode": "fidelity", "device": "fake_lima", "width": 2, "depth": 1},
)
