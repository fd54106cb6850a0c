"""The live figure of every panel: plotly's ``go.FigureWidget`` whose batched updates never carry "undefined".

Why: ``fig.batch_update()`` sends one ``Plotly.update`` message for all edited traces. A key edited on some
traces only (``marker`` on the node trace, not on the edge trace) goes out as a per-trace list with
plotly.py's ``Undefined`` placeholder for the others, e.g. ``{"marker": [Undefined, {...}]}``. The browser's
*views* skip those entries, but the anywidget *model* of plotly 7 stores them in its copy of the data as
``marker: undefined`` (dropping the trace's real marker), and a view created later from that copy (every
panel: the figures are drawn before the panel is displayed) fails in ``Plotly.newPlot``'s ``cleanData``
with ``TypeError: Cannot use 'in' operator to search for 'line' in undefined``: an empty, zero-height plot.
``go.FigureWidget`` displayed on its own hides this (its ``_repr_mimebundle_`` resends the whole state),
inside a ``VBox`` it does not.

The fix: fill every placeholder with the trace's current value (the one Python holds after the update;
``None``, which plotly reads as "unset", where the trace has no such property). One message, one redraw
in the browser; the values re-sent are the unchanged properties of edited traces only.

Width: plotly's widget view draws in ``render`` before anywidget attaches it to the page, so plotly.js finds
no width and falls back to 700 px; its Lumino hooks that would resize it never run under anywidget. The
browser module of this class (``_esm``) is plotly's own, wrapped: after plotly's ``render`` it watches the
figure's element (a ``ResizeObserver``) and lets plotly.js resize the figure (its ``responsive`` handler)
whenever the element's width differs from the drawn one, so figures without a ``layout.width`` fill the
output area and follow it.

Late state: ``ipywidgets`` opens the comm before plotly fills ``_widget_data`` and ``_widget_layout``, so a new
figure's traces and layout reach the browser in update messages after the (empty) model; plotly's view reads
them once, when it draws, and ignores later changes of either (its ``do_data`` and ``do_layout`` are empty). On
a loaded machine a view was sometimes drawn before they arrived: a laid-out plot with no traces and no title
(seen in CI, a different notebook each run). The wrapper's ``render`` redraws (``Plotly.react``) whenever either
changes after the view is drawn. (Opening the comm with the whole state instead starts every figure's module
load at once, and anywidget's 2 s limit per model then fails under load.)
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import plotly.graph_objects as go
from plotly.basedatatypes import BaseFigure, Undefined
from traitlets import observe


def _current(trace: dict, key_path: str) -> Any:
    """The value at ``key_path`` ("marker.line.width", "text") in a trace's data dict; None when absent."""
    node: Any = trace
    for part in BaseFigure._str_to_dict_path(key_path):
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return None
    return node


def fill_undefined(restyle_data: dict[str, Any], traces: list[int], data: list[dict]) -> dict[str, Any]:
    """``restyle_data`` with every ``Undefined`` per-trace entry replaced by that trace's current value.

    ``restyle_data`` maps key paths to one value for all ``traces`` or a list cycled over them (plotly's
    restyle convention); ``data`` is the figure's trace dicts (``fig._data``)."""
    filled = {}
    for key, value in restyle_data.items():
        if isinstance(value, list) and any(v is Undefined for v in value):
            value = [
                _current(data[trace], key) if value[i % len(value)] is Undefined else value[i % len(value)]
                for i, trace in enumerate(traces)
            ]
        filled[key] = value
    return filled


