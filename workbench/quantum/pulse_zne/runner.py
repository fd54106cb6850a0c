"""Headless runner of ``pulse-zne``:
``workbench run pulse-zne --molecule H2 --device D --scale-factors 1,3,5 --extrapolation richardson --json``.

Trains a NAPA pulse ansatz noiselessly (COBYLA; the shipped recorded training or the disk cache when either
matches the setting), plays it under the device's T1/T2 divided by
``noise_scale`` and scales the noise by folding ``S (S^R S)^k`` (or stretching), extrapolates to zero noise and
prints ``{"zne": {"unmitigated_error", "mitigated_error", "reduction", "fallback", ...}, ...}`` (Hartree, against the
exact ground energy), the reversed-pulse fidelity estimate of the ansatz's schedule and, optionally, gate-level ZNE.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.quantum.common.pulse.natives import calibration_warnings
from workbench.quantum.pulse_zne.claims import PAPER
from workbench.quantum.pulse_zne.config import PulseZneConfig
from workbench.quantum.pulse_zne.estimator import nominal_unitary, process_fidelity, return_probability
from workbench.quantum.pulse_zne.experiment import ZneOutcome, energies, outcome, played_device, pulse_problem, trained
from workbench.quantum.pulse_zne.model import decay_per_fold
from workbench.quantum.pulse_zne.model import reduction as model_reduction
from workbench.quantum.pulse_zne.zne import gate_zne
from workbench.registry import Technique
from workbench.results import Result

__all__ = ["PulseZneResult", "run", "format_table", "TECHNIQUE"]


@dataclass(frozen=True, kw_only=True)
class PulseZneResult(Result):
    """What ``workbench run pulse-zne`` prints (energies in Hartree): the setting, the ZNE outcome (the same
    class the panel shows: energies, noiseless energies, extrapolation, errors, fallback, coherent bias), the
    fidelity estimate of the ansatz's schedule, and optionally gate-level ZNE and the decay MODEL."""

    OMIT_NONE = ("gate_zne", "true_fidelity", "model")

    technique: str = "pulse-zne"
    molecule: str
    device: str
    qubits: tuple[int, int]
    noise_scale: float
    readout: bool
    zne: ZneOutcome
    fidelity_estimate: float
    true_fidelity: float | None = None
    duration_ns: float
    training_evaluations: int
    paper_reduction: float
    gate_zne: dict[str, Any] | None = None
    model: dict[str, Any] | None = None  # MODEL: an exponential decay with the fitted decay per fold
    calibration_warnings: tuple[str, ...] = ()  # the pair's ECR below its fidelity target, if it is


def _gate_baseline(config: PulseZneConfig, natives, noisy, ham) -> dict[str, Any]:
    factors = config.factors() if config.method == "folding" else (1, 3, 5)
    g = gate_zne(natives, noisy, ham.terms, factors, config.extrapolation)
    return {"energies": g["energies"], "unmitigated_error": abs(g["unmitigated"] - ham.exact),
            "mitigated_error": abs(g["mitigated"] - ham.exact), "duration_ns": g["duration_ns"][0],
            "noiseless_energy": g["noiseless"]}  # fmt: skip


def _model(config: PulseZneConfig, energies: tuple[float, ...]) -> dict[str, Any] | None:
    factors = config.factors()
    try:
        x = decay_per_fold(factors, energies)
    except ValueError:
        return None  # not three equally spaced factors, or not a decaying exponential: no model
    at_device = (
        float(model_reduction(x / config.noise_scale, config.extrapolation, factors)) if config.noise_scale else None
    )
    return {"label": "MODEL", "decay_per_fold": x, "reduction": float(model_reduction(x, config.extrapolation, factors)),
            "reduction_at_device_noise": at_device}  # fmt: skip


