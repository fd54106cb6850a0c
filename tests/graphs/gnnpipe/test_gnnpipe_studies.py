"""The notebook's sweeps ship recorded (``studies_default.json``) so that Run All at the defaults reads them: the
shipped file is current, i.e. recorded at exactly the notebook's default parameters and with the structure that
the recording command writes today (its quick form, run here, is the reference); the quick recording equals a
fresh run of the sweeps; a setting not recorded trains for real."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from workbench.graphs.gnnpipe.config import NOTEBOOK_SETTING, QUICK_SETTING, QUICK_STUDY, GnnpipeConfig, StudySettings
from workbench.graphs.gnnpipe.study import (
    STUDIES_FILE,
    clear_caches,
    recorded_studies,
    run_studies,
    studies,
    study_key,
)
from workbench.report import parameter_values

NOTEBOOK = Path(__file__).resolve().parents[3] / "notebooks" / "graphs" / "gnnpipe.ipynb"


def _notebook_parameters() -> dict:
    """The notebook's parameters cell (tagged ``parameters``) as name -> literal value."""
    return parameter_values(nbformat.read(NOTEBOOK, as_version=4))


def _shape(value):
    """The structure of a JSON value: dict keys, list lengths and element shapes, scalar types (numbers as one)."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(v) for v in value[:1]]
    return "number" if isinstance(value, (int, float)) and not isinstance(value, bool) else type(value).__name__


def test_the_shipped_sweeps_are_recorded_at_the_notebooks_defaults():
    p = _notebook_parameters()
    cfg = GnnpipeConfig(
        dataset=p["DATASET"],
        model=p["MODEL"],
        layers=p["LAYERS"],
        hidden=p["HIDDEN"],
        workers=p["WORKERS"],
        chunks=p["CHUNKS"],
        epochs=p["EPOCHS"],
        warmup=0,
        eval_every=max(1, p["EPOCHS"] // 12),
    )  # the notebook's own cfg line
    settings = StudySettings(
        seeds=tuple(p["SEEDS"]),
        warmup=p["WARMUP"],
        depths=tuple(p["ACC_DEPTHS"]),
        chunks=tuple(p["K_SWEEP"]),
        orders=tuple(p["ORDERS"]),
        sweep_seeds=tuple(p["SWEEP_SEEDS"]),
    )
    assert cfg == GnnpipeConfig(**NOTEBOOK_SETTING) and settings == StudySettings()
    assert p["RUN_SWEEPS"] is False
    found = recorded_studies(cfg, settings)
    assert found is not None, f"{STUDIES_FILE.name} is missing or stale: python -m workbench.graphs.gnnpipe.study"
    assert "recorded by" in found.source
    labels = list(found.seeds)
    assert len(labels) == 5 and all(len(v["final"]) == len(settings.seeds) for v in found.seeds.values())
    assert [(r["model"], r["layers"]) for r in found.depth] == [
        (m, L) for m in ("gcn", "gcnii") for L in settings.depths
    ]
    assert [(r["chunks"], r["order"]) for r in found.chunks] == [
        (K, o) for K in settings.chunks for o in settings.orders
    ]


@pytest.mark.slow  # trains the quick sweeps (about 25 small runs on 2 processes)
def test_the_recording_command_quick_form_writes_what_the_shipped_file_holds(tmp_path):
    from workbench.graphs.gnnpipe.study import main

    clear_caches()
    out = tmp_path / "quick.json"
    assert main(["--quick", str(out)]) == 0
    quick, shipped = json.loads(out.read_text()), json.loads(STUDIES_FILE.read_text())
    for data in (quick, shipped):  # the seed curves' labels name the setting (warm-up, S x G): compare values
        data["seeds"] = list(data["seeds"].values())
    assert _shape(quick) == _shape(shipped)  # same files, same rows, same fields, same kinds of values
    assert len(quick["seeds"]) == len(shipped["seeds"]) == 5
    assert [r["order"] for r in quick["chunks"]] == [o for _ in QUICK_STUDY.chunks for o in QUICK_STUDY.orders]
    cfg = GnnpipeConfig(**QUICK_SETTING)
    read = recorded_studies(cfg, QUICK_STUDY, out)
    assert read is not None and read.depth == quick["depth"]
    fresh = run_studies(cfg, QUICK_STUDY)  # memoised runs: the file holds exactly what the sweeps return
    assert json.loads(json.dumps(fresh.seeds)) == read.seeds and json.loads(json.dumps(fresh.chunks)) == read.chunks
    assert recorded_studies(cfg, StudySettings(seeds=(0,)), out) is None  # another setting is not answered


def test_a_setting_that_was_not_recorded_trains_here(monkeypatch):
    calls = []
    monkeypatch.setattr(
        "workbench.graphs.gnnpipe.study.run_studies", lambda cfg, settings, progress=None: calls.append(cfg) or "ran"
    )
    cfg = GnnpipeConfig(**{**NOTEBOOK_SETTING, "layers": 8})
    assert study_key(cfg, StudySettings()) != study_key(GnnpipeConfig(**NOTEBOOK_SETTING), StudySettings())
    assert studies(cfg, StudySettings()) == "ran" and calls == [cfg]
    assert studies(GnnpipeConfig(**NOTEBOOK_SETTING), StudySettings(), run=True) == "ran"


def test_study_settings_refuse_bad_values():
    with pytest.raises(ValueError, match=r"orders=\('random',\) is not allowed"):
        StudySettings(orders=("random",))
    with pytest.raises(ValueError, match="seeds=\\(\\) is not allowed"):
        StudySettings(seeds=())
