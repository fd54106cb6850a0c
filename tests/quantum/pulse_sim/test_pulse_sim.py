"""pulse-sim as a technique: config refusals, the pulse view against closed forms, the study scans, the runner's
JSON (check mode in the slow lane), the panel."""

import math

import numpy as np
import pytest

from workbench.quantum.device import get_device
from workbench.quantum.pulse_sim import study
from workbench.quantum.pulse_sim.config import PulseSimConfig
from workbench.quantum.pulse_sim.runner import format_table, run


def test_bad_settings_name_the_parameter():
    with pytest.raises(ValueError, match="qubit=9 is out of range for fake_jakarta: valid range is 0..6"):
        PulseSimConfig(qubit=9)
    with pytest.raises(ValueError, match="target=3 is not coupled to qubit=0 on fake_jakarta: valid targets are 1"):
        PulseSimConfig(mode="check", target=3)
    with pytest.raises(ValueError, match="amp=1.5 is out of range: valid range is 0..1"):
        PulseSimConfig(amp=1.5)
    with pytest.raises(ValueError, match="width=300 is out of range: valid range is 0..duration=160"):
        PulseSimConfig(shape="gaussian_square", width=300.0)
    with pytest.raises(ValueError, match="device='fake_nowhere' is not allowed"):
        PulseSimConfig.from_dict({"device": "fake_nowhere"})
    with pytest.raises(ValueError, match="device='fake_torino' is not allowed: valid values are one of") as err:
        PulseSimConfig(device="fake_torino")  # only devices with Hamiltonian data are offered
    valid = str(err.value).split(":", 1)[1]
    assert "'fake_jakarta'" in valid and "'fake_torino'" not in valid


def test_pulse_view_follows_the_area_rule_and_keeps_trace():
    config = PulseSimConfig(shape="gaussian", levels=2, sigma=40.0, duration=160)
    area = float(study.pulse_of(config, amp=1.0).real.sum())
    dev = get_device(config.device).transmons((0,), levels=2)
    theta = 2.0
    view = study.pulse_view(config.replace(amp=theta / (dev.drive[0] * area * dev.dt)))
    assert view.p1 == pytest.approx(math.sin(theta / 2) ** 2, abs=1e-10)
    assert np.allclose(view.populations.sum(0), 1.0, atol=1e-12)
    assert view.populations.shape == (2, 161) and view.bloch.shape == (3, 161)
    assert np.allclose(np.linalg.norm(view.bloch, axis=0), 1.0, atol=1e-9)  # pure state, no leakage
    noisy = study.pulse_view(config.replace(amp=0.1, noise_scale=1000.0))
    assert np.linalg.norm(noisy.bloch[:, -1]) < 0.999  # relaxation shrinks the Bloch vector


def test_rabi_batch_equals_single_pulses():
    config = PulseSimConfig(duration=64, sigma=16.0, beta=0.5)
    amps, p1, p2 = study.rabi_curve(config, points=5)
    for a, want1, want2 in zip(amps, p1, p2):
        view = study.pulse_view(config.replace(amp=float(a), substeps=1))
        assert view.p1 == pytest.approx(want1, abs=1e-10) and view.p2 == pytest.approx(want2, abs=1e-10)


def test_drag_scan_minimum_is_near_the_analytic_beta():
    scan = study.drag_scan(get_device("fake_jakarta"), 0, tuple(np.linspace(-1.0, 3.0, 17)))
    best = scan["betas"][int(np.argmin(scan["error"]))]
    assert abs(best - scan["analytic_beta"]) < 0.5
    assert scan["error"].min() < 0.05 * scan["error"][int(np.argmin(np.abs(scan["betas"])))]
    with pytest.raises(ValueError, match="duration=8 is too short"):
        study.drag_scan(get_device("fake_jakarta"), 0, (0.0,), duration=8, sigma=2.0)


def test_cr_rotates_the_target_depending_on_the_control():
    cr = study.cr_scan(get_device("fake_jakarta"), 0, 1, 0.4, (512, 1024))
    assert np.all(cr["control_1"] > cr["control_0"] + 0.1)


