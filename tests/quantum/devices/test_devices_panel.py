"""Devices panel driven by setting control values. Reference: ``workbench.quantum.devices.study`` called directly
(the panel draws its numbers), and qiskit-aer through the panel's button."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from widgets.live_figure import LiveFigure
from widgets.quantum.devices import DevicesPanel, devices_figure, sweep_figure
from workbench.quantum.devices.study import SCALES, fidelity_points, fidelity_vs_scale


def snapshot(panel):
    return [[(list(t.x or ()), list(t.y or ())) for t in fig.data] for fig in panel.figures]


@pytest.fixture(scope="module")
def panel():
    return DevicesPanel(device="fake_lima", width=3, depth=2)


def test_panel_draws_the_study_numbers(panel):
    assert all(isinstance(f, LiveFigure) for f in panel.figures) and panel.error is None
    expected = fidelity_points("fake_lima", "ghz", "device", 1.0, [2, 3], [2])
    width_fig = panel.figures[0]
    assert list(width_fig.data[0].x) == [2, 3]
    assert np.allclose(width_fig.data[0].y, [p.state_fidelity for p in expected], atol=1e-12)
    assert np.allclose(width_fig.data[1].y, [p.hellinger_fidelity for p in expected], atol=1e-12)
    scale_fig = panel.figures[2]
    expected = fidelity_vs_scale("fake_lima", "ghz", "device", SCALES, 3, 2)
    assert np.allclose(scale_fig.data[0].y, [p.state_fidelity for p in expected], atol=1e-12)
    assert list(width_fig.data[2].x) == []  # aer not run yet
    assert "state fidelity" in panel.status.value


@pytest.mark.parametrize(
    "name, value",
    [
        ("noise_scale", 2.0),
        ("depth", 3),
        ("width", 2),
        ("family", "qft"),
        ("noise_model", "thermal"),
        ("device", "fake_jakarta"),
    ],
)
def test_every_control_changes_figure_data(panel, name, value):
    before = snapshot(panel)
    panel.controls[name].value = value
    assert panel.error is None, panel.error
    assert snapshot(panel) != before, f"moving {name} did not change any figure"


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_aer_button_fills_the_aer_traces_and_they_agree():
    panel = DevicesPanel(device="fake_lima", width=2, depth=1)
    panel.run_aer()
    assert panel.progress.value == 3
    for fig in panel.figures:
        assert np.allclose(fig.data[2].y, fig.data[0].y, atol=1e-8)  # aer vs ours, state fidelity
        assert np.allclose(fig.data[3].y, fig.data[1].y, atol=1e-8)
    assert "aer agrees to" in panel.status.value
    panel.controls["depth"].value = 2  # new values: aer markers cleared until the button runs again
    assert list(panel.figures[0].data[2].y) == []


def test_bad_combination_shows_in_status_line():
    panel = DevicesPanel(device="fake_lima", width=3, depth=1)
    before = snapshot(panel)
    panel.controls["device"].value = "fake_armonk"  # one qubit: width 3 impossible
    assert panel.error == "device='fake_armonk' has 1 qubit: fidelity mode needs a device with at least 2 qubits"
    assert "fake_armonk" in panel.status.value
    assert snapshot(panel) == before


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_static_mode_and_notebook_figures():
    panel = DevicesPanel(static=True, device="fake_lima", width=2, depth=1)
    figures = panel.static_figures()
    assert all(type(f) is go.Figure for f in figures) and all(len(f.frames) == 5 for f in figures)
    assert "Plotly.newPlot" in panel.static_html()
    fig = devices_figure(
        [
            {
                "name": "a",
                "num_qubits": 5,
                "two_qubit_gate": "cx",
                "median_t1_us": 80.0,
                "median_error_2q": 0.01,
                "median_readout_error": 0.02,
                "calibration_date": "2024",
            }
        ]
    )
    assert list(fig.data[0].x) == [80.0]
    points = fidelity_points("fake_lima", "ghz", "device", 1.0, [2, 3], [1])
    assert list(sweep_figure({"fake_lima": points}, x="width", title="t").data[0].x) == [2, 3]
