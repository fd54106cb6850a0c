"""The CLI's JSON (the issue's schema) from a real small check, and the panel: Run fills the accuracy curves
from real runs (progress bar to the end), a bad setting shows in the status line. Reference: the issue's schema;
the closed forms of :mod:`workbench.graphs.gnnpipe.volume`."""

from __future__ import annotations

import json

import pytest

from workbench.cli import main
from workbench.graphs.gnnpipe.study import clear_caches

pytestmark = pytest.mark.slow
SMALL = ["--layers", "3", "--hidden", "8", "--workers", "3", "--chunks", "3", "--epochs", "3", "--eval-every", "3"]


def test_check_json_has_the_issue_schema(capsys):
    clear_caches()
    assert main(["run", "gnnpipe", "--mode", "check", "--dataset", "cora", *SMALL, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [m["name"] for m in out["methods"]] == ["full", "graph-parallel", "gnnpipe", "hybrid"]
    for m in out["methods"]:
        assert set(m) >= {"name", "test_accuracy", "bytes_per_epoch", "model_bytes_per_epoch", "seconds_per_epoch"}
        assert m["bytes_per_epoch"] == m["model_bytes_per_epoch"] and m["bytes_match_model"]
        assert 0.0 <= m["test_accuracy"] <= 1.0 and m["seconds_per_epoch"] > 0
    assert out["k1_max_abs_param_diff"] <= 1e-12
    assert out["methods"][2]["bytes_per_epoch"] == 2 * 2 * 2708 * 16 * 8  # 2 (P-1) n (2d) 8 bytes, GCNII
    assert out["hybrid_stages"] == 3 and out["hybrid_max_abs_param_diff"] <= 1e-12  # P = 3 prime: 3 stages x 1
    assert out["hybrid_note"].startswith("workers=3 is prime") and "K = 1" in out["hybrid_note"]
    assert out["bytes_crossover_layers"] >= 3  # GNNPipe moves fewer bytes than graph parallelism from this L


def test_panel_run_button_fills_curves_and_errors_show_in_status():
    from widgets.graphs.gnnpipe import GnnpipePanel

    clear_caches()
    panel = GnnpipePanel(static=False, layers=4, hidden=8, workers=2, chunks=2, epochs=6, eval_every=3)
    assert "press Run" in panel.figures[0].layout.title.text and not panel.figures[0].data[0].x
    panel.run_now()
    assert panel.progress.value == panel.progress.max == 5
    assert len(panel.figures[0].data[0].x) == 3 and "K = 1 max |param diff|" in panel.status.value
    panel.set(layers=2, workers=4)
    assert "workers=4 is more than layers=2" in panel.status.value and panel.error
    assert len(panel.figures[0].data[0].x) == 3  # the figures keep their last good state