def test_pulse_mode_json_and_table():
    out = run(PulseSimConfig(duration=64, sigma=16.0)).to_json()
    assert out["mode"] == "pulse" and len(out["final_populations"]) == 3
    assert out["substeps"] == 1  # a resonant pulse on one transmon has no frame phase: one interval is exact
    detuned = run(PulseSimConfig(duration=64, sigma=16.0, detuning_mhz=50.0, tolerance=1e-6)).to_json()
    assert detuned["substeps"] > 1 and detuned["predicted_error"] <= 1e-6
    assert out["hamiltonian_file"].endswith("conf_jakarta.json") and out["hamiltonian_file"].startswith("qiskit_ibm")
    assert "qutip_max_abs_diff" not in out
    assert "rotation" in format_table(out)


@pytest.mark.slow
def test_check_mode_meets_the_issue_goals(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path))  # calibrate for real, not from a cache
    study.clear_caches()
    out = run(PulseSimConfig(mode="check")).to_json()
    assert out["qutip_max_abs_diff"] <= 1e-6
    assert out["speedup_vs_qutip"] > 1.0
    cont = out["continuous_max_abs_diff"]  # against continuous time: second order, 16x per 4x sub-steps
    assert set(cont) == {"1", "4", "16", "64"} and cont["64"] < 1e-5
    assert 12 < cont["1"] / cont["4"] < 20 and 12 < cont["4"] / cont["16"] < 20
    assert out["predicted_error"] <= out["tolerance"] and "omegad0" in out["cr_drive_strength"]
    assert out["calibration_warnings"] == [] and out["calibrated"]["ecr"]["meets_target"]
    errs = out["convergence_max_abs_diff"]
    assert errs["4"] < 2e-3 and 3.0 < errs["2"] / errs["4"] < 5.0
    assert max(out["analytic"].values()) < 1e-9
    cal = out["calibrated"]
    assert cal["x"]["fidelity"] > 0.9999 and cal["sx"]["fidelity"] > 0.9999
    assert cal["ecr"]["fidelity"] > 0.998 and cal["cx"]["fidelity"] > 0.995
    assert list(tmp_path.rglob("natives-*.json"))  # cached for the next run
    assert "1 - fidelity" in format_table(out)
    study.clear_caches()


@pytest.mark.parametrize("tolerance", [1e-3, 1e-5])
@pytest.mark.slow  # ~10 s: DOP853 sample by sample
def test_substeps_for_a_tolerance_meet_it_against_continuous_time(tolerance):
    """The chosen sub-steps' unitary is within ``tolerance`` of scipy's DOP853 on continuous frame phases (an
    independent integrator), and the choice is the fewest power of two that does so (half of it does not)."""
    from workbench.quantum.common.pulse.accuracy import substeps_for
    from workbench.quantum.common.pulse.hamiltonian import hamiltonian_steps
    from workbench.quantum.common.pulse.propagate import unitary
    from workbench.quantum.common.pulse.reference import ode_unitary
    from workbench.quantum.common.pulse.schedule import Play, Schedule
    from workbench.quantum.common.pulse.waveforms import drag, gaussian_square

    pair = get_device("fake_jakarta").transmons((0, 1), levels=3).noiseless()
    s = Schedule.of([Play("d0", drag(64, 0.3, 16, 1.0, 0.3)), Play("u0-1", gaussian_square(80, 0.4, 16, 20, 1.0), 7)])
    exact = ode_unitary(pair, s)

    def err(k):
        return float(np.abs(unitary(hamiltonian_steps(pair, s, substeps=k)).numpy() - exact).max())

    choice = substeps_for(pair, s, tolerance)
    assert choice.met and err(choice.substeps) <= tolerance
    if choice.substeps > 1:
        assert err(choice.substeps // 2) > tolerance
    assert choice.predicted_error == pytest.approx(err(choice.substeps), rel=0.5)  # the estimate is honest


def test_tolerance_and_substeps_are_checked():
    with pytest.raises(ValueError, match="tolerance=0.5 is out of range"):
        PulseSimConfig(tolerance=0.5)
    with pytest.raises(ValueError, match="substeps=65 is out of range"):
        PulseSimConfig(substeps=65)
