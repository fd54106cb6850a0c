"""ReFloat panel driven by setting control values (reference: the solves it draws, run directly).

Every control must change some figure's data; the drawn residual histories and modelled times must be the
ones ``study.solve_format`` gives for the same values; errors go to the status line; the sweep button fills its
heatmap; static mode gives plain figures with slider frames.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from tests.conftest import require_shared_data
from widgets.live_figure import LiveFigure
from widgets.solvers.refloat import RefloatPanel
from widgets.solvers.refloat_figures import (
    block_figure,
    residual_figure,
    saturation_figure,
    sparsity_figure,
    sweep_figure,
)
from workbench.solvers.refloat.formats import make_format
from workbench.solvers.refloat.study import prepare, solve_format, stored_matrix, sweep_bits


def snapshot(panel):
    out = []
    for fig in panel.figures:
        for t in fig.data:
            out.append(
                tuple(
                    repr(np.asarray(getattr(t, k), dtype=object).tolist()) if getattr(t, k, None) is not None else None
                    for k in ("x", "y", "z")
                )
            )
    return out


@pytest.fixture(scope="module")
def panel(shared_data_module):
    return RefloatPanel(matrix="bcsstk02")


@pytest.fixture(scope="module")
def shared_data_module():
    return require_shared_data()


def test_panel_builds_live_figures(panel):
    assert all(isinstance(f, LiveFigure) for f in panel.figures)
    assert panel.error is None and "refloat (3,3 / 3,8)" in panel.status.value
    assert len(panel.figures[0].data[0].y) > 1


@pytest.mark.parametrize(
    "name, value",
    [
        ("e_m", 5),
        ("f_m", 8),
        ("e_v", 5),
        ("f_v", 16),
        ("bsize", 32),
        ("base", "median"),
        ("format", "baseline"),
        ("criterion", "relative"),
        ("precondition", "jacobi"),
        ("max_iter", 250),
        ("matrix", "mesh1e1"),
    ],
)
def test_every_control_changes_figure_data(panel, name, value):
    before = snapshot(panel)
    panel.controls[name].value = value
    assert panel.error is None, panel.error
    assert snapshot(panel) != before, f"moving {name} did not change any figure"


def test_drawn_numbers_are_the_direct_solves(shared_data_module):
    panel = RefloatPanel(matrix="bcsstk02", f_v=16, max_iter=500)
    problem = prepare("bcsstk02")
    for i, name in enumerate(("float64", "refloat", "refloat-artifact", "baseline")):
        run = solve_format(problem, make_format(name, f_v=16), "cg", max_iter=500)
        drawn = np.asarray(panel.figures[0].data[i].y, dtype=float)
        expected = np.where(np.isfinite(run.result.residuals), run.result.residuals, np.nan)
        assert np.array_equal(drawn, expected, equal_nan=True)
        assert panel.figures[1].data[0].y[i] == run.timing.total_seconds


def test_matrix_choice_sets_the_solver_and_errors_show_in_the_status(shared_data_module):
    panel = RefloatPanel(matrix="mesh1e1", max_iter=100)
    panel.controls["matrix"].value = "west0067"
    assert panel.controls["solver"].value == "bicgstab" and panel.error is None
    panel.controls["solver"].value = "cg"
    assert "needs a symmetric positive definite matrix" in panel.status.value
    panel.controls["solver"].value = "bicgstab"
    assert panel.error is None


def test_wrong_solution_is_not_shown_as_converged(shared_data_module):
    """Issue 11: the panel reads the same field as the CLI (mesh1e1, ReFloat (3,3 / 3,8): wrong solution)."""
    panel = RefloatPanel(matrix="mesh1e1")
    assert "wrong_solution" in panel.status.value and "0.12" in panel.status.value
    assert panel.figures[1].data[0].text[1] == "12 its (wrong x)"
    assert panel.figures[0].data[1].name.endswith("wrong_solution at 12")


def test_format_toggles_hide_traces(panel):
    panel.show_formats["baseline"].value = False
    assert panel.figures[0].data[3].visible == "legendonly"
    panel.show_formats["baseline"].value = True
    assert panel.figures[0].data[3].visible is True


def test_sweep_button_fills_the_heatmap(shared_data_module):
    panel = RefloatPanel(matrix="mesh1e1", max_iter=100)
    panel.run_button.click()
    z = np.asarray(panel.figures[4].data[0].z, dtype=float)
    assert z.shape == (6, 9) and panel.progress.value == 54
    assert panel.sweep is not None and (panel.sweep.iterations == 12).any()


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_static_mode_renders_plain_figures_with_frames(shared_data_module):
    panel = RefloatPanel(static=True, matrix="mesh1e1", max_iter=100)
    figures = panel.static_figures()
    assert all(type(f) is go.Figure for f in figures)
    assert len(figures[0].frames) == 5 and figures[0].layout.sliders
    assert np.asarray(figures[4].data[0].z, dtype=float).shape == (6, 9)  # the sweep ran at build time
    assert "Plotly.newPlot" in panel.static_html()


def test_notebook_figures_build(shared_data_module):
    problem = prepare("mesh1e1")
    run = solve_format(problem, make_format("refloat"), "cg")
    assert len(residual_figure({"refloat": run}).data) == 1
    assert len(block_figure(run.stored).data) == 2
    sat = saturation_figure(stored_matrix(prepare("LF10"), make_format("refloat")), max_points=10)
    up = stored_matrix(prepare("LF10"), make_format("refloat")).saturated_up.sum()
    assert f"saturated up: {up:,} entries" in sat.data[0].name and len(sat.data[0].x) <= 10
    counts = np.ones((4, 4))
    assert sparsity_figure(counts, np.linspace(0, 48, 5), bsize=16).layout.shapes
    sweep = sweep_bits(
        "mesh1e1", "cg", axis="vector", e_values=(2, 11), f_values=(0, 52), max_iter=50, fixed=(11, 52, 3, 8)
    )  # matrix kept exact: vectors at (11, 52) give float64
    text = sweep_figure(sweep).data[0].text
    assert sweep.iterations[1, 1] == 12 and text[1][1] == "12"
    wrong = sweep_bits("mesh1e1", "cg", axis="vector", e_values=(11,), f_values=(52,), max_iter=50)
    assert sweep_figure(wrong).data[0].text[0][0] == "12*"  # matrix at (3, 3): converges to a wrong x


def test_bad_panel_parameter():
    with pytest.raises(ValueError, match="unknown panel parameter"):
        RefloatPanel(e_x=3)
    with pytest.raises(ValueError, match=r"e_m=20 is out of range: valid range is 1..11"):
        RefloatPanel(e_m=20)
