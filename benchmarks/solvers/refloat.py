"""ReFloat: our block SpMV and Krylov solvers against scipy's on the largest matrices, and the format conversion
time per million nonzeros.

Peers, in the same process on the same data: ``scipy.sparse`` CSR ``A @ x`` (one sum per row) for the SpMV,
``scipy.sparse.linalg.cg`` / ``bicgstab`` for the solvers (run for a fixed number of iterations on both sides:
tolerances 0, so neither stops early), and the per-value bit-level reference (``workbench.solvers.refloat.reference``)
for the conversion. Times are medians over interleaved rounds (``benchmarks.common.interleaved``); ratios are
medians of per-round ratios ours / peer.
"""

from __future__ import annotations

import logging
import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from benchmarks.common import Section, Table, fmt_ms, fmt_ratio, interleaved, median
from benchmarks.machine import load_average
from workbench.solvers.krylov import bicgstab, cg
from workbench.solvers.matrices import load_matrix
from workbench.solvers.refloat.block_format import exponents, group_bases, quantise_matrix, quantise_vector
from workbench.solvers.refloat.formats import make_format
from workbench.solvers.refloat.reference import quantise_value
from workbench.solvers.refloat.spmv import BlockSpMV

log = logging.getLogger(__name__)

FULL = {
    "matrices": (("bcsstk16", "cg"), ("wathen-120-120", "cg"), ("cryg2500", "bicgstab")),
    "spmv_rounds": 30,
    "solve_rounds": 5,
    "iterations": 200,
    "convert_rounds": 5,
    "reference_sample": 20_000,
}
QUICK = {
    "matrices": (("bcsstk02", "cg"), ("wathen-10-10", "cg")),
    "spmv_rounds": 5,
    "solve_rounds": 2,
    "iterations": 20,
    "convert_rounds": 2,
    "reference_sample": 2_000,
}


def _ratio(times: dict[str, list[float]], ours: str, peer: str) -> float:
    return median([a / b for a, b in zip(times[ours], times[peer])])


def _scipy_solver(A: sp.csr_matrix, b: np.ndarray, solver: str, iterations: int):
    fn = spla.cg if solver == "cg" else spla.bicgstab
    return lambda: fn(A, b, rtol=0.0, atol=0.0, maxiter=iterations)


def _ours_solver(A: sp.csr_matrix, b: np.ndarray, solver: str, iterations: int, fmt_name: str):
    fmt = make_format(fmt_name)
    stored = fmt.quantise_matrix(A).matrix
    spmv = BlockSpMV(stored, 128)
    kernel = cg if solver == "cg" else bicgstab
    quantise = fmt.vector_quantiser()
    return lambda: kernel(spmv, b, quantise=quantise, max_iter=iterations, threshold=0.0)


def spmv_and_solvers(plan: dict) -> Section:
    rows = []
    for name, solver in plan["matrices"]:
        A = load_matrix(name).A
        x = np.random.default_rng(0).standard_normal(A.shape[0])
        blocked, one = BlockSpMV(A, 128), BlockSpMV(A, A.shape[1])
        t = interleaved(
            {"scipy": lambda: A @ x, "block128": lambda: blocked(x), "oneblock": lambda: one(x)},
            rounds=plan["spmv_rounds"],
        )
        rows.append(
            (
                name,
                f"{A.shape[0]:,}",
                f"{A.nnz:,}",
                "SpMV, 128-blocks",
                fmt_ms(median(t["block128"])),
                fmt_ms(median(t["scipy"])),
                fmt_ratio(_ratio(t, "block128", "scipy")),
                f"{blocked.num_pairs:,} partial sums",
            )
        )
        rows.append(
            (
                name,
                f"{A.shape[0]:,}",
                f"{A.nnz:,}",
                "SpMV, one block column",
                fmt_ms(median(t["oneblock"])),
                fmt_ms(median(t["scipy"])),
                fmt_ratio(_ratio(t, "oneblock", "scipy")),
                "bit-identical to A @ x",
            )
        )
        b = np.ones(A.shape[0])
        k = plan["iterations"]
        fns = {
            "scipy": _scipy_solver(A, b, solver, k),
            "float64": _ours_solver(A, b, solver, k, "float64"),
            "refloat": _ours_solver(A, b, solver, k, "refloat"),
        }
        t = interleaved(fns, rounds=plan["solve_rounds"])
        for ours in ("float64", "refloat"):
            note = "p quantised every iteration" if ours == "refloat" else "same arithmetic as scipy"
            if solver == "bicgstab" and ours == "refloat":
                note = "p and s quantised every iteration"
            rows.append(
                (
                    name,
                    f"{A.shape[0]:,}",
                    f"{A.nnz:,}",
                    f"{solver} x {k} iterations, {ours}",
                    fmt_ms(median(t[ours])),
                    fmt_ms(median(t["scipy"])),
                    fmt_ratio(_ratio(t, ours, "scipy")),
                    note,
                )
            )
    table = Table(
        headers=("matrix", "n", "nnz", "operation", "ours (ms)", "scipy (ms)", "ours / scipy", "note"), rows=tuple(rows)
    )
    spmv_ratios = [float(r[6]) for r in rows if r[3] == "SpMV, 128-blocks"]
    solve_ratios = [float(r[6]) for r in rows if "float64" in r[3]]
    intro = (
        "Ours: `BlockSpMV` (one partial sum per (row, 128-column block), then the partials added in block "
        "order: two CSR products) and `krylov.cg`/`bicgstab` with that SpMV, in float64 and in ReFloat "
        "(3, 3 / 3, 8; the matrix quantised once outside the timing, each search direction quantised "
        "inside). Peer: scipy's CSR `A @ x` and `scipy.sparse.linalg.cg`/`bicgstab`, both run for the same "
        "fixed number of iterations (tolerances 0). 1.00 = as fast as scipy."
    )
    return Section(
        title="ReFloat: block SpMV and solvers vs scipy",
        intro=intro,
        tables=(table,),
        notes=(f"Load average at the end of this section: {load_average()}.",),
        summary=(
            (
                "ReFloat block SpMV (128) / scipy A @ x, range over matrices",
                f"{min(spmv_ratios):.2f} .. {max(spmv_ratios):.2f}",
            ),
            (
                "ReFloat float64 solver / scipy, range over matrices",
                f"{min(solve_ratios):.2f} .. {max(solve_ratios):.2f}",
            ),
        ),
        data={"rows": rows},
    )


