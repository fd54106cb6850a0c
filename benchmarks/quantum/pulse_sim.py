"""Pulse simulator: ours (torch, piecewise-constant matrix exponentials, Strang-split Lindblad) against qutip 5
(``mesolve``, adaptive ODE with our step coefficients), side by side in one process, same problem, same answer.

Cases: (a) a two-transmon schedule (3 levels each: DRAG on both drives and a cross-resonance GaussianSquare,
with the device's T1/T2) from a mixed start, density matrix at the end; (b) the same without noise from a
pure state (qutip ``sesolve`` is what ``mesolve`` calls without collapse operators). Both sides build their
operators inside the timed call. ``max abs diff`` compares the final states.
"""

from __future__ import annotations

import logging

import numpy as np
import torch

from benchmarks.common import Section, fmt_ratio, interleaved, median, peer_table
from benchmarks.machine import load_average

log = logging.getLogger(__name__)


def _case(noisy: bool, quick: bool) -> dict:
    from workbench.quantum.common.pulse.hamiltonian import hamiltonian_steps
    from workbench.quantum.common.pulse.propagate import evolve_density
    from workbench.quantum.common.pulse.reference import qutip_evolve
    from workbench.quantum.common.pulse.schedule import Play, Schedule
    from workbench.quantum.common.pulse.waveforms import drag, gaussian_square
    from workbench.quantum.device import load_pulse_device

    dev = load_pulse_device("fake_jakarta", (0, 1), levels=3)
    dev = dev if noisy else dev.noiseless()
    cr = 320 if quick else 1120
    s = Schedule.of(
        [
            Play("d0", drag(160, 0.17, 40, 1.0)),
            Play("u0-1", gaussian_square(cr, 0.4, 64, cr - 256, 1.0), 160),
            Play("d1", drag(160, 0.2, 40, 1.0), 160 + cr),
        ]
    )
    rho = np.zeros((9, 9), complex)
    if noisy:
        rho[0, 0], rho[4, 4], rho[0, 4], rho[4, 0] = 0.7, 0.3, 0.3, 0.3
    else:
        rho[0, 0] = 1.0
    out: dict = {}

    def ours():
        out["ours"] = evolve_density(torch.from_numpy(rho), hamiltonian_steps(dev, s), dev).numpy()

    def qutip():
        out["qutip"] = qutip_evolve(dev, s, rho)

    times = interleaved({"ours": ours, "qutip": qutip}, rounds=1 if quick else 3)
    ratios = [q / o for o, q in zip(times["ours"], times["qutip"])]
    return {
        "case": f"{'noisy (mesolve)' if noisy else 'noiseless (sesolve path)'}, {s.duration} dt",
        "ours_s": median(times["ours"]),
        "qutip_s": median(times["qutip"]),
        "speedup": median(ratios),
        "max_abs_diff": float(np.abs(out["ours"] - out["qutip"]).max()),
    }


def run(*, quick: bool) -> Section:
    """Cases (a) and (b); ``data["rows"]`` holds the raw numbers."""
    import qutip

    load_start = load_average()
    rows = [_case(True, quick), _case(False, quick)]
    table = peer_table("qutip", [(r["case"], r) for r in rows])
    intro = (
        f"Peer: qutip {qutip.__version__} (`mesolve`, atol 1e-12, rtol 1e-10, step coefficients identical to ours), "
        f"torch {torch.__version__} with {torch.get_num_threads()} threads, in one process, interleaved rounds. "
        "`qutip / ours` above 1: ours is faster."
    )
    return Section(
        title="Pulse simulator vs qutip",
        intro=intro,
        tables=(table,),
        notes=(f"Load average at the start: {load_start}; at the end: {load_average()}.",),
        summary=tuple(
            (f"pulse sim qutip / ours time: {r['case'].split(',')[0]}", fmt_ratio(r["speedup"])) for r in rows
        ),
        data={"rows": rows},
    )
