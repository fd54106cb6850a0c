"""Headless runner of QGAS: ``workbench run qgas --problem lih --proposer local --iterations 12 --json``.

One search loop (:func:`~workbench.quantum.qgas.search.run_search`): every proposal parsed, validated, trained
and scored, the transcript written; the result is the best valid proposal, the validity rate and the curve of
the best energy error against iteration.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.quantum.qgas.config import QgasConfig
from workbench.quantum.qgas.search import run_search
from workbench.registry import Technique
from workbench.results import Result, fmt


@dataclass(frozen=True, kw_only=True)
class Iteration:
    """One row of the search: validity (and reason), structure and scores (None when invalid)."""

    iteration: int
    valid: bool
    reason: str
    depth: int | None
    cnots: int | None
    params: int | None
    energy_error: float | None
    noisy_energy_error: float | None


@dataclass(frozen=True, kw_only=True)
class QgasResult(Result):
    """What ``workbench run qgas --json`` prints (field order = JSON key order).

    The issue's keys: best_energy_error (E_best - E_exact: Hartree for lih/h2, cost units for maxcut/portfolio;
    null when no proposal was valid), valid_fraction, best_qasm, transcript (path of the logged transcript).
    Extra: the problem and its exact minimum, the best proposal's energy, structure and (qaoa problems)
    approximation ratio, its noisy error under ``device``, the best-so-far error after each iteration, and
    every iteration's row.
    """

    technique: str = "qgas"
    best_energy_error: float | None
    valid_fraction: float
    best_qasm: str
    transcript: str
    problem: str
    description: str
    unit: str
    proposer: str
    iterations: int
    exact_energy: float
    best_energy: float | None
    best_iteration: int | None
    best_depth: int | None
    best_cnots: int | None
    best_params: int | None
    approximation_ratio: float | None
    device: str
    best_noisy_energy_error: float | None
    best_error_curve: list[float | None]
    rows: list[Iteration]
    seconds: float


def run(config: QgasConfig) -> QgasResult:
    """Run the search ``config`` describes. ValueError for bad input, an unreachable endpoint or a replay
    that runs out; an invalid proposal is logged and skipped."""
    search = run_search(config)
    best = search.best
    rows = [
        Iteration(
            iteration=r.iteration,
            valid=r.valid,
            reason=r.reason,
            depth=r.depth,
            cnots=r.cnots,
            params=r.params,
            energy_error=r.energy_error,
            noisy_energy_error=r.noisy_energy_error,
        )
        for r in search.records
    ]
    p = search.problem
    return QgasResult(
        best_energy_error=None if best is None else best.energy_error,
        valid_fraction=search.valid_fraction,
        best_qasm="" if best is None else best.qasm,
        transcript=search.transcript,
        problem=p.name,
        description=p.description,
        unit=p.unit,
        proposer=config.proposer,
        iterations=config.iterations,
        exact_energy=p.exact,
        best_energy=None if best is None else best.energy,
        best_iteration=None if best is None else best.iteration,
        best_depth=None if best is None else best.depth,
        best_cnots=None if best is None else best.cnots,
        best_params=None if best is None else best.params,
        approximation_ratio=None if best is None else best.approximation_ratio,
        device=config.device,
        best_noisy_energy_error=None if best is None else best.noisy_energy_error,
        best_error_curve=search.best_error_curve(),
        rows=rows,
        seconds=sum(r.seconds for r in search.records),
    )


def format_table(result: dict[str, Any]) -> str:
    """A short text report of one search."""
    unit = result["unit"]
    lines = [
        f"qgas  problem={result['problem']}  proposer={result['proposer']}  iterations={result['iterations']}  "
        f"exact={result['exact_energy']:.6f} {unit}",
        f"  valid proposals: {result['valid_fraction']:.0%}; best error "
        + (
            "n/a (no valid proposal)"
            if result["best_energy_error"] is None
            else f"{result['best_energy_error']:.3e} {unit} at iteration {result['best_iteration']} "
            f"(depth {result['best_depth']}, {result['best_cnots']} CNOTs, {result['best_params']} params)"
        ),
    ]
    if result["best_noisy_energy_error"] is not None:
        lines.append(f"  under {result['device']} noise: error {result['best_noisy_energy_error']:.3e} {unit}")
    lines.append(f"  {'it':>3} {'valid':>5} {'depth':>5} {'CNOTs':>5} {'error':>11}  note")
    for row in result["rows"]:
        err = "" if row["energy_error"] is None else f"{row['energy_error']:.3e}"
        lines.append(
            f"  {row['iteration']:>3} {'yes' if row['valid'] else 'no':>5} {fmt(row['depth']) if row['valid'] else '':>5} "
            f"{fmt(row['cnots']) if row['valid'] else '':>5} {err:>11}  {row['reason']}"
        )
    lines.append(f"  transcript: {result['transcript']}")
    return "\n".join(lines)


TECHNIQUE = Technique(
    name="qgas",
    config=QgasConfig,
    run=run,
    format_table=format_table,
    panel="widgets.quantum.qgas:QgasPanel",
    notebook="notebooks/quantum/qgas.ipynb",
    smoke={"problem": "h2", "iterations": 2, "train_steps": 5, "restarts": 1},
)
