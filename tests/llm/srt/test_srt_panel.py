"""The panel: builds live and static, every control redraws, a bad value shows in the status line; redraws only
read the study's caches (a setting not swept says so until its button runs it); the sweep is kept on disk.
Reference: the study's replay for the same settings."""

import pytest

pytestmark = pytest.mark.slow


def title(fig) -> str:
    return fig.layout.title.text.replace("<br>", " ")  # long titles are wrapped by the panel's layout


SMALL = dict(prompts=3, batch_prompts=3, steps=2, sft_steps=15, layers=1, hidden=32)


def test_panel_draws_the_study_view_shows_errors_and_computes_only_behind_its_buttons(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path))
    from widgets.llm.srt import RUN, TIME, SrtPanel
    from workbench.llm.srt import experiment, study

    study.clear_caches()
    panel = SrtPanel(static=False, **SMALL)  # the start setting is swept at build
    assert panel.error is None
    view = study.view(study.SrtViewConfig(**SMALL))
    assert list(panel.figures[2].data[0].y)[1] == pytest.approx(view["drafters"]["srt"][0])
    before = panel.figures[0].data[-1].x
    panel.controls["history"].value = 1
    assert panel.figures[0].data[-1].x != before
    at1 = experiment.replay(study.view_config(study.SrtViewConfig(**SMALL, history=1)), "srt")
    assert list(panel.figures[1].data[1].y) == at1.seq_forwards
    with pytest.raises(ValueError, match="temperature=-1 is out of range"):
        study.SrtViewConfig(temperature=-1.0)
    panel.status.value = ""
    assert not panel.set(temperature=0.5) and panel.error is None
    assert "<div" in SrtPanel(static=True, **SMALL).static_html()

    # a new setting is not computed by a redraw but by its button
    panel.set(temperature=1.0)
    trained = len(experiment._TRAJECTORIES)
    panel.controls["group"].value = 2  # a GRPO run not trained yet: drawn as "not run yet", nothing computed
    assert panel.error is None and len(experiment._TRAJECTORIES) == trained
    assert "not run yet" in title(panel.figures[0]) and RUN in panel.status.value
    assert list(panel.figures[0].data[0].y) == [] and list(panel.figures[3].data[0].y) == []
    panel.run_setting()
    assert len(experiment._TRAJECTORIES) == trained + 1
    assert panel.progress.value == panel.progress.max > 1
    vc = study.SrtViewConfig(**SMALL, group=2)
    assert list(panel.figures[0].data[1].y) == study.view(vc)["curve"]["srt"]
    assert "not run yet" not in title(panel.figures[0])
    # every history depth of the setting is ready: moving it reads only
    replays = experiment._replay.cache_info().currsize
    for h in (0, 3, 7, 8):
        panel.controls["history"].value = h
        assert panel.figures[0].data[-1].x == (h,) and len(panel.figures[1].data[1].y) > 0
    assert experiment._replay.cache_info().currsize == replays
    # the sweep is on disk: a fresh process (caches cleared) reads it back without training
    study.clear_caches()
    again = study.cached_view(vc)
    assert again is not None and again["curve"] == study.view(vc)["curve"] and not experiment._TRAJECTORIES
    # real rollouts behind the other button
    assert TIME in title(panel.figures[4]) and "not timed yet" in title(panel.figures[4])
    panel.run_wallclock()
    assert panel.progress.value == panel.progress.max == 5
    assert all(y > 0 for y in panel.figures[4].data[0].y) and "not timed" not in title(panel.figures[4])
    study.clear_caches()
