"""Headless runner of ReFloat: ``workbench run refloat --matrix NAME_OR_FILE --solver cg --format refloat --json``.

One solve of ``A x = ones`` (x0 = 0) in the chosen format, plus the same solve in the baseline format, so the
modelled speed-up over the baseline (Feinberg et al.'s accelerator, as the paper compares) comes with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.registry import Technique
from workbench.results import Result, to_plain
from workbench.solvers.refloat.config import RefloatConfig
from workbench.solvers.refloat.experiment import FormatRun, Problem, format_of, prepare, solve_format, speedup
from workbench.solvers.refloat.model import FORMULA


def solve(config: RefloatConfig, format_name: str | None = None) -> FormatRun:
    """The solve ``config`` describes (in ``format_name`` instead of ``config.format`` when given).

    Raises ValueError for a CG solve on a non-symmetric matrix, or on one that turns out not to be positive
    definite while its values are untouched (float64, refloat-artifact); FileNotFoundError for missing files.
    """
    problem = prepare(config.matrix, precondition=config.precondition, seed=config.seed)
    return solve_format(
        problem,
        format_of(config, format_name),
        config.solver,
        max_iter=config.max_iter,
        criterion=config.criterion,
        threshold=config.threshold,
        rtol=config.rtol,
        strict=True,
    )


@dataclass(frozen=True, kw_only=True)
class RefloatResult(Result):
    """One ``workbench run refloat``: the experiment's solve in the chosen format (``solved``) and the same solve
    in the baseline format (``baseline``; the same object when the chosen format is the baseline), each the
    :class:`~workbench.solvers.refloat.experiment.FormatRun` the study and the panel show too (iterate, stored
    matrix, modelled time), on ``problem`` as ``config`` describes it.

    :meth:`to_json` is what ``--json`` prints, a flat view of these. Keys of the issue's schema first: technique,
    matrix, solver, format, iterations, converged, final_residual (``||r||^2`` of the recursive residual, what the
    stopping rule tests), modelled_seconds, speedup_vs_baseline (baseline modelled seconds / this run's; null
    when this run did not converge).

    converged means the right answer: the solver stopped on its rule *and* the original system's residual
    true_residual (``||b - A x||^2`` with the unquantised A) meets the same criterion. stopped_on_quantised is
    the solver's own stop (its recursive residual met the rule on the stored, possibly quantised, matrix);
    stopped_on_quantised without converged is status ``wrong_solution``. stored_residual: ``||b - A_q x||^2``.

    Then: status, message, the criterion (threshold for absolute, rtol for relative, the other null),
    precondition, sizes (n, nnz, bsize, blocks), the bits priced (matrix e, f; vector e, f), the base rule,
    saturation shares, the CG indefiniteness iteration, the true residual, the model's terms (engines, cycles per
    MVM, rounds, SpMVs, seconds per SpMV, formula), the baseline's iterations, convergence (same meaning) and
    modelled time, the per-SpMV speed-up, stopped_on_quantised and stored_residual.
    """

    technique: str = "refloat"
    config: RefloatConfig
    problem: Problem
    solved: FormatRun
    baseline: FormatRun

    @property
    def speedup_vs_baseline(self) -> float | None:
        """Modelled time to solution, baseline / this run (None: this run did not converge)."""
        s = speedup(self.solved, self.baseline)
        return None if s is None else float(s)

    def to_json(self) -> dict[str, Any]:
        config, run_, base = self.config, self.solved, self.baseline
        fmt, res, timing, stored = run_.format, run_.result, run_.timing, run_.stored
        return to_plain(
            {
                "technique": self.technique,
                "matrix": self.problem.name,
                "solver": config.solver,
                "format": config.format,
                "iterations": int(res.iterations),
                "converged": bool(run_.converged),
                "final_residual": float(res.final_residual),
                "modelled_seconds": float(timing.total_seconds),
                "speedup_vs_baseline": self.speedup_vs_baseline,
                "status": run_.status,
                "message": run_.message,
                "criterion": config.criterion,
                "threshold": config.threshold if config.criterion == "absolute" else None,
                "rtol": config.rtol if config.criterion == "relative" else None,
                "precondition": config.precondition,
                "n": int(self.problem.A.shape[0]),
                "nnz": int(self.problem.A.nnz),
                "bsize": fmt.bsize,
                "blocks": stored.num_blocks,
                "bits": {"e_m": fmt.e_m, "f_m": fmt.f_m, "e_v": fmt.e_v, "f_v": fmt.f_v},
                "base": config.base,
                "saturated_up": float(stored.saturated_up.mean()) if stored.matrix.nnz else 0.0,
                "saturated_down": float(stored.saturated_down.mean()) if stored.matrix.nnz else 0.0,
                "indefinite_at": res.indefinite_at,
                "true_residual": float(run_.true_residual),
                "modelled": {
                    "engines": timing.engines,
                    "cycles_per_mvm": timing.cycles,
                    "rounds": timing.rounds,
                    "spmvs": timing.spmvs,
                    "spmv_seconds": timing.spmv_seconds,
                    "formula": FORMULA,
                },
                "baseline_iterations": int(base.iterations),
                "baseline_converged": bool(base.converged),
                "baseline_modelled_seconds": float(base.timing.total_seconds),
                "speedup_per_spmv": float(base.timing.spmv_seconds / timing.spmv_seconds),
                "stopped_on_quantised": bool(run_.stopped_on_quantised),
                "stored_residual": float(run_.stored_residual),
            }
        )


def run(config: RefloatConfig) -> RefloatResult:
    """One solve in ``config.format`` and the same solve in the baseline format (for the speed-up).

    Raises ValueError / FileNotFoundError as :func:`solve`.
    """
    solved = solve(config)
    baseline = solved if config.format == "baseline" else solve(config, "baseline")
    problem = prepare(config.matrix, precondition=config.precondition, seed=config.seed)
    return RefloatResult(config=config, problem=problem, solved=solved, baseline=baseline)


def format_table(result: dict[str, Any]) -> str:
    """A short text report of one run."""
    b = result["bits"]
    s = result["speedup_vs_baseline"]
    lines = [
        f"refloat  matrix={result['matrix']} (n={result['n']}, nnz={result['nnz']}, {result['blocks']} blocks of "
        f"{result['bsize']})  solver={result['solver']}  format={result['format']} "
        f"(matrix e={b['e_m']} f={b['f_m']}, vector e={b['e_v']} f={b['f_v']}, base={result['base']})",
        f"{'':2}{result['message']}; final ||r||^2 = {result['final_residual']:.3e} "
        f"(criterion {result['criterion']}); true ||b - A x||^2 = {result['true_residual']:.3e}",
        f"{'':2}entries saturated up {result['saturated_up']:.2%}, down {result['saturated_down']:.2%}",
        f"{'':2}modelled ReRAM time {result['modelled_seconds'] * 1e6:.4g} us "
        f"({result['modelled']['spmvs']} SpMVs x {result['modelled']['spmv_seconds'] * 1e6:.4g} us, "
        f"{result['modelled']['rounds']} round(s), {result['modelled']['cycles_per_mvm']} cycles/MVM)",
        f"{'':2}baseline: {result['baseline_iterations']} iterations "
        f"({'converged' if result['baseline_converged'] else 'not converged'}), "
        f"{result['baseline_modelled_seconds'] * 1e6:.4g} us; speed-up "
        + (f"{s:.2f}x" if s is not None else "n/a (this run did not converge)")
        + f"; per SpMV {result['speedup_per_spmv']:.2f}x",
    ]
    return "\n".join(lines)


TECHNIQUE = Technique(
    name="refloat",
    config=RefloatConfig,
    run=run,
    format_table=format_table,
    panel="widgets.solvers.refloat:RefloatPanel",
    notebook="notebooks/solvers/refloat.ipynb",
    smoke={"matrix": "wathen-4-4", "max_iter": 200},
)
