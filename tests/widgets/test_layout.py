"""The shared figure layout (``widgets/layout.py``): wrapping, byte units, margins, legends, log ticks.

Reference: plotly's layout attributes (``title``, ``legend.yref = "container"``, ``axis.dtick`` on log axes:
``1`` one label per decade, ``"D2"`` labels at 1, 2 and 5) and, for what the browser draws, the layout check
of ``tests/browser/test_notebooks_in_lab.py``.
"""

import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

from widgets import layout
from widgets.live_figure import LiveFigure


@pytest.mark.parametrize(
    ("text", "width", "expected"),
    [
        ("a b c", 3, "a b<br>c"),
        ("short", 90, "short"),
        ("one two<br>three four", 8, "one two<br>three<br>four"),
        ("<b>bold words</b> here", 10, "<b>bold words</b><br>here"),  # tags are not counted
        ("", 10, ""),
    ],
)
def test_wrap(text, width, expected):
    assert layout.wrap(text, width) == expected


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([3e8, 1.2e11], (1e9, "GB")),
        ([999.0], (1.0, "B")),
        ([1500.0, None], (1e3, "kB")),
        ([], (1.0, "B")),
        ([2e12], (1e12, "TB")),
        ([5e6], (1e6, "MB")),
    ],
)
def test_byte_unit(values, expected):
    assert layout.byte_unit(values) == expected


def test_style_sizes_to_the_container_and_moves_a_horizontal_legend_under_the_axis_title():
    fig = go.Figure(
        go.Scatter(x=[1, 2], y=[1, 2], name="a"),
        layout=dict(title="t", width=700, legend=dict(orientation="h", y=-0.3)),
    )
    layout.style(fig)
    assert fig.layout.width is None and fig.layout.autosize and fig.layout.height == layout.HEIGHT
    assert (fig.layout.legend.yref, fig.layout.legend.y, fig.layout.legend.yanchor) == ("container", 0, "bottom")
    assert fig.layout.margin.b == layout.AXIS_BOTTOM_PX + layout.LINE_PX + 10


def test_long_titles_wrap_and_the_top_margin_follows_title_and_subplot_titles():
    fig = make_subplots(rows=1, cols=2, subplot_titles=("left", "right " * 12))
    fig.update_layout(title="word " * 40, height=400)
    layout.style(fig)
    title_lines = fig.layout.title.text.count("<br>") + 1
    sub_lines = fig.layout.annotations[1].text.count("<br>") + 1
    assert title_lines == 3 and sub_lines == 2
    assert fig.layout.margin.t == layout.TITLE_TOP_PX + 3 * layout.LINE_PX + 8 + 2 * layout.LINE_PX + 6
    # anchored at its middle, in pixels from the top (plotly misplaces multi-line titles anchored at the top)
    assert fig.layout.title.yanchor == "middle"
    assert fig.layout.title.y == pytest.approx(1 - (layout.TITLE_TOP_PX + 1.5 * layout.LINE_PX) / 400, abs=1e-4)


def test_fit_inside_a_batch_sees_the_pending_title_and_data():
    fig = LiveFigure(
        layout.style(go.Figure(go.Scatter(x=[1, 2], y=[1, 2]), layout=dict(title="short", yaxis=dict(type="log"))))
    )
    with fig.batch_update():
        fig.layout.title.text = "word " * 30
        fig.data[0].y = [1e-3, 1e3]
        layout.fit(fig)
    assert "<br>" in fig.layout.title.text
    assert fig.layout.yaxis.dtick == 2  # six decades: every other one


@pytest.mark.parametrize(("ys", "dtick"), [([1, 2], None), ([1, 50], "D2"), ([1, 1e4], 1), ([1e-8, 1e2], 2)])
def test_log_axis_ticks_follow_the_data_span(ys, dtick):
    fig = layout.style(go.Figure(go.Scatter(x=[1, 2], y=ys), layout=dict(yaxis=dict(type="log"))))
    assert fig.layout.yaxis.dtick == dtick


def test_explicit_log_ticks_are_kept():
    fig = layout.style(
        go.Figure(go.Scatter(x=[1, 2], y=[1, 1e6]), layout=dict(yaxis=dict(type="log", tickvals=[1, 1e6])))
    )
    assert fig.layout.yaxis.dtick is None


def test_a_redraw_that_sets_the_same_long_title_again_keeps_it_wrapped():
    """plotly drops a batched edit back to the committed value and commits the earlier pending one: the second
    redraw of a long title (draw sets it unwrapped, fit wraps it to the committed text) must stay wrapped."""
    title = "word " * 30
    fig = LiveFigure(layout.style(go.Figure(go.Scatter(y=[1, 2]), layout=dict(title="short"))))
    for _ in range(3):
        with fig.batch_update():
            fig.layout.title.text = title
            layout.fit(fig)
        assert fig.layout.title.text == layout.wrap(title) != title
