"""Headless runner of ``napa``: ``workbench run napa --molecule H2 --bond-length 0.735 --device D --noise none|device
--json`` -> ``{"energy", "exact", "error_hartree", "duration_ns", "evaluations", "baselines": {...}}``.

NAPA's VQE (native pulses, COBYLA by default, progressive growth) and the two gate baselines (HEA and the reduced
UCCSD, compiled to the same calibrated pulses) with the same evaluation budget.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.quantum.napa.config import NapaConfig
from workbench.quantum.napa.study import baseline, vqe
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
    energy: float
    exact: float
    error_hartree: float
    accuracy: float
    duration_ns: float
    evaluations: int
    baselines: dict[str, dict[str, float]]


def run(config: NapaConfig) -> NapaResult:
    """NAPA and both baselines on ``config`` (memoised and cached on disk by the study)."""
    napa = vqe(config)
    base = {}
    for kind in ("hea", "uccsd"):
        b = baseline(config, kind)
        base[kind] = {"energy": b.energy, "error_hartree": b.error_hartree, "accuracy": b.accuracy,
                      "duration_ns": b.duration_ns, "evaluations": b.evaluations}  # fmt: skip
    return NapaResult(
        molecule=config.molecule, bond_length=config.bond_length, device=config.device, noise=config.noise,
        energy=napa.energy, exact=napa.exact, error_hartree=napa.error_hartree, accuracy=napa.accuracy,
        duration_ns=napa.duration_ns, evaluations=napa.evaluations, baselines=base,
    )  # fmt: skip


def format_table(result: dict[str, Any]) -> str:
    """NAPA and the baselines side by side."""
    lines = [
        f"{result['molecule']} at {result['bond_length']:g} A on {result['device']} (noise {result['noise']}): "
        f"exact {result['exact']:.6f} Ha",
        f"{'ansatz':<8}{'energy Ha':>12}{'|error| mHa':>13}{'accuracy':>10}{'ns':>9}{'evals':>7}",
        f"{'napa':<8}{result['energy']:>12.6f}{result['error_hartree'] * 1e3:>13.3f}{result['accuracy']:>10.4%}"
        f"{result['duration_ns']:>9.1f}{result['evaluations']:>7}",
    ]
    for kind, b in result["baselines"].items():
        lines.append(f"{kind:<8}{b['energy']:>12.6f}{b['error_hartree'] * 1e3:>13.3f}{b['accuracy']:>10.4%}"
                     f"{b['duration_ns']:>9.1f}{b['evaluations']:>7}")  # fmt: skip
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
