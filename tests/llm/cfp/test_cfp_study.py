"""Study views and the panel (references: the search run directly; the panel draws what the study returns)."""

from __future__ import annotations

import pytest

from widgets.llm.cfp import CfpPanel
from workbench.llm.cfp.config import CfpConfig
from workbench.llm.cfp.search import search
from workbench.llm.cfp.study import CfpViewConfig, clear_caches, panel_view


def test_panel_view_equals_a_direct_search():
    clear_caches()
    vc = CfpViewConfig(model="gpt-1.3b", layers=4, gpus=4, mesh_rows=2, batch=4)
    view = panel_view(vc)
    out = search(CfpConfig(model="gpt-1.3b", layers=4, gpus=4, mesh="2x2", batch=4, memory_gb=80.0, ilp=False,
                           brute_force_limit=0))  # fmt: skip
    assert view.plans[0]["seconds"] == out.plan_cost.seconds
    i = view.layers_axis.index(4)
    assert view.combos_before[i] == pytest.approx(out.problem.combinations_log10, rel=1e-12)
    assert view.combos_after[i] == pytest.approx(out.blocks.combinations_log10, rel=1e-12)
    assert len(set(view.profile_unique)) == 1  # flat in depth
    assert view.profile_per_layer == sorted(view.profile_per_layer)
    assert panel_view(vc) is view  # memoised


def test_view_config_refuses_a_mesh_that_does_not_divide():
    with pytest.raises(ValueError, match="mesh_rows=3 does not divide gpus=8"):
        CfpViewConfig(gpus=8, mesh_rows=3)


def test_panel_draws_the_study_and_shows_errors_in_the_status_line():
    panel = CfpPanel(static=False, model="gpt-1.3b", layers=4, gpus=4, mesh_rows=2, batch=4)
    assert panel.error is None
    view = panel_view(CfpViewConfig(model="gpt-1.3b", layers=4, gpus=4, mesh_rows=2, batch=4))
    assert list(panel.figures[0].data[0].y) == [p["seconds"] for p in view.plans]
    panel.controls["gpus"].value = 2
    good = list(panel.figures[0].data[0].y)
    panel.controls["mesh_rows"].value = 4
    assert "mesh_rows=4 does not divide gpus=2" in panel.status.value
    assert panel.error and list(panel.figures[0].data[0].y) == good  # the last good state is kept
