"""The DawnPiper panel draws the study's view (reference: the study's own numbers) and shows bad settings in its
status line."""

from __future__ import annotations

import pytest

from widgets.llm.dawnpiper import DawnpiperPanel, check_figure, max_batch_figure
from workbench.llm.dawnpiper.config import DawnpiperConfig, DawnpiperViewConfig
from workbench.llm.dawnpiper.experiment import paper_point
from workbench.llm.dawnpiper.study import panel_view


def test_panel_draws_the_view_and_reports_bad_budgets() -> None:
    panel = DawnpiperPanel(static=True)
    view = panel_view(DawnpiperViewConfig())
    mem, it = panel.figures
    assert list(mem.data[4].y) == list(view.stage_peak_gb[4])  # DawnPiper's bars
    assert list(mem.data[5].y) == [view.budget_gb] * 2
    assert "fits the budget" in panel.status.value
    panel.set(model="gpt-13b")  # 13B needs 210 GB of state: 4 x 40 GB cannot hold it
    assert "memory_gb=40 is below what one micro-batch needs" in panel.status.value
    assert list(mem.data[4].y) == list(view.stage_peak_gb[4])  # figures keep their last good state


@pytest.mark.slow  # a paper-scale point: six max-batch searches
def test_figure_helpers() -> None:
    stages = [{"stage": 0, "measured_peak_bytes": 3, "model_peak_bytes": 3, "swapped_out_bytes": 1}]
    assert list(check_figure(stages).data[0].y) == [3]
    point = paper_point(DawnpiperConfig(mode="model", model="gpt-1.3b", stages=4, micro_batches=16, micro_batch=1))
    fig = max_batch_figure([point])
    assert fig.data[4].y[0] == point.max_batch["dawnpiper"]
