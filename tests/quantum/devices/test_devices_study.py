"""The devices study layer without any UI: memoised sweeps and the panel's view. References:
``study.fidelity_points`` / ``fidelity_vs_scale`` called directly (unmemoised), and qiskit-aer for the aer sweeps."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from workbench.quantum.devices import study
from workbench.quantum.devices.config import DevicesConfig
from workbench.quantum.devices.study import (
    SCALES,
    SweepKey,
    clear_caches,
    devices_view,
    fidelity_points,
    fidelity_vs_scale,
    run_aer_sweeps,
    sweep,
)


def config(**values):
    return DevicesConfig(**{"mode": "fidelity", "device": "fake_lima", "width": 3, "depth": 2, **values})


def test_view_holds_the_three_sweeps_of_the_setting():
    view = devices_view(config())
    assert view.aer is None and view.max_abs_diff_vs_aer is None
    by_width, by_depth, by_scale = view.ours
    expected = fidelity_points("fake_lima", "ghz", "device", 1.0, [2, 3], [2])
    assert [p.width for p in by_width] == [2, 3] and view.xs[0] == [2, 3]
    assert np.allclose([p.state_fidelity for p in by_width], [p.state_fidelity for p in expected], atol=1e-12)
    assert np.allclose([p.hellinger_fidelity for p in by_width], [p.hellinger_fidelity for p in expected], atol=1e-12)
    expected = fidelity_points("fake_lima", "ghz", "device", 1.0, [3], [1, 2])
    assert [p.depth for p in by_depth] == [1, 2] == view.xs[1]
    assert np.allclose([p.state_fidelity for p in by_depth], [p.state_fidelity for p in expected], atol=1e-12)
    expected = fidelity_vs_scale("fake_lima", "ghz", "device", SCALES, 3, 2)
    assert view.xs[2] == list(SCALES)
    assert np.allclose([p.state_fidelity for p in by_scale], [p.state_fidelity for p in expected], atol=1e-12)


def test_sweeps_are_memoised_by_setting_and_cleared_by_the_hook():
    key = SweepKey.of(config())
    first = sweep("width", key)
    assert sweep("width", key) is first
    # the scale sweep replaces the scale: one memoised sweep for every scale
    assert sweep("scale", key) is sweep("scale", SweepKey.of(config(noise_scale=4.0)))
    assert sweep("depth", key) is not sweep("depth", SweepKey.of(config(noise_scale=4.0)))
    clear_caches()
    again = sweep("width", key)
    assert again is not first and again == first
    with pytest.raises(ValueError, match="kind='height' is unknown: valid values are 'width', 'depth', 'scale'"):
        sweep("height", key)


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_aer_sweeps_agree_with_ours():
    c = config(width=2, depth=1)
    steps = []
    run_aer_sweeps(c, on_step=steps.append)
    assert steps == [1, 2, 3]
    view = devices_view(c, with_aer=True)
    for ours, aer in zip(view.ours, view.aer):
        assert [p.engine for p in aer] == ["aer"] * len(ours)
        assert np.allclose([p.state_fidelity for p in aer], [p.state_fidelity for p in ours], atol=1e-8)
        assert np.allclose([p.hellinger_fidelity for p in aer], [p.hellinger_fidelity for p in ours], atol=1e-8)
    assert view.max_abs_diff_vs_aer <= 1e-8


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_study_imports_no_ui():
    code = (
        "import sys; sys.modules['ipywidgets'] = sys.modules['plotly'] = None; "
        "import workbench.quantum.devices.study, workbench.quantum.devices.runner"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "ipywidgets" not in study.__dict__