def conversion(plan: dict) -> Section:
    rows = []
    for name, _ in plan["matrices"]:
        A = load_matrix(name).A
        million = A.nnz / 1e6
        fns = {
            rule: (lambda r=rule: quantise_matrix(A, e=3, f=3, bsize=128, base=r))
            for rule in ("mean", "median", "max-coverage")
        }
        fns["copy"] = lambda: A.copy()
        t = interleaved(fns, rounds=plan["convert_rounds"])
        for rule in ("mean", "median", "max-coverage"):
            rows.append(
                (
                    name,
                    f"{A.nnz:,}",
                    f"matrix, base {rule}",
                    fmt_ms(median(t[rule]) / million),
                    fmt_ratio(_ratio(t, rule, "copy")),
                )
            )
        x = np.random.default_rng(1).standard_normal(A.shape[0])
        tv = interleaved(
            {"vector": lambda: quantise_vector(x, e=3, f=8, bsize=128), "copy": lambda: x.copy()},
            rounds=plan["convert_rounds"] * 10,
        )
        rows.append(
            (
                name,
                f"{x.size:,}",
                "vector (search direction)",
                fmt_ms(median(tv["vector"]) / (x.size / 1e6)),
                fmt_ratio(_ratio(tv, "vector", "copy")),
            )
        )
    # the slow per-value reference on a sample, for scale
    A = load_matrix(plan["matrices"][0][0]).A
    data = A.data[: plan["reference_sample"]]
    base = int(group_bases(np.zeros(data.size, dtype=np.int64), exponents(data), 1, "mean", 3)[0])
    start = time.perf_counter()
    for v in data:
        quantise_value(float(v), base, 3, 3)
    per_million_ref = (time.perf_counter() - start) / (data.size / 1e6)
    rows.append(
        (
            f"{plan['matrices'][0][0]} (first {data.size:,} values)",
            f"{data.size:,}",
            "per-value bit-level reference (values only, no bases)",
            fmt_ms(per_million_ref),
            "-",
        )
    )
    table = Table(
        headers=("matrix", "values", "conversion", "ms per million values", "time / plain copy"), rows=tuple(rows)
    )
    intro = (
        "ReFloat(128, e = 3, f = 3) conversion of a whole matrix (block ids, per-block base, saturate and "
        "truncate every nonzero, vectorised over all nonzeros) and of a vector (e = 3, f = 8, per "
        "128-segment), in milliseconds per million values; the last column compares with a plain copy of "
        "the same data (the floor of any conversion). The per-value bit-level reference that the tests "
        "check the vectorised code against is timed on a sample for scale."
    )
    mean_rows = [float(r[3]) for r in rows if r[2] == "matrix, base mean"]
    return Section(
        title="ReFloat: format conversion time",
        intro=intro,
        tables=(table,),
        summary=(
            (
                "ReFloat matrix conversion (mean base), ms per million nonzeros",
                f"{min(mean_rows):.1f} .. {max(mean_rows):.1f}",
            ),
        ),
        data={"rows": rows, "reference_ms_per_million": per_million_ref * 1e3},
    )


def run(*, quick: bool) -> list[Section]:
    """Both ReFloat sections (quick: small matrices and few rounds)."""
    plan = QUICK if quick else FULL
    log.info("refloat benchmarks (%s)", "quick" if quick else "full")
    return [spmv_and_solvers(plan), conversion(plan)]


if __name__ == "__main__":
    import sys

    for section in run(quick="--quick" in sys.argv):
        print(section.markdown(), end="\n\n")
