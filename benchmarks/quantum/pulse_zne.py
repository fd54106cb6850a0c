"""Pulse ZNE: (a) our extrapolations against mitiq 1.1's factories (``Factory.extrapolate`` static methods) on the
same E(lambda) numbers: time per call and the largest difference; (b) the energy of a folded schedule
``S (S^R S)`` (lambda = 3) of a NAPA-style two-transmon ansatz under T1/T2 / 30: ours (torch, Strang-split
Lindblad) against qutip 5 ``mesolve`` on the same piecewise-constant coefficients, time and |E diff|.
"""

from __future__ import annotations

import logging
import warnings

import numpy as np
import torch

from benchmarks.common import Section, Table, fmt_ms, fmt_ratio, fmt_sci, interleaved, median
from benchmarks.machine import load_average

log = logging.getLogger(__name__)


def _extrapolation_rows(quick: bool) -> list[dict]:
    from mitiq.zne.inference import ExpFactory, ExtrapolationError, LinearFactory, PolyFactory, RichardsonFactory

    from workbench.quantum.pulse_zne import extrapolation as ex

    lams = [1.0, 3.0, 5.0]
    rng = np.random.default_rng(0)
    data = []  # decaying exponentials a + b exp(-c l) (mitiq's exponential fit converges on them), slightly noisy
    for _ in range(20):
        a, b, c = -0.3 - 0.2 * rng.random(), -0.6 - 0.3 * rng.random(), 0.1 + 0.3 * rng.random()
        data.append(tuple(a + b * np.exp(-c * x) + 1e-4 * rng.standard_normal() for x in lams))
    pairs = {
        "richardson": (ex.richardson, RichardsonFactory.extrapolate),
        "linear": (ex.linear, LinearFactory.extrapolate),
        "polynomial (order 2)": (lambda x, y: ex.polynomial(x, y, 2), lambda x, y: PolyFactory.extrapolate(x, y, 2)),
        "exponential": (ex.exponential, ExpFactory.extrapolate),
    }
    rows = []
    for name, (ours, theirs) in pairs.items():
        out: dict = {}
        usable = []  # mitiq's nonlinear exponential fit fails on some triples that our closed form solves
        for y in data:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    theirs(lams, y)
                usable.append(y)
            except ExtrapolationError:
                pass

        def run_ours(f=ours):
            out["ours"] = [f(lams, y) for y in usable]

        def run_mitiq(f=theirs):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out["mitiq"] = [f(lams, y) for y in usable]

        times = interleaved({"ours": run_ours, "mitiq": run_mitiq}, rounds=2 if quick else 5)
        rows.append({
            "case": f"{name} ({len(usable)}/{len(data)} fits converge in mitiq)",
            "ours_s": median(times["ours"]) / len(usable), "mitiq_s": median(times["mitiq"]) / len(usable),
            "ratio": median([m / o for o, m in zip(times["ours"], times["mitiq"])]),
            "max_abs_diff": float(np.max(np.abs(np.array(out["ours"]) - np.array(out["mitiq"])))),
        })  # fmt: skip
    return rows


def _folded_energy_row(quick: bool) -> dict:
    from workbench.quantum.common.pulse.calibrated import calibrated_natives
    from workbench.quantum.common.pulse.reference import qutip_evolve
    from workbench.quantum.device import get_device
    from workbench.quantum.napa.ansatz import PulseAnsatz
    from workbench.quantum.napa.energy import energy_of_state
    from workbench.quantum.napa.hamiltonians import load
    from workbench.quantum.pulse_zne.reversal import fold
    from workbench.quantum.pulse_zne.zne import energy_at

    natives = calibrated_natives(get_device("fake_jakarta"), 0, 1)
    ham = load("H2", 0.735)
    ansatz = PulseAnsatz(natives, 1)
    x = ansatz.initial(3, scale=0.5)
    if quick:
        x[6] = 0.0  # shortest CR
    dev = natives.device.scaled_noise(30).with_readout((0.0, 0.0), (0.0, 0.0))
    schedule = fold(ansatz.schedule(x), 3)
    rho0 = np.zeros((dev.dim, dev.dim), complex)
    rho0[0, 0] = 1
    out: dict = {}

    def ours():
        out["ours"] = energy_at(dev, schedule, ham.terms, readout=False, substeps=2)

    def qutip():
        out["qutip"] = energy_of_state(dev, qutip_evolve(dev, schedule, rho0, substeps=2), ham.terms, readout=False)

    times = interleaved({"ours": ours, "qutip": qutip}, rounds=1 if quick else 3, warmup=0 if quick else 1)
    return {
        "case": f"E of S (S^R S), {schedule.duration} dt, 2 x 3-level transmons, T1/T2 / 30",
        "ours_s": median(times["ours"]),
        "qutip_s": median(times["qutip"]),
        "ratio": median([q / o for o, q in zip(times["ours"], times["qutip"])]),
        "max_abs_diff": abs(out["ours"] - out["qutip"]),
    }


def run(*, quick: bool) -> Section:
    """Both comparisons; ``data`` holds the raw numbers."""
    import mitiq
    import qutip

    load_start = load_average()
    ext = _extrapolation_rows(quick)
    folded = _folded_energy_row(quick)
    t1 = Table(
        headers=("extrapolation", "ours (ms/call)", "mitiq (ms/call)", "mitiq / ours", "max |E0 diff|"),
        rows=tuple(
            (r["case"], fmt_ms(r["ours_s"]), fmt_ms(r["mitiq_s"]), fmt_ratio(r["ratio"]), fmt_sci(r["max_abs_diff"]))
            for r in ext
        ),  # fmt: skip
        caption=f"20 random decaying E(lambda) triples at lambda = 1, 3, 5; mitiq {mitiq.__version__}",
    )
    t2 = Table(
        headers=("case", "ours (ms)", "qutip (ms)", "qutip / ours", "|E diff| (Ha)"),
        rows=(
            (
                folded["case"],
                fmt_ms(folded["ours_s"]),
                fmt_ms(folded["qutip_s"]),
                fmt_ratio(folded["ratio"]),
                fmt_sci(folded["max_abs_diff"]),
            ),
        ),  # fmt: skip
        caption=f"qutip {qutip.__version__} mesolve with our step coefficients; torch {torch.__version__}",
    )
    claims: dict[str, float] = {}
    if not quick:  # the ZNE sweeps the claims read (minutes each; cached on disk by the study)
        from workbench.quantum.pulse_zne.claims import figures

        claims = figures()
    return Section(
        title="Pulse ZNE: extrapolation vs mitiq, folded-schedule energy vs qutip",
        intro=(
            "Same numbers into both sides, in one process, interleaved rounds. A ratio above 1: ours is faster. "
            "The differences check that our extrapolations are mitiq's models and that the folded schedule's "
            "energy is what qutip integrates."
        ),
        tables=(t1, t2),
        notes=(
            f"Load average at the start: {load_start}; at the end: {load_average()}.",
            f"Recorded for the claims: {len(claims)} ZNE reductions (3 trained sweeps, cached by the study)."
            if claims
            else "Quick run: the claims' ZNE sweeps are not computed.",
        ),
        summary=(
            ("pulse ZNE richardson mitiq / ours time", fmt_ratio(ext[0]["ratio"])),
            ("pulse ZNE folded energy qutip / ours time", fmt_ratio(folded["ratio"])),
        ),
        data={"extrapolation": ext, "folded": folded, "claims": claims},
    )
