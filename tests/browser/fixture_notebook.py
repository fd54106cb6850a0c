"""A small notebook shaped like a workbench one, for the browser tests to check themselves on.

Reference: ``shared/notes/browser-testing.md`` (a cell with an ``IntSlider`` whose observer mutates a
``LiveFigure`` in ``batch_update()``) and the "Export" section of ``shared/papers/README.md`` (static
figures with ``layout.sliders`` over frames when ``WORKBENCH_EXPORT=1``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat

_FIXTURE_PARAMETERS = "N_POINTS = 400\nFREQ = 3\n"

_FIXTURE_PANEL = """\
import numpy as np
import ipywidgets as W
import plotly.graph_objects as go
from IPython.display import HTML, display

from widgets.base import export_mode
from widgets.live_figure import LiveFigure

x = np.linspace(0.0, 1.0, N_POINTS)

def curve(freq):
    return np.sin(2 * np.pi * freq * x)

if export_mode():
    # static: plotly slider over precomputed frames, as Panel.static_figures does
    freqs = list(range(1, 7))
    fig = go.Figure(go.Scatter(x=x, y=curve(FREQ), name="sin"),
                    frames=[go.Frame(name=str(f), data=[go.Scatter(x=x, y=curve(f))]) for f in freqs])
    steps = [dict(method="animate", label=str(f),
                  args=[[str(f)], {"mode": "immediate", "frame": {"duration": 0, "redraw": True},
                                   "transition": {"duration": 0}}]) for f in freqs]
    fig.update_layout(title="fixture", sliders=[dict(active=freqs.index(FREQ), steps=steps)])
    # auto_play=False: to_html's default plays all frames on load, ending on the last one
    display(HTML(fig.to_html(full_html=False, include_plotlyjs=False, auto_play=False)))
else:
    slider = W.IntSlider(value=FREQ, min=1, max=6, description="freq", continuous_update=False)
    fig = LiveFigure(go.Figure(go.Scatter(x=x, y=curve(FREQ), name="sin"), layout=dict(title="fixture")))

    def on_change(change):
        if not REDRAW:
            return
        with fig.batch_update():
            fig.data[0].y = curve(change["new"])

    slider.observe(on_change, names="value")
    display(W.VBox([slider, fig.view]))
"""


def write_fixture_notebook(path: Path, *, redraw: bool = True, failing_cell: bool = False) -> Path:
    """Write a small notebook shaped like a workbench one: a ``parameters`` cell, smoke parameters in
    ``metadata.workbench.smoke``, and an IntSlider whose observer mutates a LiveFigure in
    ``batch_update()`` (a static plotly figure with slider frames when ``WORKBENCH_EXPORT=1``).

    ``redraw=False`` makes the observer do nothing and ``failing_cell=True`` appends a cell that raises:
    broken variants that check the harness reports what it should."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["workbench"] = {"smoke": {"N_POINTS": 200}}
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Browser-test fixture"),
        nbformat.v4.new_code_cell(_FIXTURE_PARAMETERS, metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell(f"REDRAW = {redraw!r}\n" + _FIXTURE_PANEL),
    ]
    if failing_cell:
        nb.cells.append(nbformat.v4.new_code_cell('raise RuntimeError("fixture failure")'))
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def smoke_parameters(notebook: Path) -> dict[str, Any]:
    """The notebook's small parameters (``metadata.workbench.smoke``), ``{}`` when it has none."""
    nb = nbformat.read(notebook, as_version=4)
    return dict(nb.metadata.get("workbench", {}).get("smoke", {}))
