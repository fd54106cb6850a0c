"""The live figure of every panel: a plain ``go.Figure`` drawn by plotly's own mime renderer inside an
``ipywidgets.Output`` (:attr:`LiveFigure.output`, in the box :attr:`LiveFigure.view`), re-sent whole whenever it
changes, or, in JupyterLab, redrawn in place by ``Plotly.react`` (below).

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

Redrawn in place where it can be: replacing the Output's item makes JupyterLab's renderer build a new drawing
(``Plotly.newPlot`` on a new element, then a ``Plotly.toImage`` PNG of it), 100-300 ms of the page's main thread
per figure on a loaded 2-core machine (measured: ``tests/browser``, ``time_slider_moves``). At the first control
change (:meth:`LiveFigure.redraw_in_place`) a hidden :class:`PlotlyReact` view (anywidget) joins the Output in
the box; it takes plotly.js from JupyterLab's plotly renderer (module federation,
``window._JUPYTERLAB["jupyterlab-plotly"]``) and, once it has found it and read back the kernel's answer to a
probe, says ``ready``; every later change goes to it as the figure's JSON, drawn by ``Plotly.react`` on the
drawing already in the page (plotly.js diffs it; no new element, no PNG). A frontend without JupyterLab's
renderer (VS Code, Colab, nbclient), or a model whose script did not load in anywidget's 2 s, never says
``ready`` and keeps the Output path. A view drawn again later (the notebook reopened on a live kernel) shows the
Output's last state, then its ``PlotlyReact`` view draws the latest figure over it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anywidget
import ipywidgets as W
import plotly.graph_objects as go
import plotly.io as pio
import traitlets

from widgets import layout

MIME = "application/vnd.plotly.v1+json"
#: the CSS class of a live figure's box (its Output and its PlotlyReact view): how the script finds its drawing
BOX_CLASS = "wb-live-figure"

# Plotly.react on the drawing in this view's box (see the module docstring). Redraws run one after another; one
# whose figure is no longer the model's latest is skipped (a fast drag draws only its last setting).
REACT_ESM = """
const MIME = "application/vnd.plotly.v1+json";
let plotly = null;

async function loadPlotly() {
  const lab = globalThis._JUPYTERLAB && globalThis._JUPYTERLAB["jupyterlab-plotly"];
  if (!lab) return null;
  const module = (await lab.get("./mimeExtension"))();
  const exported = module.default ?? module;
  const extension = Array.isArray(exported) ? exported[0] : exported;
  const renderer = extension.rendererFactory.createRenderer({ mimeType: MIME });
  const Renderer = renderer.constructor;
  renderer.dispose();
  if (!Renderer.Plotly && Renderer.loadingPlotly) await Renderer.loadingPlotly;  // the first drawing loads it
  return Renderer.Plotly || null;
}

function getPlotly() {
  if (plotly === null) plotly = loadPlotly().catch(() => null);
  return plotly;
}

function drawing(el) {
  const box = el.closest(".BOX_CLASS");
  const gd = box && box.querySelector(".js-plotly-plot");
  return gd && gd._fullLayout && gd.querySelector(".main-svg") ? gd : null;
}

