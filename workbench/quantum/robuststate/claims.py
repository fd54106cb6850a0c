"""RobustState's claims (arXiv:2311.16035, abstract; the QCE 2023 tutorial deck's slides 8 and 10 are the paper's
figures): coherent error reduced up to 7.1x; fidelity improved up to 96 % (4 qubits) and 81 % (5 qubits), 50 % and
72 % on average "over baselines"; only coherent error is fixable; fewer machine executions than parameter shift.

Our figures come from the shipped default study (``study_default.json``: GHZ, W and random targets of 4 and 5
qubits on five device snapshots with seeded coherent errors, see :mod:`.study`): a simulated machine, not the
paper's ten real IBM machines. The fidelity percentages are the paper's over its arithmetic-decomposition
baseline (slide 8: qiskit's StatePreparation, 0.08-0.25 on the device); we run that baseline too
(``arithmetic_default.json``: StatePreparation transpiled by qiskit at optimization level 3 onto the same qubits
and machine) and state each percentage twice: over arithmetic decomposition (the paper's comparison) and over
the noise-unaware variational circuit (the paper's own 0.68-0.86 on slide 8), the stronger of the two on our
machine (higher fidelity in 28 of 30 cases; mean 0.856 vs 0.826 at 4 qubits, 0.713 vs 0.554 at 5), hence the
strongest fair baseline. How the paper computes a "fidelity improvement" is not stated: both readings are varied.
"""

from __future__ import annotations

import functools
from typing import Any

from workbench.claims import Assumption, Baseline, Claim, Figure
from workbench.quantum.robuststate import study

__all__ = ["CLAIMS", "PAPER_CLAIMS", "PAPER_VERSION"]

PAPER_VERSION = "arXiv 2311.16035, abstract"
#: the abstract's numbers (also in the authors' QCE 2023 tutorial)
PAPER_CLAIMS = {
    "coherent_reduction_max": 7.1,  # "reduces coherent error by up to 7.1x"
    "fidelity_gain_max": {4: 0.96, 5: 0.81},  # "improves fidelity by up to 96% (4-qubit) and 81% (5-qubit)"
    "fidelity_gain_mean": {4: 0.50, 5: 0.72},  # "50% and 72% average improvement ... over baselines"
    "machines": 10,
    "algorithms": 4,
}

_EVIDENCE = (
    "tests/quantum/robuststate/test_robuststate_claims.py::test_figures_are_the_studys",
    "tests/quantum/robuststate/test_robuststate_study.py::test_summary_by_hand",
)

_UNAWARE = Baseline(
    name="noise-unaware variational circuit",
    why="the same placed ansatz pre-trained on the noiseless simulator and deployed as is (the start of "
    "fine-tuning): what a practitioner runs without noise-aware training, and on our machine the stronger of the "
    "two baselines (higher fidelity than arithmetic decomposition in 28 of 30 study cases; mean 0.856 vs 0.826 at "
    "4 qubits, 0.713 vs 0.554 at 5). Not the baseline of the paper's percentages (arithmetic decomposition)",
)
_ARITHMETIC = Baseline(
    name="arithmetic decomposition (qiskit StatePreparation, transpiled to the device)",
    why="the paper's baseline for its percentages (slide 8: 0.08-0.25 on the device): StatePreparation of the "
    "target transpiled by qiskit at optimization level 3 to rz/sx/x/cx on the ansatz's qubits (13-17 cx at 4 "
    "qubits, 36-46 at 5), run on the same machine (incoherent noise, coherent errors, readout)",
    strongest=False,
    stronger="the noise-unaware variational circuit (higher fidelity in 28 of 30 study cases)",
)
_START = Baseline(
    name="noise-unaware variational circuit (the start of fine-tuning)",
    why="the paper's coherent-error figure (slide 10) is the coherent error before and after training the "
    "pre-trained circuit on the machine: the same comparison as ours",
)
_NOISE_AWARE = Baseline(
    name="parameter shift, SPSA and Bayesian optimisation on the machine (the best of them)",
    why="the noise-aware optimisers the abstract compares with; each gets the same machine, start and budget",
)


