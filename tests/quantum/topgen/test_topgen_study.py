"""The study's verdict logic, disk cache and panel view. References: hand-built outcomes with known ratios
(the rule written out), a JSON round trip of the cache, and the view config's refusals."""

from __future__ import annotations

import pytest

from workbench.quantum.topgen.study import (
    PAPER_CLAIMS,
    MethodOutcome,
    TaskOutcome,
    TopgenViewConfig,
    _from_json,
    markdown,
    panel_view,
    verdict_table,
    verdicts,
)


def _m(name, acc, depth, cx):
    return MethodOutcome(
        name=name,
        accuracy=acc,
        accuracy_noiseless=acc,
        accuracy_by_device={"a": acc},
        depth=depth,
        cx_count=cx,
        swaps=0,
        num_parameters=4,
        blocks=1,
        gradient_variance=0.1,
        val_curve=(acc,),
    )


def _outcome(top, hea, nas):
    return TaskOutcome(
        topgen=top,
        baselines={"hea": hea, "quantumnas": nas},
        snapshots=("a",),
        region=(0, 1),
        fragments=((0, 1),),
        stitches=(),
        templates=("t",),
        grown_at=(),
        removed_at=(),
        growth_check=(),
        cx_model=top.cx_count,
    )


def test_ratios_at_equal_accuracy_and_gain_follow_the_rule():
    out = _outcome(_m("topgen", 0.80, 10, 5), _m("hea", 0.80, 30, 25), _m("quantumnas", 0.60, 50, 40))
    rows = {r["metric"]: r for r in verdicts(out)}
    # quantumnas has bigger ratios but TopGen is 0.2 more accurate there too: both baselines are eligible
    assert rows["depth_ratio"]["ours"] == pytest.approx(5.0) and rows["depth_ratio"]["verdict"] == "reproduced"
    assert rows["cx_ratio"]["ours"] == pytest.approx(8.0) and rows["cx_ratio"]["verdict"] == "reproduced"
    assert (
        rows["accuracy_gain"]["ours"] == pytest.approx(0.1)
        and rows["accuracy_gain"]["verdict"] == "only under stated conditions"
    )


def test_less_accurate_topgen_is_not_at_equal_accuracy():
    out = _outcome(_m("topgen", 0.50, 10, 5), _m("hea", 0.90, 30, 25), _m("quantumnas", 0.90, 30, 25))
    rows = {r["metric"]: r for r in verdicts(out)}
    assert rows["cx_ratio"]["verdict"] == "not reproduced" and "not at equal accuracy" in rows["cx_ratio"]["why"]
    assert rows["accuracy_gain"]["verdict"] == "not reproduced"
    table = verdict_table([("x", out)])
    assert [r["claim"] for r in table] == [c["claim"] for c in PAPER_CLAIMS]
    assert "| claim |" in markdown(table)


def test_outcome_json_round_trip():
    import json
    from dataclasses import asdict

    out = _outcome(_m("topgen", 0.8, 10, 5), _m("hea", 0.7, 30, 25), _m("quantumnas", 0.6, 50, 40))
    assert _from_json(json.loads(json.dumps(asdict(out)))) == out


def test_panel_view_draws_the_tiling_and_refuses_a_narrow_device(tmp_path):
    view = panel_view(TopgenViewConfig(device="fake_jakarta", qubits=7, fragment_size=3, blocks=1), cache=str(tmp_path))
    covered = sorted(v for f in view.fragments for v in f)
    assert covered == list(range(7)) and view.trained is None
    assert view.cost["topgen"][2] == 0 and view.cost["topgen"][1] == view.cx_model
    with pytest.raises(ValueError, match="qubits=7 is wider than device='fake_lima'"):
        TopgenViewConfig(device="fake_lima", qubits=7)
