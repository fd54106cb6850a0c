"""NAPA: one energy evaluation of the native-pulse ansatz under device noise, ours against qutip.

Same work on both sides: the 2-layer NAPA schedule on two 3-level transmons of fake_jakarta with T1/T2 (one
evaluation of the VQE loop: the final density matrix, from which every term is measured). Ours: the pulse
simulator's ``evolve_density`` (piecewise-constant sub-steps, Strang-split Lindblad per sample); qutip:
``mesolve`` with the same coefficients (2 sub-steps per dt). ``max abs diff`` compares the density matrices.

The claims read no wall-clock figure: their VQE runs are the recorded scan shipped with the package
(``python -m workbench.quantum.napa.scan``, minutes of CPU per run), not this benchmark.
"""

from __future__ import annotations

import numpy as np
import torch

from benchmarks.common import Section, fmt_ratio, interleaved, median, peer_table
from benchmarks.machine import load_average


def run(*, quick: bool) -> Section:
    """One case; ``data["row"]`` holds the raw numbers."""
    import qutip

    from workbench.quantum.common.pulse.calibrated import calibrated_natives
    from workbench.quantum.common.pulse.reference import qutip_evolve
    from workbench.quantum.device import get_device
    from workbench.quantum.napa.ansatz import PulseAnsatz
    from workbench.quantum.napa.energy import final_state

    load_start = load_average()
    natives = calibrated_natives(get_device("fake_jakarta"), 0, 1, 3)
    ansatz = PulseAnsatz(natives, 1 if quick else 2, trainable_frequency=True)
    schedule = ansatz.schedule(ansatz.initial(0, scale=0.5))
    dev = natives.device
    rho0 = np.zeros((9, 9), complex)
    rho0[0, 0] = 1
    out: dict = {}

    def ours():
        out["ours"] = final_state(dev, schedule, substeps=2).numpy()

    def peer():
        out["qutip"] = qutip_evolve(dev, schedule, rho0, substeps=2)

    times = interleaved({"ours": ours, "qutip": peer}, rounds=1 if quick else 3)
    ratios = [q / o for o, q in zip(times["ours"], times["qutip"])]
    row = {"ours_s": median(times["ours"]), "qutip_s": median(times["qutip"]), "speedup": median(ratios),
           "max_abs_diff": float(np.abs(out["ours"] - out["qutip"]).max()), "duration_dt": schedule.duration}  # fmt: skip
    case = f"NAPA {ansatz.layers}-layer schedule, {schedule.duration} dt, 2 transmons x 3 levels, T1/T2"
    table = peer_table("qutip", [(case, row)])
    return Section(
        title="NAPA energy evaluation vs qutip",
        intro=f"Peer: qutip {qutip.__version__} `mesolve`, torch {torch.__version__}, one process, interleaved "
        "rounds; `qutip / ours` above 1: ours is faster. The density matrices differ by the Strang split only.",
        tables=(table,),
        notes=(
            f"Load average at the start: {load_start}; at the end: {load_average()}.",
            "The claims' VQE runs are the recorded scan (python -m workbench.quantum.napa.scan), not timed here.",
        ),
        summary=(("napa energy evaluation qutip / ours time", fmt_ratio(row["speedup"])),),
        data={"row": row, "claims": {}},
    )