def _study() -> dict[str, Any]:
    data = study.default_study()
    if data is None:  # the package ships it; only a changed study definition makes it stale
        raise ValueError("the default study is stale: rebuild it with python -m workbench.quantum.robuststate.study")
    return data


# ---- assumptions ----------------------------------------------------------------------------------------------
_MACHINE = Assumption(
    name="machine",
    value="5 device snapshots + seeded coherent errors",
    choices=("5 device snapshots + seeded coherent errors",),
    sourced=False,
    why="the paper runs 10 real IBM machines; ours is a simulated machine: the incoherent noise of five snapshots "
    "(Geneva, Hanoi, Lagos, Nairobi, Perth: machines the paper names) plus our draw of over-rotation, detuning "
    "and ZZ (strength 1). Other strengths need retraining (about 30 s per case x 30 cases): not swept",
)
_READOUT = Assumption(
    name="readout",
    value="asymmetric p(0->1), p(1->0) of the snapshot, inverted",
    choices=("asymmetric p(0->1), p(1->0) of the snapshot, inverted",),
    sourced=False,
    why="readout errors are each qubit's asymmetric 0->1 and 1->0 rates from the snapshot's props file, and "
    "the measured counts are mitigated by inverting those confusion matrices; the paper states neither. "
    "qiskit-aer's from_backend uses one symmetric rate per qubit (outcome probabilities differ by ~0.01): offered "
    "as --readout aer, not swept (retraining every case); the fidelities are of the state before measurement, so "
    "readout reaches them only through the training data",
)
_BUDGET = Assumption(
    name="budget",
    value=300_000,
    lo=100_000,
    hi=300_000,
    integer=True,
    sourced=False,
    unit="executions",
    why="the paper trains ~50 epochs (slide 10); at 16 Pauli settings x 256 shots per step that is ~205k "
    "executions; the range brackets it (read from each run's curve, trained to 300k)",
)
_DEFINITION = Assumption(
    name="definition",
    value="relative",
    choices=study.GAIN_DEFINITIONS,
    sourced=False,
    why="the paper does not say how a fidelity improvement is computed: (F_after - F_before) / F_before, or the "
    "share of the infidelity removed",
)


def _shared() -> tuple[Assumption, ...]:
    return (_MACHINE, _READOUT)


# ---- measures -------------------------------------------------------------------------------------------------
def _coherent(*, machine: str, readout: str, **_: Any) -> Figure:
    ratio, case = max(study.coherent_reductions(_study()))
    return Figure(ratio, note=f"at {case} (strength 1, 300k executions)")


def _gain(qubits: int, how: str):
    def measure(*, budget: int, definition: str, machine: str, readout: str) -> Figure:
        gains = study.headline_gains(_study(), qubits, budget=int(budget), definition=definition)
        if how == "max":
            value, case = max(gains)
            return Figure(value, note=f"at {case}")
        return Figure(sum(g for g, _ in gains) / len(gains), note=f"mean over {len(gains)} cases")

    return measure


def _arithmetic_gain(qubits: int, how: str):
    def measure(*, budget: int, definition: str, machine: str, readout: str) -> Figure:
        gains = study.arithmetic_gains(
            _study(), study.default_arithmetic(), qubits, budget=int(budget), definition=definition
        )
        if how == "max":
            value, case = max(gains)
            return Figure(value, note=f"at {case}")
        return Figure(sum(g for g, _ in gains) / len(gains), note=f"mean over {len(gains)} cases")

    return measure


def _incoherent_only(*, machine: str, readout: str, **_: Any) -> float:
    return study.summary(_study())["incoherent-only"]["gain_mean"]


def _margin(*, budget: int, machine: str, readout: str) -> Figure:
    gains = study.compare_gains(_study(), int(budget))
    best = max((m for m in gains if m != "robuststate"), key=gains.get)
    return Figure(gains["robuststate"] - gains[best], note=f"over {best} at {int(budget):,} executions")


