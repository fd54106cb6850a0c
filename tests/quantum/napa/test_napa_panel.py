"""The NAPA panel draws ``study.panel_view`` (the ansatz's schedule is built in the study, not the panel) and its
Optimise button is the shared :class:`~widgets.base.Action`: an error shows escaped in the status line and the
figures keep their last good state."""

import numpy as np


def test_panel_draws_the_study_view_and_optimise_errors_keep_the_figures(monkeypatch):
    import widgets.quantum.napa as napa_panel
    from workbench.quantum.napa.config import NapaConfig
    from workbench.quantum.napa.study import panel_view

    panel = napa_panel.NapaPanel(static=False)
    assert panel.error is None, panel.error
    view = panel_view(NapaConfig.from_dict(panel.values()))
    sched = panel.figures[1]
    for k, channel in enumerate(napa_panel.CHANNELS):
        assert np.allclose(sched.data[k].y, view.envelope(channel))
        assert np.allclose(sched.data[k].x, view.times_ns)
    assert view.samples == len(view.times_ns) and view.duration_ns > 0
    assert any(env.max() > 0 for env in view.envelopes.values())
    assert list(panel.figures[0].data[0].x) == list(view.bond_lengths)

    def refuse(config, on_evaluation=None):
        on_evaluation(1, config.budget)
        raise ValueError("budget <too> small")

    monkeypatch.setattr(napa_panel, "vqe", refuse)
    before = [f.to_plotly_json() for f in panel.figures]
    panel.button.click()
    assert "budget &lt;too&gt; small" in panel.status.value and panel.error == "budget <too> small"
    assert [f.to_plotly_json() for f in panel.figures] == before
    assert not panel.action.running and not panel.button.disabled
