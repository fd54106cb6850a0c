"""A panel's live figure (``widgets/live_figure.py``): its view always shows the figure's current state, from the
first message on, and one redraw goes out per ``batch_update()``."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from widgets import layout
from widgets.live_figure import BOX_CLASS, MIME, REACT_ESM, LiveFigure, figure_bundle, side_by_side


def shown(fig: LiveFigure) -> dict:
    (item,) = fig.output.outputs
    assert item["output_type"] == "display_data"
    return item["data"]


def make() -> LiveFigure:
    return LiveFigure(go.Figure([go.Scatter(y=[1, 2], name="a"), go.Bar(y=[3])], layout=dict(title="t")))


def test_the_first_state_of_the_view_is_the_whole_figure():
    """The Output's state at construction (what its comm opens with) already carries traces and layout."""
    fig = make()
    state = fig.output.get_state()
    (item,) = state["outputs"]
    assert item["data"] == figure_bundle(fig)
    assert [t["type"] for t in item["data"][MIME]["data"]] == ["scatter", "bar"]
    assert item["data"][MIME]["layout"]["title"]["text"] == "t"


@pytest.mark.parametrize(
    "change",
    [
        lambda f: setattr(f.data[0], "y", [5, 6, 7]),
        lambda f: setattr(f.layout.title, "text", "u"),
        lambda f: f.add_trace(go.Scatter(y=np.arange(5.0))),
        lambda f: setattr(f, "data", [f.data[1]]),
        lambda f: f.update_layout(height=300, xaxis_title="x"),
        lambda f: f.update_traces(marker_color="red", selector=dict(type="bar")),
    ],
    ids=["restyle", "relayout", "add-trace", "replace-data", "update-layout", "update-traces"],
)
def test_every_kind_of_change_redraws_the_current_figure(change):
    fig = make()
    before = shown(fig)
    change(fig)
    assert shown(fig) == figure_bundle(fig) != before


def test_one_redraw_per_batch(monkeypatch):
    fig = make()
    sent = []
    monkeypatch.setattr(fig.output, "send_state", lambda key=None: sent.append(key))
    with fig.batch_update():
        fig.data[0].y = [9, 9]
        fig.data[1].marker.color = "green"
        fig.layout.title.text = "new"
        assert sent == []  # nothing while the batch is open
    assert len(sent) == 1
    assert shown(fig)[MIME]["layout"]["title"]["text"] == "new"
    assert shown(fig)[MIME]["data"][1]["marker"]["color"] == "green"


def test_a_plain_copy_has_no_view():
    fig = make()
    copy = go.Figure(fig)
    assert type(copy) is go.Figure and copy.to_dict() == fig.to_dict()


def test_figures_side_by_side_share_the_row_and_wrap_their_titles_to_it():
    title = "Pruning schedule (gradual, warm-up 0.2, every 2 steps) to budget 0.5"  # one line at full width
    figs = [LiveFigure(layout.style(go.Figure(go.Scatter(y=[1, 2]), layout=dict(title=title)))) for _ in range(2)]
    assert "<br>" not in figs[0].layout.title.text
    row = side_by_side(*figs)
    assert list(row.children) == [f.view for f in figs]
    for fig in figs:
        assert fig.view.layout.flex == "1 1 0%" and fig.view.layout.min_width == "0"
        lines = fig.layout.title.text.split("<br>")
        assert len(lines) == 2 and max(map(len, lines)) <= layout.TITLE_CHARS // 2
        assert shown(fig)[MIME]["layout"]["title"]["text"] == fig.layout.title.text
        with fig.batch_update():  # a redraw keeps the narrower wrap
            fig.layout.title.text = title
            layout.fit(fig)
        assert fig.layout.title.text.count("<br>") == 1


def test_the_view_keeps_the_figure_height_while_the_drawing_is_swapped():
    fig = make()
    assert fig.output.layout.min_height == "360px"  # jupyterlab-plotly's default height
    fig.update_layout(height=520)
    assert fig.output.layout.min_height == "520px"


@pytest.mark.parametrize(
    "change",
    [
        lambda f: f.add_trace(go.Scatter(y=[4, 5])),
        lambda f: setattr(f, "data", []),
        lambda f: (setattr(f, "data", []), f.add_trace(go.Bar(y=[1]))),
    ],
    ids=["add-trace", "clear", "replace"],
)
def test_trace_changes_inside_a_batch_are_shown_once_it_ends(change, monkeypatch):
    """plotly reports added and deleted traces at once, even inside a batch; with no restyle or relayout after
    them nothing else would report the batch's end."""
    fig = make()
    sent = []
    monkeypatch.setattr(fig.output, "send_state", lambda key=None: sent.append(key))
    with fig.batch_update():
        change(fig)
    assert shown(fig) == figure_bundle(fig)
    assert sent.count("outputs") == 1


def test_the_in_place_redraw_joins_the_box_only_when_asked():
    """Panels ask at the first control change (anywidget gives a view 2 s to load, too short while the page draws
    the notebook's first figures)."""
    fig = make()
    assert list(fig.view.children) == [fig.output] and BOX_CLASS in fig.view._dom_classes
    assert fig.react is None  # no model yet: its 2 s load timer would run while the page draws
    fig.redraw_in_place()
    react = fig.react
    fig.redraw_in_place()
    assert fig.react is react and list(fig.view.children) == [fig.output, react]
    assert react.layout.display == "none" and react.revision == 0 and not react.ready


def test_the_kernel_answers_the_views_probe():
    """The handshake before ``ready``: a view whose model reads stale state never sees the answer."""
    fig = make()
    fig.redraw_in_place()
    fig.react.probe = 123456
    assert fig.react.answer == 123456


def test_a_ready_view_gets_every_later_change_in_place_and_the_output_keeps_its_state(monkeypatch):
    """Once a browser view found plotly.js (``ready``), changes go to Plotly.react as whole figures with a new
    revision, one message per batch; the Output (and its drawing) is left alone."""
    fig = make()
    first = shown(fig)
    fig.redraw_in_place()
    fig.react.ready = True
    sent = []
    monkeypatch.setattr(fig.react, "send_state", lambda key=None: sent.append(sorted(key) if key else key))
    monkeypatch.setattr(fig.output, "send_state", lambda key=None: sent.append(("output", key)))
    with fig.batch_update():
        fig.data[0].y = [7, 8]
        fig.layout.title.text = "in place"
    assert sent == [["figure", "revision"]]
    assert fig.react.figure == figure_bundle(fig)[MIME] and fig.react.revision == 1
    assert fig.react.figure["layout"]["title"]["text"] == "in place"
    assert shown(fig) == first
    fig.add_trace(go.Bar(y=[1]))
    assert fig.react.revision == 2 and len(fig.react.figure["data"]) == 3


def test_the_in_place_script_finds_its_drawing_in_its_own_box():
    """The script looks for the drawing inside the box of its own live figure (a panel holds several)."""
    assert f'el.closest(".{BOX_CLASS}")' in REACT_ESM and "BOX_CLASS" not in REACT_ESM
