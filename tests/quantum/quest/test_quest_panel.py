"""QuEst panel driven by setting control values. References: the checkpoint's stored test predictions, metrics and
curves (drawn as they are), ``predict.place`` + ``predict.predict_pst`` called directly for the live curves,
``predict.simulate_pst`` (qiskit-aer) for the simulate button, and ``study``'s layout and coupler errors for the
device map (the study itself is tested without ipywidgets in test_quest_study.py)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from widgets.live_figure import LiveFigure
from widgets.quantum.quest import EDGE_BINS, QuestPanel
from workbench.quantum.device import get_device
from workbench.quantum.quest import study as quest_study
from workbench.quantum.quest.algorithms import algorithm_circuit
from workbench.quantum.quest.checkpoint import load_checkpoint
from workbench.quantum.quest.dataset import FAMILIES, GATE_COUNTS
from workbench.quantum.quest.net import MODELS
from workbench.quantum.quest.predict import place, predict_pst, simulate_pst
from workbench.quantum.quest.study import MIRROR_REPS, SCALES

CHECKPOINT = ""  # the shipped checkpoint (workbench/quantum/quest/checkpoints/quest.pt)


def snapshot(panel):
    return [[(list(t.x or ()), list(t.y or ()), repr(t.marker)) for t in fig.data] for fig in panel.figures]


def make(**values):
    return QuestPanel(checkpoint=CHECKPOINT, **values)


@pytest.fixture(scope="module")
def ckpt():
    return load_checkpoint(CHECKPOINT or None)


@pytest.fixture(scope="module")
def panel():
    return make(device="fake_lima", family="qft", width=3, depth=1)


def test_panel_draws_the_checkpoint_numbers(panel, ckpt):
    assert all(isinstance(f, LiveFigure) for f in panel.figures) and panel.error is None
    sweep, scatter, curves, _ = panel.figures
    test = ckpt.test
    per_model = len(FAMILIES) + 1  # y = x line, then one trace per family
    for col, model in enumerate(MODELS):
        for j in range(len(FAMILIES)):
            trace = scatter.data[col * per_model + 1 + j]
            rows = [i for i, f in enumerate(test["family"]) if f == j]
            assert list(trace.x) == [test["pst"][i] for i in rows]
            assert list(trace.y) == [test[f"pred_{model}"][i] for i in rows]
        assert f"RMSE {ckpt.metrics[model]['all']['rmse']:.3f}" in scatter.layout.annotations[col].text
        history = ckpt.history[model]
        assert list(curves.data[3 * col].y) == list(history["val_rmse"])
        assert list(curves.data[3 * col + 1].y) == list(history["train_rmse"])
        assert list(curves.data[3 * col + 2].x) == [history["best_epoch"]]
    # the live curve: the kernel's own placement and prediction at every scale
    placed = [place(algorithm_circuit("qft", 3, 0), get_device("fake_lima"), noise_scale=s, seed=0) for s in SCALES]
    expected = predict_pst(ckpt, [p.circuit for p in placed], [p.calibration for p in placed], models=MODELS)
    for i, model in enumerate(MODELS):
        assert list(sweep.data[i].x) == list(SCALES)
        # float32 forward pass: one batch vs another of different size agrees to ~1e-7
        assert np.allclose(sweep.data[i].y, expected[model], atol=1e-5)
    assert list(sweep.data[3].y) == []  # aer not run yet
    assert "predicted PST" in panel.status.value


@pytest.mark.parametrize(
    "start, name, value",
    [
        ({}, "noise_scale", 2.0),
        ({}, "width", 2),
        ({}, "depth", 2),
        ({}, "family", "random"),
        ({}, "noise_model", "randomized"),
        ({"noise_model": "randomized"}, "seed", 7),
        ({}, "qubit_color", "T1"),
        ({}, "device", "fake_jakarta"),
        ({"family": "random", "depth": 20}, "depth", 60),
    ],
)
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_every_control_changes_figure_data(start, name, value):
    panel = make(**{"device": "fake_lima", "family": "ghz", "width": 3, "depth": 1, **start})
    before = snapshot(panel)
    panel.controls[name].value = value
    assert panel.error is None, panel.error
    assert snapshot(panel) != before, f"moving {name} did not change any figure"


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_dependent_ranges_follow_device_and_family():
    panel = make(device="fake_jakarta", family="ghz", width=7, depth=2)
    width, depth = panel.controls["width"], panel.controls["depth"]
    assert (width.min, width.max) == (2, 7)
    panel.controls["device"].value = "fake_lima"  # 5 qubits: the width follows the device
    assert (width.max, width.value, panel.error) == (5, 5, None)
    panel.controls["family"].value = "random"  # depth counts gates now, width may be 1
    assert tuple(depth.options) == GATE_COUNTS and depth.value in GATE_COUNTS and width.min == 1
    panel.controls["depth"].value = 60
    panel.controls["family"].value = "bv"  # back to mirror repetitions: the last one is restored
    assert tuple(depth.options) == MIRROR_REPS and depth.value == 2
    panel.controls["family"].value = "random"
    assert depth.value == 60 and panel.error is None


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_simulate_button_fills_the_aer_traces_and_they_agree(monkeypatch):
    panel = make(device="fake_lima", family="ghz", width=2, depth=1)
    assert panel.simulate_button in panel.widget().children[3].children  # below the status line
    panel.simulate_button.click()
    assert panel.progress.value == panel.progress.max
    sweep = panel.figures[0]
    by_scale = dict(zip(sweep.data[3].x, sweep.data[3].y))
    by_width = dict(zip(sweep.data[8].x, sweep.data[8].y))
    assert sorted(by_scale) == list(SCALES) and sorted(by_width) == list(range(2, 6))
    for scale in (0.25, 1.0, 8.0):
        placed = place(algorithm_circuit("ghz", 2, 0), get_device("fake_lima"), noise_scale=scale, seed=0)
        assert by_scale[scale] == pytest.approx(simulate_pst(placed.circuit, placed.calibration), abs=1e-9)
    placed = place(algorithm_circuit("ghz", 4, 0), get_device("fake_lima"), noise_scale=1.0, seed=0)
    assert by_width[4] == pytest.approx(simulate_pst(placed.circuit, placed.calibration), abs=1e-9)
    assert "qiskit-aer" in panel.status.value and "RMSE vs aer" in panel.status.value

    def no_aer(*args):
        raise AssertionError("aer must not run again for a memoised point")

    monkeypatch.setattr(quest_study, "simulate_pst", no_aer)
    panel.controls["noise_scale"].value = 2.0  # the scale sweep's points stay; of the width sweep (now at x2)
    assert len(sweep.data[3].x) == len(SCALES) and list(sweep.data[8].x) == [2]  # only the shared point
    panel.controls["noise_scale"].value = 1.0
    assert len(sweep.data[8].x) == 4 and panel.error is None
    panel.simulate()  # everything memoised: no aer run
    assert len(sweep.data[3].x) == len(SCALES) and panel.error is None


@pytest.mark.parametrize(
    "values, message",
    [
        (
            dict(device="fake_jakarta", family="grover", width=6),
            "width=6 is out of range for family='grover' on fake_jakarta: valid widths are 2..5 (Grover's "
            "multi-controlled gates grow too fast past 5 qubits)",
        ),
        (
            dict(device="fake_lima", family="ghz", width=6),
            "width=6 is out of range for family='ghz' on fake_lima: valid widths are 2..5 (fake_lima has 5 qubits)",
        ),
        (
            dict(device="fake_lima", family="qft", width=2, depth=40),
            "depth=40 is out of range for family='qft': valid mirror repetitions are 1..6 (depth counts gates only "
            "for random circuits)",
        ),
    ],
)
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_bad_combination_shows_in_status_line(values, message):
    panel = make(**values)  # no exception: the message goes to the status line
    assert panel.error == message
    assert "valid" in panel.status.value and "&#9888;" in panel.status.value
    assert list(panel.figures[0].data[0].y or ()) == []
    panel.set(width=2, depth=1)
    assert panel.error is None and len(panel.figures[0].data[0].y) == len(SCALES)


@pytest.mark.parametrize("device, why", [("fake_cairo", "2 of cx, ecr, cz"), ("fake_burlington", "no rz, x, sx")])
def test_device_outside_the_encoded_basis_is_refused(device, why):
    panel = make(device=device, family="ghz", width=2)
    assert panel.error.startswith(f"device={device!r} has {why} among its basis gates (")
    assert device not in panel.controls["device"].options[:-1]  # listed only because it was asked for


@pytest.mark.parametrize("device", ["fake_sherbrooke", "fake_fez"])
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_todays_devices_are_offered_and_drawn(device):
    """Eagle (ecr) and Heron (cz) devices are among the panel's devices and predict without an error."""
    panel = make(device=device, family="ghz", width=3)
    assert panel.error is None and device in panel.controls["device"].options


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_static_mode():
    panel = make(static=True, device="fake_lima", family="ghz", width=2)
    figures = panel.static_figures()
    assert all(type(f) is go.Figure for f in figures)
    assert [len(f.frames) for f in figures] == [5, 0, 0, 5]
    assert "Plotly.newPlot" in panel.static_html()


def test_device_map_draws_the_study_layout_and_errors():
    panel = make(device="fake_jakarta", family="ghz", width=3)
    device = panel.figures[3]
    pos = quest_study.device_layout(get_device("fake_jakarta"))
    nodes = device.data[EDGE_BINS + 2]
    assert np.allclose(nodes.x, pos[:, 0]) and np.allclose(nodes.y, pos[:, 1])
    cal = quest_study.device_noise(get_device("fake_jakarta"), "calibrated", 0, 1.0)
    assert list(nodes.marker.color) == quest_study.qubit_values(cal, "readout error")
    pairs, err = quest_study.coupler_errors(cal)
    mids = device.data[EDGE_BINS + 1]
    assert list(mids.text) == [f"Q{a}-Q{b}: two-qubit gate error {e:.2e}" for (a, b), e in zip(pairs, err)]