def _gain_claims() -> list[Claim]:
    """The four fidelity percentages, each over the noise-unaware circuit and over arithmetic decomposition."""
    claims = []
    for n in (4, 5):
        for how, table in (("max", "fidelity_gain_max"), ("mean", "fidelity_gain_mean")):
            paper = PAPER_CLAIMS[table][n]
            for suffix, baseline, measure in (
                ("", _UNAWARE, _gain(n, how)),
                ("_arithmetic", _ARITHMETIC, _arithmetic_gain(n, how)),
            ):
                claims.append(
                    Claim(
                        technique="robuststate",
                        key=f"fidelity_gain_{how}_{n}q{suffix}",
                        text=f"{n}-qubit fidelity improvement over the baseline, "
                        + (f"up to {paper:.0%}" if how == "max" else f"{paper:.0%} on average"),
                        kind="gain",
                        paper=paper,
                        paper_source=PAPER_VERSION,
                        unit="",
                        baseline=baseline,
                        assumptions=(_BUDGET, _DEFINITION, *_shared()),
                        evidence=_EVIDENCE,
                        measure=measure,
                        up_to=how == "max",
                    )
                )
    return claims


@functools.cache
def _claims() -> tuple[Claim, ...]:
    claims = [
        Claim(
            technique="robuststate",
            key="coherent_reduction_max",
            text="coherent error reduced up to 7.1x (before / after fine-tuning on the machine)",
            kind="speedup",
            paper=PAPER_CLAIMS["coherent_reduction_max"],
            paper_source=PAPER_VERSION,
            unit="x",
            baseline=_START,
            assumptions=(
                *_shared(),
                Assumption(
                    name="coherent_error",
                    value="lambda_max(rho) - F",
                    choices=("lambda_max(rho) - F",),
                    sourced=False,
                    why="the paper gives no definition; ours splits 1 - F into the part a unitary correction "
                    "can remove (lambda_max - F) and the rest (1 - lambda_max)",
                ),
            ),
            evidence=_EVIDENCE,
            measure=_coherent,
            up_to=True,
        )
    ]
    claims.extend(_gain_claims())
    claims.append(
        Claim(
            technique="robuststate",
            key="incoherent_not_fixable",
            text="only coherent error is fixable: with purely incoherent noise, fine-tuning gains no fidelity "
            "(F_after - F_before <= 0)",
            kind="error",
            paper=0.0,
            paper_source="QCE 2023 tutorial slide 10 (paper figure): incoherent error stays ~0.15-0.17 over "
            "training while coherent error falls",
            unit="fidelity",
            baseline=Baseline(
                name="noise-unaware variational circuit on a machine without coherent errors",
                why="the same deployment as the headline cases with the coherent strength set to 0",
            ),
            assumptions=_shared(),
            evidence=_EVIDENCE,
            measure=_incoherent_only,
        )
    )
    claims.append(
        Claim(
            technique="robuststate",
            key="beats_noise_aware_optimisers",
            text="at equal machine executions RobustState gains more fidelity than parameter shift, SPSA and "
            "Bayesian optimisation (margin over the best of them)",
            kind="gain",
            paper=0.0,
            paper_source=f"{PAPER_VERSION} (qualitative: no margin stated)",
            unit="fidelity",
            baseline=_NOISE_AWARE,
            assumptions=(
                Assumption(
                    name="budget",
                    value=800_000,
                    lo=200_000,
                    hi=800_000,
                    integer=True,
                    sourced=False,
                    unit="executions",
                    why="the compare group's budget (4-qubit random targets on the five snapshots); the paper "
                    "gives none. Below 688k parameter shift has not finished one step",
                ),
                *_shared(),
            ),
            evidence=(*_EVIDENCE, "tests/quantum/robuststate/test_robuststate_convergence.py"),
            measure=_margin,
        )
    )
    return tuple(claims)


CLAIMS = _claims()
