"""Panel base behaviour: errors show in the status line, figures keep their last good state, one redraw per set()."""

import plotly.graph_objects as go
import pytest

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


class Heavy(Squares):
    """Squares with a heavy job behind an :class:`~widgets.base.Action` (the job's result is drawn by redraw)."""

    def __init__(self, **values):
        super().__init__(**values)
        self.ran = []
        self.action = base.Action(self, "Run", self._job, total=3, label="steps")

    def _job(self, progress, fail=None, stop_at=None):
        for i in range(1, 4):
            if i == stop_at:
                self.action.cancel()  # as the Cancel button would, mid-run
            progress(i, label=f"step {i}")
            if fail is not None and i == 2:
                raise fail
        self.ran.append(self.values()["gpus"])
        return "done"


def test_error_line_is_escaped_and_names_unexpected_kinds():
    assert base.error_line("a < b & c") == '<span style="color:#b00020">&#9888; a &lt; b &amp; c</span>'
    assert "KeyError: &#x27;x&#x27;" in base.error_line(KeyError("x"))
    assert "ValueError" not in base.error_line(ValueError("gpus=13 is unlucky"))


def test_action_runs_with_progress_and_redraws():
    panel = Heavy(gpus=4)
    widget = panel.action.widget()
    assert list(widget.children) == [panel.action.button, panel.action.cancel_button, panel.action.progress,
                                     panel.action.stage]  # fmt: skip
    assert panel.action.run() == "done" and panel.ran == [4]
    assert panel.action.progress.value == panel.action.progress.max == 3 and "step 3" in panel.action.stage.value
    assert not panel.action.running and not panel.action.button.disabled and panel.action.cancel_button.disabled


def test_action_error_shows_escaped_in_place_and_keeps_the_figures():
    panel = Heavy(gpus=4)
    before = list(panel.figures[0].data[0].x)
    panel.controls["gpus"].value = 5  # drawn
    with pytest.raises(ValueError):
        panel.action.run(fail=ValueError("<b>bad</b> setting"))
    assert "&lt;b&gt;bad&lt;/b&gt; setting" in panel.status.value and panel.error == "<b>bad</b> setting"
    assert len(panel.figures[0].data[0].x) == 5 and before == [0, 1, 2, 3] and panel.ran == []
    panel.action.click()  # the button: shown, not raised
    assert panel.ran == [5] and panel.error is None
    panel.action.job = lambda progress: 1 / 0
    panel.action.click()
    assert "ZeroDivisionError: division by zero" in panel.status.value and len(panel.figures[0].data[0].x) == 5


def test_action_cancel_stops_at_the_next_progress_report():
    panel = Heavy(gpus=4)
    with pytest.raises(base.Cancelled):
        panel.action.run(stop_at=2)
    assert "cancelled" in panel.status.value and panel.ran == [] and panel.action.progress.value == 1
    assert panel.action.try_run() == "done" and panel.ran == [4]  # a new run starts uncancelled


def test_action_in_a_thread_can_be_cancelled_from_the_button():
    import threading

    panel = Heavy(gpus=4)
    started, release = threading.Event(), threading.Event()

    def slow(progress):
        started.set()
        release.wait(5)
        progress(1)  # the cancellation point
        panel.ran.append("finished")

    panel.action.job = slow
    panel.action.background = True
    panel.action.button.click()
    assert started.wait(5) and panel.action.running and panel.action.button.disabled
    panel.action.button.click()  # a second click while running starts nothing
    panel.action.cancel_button.click()
    release.set()
    panel.action.thread.join(5)
    assert not panel.action.running and panel.ran == [] and "cancelled" in panel.status.value


def test_shared_action_row_and_static_panel():
    panel = Heavy(static=True, gpus=2)
    other = base.Action(panel, "Other", lambda progress: progress(2, 2), share=panel.action)
    assert other.progress is panel.action.progress and other.cancel_button is panel.action.cancel_button
    other.run()
    assert panel.action.progress.value == 2 and "<div" in panel.static_html()


def test_action_refuses_a_run_over_the_available_memory_with_the_cli_line(monkeypatch):
    """Sized before it starts (#29): the panel's technique and values give the estimate; over the available
    memory the Action shows the CLI's one line in place and the job never runs."""
    import workbench.memory as memory
    from workbench.cli import run_sized

    panel = Heavy(gpus=4)
    config = MeshAttentionConfig.from_dict(panel.values())
    monkeypatch.setattr(memory, "available_bytes", lambda: 1000)
    with pytest.raises(ValueError) as cli:
        run_sized("mesh-attention", config)
    with pytest.raises(ValueError) as refused:
        panel.action.run()
    line = str(cli.value)
    assert str(refused.value) == line and "\n" not in line and "is available" in line
    assert panel.ran == [] and panel.action.progress.value == 0
    assert panel.status.value == base.error_line(line)
    panel.status.value = ""
    panel.action.click()  # the button: the same refusal, shown only
    assert panel.ran == [] and panel.status.value == base.error_line(line) and not panel.action.running


def test_action_estimated_over_two_seconds_shows_the_progress_bar():
    panel = Heavy(gpus=2)
    slow = base.Action(panel, "Slow", panel._job, estimate=lambda: base.Estimate(1e6, 30.0))
    assert slow.size() == base.Estimate(1e6, 30.0)
    assert slow.progress.layout.visibility == "visible" and "estimated ~30 s" in slow.stage.value
    assert slow.run() == "done" and "step 3" in slow.stage.value  # the job's stages then replace it
    fast = base.Action(panel, "Fast", panel._job, estimate=lambda: base.Estimate(1e6, 0.1))
    assert fast.size() == base.Estimate(1e6, 0.1) and fast.stage.value == ""


def test_action_without_an_estimate_runs_unsized(monkeypatch):
    import workbench.memory as memory

    monkeypatch.setattr(memory, "available_bytes", lambda: 1000)
    panel = Heavy(gpus=3)
    free = base.Action(panel, "Free", panel._job, estimate=lambda: None)
    assert free.run() == "done" and panel.ran == [3]
