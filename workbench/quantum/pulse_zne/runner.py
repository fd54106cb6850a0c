"""Headless runner of ``pulse-zne``:
``workbench run pulse-zne --molecule H2 --device D --scale-factors 1,3,5 --extrapolation richardson --json``.

Trains a one-layer NAPA pulse ansatz noiselessly (COBYLA, cached), plays it under the device's T1/T2 divided by
``noise_scale`` and scales the noise by folding ``S (S^R S)^k`` (or stretching), extrapolates to zero noise and
prints ``{"unmitigated_error", "mitigated_error", "reduction", ...}`` (Hartree, against the exact ground energy),
the reversed-pulse fidelity estimate of the ansatz's schedule and, optionally, gate-level ZNE with mitiq.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.quantum.pulse_zne.claims import PAPER
from workbench.quantum.pulse_zne.config import PulseZneConfig
from workbench.quantum.pulse_zne.estimator import nominal_unitary, process_fidelity, return_probability
from workbench.quantum.pulse_zne.extrapolation import EXTRAPOLATIONS, extrapolate
from workbench.quantum.pulse_zne.model import decay_per_fold
from workbench.quantum.pulse_zne.model import reduction as model_reduction
from workbench.quantum.pulse_zne.study import pulse_problem, trained
from workbench.quantum.pulse_zne.zne import gate_zne, scaled_energies
from workbench.registry import Technique
from workbench.results import Result

__all__ = ["PulseZneResult", "run", "format_table", "TECHNIQUE"]


@dataclass(frozen=True, kw_only=True)
class PulseZneResult(Result):
    """What ``workbench run pulse-zne`` prints (energies in Hartree)."""

    OMIT_NONE = ("gate_zne", "true_fidelity", "model")

    technique: str = "pulse-zne"
    molecule: str
    device: str
    qubits: tuple[int, int]
    noise_scale: float
    method: str
    extrapolation: str
    scale_factors: tuple[float, ...]
    energies: tuple[float, ...]
    exact: float
    trained_noiseless: float
    mitigated_energy: float
    unmitigated_error: float
    mitigated_error: float
    reduction: float
    unmitigated_error_vs_ideal: float
    mitigated_error_vs_ideal: float
    reduction_vs_ideal: float
    noiseless_energies: tuple[float, ...]
    errors_by_extrapolation: dict[str, float]
    fidelity_estimate: float
    true_fidelity: float | None = None
    duration_ns: float
    training_evaluations: int
    readout: bool
    paper_reduction: float
    gate_zne: dict[str, Any] | None = None
    model: dict[str, Any] | None = None  # MODEL: an exponential decay with the fitted decay per fold


def run(config: PulseZneConfig) -> PulseZneResult:
    """Train (or load) the ansatz, scale the noise, extrapolate."""
    factors = config.factors()
    natives, ham = pulse_problem(config)
    tr = trained(config)
    dev = natives.device
    noisy = dev.scaled_noise(config.noise_scale) if config.noise_scale else dev.noiseless()
    if not config.readout:
        noisy = noisy._replace_readout((0.0,) * 2, (0.0,) * 2)
    energies = scaled_energies(noisy, tr.ansatz, tr.x, ham.terms, config.method, factors, readout=config.readout)
    clean = scaled_energies(dev.noiseless(), tr.ansatz, tr.x, ham.terms, config.method, factors, readout=False)
    mitigated = extrapolate(config.extrapolation, factors, energies)
    un = abs(float(energies[0]) - ham.exact)
    err = abs(mitigated - ham.exact)
    iun, ierr = abs(float(energies[0]) - tr.energy), abs(mitigated - tr.energy)
    by = {}
    for name in EXTRAPOLATIONS:
        try:
            by[name] = abs(extrapolate(name, factors, energies) - ham.exact)
        except (ValueError, RuntimeError):
            by[name] = float("nan")
    gate = None
    if config.gate_baseline:
        g = gate_zne(natives, noisy, ham.terms, factors if config.method == "folding" else (1, 3, 5),
                     config.extrapolation)  # fmt: skip
        gate = {"energies": g["energies"], "unmitigated_error": abs(g["unmitigated"] - ham.exact),
                "mitigated_error": abs(g["mitigated"] - ham.exact), "duration_ns": g["duration_ns"][0],
                "noiseless_energy": g["noiseless"]}  # fmt: skip
    schedule = tr.ansatz.schedule(tr.x)
    predicted = None
    try:
        x = decay_per_fold(factors, energies)
        predicted = {"label": "MODEL", "decay_per_fold": x, "reduction": float(model_reduction(x, config.extrapolation,
                     factors)), "reduction_at_device_noise": float(model_reduction(x / max(config.noise_scale, 1e-9),
                     config.extrapolation, factors)) if config.noise_scale else None}  # fmt: skip
    except ValueError:
        pass  # not three equally spaced factors, or not a decaying exponential: no model
    return PulseZneResult(
        molecule=config.molecule, device=dev.name, qubits=(config.qubit, config.target), noise_scale=config.noise_scale,
        method=config.method, extrapolation=config.extrapolation, scale_factors=factors,
        energies=tuple(float(e) for e in energies), exact=ham.exact, trained_noiseless=tr.energy,
        mitigated_energy=mitigated, unmitigated_error=un, mitigated_error=err,
        reduction=1 - err / un if un else float("nan"), unmitigated_error_vs_ideal=iun, mitigated_error_vs_ideal=ierr,
        reduction_vs_ideal=1 - ierr / iun if iun else float("nan"),
        noiseless_energies=tuple(float(e) for e in clean), errors_by_extrapolation=by,
        fidelity_estimate=return_probability(noisy, schedule),
        true_fidelity=process_fidelity(noisy, schedule, nominal_unitary(noisy, schedule)) if config.true_fidelity else None,
        duration_ns=schedule.duration * dev.dt,
        training_evaluations=tr.evaluations, readout=config.readout,
        paper_reduction=PAPER["zne_reduction"], gate_zne=gate, model=predicted,
    )  # fmt: skip


def format_table(result: dict[str, Any]) -> str:
    """Energies per scale factor, the errors before and after, the paper's figure beside ours."""
    lines = [
        f"{result['molecule']} on {result['device']} qubits {tuple(result['qubits'])}, T1/T2 / {result['noise_scale']:g}"
        f", {result['method']} + {result['extrapolation']}; schedule {result['duration_ns']:.0f} ns, "
        f"F_est (S then S^R) {result['fidelity_estimate']:.4f}"
        + (f", true average gate fidelity {result['true_fidelity']:.4f}" if result.get("true_fidelity") else ""),
        f"{'lambda':>8}{'E (Ha)':>12}{'noiseless':>12}",
        *(
            f"{lam:>8g}{e:>12.5f}{c:>12.5f}"
            for lam, e, c in zip(result["scale_factors"], result["energies"], result["noiseless_energies"])
        ),
        f"exact {result['exact']:.5f}, trained noiseless {result['trained_noiseless']:.5f}, "
        f"mitigated {result['mitigated_energy']:.5f}",
        f"|E - E_exact|: {result['unmitigated_error']:.4f} -> {result['mitigated_error']:.4f} Ha, reduction "
        f"{result['reduction']:.1%} (paper: {result['paper_reduction']:.1%} average, arXiv 2305.12597v1)",
        f"vs the ansatz's noiseless energy: {result['unmitigated_error_vs_ideal']:.4f} -> "
        f"{result['mitigated_error_vs_ideal']:.4f} Ha, reduction {result['reduction_vs_ideal']:.1%}",
    ]
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
