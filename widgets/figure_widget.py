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
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
from plotly.basedatatypes import BaseFigure, Undefined


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


class FigureWidget(go.FigureWidget):
    """``go.FigureWidget`` whose update messages never contain ``Undefined`` (see the module docstring)."""

    def _send_update_msg(self, restyle_data, relayout_data, trace_indexes=None, source_view_id=None):
        traces = self._normalize_trace_indexes(trace_indexes)
        restyle_data = fill_undefined(restyle_data, traces, self._data)
        super()._send_update_msg(restyle_data, relayout_data, traces, source_view_id)
