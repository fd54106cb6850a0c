"""The pulse simulator's claims: agreement with qutip, and calibrated SX errors against IBM's reported ones."""

from __future__ import annotations

import pytest

from workbench.claims import claims_of, evaluate
from workbench.quantum.calibration import load_calibration
from workbench.quantum.pulse_sim import claims


def test_ibm_errors_are_the_snapshots():
    cal = load_calibration("fake_jakarta")
    for q, err in claims.IBM_SX_ERROR.items():
        assert next(g.error for g in cal.gates if g.name == "sx" and g.qubits == (q,)) == pytest.approx(err)


@pytest.mark.slow  # ~30 s cold: two qutip runs, one continuous-time qutip run and four SX channels
def test_verdicts():
    ev = {c.key: evaluate(c) for c in claims_of("pulse-sim")}
    # qutip agreement ~1e-7 at 3 and 2 levels, under the 1e-6 goal
    assert ev["qutip_agreement"].verdict.status == "reproduced"
    # qubit 0: T1/T2-limited SX error 3.6e-4, under IBM's 4.9e-4 (the model lacks what makes a device worse)
    assert ev["sx_error_q0"].verdict.status == "reproduced"
    # qubit 1: the snapshot's T2 (27.5 us) alone gives 4.7e-4, above IBM's reported 1.9e-4: the snapshot's T2
    # and its RB error disagree, or the model is too pessimistic; the rule says so
    assert ev["sx_error_q1"].verdict.status == "not reproduced"
    for key in ("sx_error_q0", "sx_error_q1", "qutip_agreement"):
        assert len({p.ours for p in ev[key].sweeps["levels"]}) == 2  # the level count moves the figure
    # against continuous time the discretisation shows: 4.9e-4 at the default 4 sub-steps, 1.7e-6 at 64 (second
    # order), so the 1e-6 goal is missed at every swept count
    cont = ev["continuous_time"]
    assert cont.verdict.status == "not reproduced" and 1e-4 < cont.at_source.ours < 2e-3
    assert sorted(p.ours for p in cont.sweeps["substeps"])[0] < 1e-5
