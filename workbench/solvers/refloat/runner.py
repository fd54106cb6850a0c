"""Headless runner of ReFloat: ``workbench run refloat --matrix NAME_OR_FILE --solver cg --format refloat --json``.

One solve of ``A x = ones`` (x0 = 0) in the chosen format, plus the same solve in the baseline format, so the
modelled speed-up over the baseline (Feinberg et al.'s accelerator, as the paper compares) comes with it.
"""

from __future__ import annotations

from typing import Any

from workbench.registry import Technique
from workbench.solvers.refloat.config import RefloatConfig
from workbench.solvers.refloat.model import FORMULA
from workbench.solvers.refloat.study import FormatRun, format_of, prepare, solve_format, speedup


def solve(config: RefloatConfig, format_name: str | None = None) -> FormatRun:
    """The solve ``config`` describes (in ``format_name`` instead of ``config.format`` when given).

    Raises ValueError for a CG solve on a non-symmetric matrix, or on one that turns out not to be positive
    definite while its values are untouched (float64, refloat-artifact); FileNotFoundError for missing files.
    """
    problem = prepare(config.matrix, precondition=config.precondition, seed=config.seed)
    return solve_format(problem, format_of(config, format_name), config.solver,
                        max_iter=config.max_iter, criterion=config.criterion, threshold=config.threshold,
                        rtol=config.rtol, strict=True)


def run(config: RefloatConfig) -> dict[str, Any]:
    """The JSON object ``workbench run refloat --json`` prints.

    Keys of the issue's schema: technique, matrix, solver, format, iterations, converged, final_residual
    (``||r||^2`` of the recursive residual, what the stopping rule tests), modelled_seconds,
    speedup_vs_baseline (baseline modelled seconds / this run's; null when this run did not converge).
    Extra keys: status, message, sizes, blocks, the bits priced, the baseline's iterations, the true residual.
    """
    run_ = solve(config)
    base = run_ if config.format == "baseline" else solve(config, "baseline")
    fmt, res, timing = run_.format, run_.result, run_.timing
    s = speedup(run_, base)
    problem = prepare(config.matrix, precondition=config.precondition, seed=config.seed)
    up, down = run_.stored.saturated_up.mean(), run_.stored.saturated_down.mean()
    return {
        "technique": "refloat",
        "matrix": problem.name,
        "solver": config.solver,
        "format": config.format,
        "iterations": int(res.iterations),
        "converged": bool(res.converged),
        "final_residual": float(res.final_residual),
        "modelled_seconds": float(timing.total_seconds),
        "speedup_vs_baseline": None if s is None else float(s),
        "status": res.status,
        "message": res.message,
        "criterion": config.criterion,
        "threshold": config.threshold if config.criterion == "absolute" else None,
        "rtol": config.rtol if config.criterion == "relative" else None,
        "precondition": config.precondition,
        "n": int(problem.A.shape[0]),
        "nnz": int(problem.A.nnz),
        "bsize": fmt.bsize,
        "blocks": run_.stored.num_blocks,
        "bits": {"e_m": fmt.e_m, "f_m": fmt.f_m, "e_v": fmt.e_v, "f_v": fmt.f_v},
        "base": config.base,
        "saturated_up": float(up) if run_.stored.matrix.nnz else 0.0,
        "saturated_down": float(down) if run_.stored.matrix.nnz else 0.0,
        "indefinite_at": res.indefinite_at,
        "true_residual": run_.true_residual,
        "modelled": {"engines": timing.engines, "cycles_per_mvm": timing.cycles, "rounds": timing.rounds,
                     "spmvs": timing.spmvs, "spmv_seconds": timing.spmv_seconds, "formula": FORMULA},
        "baseline_iterations": int(base.iterations),
        "baseline_converged": bool(base.converged),
        "baseline_modelled_seconds": float(base.timing.total_seconds),
        "speedup_per_spmv": float(base.timing.spmv_seconds / timing.spmv_seconds),
    }


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
    summary="ReFloat block floating point in CG/BiCGSTAB on real SuiteSparse matrices, with the ReRAM time model",
    config=RefloatConfig,
    run=run,
    format_table=format_table,
    panel="widgets.solvers.refloat:RefloatPanel",
    notebook="notebooks/solvers/refloat.ipynb",
)
