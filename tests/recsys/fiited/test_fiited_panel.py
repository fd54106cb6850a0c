"""The panel: a cached sweep is drawn; the smallest budget draws (ids may drop to the default vectors, so no
one-chunk floor refuses it) and the schedule ends at the budget (reference: the study's view)."""

import pytest

from widgets.recsys.fiited import FiitedPanel
from workbench.recsys.fiited import experiment, study
from workbench.recsys.fiited.config import FiitedViewConfig

pytestmark = pytest.mark.slow


def test_the_smallest_budget_draws_and_the_schedule_ends_there():
    panel = FiitedPanel(static=False)
    panel.controls["budget_fraction"].value = 0.01
    assert panel.error is None
    assert abs(panel.figures[3].data[0].y[-1] - 0.01) < 1e-3  # served bytes / full table at the last step


def test_a_cached_sweep_is_drawn_with_the_budget_marker():
    view = FiitedViewConfig(rows=2000, interval=2)
    config = study.panel_config(view).replace(epochs=1)  # what is drawn is tested, not how well it trained
    result = experiment.sweep(config, budgets=(0.5, 0.9), seeds=(0,), methods=("fiited", "full"))
    study.remember_sweep(view, result)
    panel = FiitedPanel(static=False, rows=2000, interval=2)
    assert panel.error is None
    assert len(panel.figures[0].data[0].x) == 2 and len(panel.figures[1].data[0].x) > 0
    panel.controls["budget_fraction"].value = 0.9
    assert list(panel.figures[0].data[-1].x) == [0.9, 0.9]
    study.clear_caches()
