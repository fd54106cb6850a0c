"""The Kudu panel, driven by setting control values.

Reference: the rows of ``workbench.graphs.kudu.study.strategy_sweep`` (what the bars must show), the model
``workbench.graphs.kudu.model.project_all`` called directly, and the single-process count.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from tests.conftest import require_shared_data
from widgets.graphs.kudu import KuduPanel
from widgets.layout import byte_unit
from widgets.live_figure import LiveFigure
from workbench.graphs.enumerate import count
from workbench.graphs.kudu.model import project_all
from workbench.graphs.kudu.study import measured_rows, pick
from workbench.graphs.loaders import load_graph
from workbench.graphs.patterns import parse_pattern


def snapshot(panel):
    def arr(v):
        return None if v is None else np.asarray(v, dtype=object).tolist()

    return [[(arr(t.x), arr(t.y)) for t in fig.data] for fig in panel.figures]


@pytest.fixture(scope="module")
def panel():
    require_shared_data()  # the default panel reads karate
    return KuduPanel()


def test_panel_builds_with_measured_data(panel) -> None:
    assert all(isinstance(f, LiveFigure) for f in panel.figures)
    assert panel.error is None
    rows = measured_rows(panel.config_of())
    expected = count(load_graph("karate").by_degree(), parse_pattern("4-cycle"), "edge").count
    assert {r["count"] for r in rows} == {expected}
    comm = panel.figures[0]
    chosen = pick(rows, panel.values()["chunk_size"])
    assert list(comm.data[0].x) == [r["label"] for r in chosen]
    scale, unit = byte_unit([r["bytes"] for r in chosen])  # bytes drawn in B/kB/MB/GB, the unit in the title
    assert list(comm.data[0].y) == [max(r["bytes"] / scale, 0.5 / scale) for r in chosen]
    assert list(comm.data[0].customdata) == [r["bytes"] for r in chosen]
    assert comm.layout.annotations[0].text == f"{unit} fetched (all ranks)"
    assert list(comm.data[1].y) == [max(r["messages"], 0.5) for r in chosen]
    assert "naive/hybrid bytes" in panel.status.value


@pytest.mark.parametrize(
    "name, value",
    [
        ("chunk_size", 256),
        ("strategy", "dfs"),
        ("model_edges", 1e9),
        ("model_machines", 32),
        ("cluster.inter_node_bw_gbps", 1.25),
        ("cluster.inter_node_latency_us", 100.0),
        ("cluster.host_memory_gb", 64.0),
    ],
)
def test_fast_controls_change_figure_data(panel, name, value) -> None:
    before = snapshot(panel) + [
        [(f.data[0].marker.line.width,) for f in panel.figures if f.data and hasattr(f.data[0], "marker")]
    ]
    panel.controls[name].value = value
    assert panel.error is None, panel.error
    after = snapshot(panel) + [
        [(f.data[0].marker.line.width,) for f in panel.figures if f.data and hasattr(f.data[0], "marker")]
    ]
    assert after != before, f"moving {name} did not change any figure"


def test_model_bars_equal_the_model(panel) -> None:
    v = panel.values()
    rows = measured_rows(panel.config_of())
    config = panel.config_of()
    expected = project_all(
        [r["measured"] for r in pick(rows, v["chunk_size"])], v["model_edges"], config.cluster, v["model_machines"]
    )
    model = panel.figures[3]
    assert list(model.data[0].x) == [p.strategy for p in expected]
    assert list(model.data[0].y) == pytest.approx([p.seconds for p in expected], rel=1e-12)
    assert "MODEL" in model.layout.title.text


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_new_setting_waits_for_measure_then_shows_it(shared_data) -> None:
    p = KuduPanel(workers=2, pattern="triangle")
    before = snapshot(p)
    p.controls["workers"].value = 3
    assert "not measured yet" in p.status.value and p.error is None
    assert snapshot(p) != before and not p.figures[0].data[0].x  # cleared, not stale
    p.measure()
    rows = measured_rows(p.config_of())
    assert {r["count"] for r in rows} == {45} and {r["workers"] for r in rows} == {3}
    assert len(p.figures[0].data[0].x) == 4 and "naive/hybrid bytes" in p.status.value


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_static_mode_has_slider_frames_over_chunk_sizes(shared_data) -> None:
    p = KuduPanel(static=True)
    figures = p.static_figures()
    assert all(type(f) is go.Figure for f in figures)
    assert all(len(f.frames) == 6 and f.layout.sliders for f in figures)
    html = p.static_html()
    assert "Plotly.newPlot" in html and "cdn.plot.ly" not in html


def test_bad_panel_parameter_is_a_clear_error(shared_data) -> None:
    with pytest.raises(ValueError, match="unknown panel parameter"):
        KuduPanel(processes=3, measure_now=False)