def run(config: PulseZneConfig) -> PulseZneResult:
    """Train (or read the recorded training of) the ansatz, scale the noise, extrapolate."""
    factors = config.factors()
    natives, ham = pulse_problem(config)
    tr = trained(config)
    dev = natives.device
    noisy = played_device(config, dev)
    noisy_e = energies(config, config.method, factors, noisy=True)  # memoised: a sweep's points are reused
    clean = energies(config, config.method, factors, noisy=False)
    zne = outcome(config, noisy_e, clean, exact=ham.exact, trained_noiseless=tr.energy)
    schedule = tr.ansatz.schedule(tr.x)
    true_f = process_fidelity(noisy, schedule, nominal_unitary(noisy, schedule)) if config.true_fidelity else None
    return PulseZneResult(
        molecule=config.molecule, device=dev.name, qubits=(config.qubit, config.target), noise_scale=config.noise_scale,
        readout=config.readout, zne=zne, fidelity_estimate=return_probability(noisy, schedule), true_fidelity=true_f,
        duration_ns=schedule.duration * dev.dt, training_evaluations=tr.evaluations,
        paper_reduction=PAPER["zne_reduction"],
        gate_zne=_gate_baseline(config, natives, noisy, ham) if config.gate_baseline else None,
        model=_model(config, zne.energies), calibration_warnings=calibration_warnings(natives),
    )  # fmt: skip


def format_table(result: dict[str, Any]) -> str:
    """Energies per scale factor (noisy and noiseless), the errors before and after, the paper's figure."""
    z = result["zne"]
    lines = [
        f"{result['molecule']} on {result['device']} qubits {tuple(result['qubits'])}, T1/T2 / {result['noise_scale']:g}"
        f", {z['method']} + {z['extrapolation']}; schedule {result['duration_ns']:.0f} ns, "
        f"F_est (S then S^R) {result['fidelity_estimate']:.4f}"
        + (f", true average gate fidelity {result['true_fidelity']:.4f}" if result.get("true_fidelity") else ""),
        f"{'lambda':>8}{'E (Ha)':>12}{'noiseless':>12}",
        *(f"{lam:>8g}{e:>12.5f}{c:>12.5f}" for lam, e, c in zip(z["scale_factors"], z["energies"], z["noiseless_energies"])),
        f"coherent bias of the scaling (noiseless E({z['scale_factors'][-1]:g}) - E({z['scale_factors'][0]:g})): "
        f"{z['coherent_bias'] * 1e3:+.1f} mHa",
        f"exact {z['exact']:.5f}, trained noiseless {z['trained_noiseless']:.5f}, mitigated {z['mitigated']:.5f}",
        f"|E - E_exact|: {z['unmitigated_error']:.4f} -> {z['mitigated_error']:.4f} Ha, reduction "
        f"{z['reduction']:.1%} (paper: {result['paper_reduction']:.1%} average, arXiv 2305.12597v1)",
        f"vs the ansatz's noiseless energy: {z['ideal_unmitigated_error']:.4f} -> "
        f"{z['ideal_mitigated_error']:.4f} Ha, reduction {z['ideal_reduction']:.1%}",
    ]  # fmt: skip
    if z.get("fallback"):
        lines.append(f"WARNING {z['fallback']}")
    lines += [f"WARNING {w}" for w in result.get("calibration_warnings", ())]
    if result.get("model"):
        m = result["model"]
        lines.append(f"MODEL (exponential decay, x = {m['decay_per_fold']:.3f} per fold): reduction {m['reduction']:.1%}"
                     + (f"; at the device's own T1/T2 {m['reduction_at_device_noise']:.1%}"
                        if m.get("reduction_at_device_noise") is not None else ""))  # fmt: skip
    if result.get("gate_zne"):
        g = result["gate_zne"]
        lines.append(
            f"gate-level ZNE (mitiq fold_global): {g['unmitigated_error']:.4f} -> {g['mitigated_error']:.4f} Ha"
        )
    return "\n".join(lines)


TECHNIQUE = Technique(
    name="pulse-zne",
    config=PulseZneConfig,
    run=run,
    format_table=format_table,
    panel="widgets.quantum.pulse_zne:PulseZnePanel",
    notebook="notebooks/quantum/pulse_zne.ipynb",
    smoke={"budget": 10, "layers": 1, "scale_factors": "1,3", "gate_baseline": False, "true_fidelity": False},
    processes=False,
)
