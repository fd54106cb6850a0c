"""The QuEst study's view without any UI: placements, the device's effective noise, memoised predictions along the
sweeps, aer on demand, the coupling-map layout. References: ``predict.place`` + ``predict.predict_pst`` called
directly, ``predict.simulate_pst`` (qiskit-aer), the calibration snapshots, and hop distances of the coupling map."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from workbench.quantum.calibration import load_calibration
from workbench.quantum.device import get_device
from workbench.quantum.quest import study
from workbench.quantum.quest.algorithms import algorithm_circuit
from workbench.quantum.quest.checkpoint import load_checkpoint
from workbench.quantum.quest.dataset import GATE_COUNTS
from workbench.quantum.quest.net import MODELS
from workbench.quantum.quest.predict import place, predict_pst, simulate_pst
from workbench.quantum.quest.study import (
    MIRROR_REPS,
    SCALES,
    PointKey,
    QuestViewConfig,
    clear_caches,
    coupler_errors,
    depth_options,
    device_choices,
    device_layout,
    placement,
    point,
    qubit_values,
    quest_view,
    simulate_points,
    width_range,
)


@pytest.fixture(scope="module")
def ckpt():
    return load_checkpoint(None)


def test_view_predicts_the_kernel_placements_along_both_sweeps(ckpt):
    view = quest_view(QuestViewConfig(device="fake_lima", family="qft", width=3, depth=1))
    assert view.scales == SCALES and view.widths == (2, 3, 4, 5) and view.checkpoint is ckpt
    placed = [place(algorithm_circuit("qft", 3, 0), get_device("fake_lima"), noise_scale=s, seed=0) for s in SCALES]
    expected = predict_pst(ckpt, [p.circuit for p in placed], [p.calibration for p in placed], models=MODELS)
    for model in MODELS:
        # float32 forward pass: one batch vs another of different size agrees to ~1e-7
        assert np.allclose(view.by_scale[model], expected[model], atol=1e-5)
        assert view.current[model] == pytest.approx(float(expected[model][SCALES.index(1.0)]), abs=1e-5)
    placed = place(algorithm_circuit("qft", 5, 0), get_device("fake_lima"), seed=0)
    wide = predict_pst(ckpt, [placed.circuit], [placed.calibration], models=MODELS)
    assert view.by_width["transformer"][-1] == pytest.approx(float(wide["transformer"][0]), abs=1e-5)
    assert view.current_key == PointKey(get_device("fake_lima"), "qft", 3, 1, 0, "calibrated", 1.0)
    assert len(view.keys) == len(SCALES) + 4 - 1  # the current point lies on both sweeps
    # memoised per setting; the qubit colouring does not enter the view
    assert quest_view(QuestViewConfig(device="fake_lima", family="qft", width=3, qubit_color="T1")) is view


def test_an_off_grid_scale_joins_the_scale_sweep():
    view = quest_view(QuestViewConfig(device="fake_lima", family="ghz", width=2, noise_scale=1.25))
    assert 1.25 in view.scales and len(view.scales) == len(SCALES) + 1
    assert view.current_key.scale == 1.25


def test_placements_random_and_mirrored():
    cal = load_calibration("fake_lima")
    p = placement(get_device("fake_lima"), "random", 3, 40, 5)
    assert p.gates == 40 and len(p.physical) == 3 and len(set(p.physical)) == 3
    coupled = {tuple(sorted(e)) for e in cal.coupling_map}
    assert set(p.cx_pairs) <= coupled and p.cx == sum(i.operation.name == "cx" for i in p.circuit.data)
    one, three = placement(get_device("fake_lima"), "ghz", 3, 1, 0), placement(get_device("fake_lima"), "ghz", 3, 3, 0)
    assert one.physical == three.physical and three.cx == 5 * one.cx  # U (U^dag U)^2
    circuit, sub = point(PointKey(get_device("fake_lima"), "ghz", 3, 1, 0, "calibrated", 2.0))
    assert circuit is one.circuit and sub.num_qubits == 3
    assert sub.readout_p01[0] == pytest.approx(2 * cal.readout_p01[one.physical[0]])
    assert sub.t1[0] == cal.t1[one.physical[0]]  # T1/T2 kept
    drawn = point(PointKey(get_device("fake_lima"), "ghz", 3, 1, 0, "randomized", 1.0))[1]
    assert (
        drawn.t1 != sub.t1 and drawn == point(PointKey(get_device("fake_lima"), "ghz", 3, 1, 0, "randomized", 1.0))[1]
    )


def test_simulated_points_match_aer_and_are_memoised(monkeypatch):
    keys = [PointKey(get_device("fake_lima"), "ghz", 2, 1, 0, "calibrated", s) for s in (0.5, 2.0)]
    steps = []
    simulated = simulate_points(keys, on_step=steps.append)
    assert steps == [1, 2]
    for key in keys:
        placed = place(algorithm_circuit("ghz", 2, 0), get_device("fake_lima"), noise_scale=key.scale, seed=0)
        assert simulated[key] == pytest.approx(simulate_pst(placed.circuit, placed.calibration), abs=1e-9)

    def no_aer(*args):
        raise AssertionError("aer must not run again for a memoised point")

    monkeypatch.setattr(study, "simulate_pst", no_aer)
    assert simulate_points(keys) == simulated
    view = quest_view(QuestViewConfig(device="fake_lima", family="ghz", width=2, noise_scale=0.5))
    n, rmse = view.rmse_vs(simulated)
    pred = view.by_scale["transformer"][SCALES.index(0.5)], view.by_scale["transformer"][SCALES.index(2.0)]
    expected = math.sqrt(((pred[0] - simulated[keys[0]]) ** 2 * 2 + (pred[1] - simulated[keys[1]]) ** 2) / 3)
    assert n == 3 and rmse == pytest.approx(expected)  # the current point counts on both sweeps
    assert view.rmse_vs({})[0] == 0


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
        (dict(device="fake_cairo", family="ghz", width=2), "device='fake_cairo' has 2 of cx, ecr, cz among its basis"),
    ],
)
def test_bad_settings_are_refused(values, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("^", r"\^")):
        QuestViewConfig.from_dict(values)


def test_ranges_and_choices():
    assert (
        width_range("random", 5) == (1, 5) and width_range("grover", 7) == (2, 5) and width_range("qft", 27) == (2, 7)
    )
    assert depth_options("random") == GATE_COUNTS and depth_options("bv") == MIRROR_REPS
    choices = device_choices()
    assert choices[:8] == (
        "fake_lima",
        "fake_manila",
        "fake_belem",
        "fake_quito",
        "fake_jakarta",
        "fake_lagos",
        "fake_nairobi",
        "fake_perth",
    )
    assert "fake_cairo" not in choices and {"fake_sherbrooke", "fake_fez"} <= set(choices)
    assert len(set(choices)) == len(choices)
    assert all(spec.label for spec in QuestViewConfig.specs())


def test_device_layout_and_coupler_errors():
    cal = load_calibration("fake_jakarta")
    pos = device_layout(get_device("fake_jakarta"))
    assert pos.shape == (7, 2)
    coupled = [np.linalg.norm(pos[a] - pos[b]) for a, b in cal.coupling_map]
    apart = [np.linalg.norm(pos[a] - pos[b]) for a in range(7) for b in range(a) if (a, b) not in cal.coupling_map]
    assert max(coupled) < np.mean(apart)  # neighbours sit one hop apart, the rest further
    pairs, err = coupler_errors(cal)
    assert pairs == sorted({tuple(sorted(e)) for e in cal.coupling_map})
    assert err[pairs.index((0, 1))] == pytest.approx((cal.gate("cx", (0, 1)).error + cal.gate("cx", (1, 0)).error) / 2)
    assert qubit_values(cal, "T1")[0] == pytest.approx(cal.t1[0] * 1e6)
    assert qubit_values(cal, "readout error")[0] == pytest.approx((cal.readout_p01[0] + cal.readout_p10[0]) / 2)
    with pytest.raises(ValueError, match="qubit_color='T2' is unknown"):
        qubit_values(cal, "T2")


def test_clear_caches_forgets_views():
    config = QuestViewConfig(device="fake_lima", family="ghz", width=2)
    first = quest_view(config)
    assert quest_view(config) is first
    clear_caches()
    again = quest_view(config)
    assert again is not first and np.array_equal(again.by_scale["transformer"], first.by_scale["transformer"])


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_study_imports_no_ui():
    code = (
        "import sys; sys.modules['ipywidgets'] = sys.modules['plotly'] = None; "
        "import workbench.quantum.quest.study, workbench.quantum.quest.runner"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_rank_check_simulates_fresh_circuits_and_refuses_too_few():
    from workbench.quantum.quest.study import rank_check

    rank = rank_check("fake_lima", 4, seed=3)
    assert len(rank.pst) == len(rank.fidelity) == len(rank.labels) == 4
    assert all(0 <= x <= 1 for x in (*rank.pst, *rank.fidelity)) and -1 <= rank.spearman <= 1
    assert rank_check("fake_lima", 4, seed=3) == rank  # deterministic from the seed
    with pytest.raises(ValueError, match="count=2 is out of range"):
        rank_check("fake_lima", 2)
