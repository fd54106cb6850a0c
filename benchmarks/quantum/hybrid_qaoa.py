"""Hybrid QAOA: the pulse-mixer channels that every training evaluation needs, ours against qutip.

Same work on both sides: the process (superoperator) of one DRAG mixer pulse on each of five transmons of
fake_jakarta (3 levels, the device's T1/T2 as Lindblad terms), for a fresh set of amplitudes and phases. Ours:
one batched ``workbench.quantum.common.pulse.propagate.channels`` call (Strang-split Lindblad over all five at once);
qutip: ``qutip.propagator`` with the same piecewise-constant coefficients and collapse operators, per
transmon. ``max abs diff`` compares the superoperators.
"""

from __future__ import annotations

import logging
import math

import numpy as np
import torch

from benchmarks.common import Section, fmt_ratio, interleaved, median, peer_table
from benchmarks.machine import load_average

log = logging.getLogger(__name__)


def _qutip_process(dev, schedule) -> np.ndarray:
    import qutip

    from workbench.quantum.common.pulse.reference import _terms

    static, terms, step, steps, a = _terms(dev, schedule, 1)
    tlist = np.arange(steps + 1) * step
    h = [static]
    for op, c in terms:
        cc = np.append(c, c[-1])
        h += [
            [op, qutip.coefficient(cc, tlist=tlist, order=0)],
            [op.dag(), qutip.coefficient(cc.conj(), tlist=tlist, order=0)],
        ]
    g1 = 1 / dev.t1[0]
    gphi = max(1 / dev.t2[0] - g1 / 2, 0.0)
    c_ops = [math.sqrt(g1) * a[0], math.sqrt(2 * gphi) * a[0].dag() * a[0]]
    opts = {"atol": 1e-12, "rtol": 1e-10, "max_step": step, "nsteps": 10**6}
    prop = qutip.propagator(qutip.QobjEvo(h, tlist=tlist), tlist[-1], c_ops=c_ops, options=opts)
    # qutip vectorises column-stacked; ours is row-major: S_row = P S_col P with P the vec transpose
    d = dev.levels
    perm = np.arange(d * d).reshape(d, d).T.reshape(-1)
    return prop.full()[np.ix_(perm, perm)]


def run(*, quick: bool) -> Section:
    """One case, five transmons; ``data["row"]`` holds the raw numbers."""
    import qutip

    from workbench.quantum.common.pulse.hamiltonian import hamiltonian_steps
    from workbench.quantum.common.pulse.propagate import channels, dissipator
    from workbench.quantum.common.pulse.schedule import Play, Schedule
    from workbench.quantum.common.pulse.waveforms import drag
    from workbench.quantum.device import load_pulse_device

    load_start = load_average()
    qubits = (0, 1, 2, 3, 5)
    duration = 128
    rng = np.random.default_rng(0)
    devs = [load_pulse_device("fake_jakarta", (q,), levels=3) for q in qubits]
    scheds = [
        Schedule.of(
            [Play("d0", drag(duration, float(rng.uniform(0.05, 0.4)), duration / 4, 1.0, float(rng.uniform(0, 6))))]
        )
        for _ in qubits
    ]
    out: dict = {}

    def ours():
        hs = [hamiltonian_steps(d, s, substeps=1) for d, s in zip(devs, scheds)]
        halves = torch.stack([dissipator(d, hs[0].step_ns / 2) for d in devs])
        out["ours"] = channels(torch.stack([x.h for x in hs]), hs[0].step_ns, halves).numpy()

    def peer():
        out["qutip"] = np.stack([_qutip_process(d, s) for d, s in zip(devs, scheds)])

    times = interleaved({"ours": ours, "qutip": peer}, rounds=1 if quick else 5)
    ratios = [q / o for o, q in zip(times["ours"], times["qutip"])]
    row = {
        "ours_s": median(times["ours"]),
        "qutip_s": median(times["qutip"]),
        "speedup": median(ratios),
        "max_abs_diff": float(np.abs(out["ours"] - out["qutip"]).max()),
    }
    table = peer_table("qutip", [("5 mixer channels, 3 levels, 128 dt, T1/T2", row)])
    claims: dict[str, float] = {}
    if not quick:  # the comparisons the claims read (about 40, seconds to a minute each; cached by the study)
        from workbench.quantum.hybrid_qaoa.claims import figures

        claims = figures()
    return Section(
        title="Hybrid QAOA mixer channels vs qutip",
        intro=f"Peer: qutip {qutip.__version__} `propagator` with collapse operators, in one process, interleaved "
        "rounds; `qutip / ours` above 1: ours is faster.",
        tables=(table,),
        notes=(
            f"Load average at the start: {load_start}; at the end: {load_average()}.",
            f"Recorded for the claims: {len(claims)} trained comparisons (gain of the hybrid over gate QAOA)."
            if claims
            else "Quick run: the claims' comparisons are not computed.",
        ),
        summary=(("hybrid-qaoa mixer channels qutip / ours time", fmt_ratio(row["speedup"])),),
        data={"row": row, "claims": claims},
    )
