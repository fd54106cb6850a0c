"""A notebook's live panel in JupyterLab: run all cells in headless Chromium, then move a slider.

Reference: ``shared/notes/browser-testing.md`` (ArrowRight on ``.widget-slider .noUi-handle`` runs the
Python observer; the new trace data reaches ``gd.data`` of the ``.js-plotly-plot``). The fixture notebook
checks the harness itself; the real notebooks are driven by ``test_notebooks_in_lab.py``.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from browser_helpers import (
    NotebookFailed,
    drive_notebook,
    figure_reports,
    open_notebook,
    run_all_cells,
    screenshot,
    shut_down_kernels,
    wait_for_run_all_done,
)
from fixture_notebook import write_fixture_notebook

pytestmark = pytest.mark.browser

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURE = "_browser_fixture/slider_fixture.ipynb"  # written into the server's root by the test

# every technique's notebook is driven by test_notebooks_in_lab.py (through the registry); here, the harness
CASES = [pytest.param(FIXTURE, 60.0, id="fixture")]


@pytest.fixture(autouse=True)
def _shut_down_kernels_after(jupyter_lab):
    """Each test's kernels end with it (the session's server outlives the test)."""
    yield
    for session in jupyter_lab.api("api/sessions"):
        shut_down_kernels(jupyter_lab, session["path"])


@pytest.mark.parametrize(("notebook", "plot_timeout_s"), CASES)
def test_slider_redraws_plot_without_errors(page, jupyter_lab, tmp_path, notebook, plot_timeout_s):
    if notebook == FIXTURE:
        write_fixture_notebook(jupyter_lab.root / FIXTURE)

    run = drive_notebook(page, jupyter_lab, notebook, plot_timeout_s=plot_timeout_s)
    shot = screenshot(page, tmp_path / f"{Path(notebook).stem}.png")

    print(f"\n[{notebook}] plots: {run.plots_before}")
    print(
        f"[{notebook}] slider {run.slider and run.slider['label']!r}: {run.key} "
        f"{run.slider and run.slider['now']} -> {run.slider and run.slider['after']['now']}; "
        f"plot data changed: {run.changed}; slider-to-redraw latency: "
        f"{'n/a' if run.latency_ms is None else f'{run.latency_ms:.0f} ms'}"
    )
    print(f"[{notebook}] timings (s): " + ", ".join(f"{k}={v:.1f}" for k, v in run.timings_s.items()))
    if run.console_errors:
        print(f"[{notebook}] browser console errors (not asserted): {run.console_errors[:5]}")
    print(f"[{notebook}] screenshot: {shot}")

    assert any(p["traces"] > 0 and p["svg"] for p in run.plots_before), run.plots_before
    assert run.changed, (
        f"no plot's data changed within 20 s of {run.key} on slider {run.slider}: "
        "the observer did not run, or did not redraw"
    )
    assert run.data_after != run.data_before
    assert not run.errors, "\n".join(run.errors)


# ---- the harness reports what it should (broken variants of the fixture) ---------------------------------


def test_harness_reports_a_failing_cell(page, jupyter_lab):
    notebook = "_browser_fixture/failing_cell.ipynb"
    write_fixture_notebook(jupyter_lab.root / notebook, failing_cell=True)
    with pytest.raises(NotebookFailed, match="RuntimeError: fixture failure"):
        drive_notebook(page, jupyter_lab, notebook, plot_timeout_s=60.0)


def test_harness_reports_a_slider_that_does_not_redraw(page, jupyter_lab):
    notebook = "_browser_fixture/no_redraw.ipynb"
    write_fixture_notebook(jupyter_lab.root / notebook, redraw=False)
    run = drive_notebook(page, jupyter_lab, notebook, plot_timeout_s=60.0, change_timeout_s=3.0)
    assert not run.changed and run.latency_ms is None
    assert run.slider["after"]["now"] != run.slider["now"], "the slider itself should have moved"


LATE_CHANGE = "_browser_fixture/late_change.ipynb"


def test_a_live_figure_changed_after_it_was_drawn_shows_the_change(page, jupyter_lab):
    """``widgets/live_figure.py``: a panel's figure is drawn by plotly's mime renderer inside an ``Output``; a
    change seconds after it was drawn (plain lists on one figure, a numpy array, plotly's binary wire format,
    and a new title on the other) must replace the drawing."""
    import nbformat

    cells = [
        "import numpy as np, plotly.graph_objects as go\n"
        "from widgets.live_figure import LiveFigure\n"
        "f = LiveFigure(go.Figure(go.Scatter(y=[1, 2]), layout=dict(title='before')))\n"
        "g = LiveFigure(go.Figure(go.Scatter(y=[1, 2]), layout=dict(title='before')))\n"
        "display(f.view, g.view)",
        "import time\ntime.sleep(3)\n"
        "with f.batch_update():\n"
        "    f.data[0].y = [1, 2, 3, 4, 5]\n"
        "    f.layout.title.text = 'after'\n"
        "g.data[0].y = np.arange(7.0)",
    ]
    path = jupyter_lab.root / LATE_CHANGE
    path.parent.mkdir(parents=True, exist_ok=True)
    kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(
        nbformat.v4.new_notebook(
            cells=[nbformat.v4.new_code_cell(c) for c in cells], metadata={"kernelspec": kernelspec}
        ),
        path,
    )
    errors: list[str] = []

    def on_error(e) -> None:
        errors.append(str(e))

    page.on("pageerror", on_error)
    try:
        open_notebook(page, jupyter_lab, LATE_CHANGE)
        run_all_cells(page, LATE_CHANGE)
        wait_for_run_all_done(page, LATE_CHANGE, timeout_s=60.0)
        deadline = time.monotonic() + 15.0
        while True:
            figures = figure_reports(page)
            got = [(f["points"], f["title"]) for f in figures]
            if got == [(5, "after"), (7, "before")] or time.monotonic() > deadline:
                break
            page.wait_for_timeout(250)
    finally:
        page.remove_listener("pageerror", on_error)  # the page is shared by later tests
    assert got == [(5, "after"), (7, "before")], got
    assert not errors, errors
