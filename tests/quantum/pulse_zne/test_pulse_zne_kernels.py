"""Pulse ZNE kernels. References: U(S)^dagger (dense, noiseless) for the reversal; duration arithmetic for folding;
mitiq 1.1 factories' static ``extrapolate`` for every extrapolation; a synthetic quadratic for Richardson;
``workbench.quantum.napa.energy.energy`` for our energy at time scale 1."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from workbench.quantum.common.pulse.hamiltonian import hamiltonian_steps
from workbench.quantum.common.pulse.propagate import unitary
from workbench.quantum.common.pulse.schedule import Play, Schedule
from workbench.quantum.common.pulse.waveforms import drag, gaussian_square
from workbench.quantum.device import load_pulse_device
from workbench.quantum.pulse_zne import extrapolation as ex
from workbench.quantum.pulse_zne.config import PulseZneConfig
from workbench.quantum.pulse_zne.estimator import echo_error, echo_infidelity, nominal_unitary, process_fidelity
from workbench.quantum.pulse_zne.reversal import fold, reverse, stretch


@pytest.fixture(scope="module")
def two_level():
    return load_pulse_device("fake_jakarta", (0,), levels=2)


def _pulse(amp=0.13, phase=0.3, detuning=0.0, n=157):  # an odd, non-round length on purpose
    return Schedule.of([Play("d0", drag(n, amp, 39, 1.0, phase), 3, detuning)])


def test_reversal_is_the_inverse_without_drift(two_level):
    s = _pulse()
    u = unitary(hamiltonian_steps(two_level, s))
    ur = unitary(hamiltonian_steps(two_level, reverse(s)))
    assert torch.allclose(ur, u.mH, atol=1e-12)
    assert echo_error(two_level, s) < 1e-10


def test_reversal_is_not_the_inverse_with_detuning_or_drift(two_level):
    det = _pulse(detuning=2 * math.pi * 1e-3)  # 1 MHz
    assert echo_error(two_level, det) > 1e-2
    assert echo_infidelity(two_level, det) > 1e-3
    three = load_pulse_device("fake_jakarta", (0,), levels=3)
    assert echo_infidelity(three, _pulse()) > 1e-4  # the anharmonic level is drift


@pytest.mark.parametrize("lam", [1, 3, 5, 7])
def test_folding_duration_and_structure(lam):
    s = _pulse()
    f = fold(s, lam)
    assert f.duration == lam * s.duration
    assert len(f.plays) == lam * len(s.plays)


@pytest.mark.parametrize("bad", [2, 0, 4.5, -1, 23])
def test_folding_refuses_non_odd_factors(bad):
    with pytest.raises(ValueError, match="scale_factor"):
        fold(_pulse(), bad)


def test_folded_unitary_equals_s_without_drift(two_level):
    s = _pulse()
    u = unitary(hamiltonian_steps(two_level, s))
    uf = unitary(hamiltonian_steps(two_level, fold(s, 5)))
    assert torch.allclose(uf, u, atol=1e-10)


def test_stretching_keeps_a_resonant_unitary_without_drift(two_level):
    s = _pulse()
    u = unitary(hamiltonian_steps(two_level, s))
    sc, c = stretch(s, 3.0)
    us = unitary(hamiltonian_steps(two_level, sc, time_scale=c))
    assert torch.allclose(us, u, atol=1e-10)


def test_stretching_refuses_out_of_range():
    with pytest.raises(ValueError, match="scale_factor=0.5"):
        stretch(_pulse(), 0.5)


def test_process_fidelity_is_one_for_the_nominal_noiseless_pulse(two_level):
    s = _pulse()
    target = nominal_unitary(two_level, s)
    assert process_fidelity(two_level.noiseless(), s, target) == pytest.approx(1.0, abs=1e-10)
    assert process_fidelity(two_level.scaled_noise(100), s, target) < 0.999


def test_cr_pulse_reversal_exact_on_two_level_uncoupled_drive():
    pair = load_pulse_device("fake_jakarta", (0, 1), levels=2)
    s = Schedule.of([Play("d1", gaussian_square(301, 0.2, 32, 150, 0.4))])
    assert echo_error(pair, s) > 0  # coupling drift: not exact
    solo = load_pulse_device("fake_jakarta", (1,), levels=2)
    assert echo_error(solo, Schedule.of([Play("d0", gaussian_square(301, 0.2, 32, 150, 0.4))])) < 1e-10


def test_richardson_recovers_e0_of_a_quadratic_exactly():
    e0, a, b = -1.137, 0.05, -0.004
    lams = [1, 3, 5]
    values = [e0 + a * x + b * x * x for x in lams]
    assert ex.richardson(lams, values) == pytest.approx(e0, abs=1e-12)


CASES = [
    ([1, 3, 5], [-1.0, -0.8, -0.7]),
    ([1, 2, 3, 5], [-1.0, -0.9, -0.83, -0.75]),
    ([1, 3, 5, 7], [-0.9, -0.6, -0.45, -0.38]),
]


@pytest.mark.parametrize("lams,values", CASES)
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_extrapolations_match_mitiq_factories(lams, values):
    from mitiq.zne.inference import ExpFactory, LinearFactory, PolyFactory, RichardsonFactory

    assert ex.richardson(lams, values) == pytest.approx(RichardsonFactory.extrapolate(lams, values), abs=1e-9)
    assert ex.linear(lams, values) == pytest.approx(LinearFactory.extrapolate(lams, values), abs=1e-12)
    assert ex.polynomial(lams, values, 2) == pytest.approx(PolyFactory.extrapolate(lams, values, 2), abs=1e-12)
    with np.errstate(all="ignore"):
        assert ex.exponential(lams, values) == pytest.approx(ExpFactory.extrapolate(lams, values), abs=1e-6)


@pytest.mark.parametrize(
    "bad,word",
    [({"scale_factors": "1,2,3"}, "scale_factor=2"), ({"scale_factors": "1"}, "scale_factors"),
     ({"scale_factors": "x"}, "scale_factors"), ({"extrapolation": "cubic"}, "extrapolation"),
     ({"noise_scale": -1}, "noise_scale"), ({"target": 3}, "target"),
     ({"method": "stretching", "scale_factors": "1,12"}, "scale_factor=12"),
     ({"extrapolation": "exponential", "scale_factors": "1,3"}, "exponential")],
)  # fmt: skip
def test_config_refuses_bad_input(bad, word):
    with pytest.raises(ValueError, match=word):
        PulseZneConfig.from_dict(bad)


@pytest.mark.parametrize("method", ["richardson", "linear", "polynomial"])
@pytest.mark.parametrize("x", [0.05, 0.3, 1.1])
def test_model_reduction_equals_extrapolating_an_exact_exponential(method, x):
    from workbench.quantum.pulse_zne import model

    lams = (1.0, 3.0, 5.0)
    e_inf, d = -0.3, -0.8
    values = [e_inf + d * np.exp(-lam * x) for lam in lams]
    e0 = e_inf + d
    measured = 1 - abs(ex.extrapolate(method, lams, values) - e0) / abs(values[0] - e0)
    assert float(model.reduction(x, method, lams)) == pytest.approx(measured, abs=1e-12)
    assert model.decay_per_fold(lams, values) == pytest.approx(x, rel=1e-12)


def test_reversed_unitary_equals_the_stepwise_inverse(two_level):
    from workbench.quantum.pulse_zne.reference import inverse_unitary

    s = _pulse(n=211)
    ur = unitary(hamiltonian_steps(two_level, reverse(s)))
    assert torch.allclose(ur, inverse_unitary(two_level, s), atol=1e-12)


@pytest.mark.parametrize("lams", [(1.0, 3.0), (1.0, 1.5, 2.0, 3.5), (1.0, 3.0, 5.0, 7.0, 9.0)])
def test_richardson_matches_the_vandermonde_solve(lams):
    from workbench.quantum.pulse_zne.reference import richardson_vandermonde

    values = np.random.default_rng(len(lams)).normal(size=len(lams))
    assert ex.richardson(lams, values) == pytest.approx(richardson_vandermonde(lams, values), abs=1e-9)


def _synthetic_sweep(x: float) -> dict:
    def curve(grid, bias):
        return {"scale_factors": list(grid), "noisy": [-0.3 - 0.8 * np.exp(-lam * x) for lam in grid],
                "noiseless": [-1.1 + bias * (lam - 1) for lam in grid]}  # fmt: skip

    return {"exact": -1.1, "trained_noiseless": -1.1, "duration_ns": 500.0,
            "folding": curve((1, 3, 5, 7), 0.01), "stretching": curve((1.0, 2.0, 3.0, 4.0, 5.0), 0.001)}  # fmt: skip


def test_zne_view_on_a_synthetic_sweep():
    from workbench.quantum.pulse_zne import model, study

    views = {}
    for eta, x in ((10.0, 0.05), (30.0, 0.3)):
        for m in ("folding", "stretching"):
            for e in ("richardson", "linear", "exponential"):
                cfg = PulseZneConfig(noise_scale=eta, method=m, extrapolation=e)
                views[(eta, m, e)] = study.zne_view(cfg, _synthetic_sweep(x))
    v = views[(30.0, "folding", "richardson")]
    assert v.reduction == pytest.approx(float(model.reduction(0.3, "richardson", (1, 3, 5))), abs=1e-12)
    assert views[(30.0, "folding", "exponential")].mitigated_error < 1e-9  # exact on an exponential
    assert views[(30.0, "folding", "exponential")].fallback is None
    assert v.coherent_bias == pytest.approx(0.04) and v.noiseless_energies[0] == pytest.approx(-1.1)
    with pytest.raises(ValueError, match="scale_factors"):
        study.zne_view(PulseZneConfig(method="stretching", scale_factors="1,3,5,7"), _synthetic_sweep(0.1))


def test_exponential_fallback_is_flagged():
    """Non-monotone points have no exponential through them (mitiq's ExpFactory gives a wild value or raises):
    the line is used and the outcome says so; monotone-convex points are fitted without a note."""
    from workbench.quantum.pulse_zne.experiment import outcome

    bumpy = [-1.0, -0.8, -0.9]
    value, note = ex.extrapolate_noting("exponential", [1, 3, 5], bumpy)
    assert note == ex.FALLBACK_NOTE and value == pytest.approx(ex.linear([1, 3, 5], bumpy), abs=1e-12)
    assert ex.extrapolate_noting("exponential", [1, 3, 5], [-1.0, -0.8, -0.7])[1] is None
    assert ex.extrapolate_noting("richardson", [1, 3, 5], bumpy)[1] is None
    cfg = PulseZneConfig(extrapolation="exponential", scale_factors="1,3,5")
    flagged = outcome(cfg, bumpy, [-1.1, -1.09, -1.05], exact=-1.1, trained_noiseless=-1.1)
    assert flagged.fallback == ex.FALLBACK_NOTE
    assert flagged.coherent_bias == pytest.approx(0.05)  # noiseless E(5) - E(1)
