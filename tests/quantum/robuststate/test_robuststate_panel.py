"""RobustState panel driven by control values (slow: builds widgets, the button trains). Reference:
``workbench.quantum.robuststate.study.panel_view`` called directly (the panel draws its numbers)."""

from __future__ import annotations

import pytest

from widgets.quantum.robuststate import MACHINE_METHODS, RobustStatePanel
from workbench.quantum.robuststate import study
from workbench.quantum.robuststate.config import RobustStateViewConfig

pytestmark = pytest.mark.slow


def test_panel_draws_the_view_and_every_control_changes_something():
    panel = RobustStatePanel(device="fake_perth", target="ghz", qubits=2, budget=20_000, shots=64)
    assert panel.error is None, panel.error
    view = study.panel_view("fake_perth", "ghz", 2, 1.0, 64, 20_000, 16)
    assert list(panel.figures[1].data[0].y) == [view.cost[m] for m in MACHINE_METHODS]
    assert list(panel.figures[2].data[0].y) == pytest.approx(view.over_rotation)
    for name, value in [("coherent_strength", 2.0), ("shots", 128), ("budget", 30_000), ("method", "spsa")]:
        before = [f.to_plotly_json() for f in panel.figures]
        panel.controls[name].value = value
        assert panel.error is None and [f.to_plotly_json() for f in panel.figures] != before, name


def test_train_button_draws_the_run_and_a_bad_value_shows_in_the_status_line():
    panel = RobustStatePanel(device="fake_perth", target="ghz", qubits=2, budget=2048, shots=64)
    panel.train()
    assert panel.progress.value == 1
    curve = panel.figures[0].data[5]
    assert len(curve.x) >= 2 and "your run" in panel.status.value
    panel.controls["shots"].value = 0  # the slider's minimum is 1: ipywidgets clamps, so use the config path
    assert panel.controls["shots"].value == 1
    with pytest.raises(ValueError, match="qubits=6"):
        RobustStateViewConfig.from_dict({"qubits": 6})
