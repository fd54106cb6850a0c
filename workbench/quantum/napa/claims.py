"""NAPA's claims (PAN, the earlier version of arXiv 2208.01215: abstracts and the first author's QCE 2023 slides).

PAN reports VQE accuracy as ``1 - |E - E0| / |E0|``: H2 96.482 % (average), HeH+ 99.336 % (average, best
99.895 %), and an 86 % average latency reduction against gate ansaetze. That metric cannot tell a working ansatz
from none: Hartree-Fock alone scores 98.2 % on H2, 99.75 % on HeH+ and 99.997 % on LiH here, and H2's 96.482 %
means |dE| ~ 40 mHa, worse than Hartree-Fock's 20.3 mHa. So the paper's percentages are quoted with that caveat,
and the verdicts rest on figures that can fail: the error in mHa against chemical accuracy (1.6 mHa, the bar
slide 48 names) and against the 3 mHa slide 48 gives for HeH+'s best run; every note shows Hartree-Fock's error
and the fraction of the correlation energy recovered beside the paper's metric.

Two ways of training the same ansatz are compared (the ``method`` assumption): the paper's (the companion code:
COBYLA, progressive growth, small random amplitudes, 200 evaluations) and the workbench's (gradients through the
simulator, L-BFGS-B, a Hartree-Fock-aware start, two starts sharing 60 evaluations: the config's defaults).

Our figures are noiseless seeded runs in the workbench's transmon simulator on fake_jakarta (0, 1), read from the
recorded scan shipped with the package (``napa_scan.json``, written by ``python -m workbench.quantum.napa.scan``;
a run takes minutes on 2 cores), so the verdicts are the same on every machine.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from workbench.claims import Assumption, Baseline, Claim, Figure, NotTestedHere

__all__ = ["CLAIMS", "PAPER", "PAPER_VERSION", "CHEMICAL_ACCURACY_MHA", "METHODS"]

PAPER_VERSION = "PAN (arXiv 2208.01215, earlier version) abstract + QCE 2023 tutorial slide 48"

#: PAN, per the first author's QCE 2023 tutorial slide 48 and the PAN abstracts (the brief swaps H2 and HeH+;
#: ../shared/papers/further/napa.md settles it): average VQE accuracy and latency reduction
PAPER = {
    "HeH+": 0.99336,
    "HeH+ best": 0.99895,
    "HeH+ best error mHa": 3.0,  # slide 48: "The absolute difference in energy is 0.003H"
    "H2": 0.96482,
    "latency_reduction": 0.86,
}

#: chemical accuracy (Ha x 1e3), the bar slide 48 itself names ("close to ... chemical accuracy (0.0016H)")
CHEMICAL_ACCURACY_MHA = 1.6
#: the two trainings of the ansatz (module docstring)
METHODS = ("workbench", "paper")
SEEDS = (0, 1)  # HeH+'s "best run" is the best of these


def _scan() -> dict[str, Any]:
    from workbench.quantum.napa.study import scan_view

    return scan_view()


def _run(molecule: str, method: str, seed: int = 0) -> dict[str, Any]:
    """One recorded noiseless run at the molecule's reference bond length (the scan's row, or a claim run)."""
    from workbench.quantum.napa.scan import REFERENCE, run_key

    data = _scan()
    if method == "workbench" and seed == 0:
        rows = [
            r for r in data["rows"] if r["molecule"] == molecule and abs(r["bond_length"] - REFERENCE[molecule]) < 1e-9
        ]
        if rows:
            return rows[0]
    run = data.get("runs", {}).get(run_key(molecule, method, seed))
    if run is None:
        raise NotTestedHere(
            f"{run_key(molecule, method, seed)} is not recorded: run python -m workbench.quantum.napa.scan"
        )
    return run


def _describe(r: dict[str, Any]) -> str:
    return (f"{r['error_mha']:.2f} mHa, {r['correlation']:.1%} of the correlation energy, paper metric "
            f"{r['accuracy']:.3%} (Hartree-Fock {r['hf_error_mha']:.2f} mHa, {r['hf_accuracy']:.3%}), "
            f"{r['evaluations']} evaluations, {r['duration_ns']:.0f} ns")  # fmt: skip


# ---- assumptions -----------------------------------------------------------------------------------------------
_FREQUENCY = Assumption(
    name="trainable_frequency", value=True, sourced=True,
    why="the abstract: trainable amplitude and frequency of the native pulses",
)  # fmt: skip
_METHOD = Assumption(
    name="method", value="workbench", choices=METHODS, sourced=False,
    why="the paper trains gradient-free (abstract; COBYLA rhobeg 0.1 with progressive growth from small random "
    "amplitudes in the companion code, 200 evaluations here); the claims are about the ansatz, which the workbench "
    "trains by gradients through its simulator from a Hartree-Fock-aware start (2 starts, 60 evaluations)",
)  # fmt: skip
_WORKBENCH_ONLY = Assumption(
    name="method", value="workbench", choices=("workbench",), sourced=False,
    why="the scan over bond lengths is run with the workbench's training only (CPU): the paper's stops at "
    "Hartree-Fock at the reference bond lengths (h2_chemical_accuracy, heh_best_error)",
)  # fmt: skip
_LAYERS = Assumption(
    name="layers", value=2, choices=(2,), sourced=False, unit="layers",
    why="PAN's layer count is not readable (its growth stops on a tolerance); 2 layers (pulses, CR, pulses, CR) "
    "is the fewest that holds any 2-qubit state (one CR between two single-qubit layers); more are not swept",
)  # fmt: skip

_HF_BASELINE = Baseline(
    name="Hartree-Fock",
    why="the trivial point the optimiser starts from: an ansatz result counts only away from it (chemical "
    "accuracy is an absolute bar; the gate ansaetze's errors are in the notes)",
)


def _h2_error(*, trainable_frequency: bool, method: str, layers: int) -> Figure:
    r = _run("H2", method)
    return Figure(r["error_mha"], note=f"H2 at 0.735 A, {method} training: {_describe(r)}")


def _heh_best_error(*, trainable_frequency: bool, method: str, layers: int) -> Figure:
    runs = {s: _run("HeH+", method, s) for s in SEEDS}
    best = min(runs, key=lambda s: runs[s]["error_mha"])
    return Figure(runs[best]["error_mha"], note=f"best of seeds {', '.join(map(str, SEEDS))} at seed {best}, "
                  f"{method} training: {_describe(runs[best])}")  # fmt: skip


def _worst_bond_error(*, trainable_frequency: bool, method: str, layers: int) -> Figure:
    from workbench.quantum.napa.hamiltonians import bond_lengths
    from workbench.quantum.napa.scan import REFERENCE

    rows = _scan()["rows"]
    expected = sum(len(bond_lengths(m)) for m in REFERENCE)
    if len(rows) < expected:
        raise NotTestedHere(f"the scan holds {len(rows)} of {expected} bond lengths: run python -m "
                            "workbench.quantum.napa.scan")  # fmt: skip
    worst = max(rows, key=lambda r: r["error_mha"])
    per = "; ".join(f"{m} worst {max(r['error_mha'] for r in rows if r['molecule'] == m):.2f} mHa, median "
                    f"{np.median([r['correlation'] for r in rows if r['molecule'] == m]):.1%} of the correlation "
                    f"energy" for m in REFERENCE)  # fmt: skip
    missed = [f"{r['molecule']}@{r['bond_length']:g}" for r in rows if r["error_mha"] > CHEMICAL_ACCURACY_MHA]
    return Figure(worst["error_mha"], note=f"{len(rows)} bond lengths; worst {worst['molecule']} at "
                  f"{worst['bond_length']:g} A; {per}; above 1.6 mHa: {', '.join(missed) or 'none'}")  # fmt: skip


def _reduction_at_equal_error(*, trainable_frequency: bool, method: str, layers: int) -> Figure:
    """Mean over H2 and HeH+ of ``1 - NAPA ns / gate ns`` at equal error: the level is chemical accuracy, or the
    best gate ansatz's error where none reaches it (compiled gates carry the calibrated pulses' coherent error);
    the gate side is the shortest of HEA (1 and 2 layers) and UCCSD within that level. Where NAPA misses the
    level it counts 0 (it has no result to be shorter than)."""
    reach = _scan()["reach"]
    reductions, parts = [], []
    for molecule in ("H2", "HeH+"):
        if molecule not in reach:
            raise NotTestedHere(
                f"the reach comparison of {molecule} is not recorded: run python -m workbench.quantum.napa.scan"
            )
        gates = {k: v for k, v in reach[molecule].items() if k != "napa"}
        level = max(CHEMICAL_ACCURACY_MHA, min(v["error_mha"] for v in gates.values()))
        within = {k: v for k, v in gates.items() if v["error_mha"] <= level}
        kind = min(within, key=lambda k: within[k]["duration_ns"])
        napa = reach[molecule]["napa"] if method == "workbench" else _run(molecule, method)
        ok = napa["error_mha"] <= level
        reductions.append(1 - napa["duration_ns"] / within[kind]["duration_ns"] if ok else 0.0)
        parts.append(
            f"{molecule} at {level:.2f} mHa: NAPA {napa['duration_ns']:.0f} ns ({napa['error_mha']:.2f} mHa) vs "
            f"{kind} {within[kind]['duration_ns']:.0f} ns ({within[kind]['error_mha']:.2f} mHa)"
            + ("" if ok else ", NAPA misses it so it counts 0")
        )
    return Figure(float(np.mean(reductions)), note="; ".join(parts))


_EVIDENCE = ("tests/quantum/napa/test_napa_claims.py::test_verdicts", "workbench/quantum/napa/scan.py")

CLAIMS = (
    Claim(
        technique="napa",
        key="h2_chemical_accuracy",
        text="H2 (0.735 A, noiseless): the native-pulse ansatz reaches chemical accuracy (PAN's H2 accuracy "
        "96.482 % means ~40 mHa, worse than Hartree-Fock's 98.2 %, so the bar tested is chemical accuracy)",
        kind="error",
        paper=CHEMICAL_ACCURACY_MHA,
        paper_source=f"{PAPER_VERSION} (the bar slide 48 names; H2 average 96.482 %)",
        unit="mHa",
        baseline=_HF_BASELINE,
        assumptions=(_FREQUENCY, _METHOD, _LAYERS),
        evidence=_EVIDENCE,
        measure=_h2_error,
    ),
    Claim(
        technique="napa",
        key="heh_best_error",
        text="HeH+ (1.0 A, noiseless): the best run is within 3 mHa of the exact energy (accuracy 99.895 %, which "
        "Hartree-Fock's 99.75 % nearly meets; average 99.336 %)",
        kind="error",
        paper=PAPER["HeH+ best error mHa"],
        paper_source=f'{PAPER_VERSION} ("0.003H", best accuracy 99.895 %)',
        unit="mHa",
        baseline=_HF_BASELINE,
        assumptions=(_FREQUENCY, _METHOD, _LAYERS),
        evidence=_EVIDENCE,
        measure=_heh_best_error,
        up_to=True,
    ),
    Claim(
        technique="napa",
        key="every_bond_chemical_accuracy",
        text="H2, HeH+ and LiH at every shipped bond length (noiseless): the native-pulse ansatz reaches chemical "
        "accuracy (the paper shows single bond lengths; the stretched bonds are the strongly correlated ones)",
        kind="error",
        paper=CHEMICAL_ACCURACY_MHA,
        paper_source=f"{PAPER_VERSION} (the bar slide 48 names)",
        unit="mHa",
        baseline=_HF_BASELINE,
        assumptions=(_FREQUENCY, _WORKBENCH_ONLY, _LAYERS),
        evidence=_EVIDENCE,
        measure=_worst_bond_error,
    ),
    Claim(
        technique="napa",
        key="latency_reduction",
        text="average latency reduction of the native-pulse schedule against gate ansaetze, compared at equal "
        "energy error (each side's shortest schedule within chemical accuracy, or within the best gate ansatz's "
        "error where no gate ansatz reaches it)",
        kind="gain",
        paper=PAPER["latency_reduction"],
        paper_source="PAN (arXiv 2208.01215, earlier version) abstract",
        unit="",
        baseline=Baseline(
            name="HEA (1 and 2 layers) and reduced UCCSD compiled by qiskit to rz/sx/x/ecr on the same calibrated "
            "pulses, COBYLA with 100 evaluations: the shortest within the error level",
            why="PAN's comparison (gate ansaetze on the device's calibrated gates), at equal error rather than "
            "equal evaluations; mean over H2 and HeH+",
            strongest=False,
            stronger="pulse-efficient gate compilation (scaled cross-resonance RZX, Earnest et al. 2021; an option "
            "in the group's own QAOA harness)",
        ),
        assumptions=(_FREQUENCY, _METHOD, _LAYERS),
        evidence=_EVIDENCE,
        measure=_reduction_at_equal_error,
    ),
)
