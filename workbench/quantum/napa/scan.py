"""The recorded ground-state scan: NAPA (noiseless, the config's defaults) at every shipped bond length of H2,
HeH+ and LiH, and the schedule each ansatz needs to reach chemical accuracy at the reference bond lengths.

``python -m workbench.quantum.napa.scan`` computes it (about a minute of CPU per run; every run is cached on disk
by :mod:`workbench.quantum.napa.experiment`, so an interrupted scan resumes) and writes ``napa_scan.json`` beside
this module after each row; the notebook and :func:`workbench.quantum.napa.study.scan_view` read that file, and a
slow test recomputes one row with the same command's code (:func:`row`). ``--quick`` scans the reference bond
lengths only.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from workbench.atomic import atomic_write
from workbench.quantum.napa.config import NapaConfig
from workbench.quantum.napa.experiment import CHEMICAL_ACCURACY_HA, VqeRun, baseline, vqe
from workbench.quantum.napa.hamiltonians import bond_lengths

__all__ = ["REFERENCE", "PAPER_METHOD", "row", "reach", "claim_runs", "run_key", "scan", "OUTPUT"]

#: the bond lengths of the authors' code (A)
REFERENCE = {"H2": 0.735, "HeH+": 1.0, "LiH": 1.5}
OUTPUT = Path(__file__).with_name("napa_scan.json")
#: the gate baselines' settings in the reach comparison: COBYLA on the angles, the paper's optimiser
BASELINE_BUDGET = 100
#: the paper's training (the companion code): COBYLA (rhobeg 0.1), progressive growth, small random amplitudes
PAPER_METHOD = {"optimizer": "cobyla", "progressive": True, "start": "random", "starts": 1, "budget": 200}
#: the claims' runs beyond the scan: (molecule, method, seed); "workbench" is the config's defaults
CLAIM_RUNS = (("HeH+", "workbench", 1), ("H2", "paper", 0), ("HeH+", "paper", 0), ("HeH+", "paper", 1))


def row(molecule: str, bond_length: float, **settings: Any) -> dict[str, Any]:
    """NAPA's noiseless run at one bond length (``settings`` override the config's defaults): its figures."""
    run = vqe(NapaConfig(molecule=molecule, bond_length=bond_length, noise="none", **settings))
    return _figures(run) | {"molecule": molecule, "bond_length": bond_length}


def _figures(run: VqeRun) -> dict[str, Any]:
    return {
        "error_mha": run.error_hartree * 1e3,
        "hf_error_mha": (run.hf - run.exact) * 1e3,
        "correlation": run.correlation,
        "accuracy": run.accuracy,
        "hf_accuracy": 1 - abs(run.hf - run.exact) / abs(run.exact),
        "evaluations": run.evaluations,
        "to_chemical_accuracy": run.to_chemical_accuracy,
        "duration_ns": run.duration_ns,
    }


def reach(molecule: str, **settings: Any) -> dict[str, Any]:
    """At the reference bond length: each ansatz's schedule (ns) and error, NAPA at the config's defaults, HEA at 1
    layer (and 2 where 1 misses) and UCCSD with COBYLA and :data:`BASELINE_BUDGET` evaluations; ``reaches``: within
    chemical accuracy. The shortest schedule that reaches it is each family's duration at equal error."""
    b = REFERENCE[molecule]
    out: dict[str, Any] = {"napa": _figures(vqe(NapaConfig(molecule=molecule, bond_length=b, noise="none",
                                                             **settings)))}  # fmt: skip
    for layers in (1, 2):  # the second layer only where one misses (a longer schedule cannot be the shortest)
        config = NapaConfig(molecule=molecule, bond_length=b, noise="none", layers=layers, budget=BASELINE_BUDGET)
        out[f"hea L{layers}"] = _figures(baseline(config, "hea"))
        if out[f"hea L{layers}"]["error_mha"] <= CHEMICAL_ACCURACY_HA * 1e3:
            break
    out["uccsd"] = _figures(baseline(NapaConfig(molecule=molecule, bond_length=b, noise="none",
                                                budget=BASELINE_BUDGET), "uccsd"))  # fmt: skip
    for figures in out.values():
        figures["reaches"] = figures["error_mha"] <= CHEMICAL_ACCURACY_HA * 1e3
    return out


def run_key(molecule: str, method: str, seed: int) -> str:
    """The key of one claim run in the scan file: ``"H2@0.735,paper,s0"``."""
    return f"{molecule}@{REFERENCE[molecule]:g},{method},s{seed}"


def claim_runs(**settings: Any) -> dict[str, dict[str, Any]]:
    """The runs the claims read besides the scan's rows (:data:`CLAIM_RUNS`, at the reference bond lengths)."""
    out = {}
    for molecule, method, seed in CLAIM_RUNS:
        extra = PAPER_METHOD if method == "paper" else settings
        out[run_key(molecule, method, seed)] = row(molecule, REFERENCE[molecule], seed=seed, **extra)
    return out


def _order(quick: bool) -> list[tuple[str, float]]:
    """The reference bond lengths, then each molecule's shortest and longest (the hardest: strong correlation
    when stretched), then the rest."""
    order = list(REFERENCE.items())
    if not quick:
        ends = [(m, b) for m in REFERENCE for b in (bond_lengths(m)[0], bond_lengths(m)[-1])]
        rest = [(m, b) for m in REFERENCE for b in bond_lengths(m)]
        order += [p for p in ends + rest if all(abs(p[1] - q[1]) > 1e-9 or p[0] != q[0] for q in order)]
        order = list(dict.fromkeys(order))
    return order


def scan(*, quick: bool = False, output: Path = OUTPUT, claims_later: bool = False, **settings: Any) -> dict[str, Any]:
    """Every row (:func:`_order`), the reach comparison and the claims' runs (after the reference rows, or not at
    all with ``claims_later``: :func:`claim_runs` then runs apart), written to ``output`` after each step."""
    order = _order(quick)
    data: dict[str, Any] = {
        "command": "python -m workbench.quantum.napa.scan" + (" --quick" if quick else ""),
        "config": {
            k: v
            for k, v in NapaConfig(**settings).to_flat_dict().items()
            if k not in ("molecule", "bond_length", "noise")
        },  # fmt: skip
        "paper_method": PAPER_METHOD,
        "rows": [],
        "reach": {},
        "runs": {},
    }

    def write() -> None:
        with atomic_write(output, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1)

    for m, b in order[: len(REFERENCE)]:
        data["rows"].append(row(m, b, **settings))
        data["reach"][m] = reach(m, **settings)
        write()
    if not claims_later:
        data["runs"] = claim_runs(**settings)
        write()
    for m, b in order[len(REFERENCE) :]:
        data["rows"].append(row(m, b, **settings))
        write()
    return data


if __name__ == "__main__":  # pragma: no cover - the recorded command
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the reference bond lengths only")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    parser.add_argument("--claims-later", action="store_true", help="leave the claims' runs to --claims-only")
    parser.add_argument("--claims-only", action="store_true", help="only the claims' runs, into --output")
    args = parser.parse_args()
    if args.claims_only:
        with atomic_write(args.output, "w", encoding="utf-8") as f:
            json.dump(claim_runs(), f, indent=1)
    else:
        scan(quick=args.quick, output=args.output, claims_later=args.claims_later)