export default {
  render({ model, el }) {
    let alive = true;
    const drawn = async () => {
      for (let i = 0; alive && i < 1200; i++) {  // up to 60 s for the renderer's first drawing
        const gd = drawing(el);
        if (gd) return gd;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return null;
    };
    let queued = 0;  // the last revision queued for drawing
    let chain = Promise.resolve();
    const redraw = () => {
      const revision = model.get("revision");
      if (!revision || revision === queued) return;
      queued = revision;
      chain = chain.then(async () => {
        if (model.get("revision") !== revision) return;  // a newer figure is queued behind
        const [Plotly, gd] = await Promise.all([getPlotly(), drawn()]);
        if (!Plotly || !gd || model.get("revision") !== revision) return;
        const copy = structuredClone(model.get("figure"));
        await Plotly.react(gd, copy.data, copy.layout, copy.config || {});
      }).catch((error) => console.warn("live figure: redraw failed", error));
    };
    // change events, and a poll: under load anywidget's 2 s initialisation timer fires ("Failed to initialize
    // model"), after which the view still renders and its model answers get/set but sends no change events
    model.on("change:revision", redraw);
    const poll = setInterval(redraw, 40);
    // ready once plotly.js is found and the kernel's answer to a probe reads back: a model that failed to
    // initialise reads stale state, and then the Output keeps drawing
    const probe = 1 + Math.floor(Math.random() * 1e9);
    let handshake = null;
    getPlotly().then((Plotly) => {
      if (!Plotly || !alive || model.get("ready")) return;
      model.set("probe", probe);
      model.save_changes();
      handshake = setInterval(() => {
        if (!alive || model.get("answer") !== probe) return;
        clearInterval(handshake);
        model.set("ready", true);
        model.save_changes();
      }, 40);
    });
    redraw();
    return () => {
      alive = false;
      clearInterval(poll);
      clearInterval(handshake);
      model.off("change:revision", redraw);
    };
  },
};
""".replace("BOX_CLASS", BOX_CLASS)


def figure_bundle(fig: go.Figure) -> dict[str, Any]:
    """The mime bundle of ``fig`` (plotly's ``plotly_mimetype`` renderer: data, layout and config as JSON).

    Not with plotly.js' ``responsive`` config: its window-resize handler stays on a drawing the renderer has
    replaced (detached, zero width) and redraws it there (console errors ``attribute x: "Infinity"``); JupyterLab's
    renderer resizes the drawing it shows."""
    return pio.renderers["plotly_mimetype"].to_mimebundle(fig.to_dict())


class PlotlyReact(anywidget.AnyWidget):
    """The hidden view that redraws a live figure's drawing in place (``Plotly.react``; see the module docstring).
    ``figure``: the latest figure (plotly's mime JSON: data, layout, config), ``revision``: its number (0: none
    yet); ``ready``: set by a view that found plotly.js and reads the kernel's state (``probe``/``answer``)."""

    _esm = REACT_ESM
    figure = traitlets.Dict().tag(sync=True)
    revision = traitlets.Int(0).tag(sync=True)
    ready = traitlets.Bool(False).tag(sync=True)
    probe = traitlets.Int(0).tag(sync=True)  # the handshake before ``ready``: the view's number, the kernel's answer
    answer = traitlets.Int(0).tag(sync=True)

    @traitlets.observe("probe")
    def _answer(self, change: dict) -> None:
        self.answer = change["new"]


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
        self._output = W.Output(layout=W.Layout(width="100%"))
        self._react: PlotlyReact | None = None  # made at the first change (see redraw_in_place)
        self._view = W.VBox([self._output], layout=W.Layout(width="100%"))  # the PlotlyReact joins at a change
        self._view.add_class(BOX_CLASS)
        self._push()

    @property
    def view(self) -> W.VBox:
        """The widget to place in a panel's layout (the Output and its hidden :class:`PlotlyReact`)."""
        return self._view

    @property
    def output(self) -> W.Output:
        """The Output that shows the figure's mime bundle (its first state, and every state where no
        :class:`PlotlyReact` view is ``ready``)."""
        return self._output

    @property
    def react(self) -> PlotlyReact | None:
        """The in-place redraw (see the module docstring); None until :meth:`redraw_in_place`."""
        return self._react

    def redraw_in_place(self) -> None:
        """Make the :class:`PlotlyReact` and put its view in the box (once), so that later changes can be drawn in
        place. Panels call it at the first control change, not at construction: the page is then drawing the
        notebook's first figures, and anywidget gives a new model 2 s to load its script."""
        if self._react is None:
            self._react = PlotlyReact(layout=W.Layout(display="none"))
            self._view.children = (self._output, self._react)

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
        if self._react is not None and self._react.ready:  # Plotly.react in the page; the Output keeps its state
            with self._react.hold_sync():
                self._react.figure = bundle[MIME]
                self._react.revision += 1
            return
        height = f"{self.layout.height or 360}px"  # the renderer's default; kept while it swaps the drawing
        if self._output.layout.min_height != height:
            self._output.layout.min_height = height
        self._output.outputs = ({"output_type": "display_data", "data": bundle, "metadata": {}},)

    def _changed(self, *args: Any, **kwargs: Any) -> None:
        self._push()

    # plotly.py calls these after it applied a change (BaseFigure: no-ops; FigureWidget: send to the browser)
    _send_addTraces_msg = _send_moveTraces_msg = _send_deleteTraces_msg = _changed
    _send_restyle_msg = _send_relayout_msg = _send_update_msg = _send_animate_msg = _changed
