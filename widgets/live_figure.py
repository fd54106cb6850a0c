"""The live figure of every panel: a plain ``go.Figure`` drawn by plotly's own mime renderer inside an
``ipywidgets.Output`` (its :attr:`LiveFigure.view`), re-sent whole whenever it changes.

Panels mutate it as any figure (property assignments, ``batch_update()``, ``add_trace``, ...). plotly.py reports
every change to the figure's ``_send_*`` hooks (no-ops on a ``go.Figure``; once per ``batch_update()``); here
each report replaces the Output's one display item with the figure's current mime bundle
(``application/vnd.plotly.v1+json``), which JupyterLab's plotly renderer (jupyterlab-plotly), VS Code and
Colab draw with zoom and hover, and which a notebook file stores with the output.

Why not ``go.FigureWidget``: its comm opens before plotly fills the figure's traces and layout, which follow in
update messages that plotly's browser view reads only once, when it draws; under load in CI a view was drawn
before they arrived (a laid-out plot with no traces and no title, a different notebook each run, even with a
redraw-on-arrival repair), and each FigureWidget sends plotly's 5 MB browser module with its model. The Output
widget carries the whole figure in every message (its ``outputs``, set at construction and on each change), and
the browser module is JupyterLab's, loaded once.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import ipywidgets as W
import plotly.graph_objects as go
import plotly.io as pio

from widgets import layout

MIME = "application/vnd.plotly.v1+json"


def figure_bundle(fig: go.Figure) -> dict[str, Any]:
    """The mime bundle of ``fig`` (plotly's ``plotly_mimetype`` renderer: data, layout and config as JSON).

    Not with plotly.js' ``responsive`` config: its window-resize handler stays on a drawing the renderer has
    replaced (detached, zero width) and redraws it there (console errors ``attribute x: "Infinity"``); JupyterLab's
    renderer resizes the drawing it shows."""
    return pio.renderers["plotly_mimetype"].to_mimebundle(fig.to_dict())


def side_by_side(*figures: LiveFigure) -> W.HBox:
    """A row of live figures sharing its width equally, their titles wrapped to their share (without it the
    first figure drawn keeps plotly's 700 px default and pushes the next one out of the row)."""
    for fig in figures:
        fig.view.layout.flex = "1 1 0%"
        fig.view.layout.min_width = "0"
        fig._title_chars = layout.TITLE_CHARS // len(figures) - 2
        layout.fit(fig)
    return W.HBox([fig.view for fig in figures], layout=W.Layout(width="100%"))


class LiveFigure(go.Figure):
    """A ``go.Figure`` whose every change redraws its :attr:`view` (see the module docstring)."""

    def __init__(self, fig: go.Figure) -> None:
        super().__init__(fig)
        self._stale = False
        self._view = W.Output(layout=W.Layout(width="100%"))
        self._push()

    @property
    def view(self) -> W.Output:
        """The widget to place in a panel's layout."""
        return self._view

    @contextmanager
    def batch_update(self) -> Iterator[None]:
        """plotly's ``batch_update()``, then one redraw for what it did not report: trace additions, deletions
        and moves inside the batch (plotly reports them at once, while the batch is open) with no restyle or
        relayout after them."""
        with super().batch_update():
            yield
        if self._stale and not self._in_batch_mode:
            self._push()

    def _push(self) -> None:
        if getattr(self, "_view", None) is None:
            return
        if self._in_batch_mode:  # the batch's end redraws
            self._stale = True
            return
        self._stale = False
        bundle = figure_bundle(self)
        height = f"{self.layout.height or 360}px"  # the renderer's default; kept while it swaps the drawing
        if self._view.layout.min_height != height:
            self._view.layout.min_height = height
        self._view.outputs = ({"output_type": "display_data", "data": bundle, "metadata": {}},)

    def _changed(self, *args: Any, **kwargs: Any) -> None:
        self._push()

    # plotly.py calls these after it applied a change (BaseFigure: no-ops; FigureWidget: send to the browser)
    _send_addTraces_msg = _send_moveTraces_msg = _send_deleteTraces_msg = _changed
    _send_restyle_msg = _send_relayout_msg = _send_update_msg = _send_animate_msg = _changed
