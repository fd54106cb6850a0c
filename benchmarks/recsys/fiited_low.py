"""FIITED and hashing below the main sweep's smallest budget (0.02 of the full table): the grid points the memory
claims need to be more than a grid limit (``workbench.recsys.fiited.claims.REACH``).

Same data, network, seeds and settings as ``fiited_sweep.py`` (its ``sweep_config`` and ``FULL`` plan); only the
two tables that can go below one float per id are run (uniform, row-prune, mixed-dim and elem-prune keep at least
4 B per id, 1/64 of the full table). Peer, in the same run: the full table of the same seed, paired. Each budget's
figure is recorded as bytes / full when the paired mean AUC difference is within the declared accuracy tolerance
(:data:`workbench.claims.TOLERANCES` ``["accuracy"]``), NaN otherwise.
"""

from __future__ import annotations

import logging
import math

from benchmarks.common import Section, Table
from benchmarks.machine import load_average
from benchmarks.recsys.fiited_sweep import FULL, QUICK, sweep_config

log = logging.getLogger(__name__)


def low_section(plan: dict) -> Section:
    """FIITED and hashing at the low budgets, every seed of the plan, paired with the full table."""
    from workbench.claims import TOLERANCES
    from workbench.recsys.fiited.claims import LOW_BUDGETS, LOW_METHODS, low_key
    from workbench.recsys.fiited.experiment import sweep

    tol = TOLERANCES["accuracy"].abs
    budgets = LOW_BUDGETS if plan is FULL else LOW_BUDGETS[:1]
    sw = sweep(sweep_config(plan), budgets=budgets, seeds=plan["seeds"], methods=LOW_METHODS)
    rows, claims = [], {}
    for m in LOW_METHODS:
        for i, b in enumerate(sw.budgets):
            a, d = sw.auc[m][i], sw.diff[m][i]
            share = sw.bytes[m][i] / sw.full_bytes
            ok = d.within(tol) and not sw.over_budget(m, i)
            claims[low_key(m, b)] = share if ok else math.nan
            rows.append(
                (m, f"{b:g}", f"{share:.4f}", f"{a[0]:.4f} ± {a[1]:.4f}", f"{d.mean:+.4f} ± {d.half_width:.4f}",
                 "yes" if ok else "no")
            )  # fmt: skip
    full = sw.auc["full"][0]
    table = Table(
        headers=("method", "budget", "bytes / full", "AUC (mean ± 95 % CI)", "AUC - full (paired)", "within tolerance"),
        rows=tuple(rows),
    )
    return Section(
        title="FIITED and hashing below 0.02 of the full table",
        intro=(
            f"{plan['rows']:,} rows, seeds {list(plan['seeds'])}, the data and network of the equal-memory sweep; "
            f"full table AUC {full[0]:.4f} ± {full[1]:.4f}. Tolerance: {tol:g} AUC (declared)."
        ),
        tables=(table,),
        notes=(f"Load average at the end of this section: {load_average()}.",),
        summary=(("FIITED at the lowest budget, AUC - full (paired)", f"{sw.diff['fiited'][0].mean:+.4f}"),),
        data={"rows": tuple(rows), "claims": claims if plan is FULL else {}},
    )


def run(*, quick: bool) -> list[Section]:
    """The low budgets (quick: one seed, one budget, tiny data; nothing recorded)."""
    import torch

    log.info("fiited low budgets (%s)", "quick" if quick else "full")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as fiited_sweep.run: a second thread mostly spins on shared cores
    try:
        return [low_section(QUICK if quick else FULL)]
    finally:
        torch.set_num_threads(threads)


if __name__ == "__main__":
    import sys

    for section in run(quick="--quick" in sys.argv):
        print(section.markdown(), end="\n\n")
