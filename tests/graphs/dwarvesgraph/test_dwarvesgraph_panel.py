"""DwarvesGraph panel driven by setting control values (reference: the cost model and engines it draws,
called directly)."""

import plotly.graph_objects as go
import pytest

from widgets.graphs.dwarvesgraph import DwarvesGraphPanel, measured_figure, motif_figure, pattern_figure, scaling_figure
from widgets.live_figure import LiveFigure
from workbench.graphs.dwarvesgraph.study import plan_study
from workbench.graphs.loaders import load_graph
from workbench.graphs.miner import Miner
from workbench.graphs.patterns import parse_pattern


def snapshot(panel):
    return [
        [(tuple(t.x) if t.x is not None else None, tuple(t.y) if t.y is not None else None) for t in f.data]
        + [f.layout.title.text]
        for f in panel.figures
    ]


@pytest.fixture(scope="module")
def panel():
    return DwarvesGraphPanel(graph="rmat-9-8", pattern="house")


def test_panel_builds_figures_with_the_chosen_plan(panel):
    assert panel.error is None, panel.error
    assert all(isinstance(f, LiveFigure) for f in panel.figures)
    assert "chosen" in panel.status.value and len(panel.figures[1].data[0].x) > 1
    assert panel.figures[0].data[1].x is not None and len(panel.figures[0].data[1].x) == 5  # house has 5 vertices


@pytest.mark.parametrize(
    "name, value", [("pattern", "5-cycle"), ("pattern", "4-star"), ("induced", "vertex"), ("motifs", 3)]
)
def test_controls_change_the_figures_or_status(panel, name, value):
    before, status = snapshot(panel), panel.status.value
    panel.controls[name].value = value
    assert panel.error is None, panel.error
    assert snapshot(panel) != before or panel.status.value != status


def test_size_slider_and_graph_picker_drive_the_graph_spec(panel):
    panel.family.value = "synthetic: Erdos-Renyi"
    panel.size.value = 9
    assert panel.values()["graph"].startswith("er-512-")
    panel.family.value = "synthetic: grid"
    assert panel.values()["graph"].startswith("grid-")
    assert panel.error is None


def test_bad_pattern_shows_in_the_status_line(panel):
    panel.controls["pattern"].value = "0-1,2-3"
    assert panel.error and "not connected" in panel.status.value
    panel.controls["pattern"].value = "house"
    assert panel.error is None


def test_run_button_measures_and_fills_the_motif_chart():
    p = DwarvesGraphPanel(graph="rmat-8-8", pattern="tailed-triangle", motifs=4)
    out = p.run_measurements()
    assert "both engines agree" in p.status.value
    assert len(p.figures[3].data[0].x) == 6 and len(p.figures[1].data[1].x) >= 1
    expected = Miner(load_graph("rmat-8-8")).count(parse_pattern("tailed-triangle")).count
    assert out.count == expected and f"{expected:,}" in p.status.value


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_static_mode_has_pattern_frames():
    p = DwarvesGraphPanel(static=True, graph="rmat-8-8")
    figs = p.static_figures()
    assert all(type(f) is go.Figure for f in figs) and len(figs[1].frames) == 6
    assert "Plotly.newPlot" in p.static_html()


def test_figure_helpers():
    from workbench.graphs.generators import rmat

    rows = plan_study(rmat(8, 8, seed=0), parse_pattern("diamond"), top=3, sample=False)
    assert sum(r["chosen"] for r in rows) == 1
    assert len(measured_figure(rows, title="t").data) >= 3
    assert motif_figure([{"pattern": "a", "count": 3}], title="m").data[0].y == (3,)
    assert scaling_figure([{"edges": 10, "graph": "g", "enumerate_seconds": 1.0, "decompose_seconds": 0.1}], title="s")
    assert pattern_figure(parse_pattern("house"), None).data[1].text == ("0", "1", "2", "3", "4")


def test_plan_study_marks_the_clique_kernel_as_chosen_for_cliques() -> None:
    from workbench.graphs.generators import rmat

    rows = plan_study(rmat(8, 8, seed=0), parse_pattern("4-clique"), top=2, sample=False)
    chosen = [r for r in rows if r["chosen"]]
    assert len(chosen) == 1 and chosen[0]["kind"] == "clique"
    assert chosen[0]["measured_seconds"] > 0
