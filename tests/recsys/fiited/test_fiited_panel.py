"""The panel: every control redraws under 100 ms from cached runs; a cached sweep is drawn; bad input shows in
the status line (reference: the study's view and the budget floor)."""

import pytest

from widgets.recsys.fiited import FiitedPanel
from workbench.recsys.fiited import study
from workbench.recsys.fiited.config import FiitedViewConfig

pytestmark = pytest.mark.slow


def test_bad_budget_shows_in_the_status_line():
    panel = FiitedPanel(static=False)
    panel.controls["budget_fraction"].value = 0.1
    assert "below one chunk per row" in panel.error and "budget_fraction=0.1" in panel.status.value


def test_a_cached_sweep_is_drawn_with_the_budget_marker():
    view = FiitedViewConfig(rows=2000, interval=2)
    result = study.sweep(study.panel_config(view), budgets=(0.5, 0.9), seeds=(0, 1), methods=("fiited", "full"))
    study.remember_sweep(view, result)
    panel = FiitedPanel(static=False, rows=2000, interval=2)
    assert panel.error is None
    assert len(panel.figures[0].data[0].x) == 2 and len(panel.figures[1].data[0].x) > 0
    panel.controls["budget_fraction"].value = 0.9
    assert list(panel.figures[0].data[-1].x) == [0.9, 0.9]
    study.clear_caches()
