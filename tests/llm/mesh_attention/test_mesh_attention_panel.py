"""Mesh-Attention panel driven by setting control values (reference: the model it draws, called directly)."""

import numpy as np
import plotly.graph_objects as go
import pytest

from widgets.live_figure import LiveFigure
from widgets.llm.mesh_attention import MeshAttentionPanel, check_figure, headline_figure
from workbench.llm.mesh_attention.config import MeshAttentionConfig
from workbench.llm.mesh_attention.runner import model_results


def snapshot(panel):
    return [
        [
            (
                np.asarray(t.x, dtype=object).tolist() if t.x is not None else None,
                np.asarray(t.y, dtype=object).tolist() if t.y is not None else None,
                np.asarray(t.z, dtype=object).tolist() if getattr(t, "z", None) is not None else None,
            )
            for t in fig.data
        ]
        for fig in panel.figures
    ]


@pytest.fixture(scope="module")
def panel():
    return MeshAttentionPanel(gpus=16, seq=65536)


def test_panel_builds_live_figures_with_data(panel):
    assert all(isinstance(f, LiveFigure) for f in panel.figures)
    assert panel.error is None
    comm = panel.figures[0]
    assert {t.name for t in comm.data} == {"ring", "ulysses", "usp", "startrail", "mesh", "node_mesh", "chosen P"}
    assert all(len(t.x) > 3 for t in comm.data)


@pytest.mark.parametrize(
    "name, value",
    [
        ("gpus", 64),
        ("seq", 262144),
        ("heads", 16),
        ("head_dim", 64),
        ("cluster.gpus_per_node", 4),
        ("cluster.intra_node_bw_gbps", 900.0),
        ("cluster.inter_node_bw_gbps", 3.125),
        ("causal", False),
        ("tile_a", 2),
    ],
)
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_every_control_changes_figure_data(panel, name, value):
    before = snapshot(panel)
    panel.controls[name].value = value
    assert panel.error is None, panel.error
    assert snapshot(panel) != before, f"moving {name} did not change any figure"


def test_bars_equal_the_model_at_the_chosen_point():
    panel = MeshAttentionPanel(gpus=256, seq=1_048_576)
    values = {**panel.values(), "mode": "model"}
    expected = {r.method: r.to_json() for r in model_results(MeshAttentionConfig.from_dict(values))}
    time_fig = panel.figures[1]
    methods = list(time_fig.data[0].x)
    for i, m in enumerate(methods):
        if "error" in expected[m]:
            assert time_fig.data[0].y[i] is None
        else:
            total = time_fig.data[0].y[i] + time_fig.data[1].y[i]
            assert total == pytest.approx(expected[m]["model_seconds"], rel=1e-12)
    assert "ulysses: heads=32 is not divisible" in panel.status.value  # shown in the panel, not raised


def test_tile_options_follow_gpus_and_heatmap_shows_tiles():
    panel = MeshAttentionPanel(gpus=16, seq=65536)
    panel.controls["gpus"].value = 12
    assert tuple(panel.controls["tile_a"].options) == (0, 1, 2, 3, 4, 6, 12)
    panel.controls["tile_a"].value = 3
    ranks = np.asarray(panel.figures[3].data[1].customdata)
    assert ranks.shape == (12, 12)
    assert "3 x 4 tiles" in panel.figures[3].layout.annotations[1].text
    # grouped by tile, every rank's blocks form one 3 x 4 rectangle, and each rank owns exactly one
    tiles = ranks.reshape(4, 3, 3, 4).transpose(0, 2, 1, 3).reshape(12, 12)
    assert all(len(set(row)) == 1 for row in tiles)
    assert sorted(tiles[:, 0]) == list(range(12))


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_static_mode_returns_plain_figures_with_slider_frames():
    panel = MeshAttentionPanel(static=True, gpus=16, seq=65536)
    figures = panel.static_figures()
    assert all(type(f) is go.Figure for f in figures)
    assert all(len(f.frames) == 5 and f.layout.sliders for f in figures)
    html = panel.static_html()
    assert "Plotly.newPlot" in html and "cdn.plot.ly" not in html


def test_bad_panel_parameter_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown panel parameter"):
        MeshAttentionPanel(gpu=4)
    with pytest.raises(ValueError, match="gpus=2000 is out of range: valid range is 1..1024"):
        MeshAttentionPanel(gpus=2000)


def test_notebook_figures_build():
    result = {
        "gpus": 2,
        "results": [
            {"method": "ring", "bytes_per_rank": [10, 10], "model_bytes_per_rank": [10, 10]},
            {"method": "ulysses", "error": "heads"},
        ],
    }
    fig = check_figure(result)
    assert len(fig.data) == 1 and "max |counted - model| = 0 B" in fig.layout.title.text
    base = MeshAttentionConfig(mode="model", gpus=64, seq=65536, heads=32, head_dim=128, dtype="bfloat16")
    fig = headline_figure(base, gpus_list=(16, 64), seq_list=(65536, 131072))
    assert len(fig.data) == 8  # 4 other methods x 2 axes
