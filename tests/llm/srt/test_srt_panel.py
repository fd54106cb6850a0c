"""The panel: builds live and static, every control redraws, a bad value shows in the status line; its view comes
from study.view (memoised). Reference: the study's replay for the same settings."""

import pytest

pytestmark = pytest.mark.slow


def test_panel_draws_the_study_view_and_shows_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path))
    from widgets.llm.srt import SrtPanel
    from workbench.llm.srt import study

    small = dict(prompts=3, batch_prompts=3, steps=3, sft_steps=15, layers=1, hidden=32)
    study.clear_caches()
    panel = SrtPanel(static=False, **small)
    assert panel.error is None
    view = study.view(study.SrtViewConfig(**small))
    assert list(panel.figures[2].data[0].y)[1] == pytest.approx(view["drafters"]["srt"][0])
    before = panel.figures[0].data[-1].x
    panel.controls["history"].value = 1
    assert panel.figures[0].data[-1].x != before
    with pytest.raises(ValueError, match="temperature=-1 is out of range"):
        study.SrtViewConfig(temperature=-1.0)
    panel.status.value = ""
    assert not panel.set(temperature=0.5) and panel.error is None
    assert "<div" in SrtPanel(static=True, **small).static_html()
    study.clear_caches()