#: The wrapper module: plotly's module is imported from a blob URL once per page (the import is kept on
#: ``globalThis`` under a hash of plotly's module, so every figure after the first reuses it instead of
#: evaluating its ~5 MB again), its default export (an anywidget ``{initialize, render}`` or a function returning
#: one) wrapped so that ``render`` also keeps the drawn width equal to the element's (plotly.js' own
#: ``responsive`` resize handler, which skips hidden figures) and redraws when the figure's whole state arrives
#: after the view was drawn (see the module docstring; ``fromJson`` reads plotly's wire format as plotly's own
#: deserializer does: typed arrays from ``{dtype, shape, value}``, ``"_undefined_"``). anywidget gives each
#: model 2 s to load its module ("[anywidget] Failed to initialize model." after that); one import per page
#: keeps each figure's load short.
_ESM_WRAPPER = """
const key = "__workbench_plotly_widget_%s";
globalThis[key] ??= (async () => {
  const url = URL.createObjectURL(new Blob([%s], { type: "text/javascript" }));
  try { return await import(url); } finally { URL.revokeObjectURL(url); }
})();
const plotly = await globalThis[key];

const TYPED = {
  int8: Int8Array, int16: Int16Array, int32: Int32Array, uint8: Uint8Array, uint8clamped: Uint8ClampedArray,
  uint16: Uint16Array, uint32: Uint32Array, float32: Float32Array, float64: Float64Array,
};
const fromJson = (v) => {
  if (Array.isArray(v)) return v.map(fromJson);
  if (v === "_undefined_") return undefined;
  if (v === null || typeof v !== "object" || ArrayBuffer.isView(v)) return v;
  if (("value" in v || "buffer" in v) && "dtype" in v && "shape" in v) {
    const view = "value" in v ? v.value : v.buffer;
    const Typed = TYPED[v.dtype];
    const bytes = view.buffer.slice(view.byteOffset, view.byteOffset + view.byteLength);
    return Typed ? new Typed(bytes) : v;
  }
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, fromJson(x)]));
};

export default () => {
  const base = typeof plotly.default === "function" ? plotly.default() : plotly.default;
  return {
    ...base,
    render(ctx) {
      const cleanup = base.render(ctx);
      const el = ctx.el;
      const model = ctx.model;
      let queued = false;
      const redraw = () => {
        queued = false;
        if (!el._fullLayout || !window.Plotly) return;  // not drawn yet: plotly's own render reads the state
        const layout = fromJson(model.get("_widget_layout"));
        if (!layout.height) layout.height = 360;  // as plotly's view does
        window.Plotly.react(el, fromJson(model.get("_widget_data")), layout, el._context);
      };
      const late = () => { if (!queued) { queued = true; requestAnimationFrame(redraw); } };
      model.on("change:_widget_data", late);
      model.on("change:_widget_layout", late);
      let pending = false;
      const fit = () => {
        pending = false;
        const full = el._fullLayout;
        const width = el.clientWidth;
        if (!full || !el._responsiveChartHandler || width <= 0) return;
        if ((el.layout || {}).width) return;  // a figure with a fixed width keeps it
        if (Math.abs(full.width - width) > 1) el._responsiveChartHandler();
      };
      const observer = new ResizeObserver(() => {
        if (!pending) { pending = true; requestAnimationFrame(fit); }
      });
      observer.observe(el);
      return () => {
        observer.disconnect();
        model.off("change:_widget_data", late);
        model.off("change:_widget_layout", late);
        if (typeof cleanup === "function") cleanup();
      };
    },
  };
};
"""


def _esm() -> str:
    """Plotly's widget module (the file ``go.FigureWidget._esm`` names) inside :data:`_ESM_WRAPPER`."""
    source = go.FigureWidget._esm
    text = source.read_text(encoding="utf-8") if hasattr(source, "read_text") else str(source)
    return _ESM_WRAPPER % (hashlib.sha256(text.encode()).hexdigest()[:16], json.dumps(text))


class FigureWidget(go.FigureWidget):
    """``go.FigureWidget`` whose update messages never contain ``Undefined`` and whose figures take the width of
    their output area (see the module docstring)."""

    _esm = _esm()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._config = {**self._config, "responsive": True}  # plotly.js installs the resize handler we call

    @observe("_js2py_traceDeltas")
    def _resend_when_drawn_without_traces(self, change: dict) -> None:
        """A view reports the traces it drew (plotly's ``_js2py_traceDeltas``, one delta per trace of the browser
        model's data) right after drawing. Fewer than the figure has means the model never got the state (CI:
        a panel's figure drawn with no traces and no title): send the current traces and layout again; the
        wrapper's ``render`` redraws on that change."""
        msg = change["new"]
        if msg and len(msg.get("trace_deltas", ())) < len(self.data):
            with self.hold_sync():  # one message with both, sent even when Python's copies did not change
                self._widget_data = copy.deepcopy(self._data)
                self._widget_layout = copy.deepcopy(self._layout_obj._props)
                self._states_to_send.update(("_widget_data", "_widget_layout"))

    def _send_update_msg(self, restyle_data, relayout_data, trace_indexes=None, source_view_id=None):
        traces = self._normalize_trace_indexes(trace_indexes)
        restyle_data = fill_undefined(restyle_data, traces, self._data)
        super()._send_update_msg(restyle_data, relayout_data, traces, source_view_id)
