"""Study views and verdicts (fast): the cost MODEL's closed forms, config refusals, the panel's view, and the
summary of a hand-made study (numbers checked by hand)."""

from __future__ import annotations

import pytest

from workbench.quantum.robuststate import model, study
from workbench.quantum.robuststate.config import RobustStateConfig


def test_model_closed_forms() -> None:
    assert model.executions_per_step("robuststate", parameters=84, bases=16, shots=256) == 4096
    assert model.executions_per_step("parameter-shift", parameters=84, bases=16, shots=256) == 2 * 84 * 4096
    assert model.steps_within("spsa", 100_000, parameters=84, bases=16, shots=256) == 100_000 // 8192
    assert model.steps_within("bo", 10**9, parameters=84, bases=16, shots=256) == model.BO_MAX_EVALUATIONS
    assert model.executions_spent("unaware", 10**6, parameters=84, bases=16, shots=256) == 0
    with pytest.raises(ValueError, match="method='adam'"):
        model.executions_per_step("adam", parameters=1, bases=1, shots=1)


@pytest.mark.parametrize(
    "values,message",
    [
        ({"qubits": 6, "device": "fake_lima"}, "qubits=6 is wider than device='fake_lima': valid range is 2..5"),
        ({"shots": 0}, "shots=0 is out of range: valid range is 1..1_000_000"),
        ({"budget": -1}, "budget=-1 is out of range"),
        ({"target": "bell"}, "target"),
    ],
)
def test_config_refuses_bad_input(values: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        RobustStateConfig.from_dict(values)


def test_panel_view_is_cheap_and_follows_the_controls() -> None:
    v = study.panel_view("fake_nairobi", "ghz", 4, 1.0, 256, 1_000_000, 16)
    p = model.num_parameters(4, 12)
    assert v.cost["parameter-shift"] == 2 * p * v.cost["robuststate"]
    assert v.steps["robuststate"] == 1_000_000 // 4096
    assert len(v.over_rotation) == 4 and len(v.zz) == len(v.zz_edges)
    double = study.panel_view("fake_nairobi", "ghz", 4, 2.0, 256, 1_000_000, 16)
    assert double.over_rotation == pytest.approx([2 * x for x in v.over_rotation])
    for _, (x, _) in v.curves.items():
        assert all(e <= 1_000_000 for e in x)


def _run(group, method, n, f0, f1, c0, c1, steps=10, execs=1000):
    return {
        "group": group,
        "config": {"method": method, "qubits": n, "device": "d", "target": "t"},
        "fidelity_before": f0,
        "fidelity_after": f1,
        "coherent_before": c0,
        "coherent_after": c1,
        "incoherent_after": 1 - f1 - c1,
        "steps": steps,
        "executions": execs,
    }


def test_summary_by_hand() -> None:
    data = {
        "settings": {"compare_budget": 1000},
        "runs": [
            _run("headline", "robuststate", 4, 0.8, 0.88, 0.10, 0.025),
            _run("headline", "robuststate", 4, 0.6, 0.60, 0.01, 0.01),
            _run("headline", "robuststate", 5, 0.5, 0.55, 0.07, 0.035),
            _run("incoherent-only", "robuststate", 4, 0.9, 0.89, 0.0, 0.01),
            _run("compare", "robuststate", 4, 0.8, 0.9, 0.1, 0.01),
            _run("compare", "parameter-shift", 4, 0.8, 0.82, 0.1, 0.08, steps=1),
        ],
    }
    s = study.summary(data)
    assert s["by_qubits"][4]["coherent_reduction_max"] == pytest.approx(4.0)
    assert s["by_qubits"][4]["fidelity_gain_max"] == pytest.approx(0.1)
    assert s["by_qubits"][4]["fidelity_gain_mean"] == pytest.approx(0.05)
    assert s["by_qubits"][5]["infidelity_removed_mean"] == pytest.approx(0.1)
    assert s["incoherent-only"]["gain_mean"] == pytest.approx(-0.01)
    assert s["compare"]["robuststate"]["fidelity_gain_mean"] == pytest.approx(0.1)


@pytest.mark.slow
def test_device_list_matches_the_calibrations() -> None:
    from workbench.quantum.calibration import device_names, load_calibration
    from workbench.quantum.robuststate.config import DEVICES

    expected = tuple(
        n
        for n in device_names()
        if {"rz", "sx", "cx"} <= set(load_calibration(n).basis_gates) and 4 <= load_calibration(n).num_qubits <= 27
    )
    assert DEVICES == expected


def test_save_study_round_trips(tmp_path) -> None:
    import json

    data = {"key": "k", "runs": [{"a": 1.5}]}
    study.save_study(data, tmp_path / "s.json")
    assert json.loads((tmp_path / "s.json").read_text()) == data
