"""The QGAS cost MODEL: the formula, the fit (it recovers known constants exactly from synthetic timings),
and a real calibration that describes the timings it was fitted to.

Reference: the formula evaluated by hand; synthetic points generated from known constants.
"""

from __future__ import annotations

import pytest

from workbench.quantum.qgas.model import (
    Calibration,
    calibrate,
    dense_hamiltonian_bytes,
    evaluation_seconds,
    fit,
    prompt_tokens,
    proposal_seconds,
    search_seconds,
)


def test_formula_by_hand():
    cal = Calibration(1e-3, 2e-4, 3e-8, 4e-10, (), o=5e-3)
    n, g, R = 5, 23, 2
    want = 1e-3 + 23 * (2e-4 + 3e-8 * 2 * 32) + 4e-10 * 2 * 1024
    assert evaluation_seconds(cal, n, g, R) == pytest.approx(want, rel=1e-15)
    assert proposal_seconds(cal, n, g, R, 30) == pytest.approx(30 * (want + 5e-3), rel=1e-15)
    assert search_seconds(cal, n, g, R, 30, 12) == pytest.approx(12 * 30 * (want + 5e-3), rel=1e-15)
    assert dense_hamiltonian_bytes(14) == 4 * 2**30
    assert prompt_tokens(4000) == 1000


def test_fit_recovers_known_constants():
    truth = Calibration(5e-4, 1.5e-4, 2e-7, 3e-9, ())
    points = [(n, g, 2, evaluation_seconds(truth, n, g, 2)) for n in (4, 6, 8, 10, 12) for g in (10 + n, 20 + 3 * n)]
    got = fit(points)
    for name in "abcd":
        assert getattr(got, name) == pytest.approx(getattr(truth, name), rel=1e-6)


@pytest.mark.slow
def test_calibration_describes_its_own_timings():
    cal = calibrate(qubits=(4, 6, 8), repeats=3)
    assert 0 <= cal.o < 0.1  # optimiser + parsing per evaluation: milliseconds
    for n, g, R, seconds in cal.points:
        # timings on a shared 2-core machine: within a factor of 3 of the fitted model
        assert seconds / 3 < evaluation_seconds(cal, n, g, R) < 3 * seconds
