"""The panels' FigureWidget never sends plotly.py's ``Undefined`` placeholder to the browser.

Reference: plotly.py's restyle convention (a list value is cycled over the trace indexes; ``None`` unsets)
and the browser failure it avoids (``widgets/figure_widget.py``'s docstring: a batched update that edits
``marker`` on some traces only left ``marker: undefined`` in the widget model's data, and the next view
failed in ``Plotly.newPlot``). The browser half is ``tests/browser/test_notebooks_in_lab.py``.
"""

import plotly.graph_objects as go
from plotly.basedatatypes import Undefined

from widgets.figure_widget import FigureWidget, fill_undefined


def _updates(fig):
    sent = []
    fig.observe(lambda change: sent.append(change["new"]) if change["new"] else None, names="_py2js_update")
    return sent


def _has_undefined(value):
    if value is Undefined:
        return True
    if isinstance(value, dict):
        return any(_has_undefined(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_undefined(v) for v in value)
    return False


def test_batch_that_edits_marker_on_one_trace_sends_current_values_for_the_others():
    fig = FigureWidget(
        go.Figure(
            [
                go.Scatter(x=[0, 1], y=[0, 1], mode="lines"),
                go.Scatter(x=[0, 1], y=[1, 0], mode="markers", marker=dict(color="green")),
                go.Scatter(x=[0, 1], y=[1, 1], mode="markers"),
            ]
        )
    )
    sent = _updates(fig)
    with fig.batch_update():
        fig.data[0].x = [0, 2]
        fig.data[1].x = [0, 3]
        fig.data[2].marker = dict(color="red")
    assert len(sent) == 1 and not _has_undefined(sent[0]["style_data"])
    style, traces = sent[0]["style_data"], sent[0]["style_traces"]
    by_trace = {t: {k: v[i % len(v)] for k, v in style.items()} for i, t in enumerate(traces)}
    assert by_trace[2]["marker"] == {"color": "red"}
    assert by_trace[0]["marker"] is None  # absent: None unsets, a no-op in the browser
    assert by_trace[1]["marker"] == {"color": "green"}  # present: re-sent unchanged, never dropped
    assert by_trace[2]["x"] == (0, 1) or list(by_trace[2]["x"]) == [0, 1]


def test_fill_undefined_keeps_plain_values_and_cycles_lists():
    data = [{"marker": {"line": {"width": 2}}}, {}]
    assert fill_undefined({"opacity": 0.5}, [0, 1], data) == {"opacity": 0.5}
    out = fill_undefined({"marker.line.width": [Undefined, 3]}, [0, 1], data)
    assert out == {"marker.line.width": [2, 3]}


def test_a_panel_redraw_sends_no_undefined():
    from widgets.graphs.dwarvesgraph import DwarvesGraphPanel

    panel = DwarvesGraphPanel(graph="rmat-9-8", pattern="house", motifs=0)
    sent = [_updates(fig) for fig in panel.figures]
    panel.controls["pattern"].value = "diamond"  # house -> diamond: the shrinkage subplots empty out
    assert panel.error is None, panel.error
    messages = [m for per_fig in sent for m in per_fig]
    assert messages and not any(_has_undefined(m["style_data"]) for m in messages)


def test_a_view_that_drew_no_traces_gets_the_current_state_again():
    """``FigureWidget._resend_when_drawn_without_traces``: a view reporting fewer drawn traces than the figure has
    (its model never got the state) is sent the current traces and layout, edits after construction included;
    a view that drew them all is sent nothing."""
    fig = FigureWidget(go.Figure([go.Scatter(y=[1, 2]), go.Bar(y=[3])], layout=dict(title="t")))
    fig.data[0].y = [5, 6, 7]
    sent = []
    fig._send = lambda msg, buffers=None: sent.append(msg)
    fig._js2py_traceDeltas = {"trace_deltas": [{"uid": fig.data[0].uid}, {"uid": fig.data[1].uid}], "trace_edit_id": 0}
    assert not [m for m in sent if "_widget_data" in m.get("state", {})]
    fig._js2py_traceDeltas = {"trace_deltas": [], "trace_edit_id": 0}
    resent = [m["state"] for m in sent if "_widget_data" in m.get("state", {})]
    assert len(resent) == 1 and resent[0]["_widget_layout"]["title"]["text"] == "t"
    assert [list(t["y"]) for t in resent[0]["_widget_data"]] == [[5, 6, 7], [3]]
