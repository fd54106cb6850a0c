"""Panel base behaviour: errors show in the status line, figures keep their last good state, one redraw per set()."""

import plotly.graph_objects as go

import widgets.base as base
from workbench.llm.mesh_attention.config import MeshAttentionConfig


class Squares(base.Panel):
    technique = "mesh-attention"  # borrows its config for control specs
    hidden = tuple(s.name for s in MeshAttentionConfig.specs() if s.name != "gpus")  # one control: gpus
    static_slider = ("gpus", (1, 2, 3))
    calls = 0

    def make_figures(self, values):
        return [go.Figure(go.Scatter(x=[], y=[]))]

    def compute(self, values):
        type(self).calls += 1
        if values["gpus"] == 13:
            raise ValueError("gpus=13 is unlucky: valid values avoid 13")
        return values["gpus"]

    def draw(self, figures, result, values):
        figures[0].data[0].x = list(range(result))
        figures[0].data[0].y = [i * i for i in range(result)]


def test_error_shows_in_status_and_keeps_last_figure():
    panel = Squares(gpus=4)
    panel.controls["gpus"].value = 13
    assert "gpus=13 is unlucky" in panel.status.value and panel.error
    assert list(panel.figures[0].data[0].x) == [0, 1, 2, 3]
    panel.controls["gpus"].value = 5
    assert panel.error is None and panel.status.value == "" and len(panel.figures[0].data[0].x) == 5


def test_set_redraws_once():
    panel = Squares(gpus=4)
    before = Squares.calls
    panel.set(gpus=6)
    assert Squares.calls == before + 1


def test_static_frames_cover_the_slider_values():
    panel = Squares(static=True, gpus=2)
    (fig,) = panel.static_figures()
    assert [f.name for f in fig.frames] == ["1", "2", "3"]
    assert fig.layout.sliders[0].active == 1
    assert list(fig.frames[2].data[0].y) == [0, 1, 4]


def test_export_env_selects_static(monkeypatch):
    monkeypatch.setenv(base.EXPORT_ENV, "1")
    assert Squares().static
    monkeypatch.delenv(base.EXPORT_ENV)
    assert not Squares().static


def test_show_gives_plotly_mime_bundle_live_and_html_in_a_report(monkeypatch):
    """A one-off figure is plotly's own mime type (no widget model whose state could arrive after the view is
    drawn: ``widgets/base.py``'s ``OneOffFigure``), and inline HTML in a report."""
    import numpy as np
    import plotly.graph_objects as go

    from widgets.base import OneOffFigure, show

    monkeypatch.delenv("WORKBENCH_EXPORT", raising=False)
    fig = go.Figure(go.Scatter(x=np.arange(4.0), y=np.array([1.0, 3.0, 2.0, 5.0])), layout=dict(title="one-off"))
    shown = show(fig, static=False)
    assert isinstance(shown, OneOffFigure)
    bundle = shown._repr_mimebundle_()
    spec = bundle["application/vnd.plotly.v1+json"]
    assert spec["layout"]["title"]["text"] == "one-off" and len(spec["data"]) == 1
    assert "one-off" in bundle["text/plain"]
    assert "application/vnd.jupyter.widget-view+json" not in bundle
    assert "<div" in show(fig, static=True).data
