"""Headless runner of ``napa``: ``workbench run napa --molecule H2 --bond-length 0.735 --device D --noise none|device
--json`` -> ``{"energy", "exact", "hf", "error_hartree", "correlation", "duration_ns", "evaluations",
"baselines": {...}}``.

NAPA's VQE (native pulses; by default gradients through the simulator, L-BFGS-B, from a Hartree-Fock-aware start,
two starts; ``--optimizer cobyla --progressive --start random`` is the paper's code) and the two gate baselines
(HEA and the reduced UCCSD, compiled to the same calibrated pulses, COBYLA) with the same evaluation budget.
``energy``, ``params`` and ``duration_ns`` describe one schedule: the best evaluation's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.quantum.napa.config import NapaConfig
from workbench.quantum.napa.experiment import VqeRun, baseline, vqe
from workbench.registry import Technique
from workbench.results import Result

__all__ = ["NapaResult", "run", "format_table", "TECHNIQUE"]


@dataclass(frozen=True, kw_only=True)
class NapaResult(Result):
    """What ``workbench run napa`` prints; ``baselines`` maps hea/uccsd to the same fields."""

    technique: str = "napa"
    molecule: str
    bond_length: float
    device: str
    noise: str
    optimizer: str
    energy: float
    exact: float
    hf: float
    error_hartree: float
    correlation: float
    accuracy: float
    duration_ns: float
    evaluations: int
    to_chemical_accuracy: int | None
    params: tuple[float, ...]
    baselines: dict[str, dict[str, float | int | None]]


def _fields(run: VqeRun) -> dict[str, float | int | None]:
    return {"energy": run.energy, "error_hartree": run.error_hartree, "correlation": run.correlation,
            "accuracy": run.accuracy, "duration_ns": run.duration_ns, "evaluations": run.evaluations,
            "to_chemical_accuracy": run.to_chemical_accuracy}  # fmt: skip


def run(config: NapaConfig) -> NapaResult:
    """NAPA and both baselines on ``config`` (memoised and cached on disk by the experiment)."""
    napa = vqe(config)
    base = {kind: _fields(baseline(config, kind)) for kind in ("hea", "uccsd")}
    return NapaResult(
        molecule=config.molecule, bond_length=config.bond_length, device=config.device, noise=config.noise,
        optimizer=config.optimizer, exact=napa.exact, hf=napa.hf, params=napa.params, baselines=base,
        **_fields(napa),  # type: ignore[arg-type]
    )  # fmt: skip


def format_table(result: dict[str, Any]) -> str:
    """NAPA and the baselines side by side."""
    hf_mha = (result["hf"] - result["exact"]) * 1e3
    lines = [
        f"{result['molecule']} at {result['bond_length']:g} A on {result['device']} (noise {result['noise']}): "
        f"exact {result['exact']:.6f} Ha, Hartree-Fock {result['hf']:.6f} Ha ({hf_mha:.3f} mHa, accuracy "
        f"{1 - hf_mha * 1e-3 / abs(result['exact']):.4%})",
        f"{'ansatz':<8}{'energy Ha':>12}{'|error| mHa':>13}{'corr.':>9}{'accuracy':>10}{'ns':>9}{'evals':>7}"
        f"{'to 1.6 mHa':>11}",
    ]
    rows = [("napa", result), *result["baselines"].items()]
    for kind, r in rows:
        hit = r["to_chemical_accuracy"]
        lines.append(f"{kind:<8}{r['energy']:>12.6f}{r['error_hartree'] * 1e3:>13.3f}{r['correlation']:>9.1%}"
                     f"{r['accuracy']:>10.4%}{r['duration_ns']:>9.1f}{r['evaluations']:>7}"
                     f"{hit if hit is not None else 'never':>11}")  # fmt: skip
    lines.append(f"napa optimizer: {result['optimizer']} (an evaluation: one energy, or one energy and its gradient); "
                 "corr.: fraction of the correlation energy recovered")  # fmt: skip
    return "\n".join(lines)


TECHNIQUE = Technique(
    name="napa",
    config=NapaConfig,
    run=run,
    format_table=format_table,
    panel="widgets.quantum.napa:NapaPanel",
    notebook="notebooks/quantum/napa.ipynb",
    smoke={"layers": 1, "budget": 4},
    processes=False,
)
