"""Headless runner of ``pulse-sim``: ``workbench run pulse-sim --mode check --device D --json``.

``mode="check"`` prints ``{"qutip_max_abs_diff", "speedup_vs_qutip", "calibrated": {"x": {"amp", "beta",
"fidelity", "leakage", "duration_ns"}, "sx": {...}, "ecr": {...}, "cx": {"fidelity", "duration_ns"}}, ...}``:
our density matrix against qutip ``mesolve`` on a two-transmon drive + cross-resonance schedule with T1/T2,
the piecewise-constant propagator's convergence against scipy's DOP853, analytic Rabi/T1/T2, and the native
pulses calibrated in our simulator. ``mode="pulse"`` plays one pulse from |0> and prints the final populations.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.quantum.common.pulse.accuracy import substeps_for
from workbench.quantum.common.pulse.calibrated import calibrated_natives
from workbench.quantum.common.pulse.natives import X_DURATION, calibration_warnings
from workbench.quantum.pulse_sim.config import PulseSimConfig
from workbench.quantum.pulse_sim.experiment import (
    analytic_checks,
    check_schedule,
    continuous_check,
    convergence_check,
    cx_check,
    pulse_view,
    qutip_check,
)
from workbench.registry import Technique
from workbench.results import Result, fmt

__all__ = ["PulseSimResult", "run", "format_table", "TECHNIQUE"]


@dataclass(frozen=True, kw_only=True)
class PulseSimResult(Result):
    """What ``workbench run pulse-sim`` prints (check-only fields are left out in pulse mode).

    ``substeps``: the sub-steps used, ``predicted_error``: their predicted max |U - U_continuous| (NaN when set by
    hand), against ``tolerance``. Check mode: ``qutip_max_abs_diff`` (qutip given our piecewise-constant
    coefficients) and ``continuous_max_abs_diff`` (rho against qutip in continuous time, per sub-step count);
    ``calibration_warnings``: calibrations below their fidelity target."""

    OMIT_NONE = (
        "qutip_max_abs_diff", "ours_seconds", "qutip_seconds", "speedup_vs_qutip", "convergence_max_abs_diff",
        "continuous_max_abs_diff", "analytic", "calibrated", "final_populations", "fidelity_x", "fidelity_sx",
        "rotation_deg", "cr_drive_strength", "calibration_warnings",
    )  # fmt: skip

    technique: str = "pulse-sim"
    mode: str
    device: str
    qubits: tuple[int, ...]
    levels: int
    dt_ns: float
    hamiltonian_file: str
    tolerance: float
    substeps: int
    predicted_error: float
    qutip_max_abs_diff: float | None = None
    ours_seconds: float | None = None
    qutip_seconds: float | None = None
    speedup_vs_qutip: float | None = None
    convergence_max_abs_diff: dict[str, float] | None = None
    continuous_max_abs_diff: dict[str, float] | None = None
    analytic: dict[str, float] | None = None
    calibrated: dict[str, dict[str, float]] | None = None
    cr_drive_strength: str | None = None
    calibration_warnings: tuple[str, ...] | None = None
    final_populations: tuple[float, ...] | None = None
    rotation_deg: float | None = None
    fidelity_x: float | None = None
    fidelity_sx: float | None = None


def _pulse(config: PulseSimConfig) -> PulseSimResult:
    view = pulse_view(config)
    return PulseSimResult(
        mode="pulse", device=view.device.name, qubits=(config.qubit,), levels=config.levels, dt_ns=view.device.dt,
        hamiltonian_file=view.device.source_name, tolerance=config.tolerance, substeps=view.substeps.substeps,
        predicted_error=view.substeps.predicted_error,
        final_populations=tuple(float(p) for p in view.populations[:, -1]), rotation_deg=view.rotation_deg,
        fidelity_x=view.fidelity_x, fidelity_sx=view.fidelity_sx,
    )  # fmt: skip


def _calibrated(natives) -> dict[str, dict[str, Any]]:
    dev = natives.device
    ecr = natives.ecr[(0, 1)]
    cx_fidelity, cx_ns = cx_check(natives)

    def single(p) -> dict[str, float]:
        return {"amp": p.amp, "beta": p.beta, "detuning_mhz": p.detuning / (2e-3 * 3.141592653589793),
                "fidelity": p.fidelity, "leakage": p.leakage, "duration_ns": X_DURATION * dev.dt}  # fmt: skip

    return {
        "x": single(natives.x[0]),
        "sx": single(natives.sx[0]),
        "x_target": single(natives.x[1]),
        "sx_target": single(natives.sx[1]),
        "ecr": {"amp": ecr.amp, "width_dt": ecr.width, "half_dt": ecr.duration, "cancel_amp": ecr.cancel_amp,
                "fidelity": ecr.fidelity, "target_fidelity": ecr.target_fidelity, "meets_target": ecr.meets_target,
                "duration_ns": ecr.total_duration * dev.dt},
        "cx": {"fidelity": cx_fidelity, "duration_ns": cx_ns},
    }  # fmt: skip


def run(config: PulseSimConfig) -> PulseSimResult:
    """Check the simulator and calibrate (``check``) or play one pulse (``pulse``)."""
    if config.mode == "pulse":
        return _pulse(config)
    device = config.resolved_device()
    pair = device.transmons((config.qubit, config.target), levels=config.levels)
    choice = substeps_for(pair, check_schedule(), config.tolerance)
    k = config.substeps or choice.substeps
    qutip = qutip_check(device, config.qubit, config.target, config.levels, substeps=k)
    natives = calibrated_natives(device, config.qubit, config.target, config.levels)
    dev = natives.device
    return PulseSimResult(
        mode="check", device=dev.name, qubits=dev.qubits, levels=config.levels, dt_ns=dev.dt,
        hamiltonian_file=dev.source_name, tolerance=config.tolerance, substeps=k,
        predicted_error=choice.error_at_one / k**2, qutip_max_abs_diff=qutip["max_abs_diff"],
        ours_seconds=qutip["ours_seconds"], qutip_seconds=qutip["qutip_seconds"],
        speedup_vs_qutip=qutip["qutip_seconds"] / qutip["ours_seconds"],
        convergence_max_abs_diff={str(n): v for n, v in convergence_check(
            device, config.qubit, config.target, config.levels).items()},
        continuous_max_abs_diff={str(n): v for n, v in continuous_check(
            device, config.qubit, config.target, config.levels).items()},
        analytic=analytic_checks(device, config.qubit), calibrated=_calibrated(natives),
        cr_drive_strength=dev.cr_drive_note(0, 1), calibration_warnings=calibration_warnings(natives),
    )  # fmt: skip


def format_table(result: dict[str, Any]) -> str:
    """The checks and the calibrated natives (check mode), or the pulse's outcome (pulse mode)."""
    head = (
        f"{result['device']} qubits {tuple(result['qubits'])}, {result['levels']} levels, dt {result['dt_ns']:.4f} ns, "
        f"{result['substeps']} sub-steps per dt (predicted error vs continuous time {fmt(result['predicted_error'])}, "
        f"tolerance {fmt(result['tolerance'])})"
    )
    if result["mode"] == "pulse":
        pops = ", ".join(f"P({k}) {p:.4f}" for k, p in enumerate(result["final_populations"]))
        return (
            f"{head}\n{pops}; rotation {result['rotation_deg']:.1f} deg; fidelity as X {result['fidelity_x']:.5f}, "
            f"as SX {result['fidelity_sx']:.5f}"
        )
    lines = [
        head,
        f"vs qutip mesolve on our piecewise-constant coefficients: max |rho diff| {fmt(result['qutip_max_abs_diff'])}; "
        f"ours {result['ours_seconds']:.3f} s, qutip {result['qutip_seconds']:.3f} s ({result['speedup_vs_qutip']:.1f}x)",
        "vs qutip in continuous time, max |rho diff| by sub-steps: "
        + ", ".join(f"{k}: {fmt(v)}" for k, v in result["continuous_max_abs_diff"].items()),
        "piecewise-constant vs DOP853 (continuous frames), max |U diff| by sub-steps: "
        + ", ".join(f"{k}: {fmt(v)}" for k, v in result["convergence_max_abs_diff"].items()),
        "analytic: " + ", ".join(f"{k} {fmt(v)}" for k, v in result["analytic"].items()),
        result["cr_drive_strength"],
        f"{'gate':<10}{'amp':>8}{'1 - fidelity':>14}{'ns':>9}",
    ]
    for name, g in result["calibrated"].items():
        amp = f"{g['amp']:.4f}" if "amp" in g else "-"
        lines.append(f"{name:<10}{amp:>8}{1 - g['fidelity']:>14.2e}{g['duration_ns']:>9.1f}")
    lines += [f"WARNING {w}" for w in result["calibration_warnings"]]
    return "\n".join(lines)


TECHNIQUE = Technique(
    name="pulse-sim",
    config=PulseSimConfig,
    run=run,
    format_table=format_table,
    panel="widgets.quantum.pulse_sim:PulseSimPanel",
    notebook="notebooks/quantum/pulse_sim.ipynb",
    smoke={"mode": "pulse", "duration": 64, "sigma": 16.0},
    processes=False,
)
