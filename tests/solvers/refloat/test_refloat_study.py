"""ReFloat study layer without any UI: the panel's view, its memoised solves, the sweep, per-block grids, the
paper comparison and the caches (reference: ``study.solve_format`` called directly on the same system, and
the per-entry block ids of the stored matrix).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from workbench.solvers.refloat import study
from workbench.solvers.refloat.config import FORMATS, RefloatConfig
from workbench.solvers.refloat.formats import make_format
from workbench.solvers.refloat.model import solve_timing


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_study_imports_no_ui():
    code = (
        "import sys, workbench.solvers.refloat.study, workbench.solvers.refloat.runner; "
        "print(sorted(m for m in ('ipywidgets', 'plotly') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("name", FORMATS)
def test_view_runs_are_the_direct_solves(shared_data, name):
    config = RefloatConfig(matrix="bcsstk02", f_v=16, max_iter=300)
    view = study.refloat_view(config)
    direct = study.solve_format(study.prepare("bcsstk02"), make_format(name, f_v=16), "cg", max_iter=300)
    run = view.runs[name]
    assert run.iterations == direct.iterations and run.converged == direct.converged
    assert np.array_equal(run.result.residuals, direct.result.residuals, equal_nan=True)
    assert run.timing.total_seconds == direct.timing.total_seconds
    expected = (view.runs["baseline"].timing.total_seconds / run.timing.total_seconds) if run.converged else None
    assert view.speedups[name] == expected
    assert view.focus is view.runs["refloat"] and view.stop_level == 1e-8


def test_artifact_solve_is_shared_across_widths_and_repriced(shared_data):
    a = study.run_format(RefloatConfig(matrix="bcsstk02", e_m=3, f_m=3), "refloat-artifact")
    b = study.run_format(RefloatConfig(matrix="bcsstk02", e_m=5, f_m=8), "refloat-artifact")
    assert a.result is b.result  # the artifact's numbers do not depend on the matrix widths
    assert b.timing == solve_timing(
        b.iterations, "cg", num_blocks=b.stored.num_blocks, bsize=128, e_m=5, f_m=8, e_v=3, f_v=8
    )
    assert a.timing != b.timing


def test_relative_stop_level_and_solver_choice(shared_data):
    config = RefloatConfig(matrix="mesh1e1", criterion="relative", rtol=1e-6)
    assert study.stop_level(config) == pytest.approx((1e-6 * np.sqrt(48)) ** 2, rel=1e-12)
    assert study.solver_for("west0067") == "bicgstab" and study.solver_for("wathen-3-3") == "cg"
    assert "wathen-10-10" in study.matrix_choices() and "bcsstk01" in study.matrix_choices()


def test_view_of_picks_the_solver(shared_data):
    view = study.view_of("west0067", max_iter=20)
    assert view.config.solver == "bicgstab" and set(view.runs) == set(FORMATS)
    assert view.density.sum() == study.prepare("west0067").A.nnz


def test_sweep_config_matches_sweep_bits(shared_data):
    config = RefloatConfig(matrix="mesh1e1", max_iter=100)
    calls = []
    sweep = study.sweep_config(config, e_values=(2, 3), f_values=(3, 8), on_cell=lambda: calls.append(1))
    ref = study.sweep_bits("mesh1e1", "cg", axis="matrix", e_values=(2, 3), f_values=(3, 8), max_iter=100)
    assert len(calls) == 4
    assert np.array_equal(sweep.iterations, ref.iterations)
    assert np.array_equal(sweep.seconds, ref.seconds, equal_nan=True)
    assert np.array_equal(sweep.true_residual, ref.true_residual, equal_nan=True)


def test_block_grids_against_the_entries(shared_data):
    stored = study.stored_matrix(study.prepare("LF10"), make_format("refloat", bsize=8))
    base, up, down = study.block_grids(stored)
    rows, cols = stored.block_shape
    assert base.shape == up.shape == down.shape == (rows, cols)
    A = stored.matrix
    r = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr)) // 8
    c = A.indices // 8
    for i, j in {(int(a), int(b)) for a, b in zip(r[:40], c[:40])}:
        mine = (r == i) & (c == j)
        assert up[i, j] == pytest.approx(stored.saturated_up[mine].mean())
        assert down[i, j] == pytest.approx(stored.saturated_down[mine].mean())
    assert np.isnan(base).sum() == rows * cols - stored.num_blocks


def test_summary_and_limits(shared_data):
    summaries = [study.summarise(name, max_iter=200) for name in ("mesh1e1", "bcsstk02")]
    for s in summaries:
        for label, run in s.runs.items():
            assert s.speedups[label] == study.speedup(run, s.runs["baseline"])
    mesh = summaries[0]
    assert mesh.wrong["refloat (3,3 / 3,8)"] and not mesh.wrong["float64"]
    assert mesh.runs["refloat-artifact (3,3 / 3,8)"].converged and not mesh.runs["refloat (3,3 / 3,8)"].converged
    assert mesh.speedups["refloat-artifact (3,3 / 3,8)"] > 1
    rows = study.summary_rows(summaries)
    assert len(rows) == 12 and {r["matrix"] for r in rows} == {"mesh1e1", "bcsstk02"}
    sweeps = study.sweep_axes(["mesh1e1"], e_values=(2, 11), f_values=(0, 52), max_iter=50)
    assert study.sweep_limits(sweeps) == {"mesh1e1": {"matrix": (11, [52]), "vector": (11, [52])}}
    assert study.sweep_limits({("mesh1e1", "vector"): sweeps["mesh1e1", "vector"]}) == {
        "mesh1e1": {"matrix": None, "vector": (11, [52])}
    }


def test_eigen_rows(shared_data):
    rows = study.eigen_rows([study.summarise("bcsstk02", max_iter=50)], max_n=100)
    ((name, lo, lo_q, up, down),) = rows
    assert name == "bcsstk02" and lo > 0 > lo_q  # the quantised bcsstk02 is indefinite (4.21 -> -38.1)
    assert lo == pytest.approx(4.21, abs=0.01) and lo_q == pytest.approx(-38.1, abs=0.1)


def test_caches_follow_the_data_directory_and_clear(shared_data, tmp_path, monkeypatch):
    first = study.prepare("mesh1e1")
    assert study.prepare("mesh1e1") is first
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path))  # a data folder without the matrices
    with pytest.raises(FileNotFoundError):
        study.prepare("mesh1e1")
    monkeypatch.setenv("WORKBENCH_DATA", str(shared_data))
    assert study.prepare("mesh1e1") is first
    study.clear_caches()
    again = study.prepare("mesh1e1")
    assert again is not first and np.array_equal(again.A.toarray(), first.A.toarray())


def test_a_stop_on_the_quantised_matrix_is_not_convergence(shared_data):
    """Issue 11: mesh1e1 at ReFloat (3,3 / 3,8) stops in 12 iterations on the stored matrix with
    ||b - A x||^2 = 0.117 for the original A; the study and its sweeps call that not converged."""
    s = study.summarise("mesh1e1", max_iter=200)
    run = s.runs["refloat (3,3 / 3,8)"]
    assert run.stopped_on_quantised and not run.converged and run.wrong_solution
    assert run.status == "wrong_solution" and run.result.status == "converged"
    assert run.true_residual == pytest.approx(0.1165, abs=1e-3) and run.stored_residual <= 1e-8
    assert s.speedups["refloat (3,3 / 3,8)"] is None and s.wrong["refloat (3,3 / 3,8)"]
    assert s.runs["float64"].converged and not s.runs["float64"].wrong_solution
    sweep = study.sweep_bits("mesh1e1", "cg", axis="vector", e_values=(11,), f_values=(52,), max_iter=50)
    assert sweep.iterations[0, 0] == 12 and not sweep.converged[0, 0] and sweep.wrong()[0, 0]
    assert np.isnan(sweep.seconds[0, 0])  # no time to solution without a solution
    view = study.refloat_view(RefloatConfig(matrix="mesh1e1"))
    assert view.runs["refloat"].status == "wrong_solution" and view.speedups["refloat"] is None
