"""QGAS's claims (arXiv 2307.08191v1; only the abstract is primary, the rest comes from third-party summaries). The
paper's claims are qualitative: each is read here as a figure, and the reading is stated in the claim's source.

Our figures come from the study's comparisons (``study_default.json``, made by ``python -m
workbench.quantum.qgas.study``: every problem, seed 0, 12 proposals per search, fake_jakarta for the noisy scores),
with a deterministic local mutation proposer in place of GPT-4 (no language model is called) and random and
evolutionary search in place of QuantumNAS.
"""

from __future__ import annotations

from typing import Any

from workbench.claims import Assumption, Baseline, Claim, Figure, NotTestedHere
from workbench.quantum.qgas import study
from workbench.quantum.qgas.problems import PROBLEMS

__all__ = ["CLAIMS", "PAPER_CLAIMS", "PAPER_VERSION"]

PAPER_VERSION = "arXiv 2307.08191v1, abstract"
#: the paper's claims as it states them (no numbers), with where each is sourced from
PAPER_CLAIMS = {
    "comparable": "after a few iterations the proposed ansatz is comparable to state-of-the-art quantum architecture "
    "search (abstract)",
    "benchmarks": "LiH, H2O, portfolio, MaxCut, TSP (abstract; the list from third-party summaries)",
    "noise": "results hold mainly in noiseless settings; noise sensitivity is a limitation (third-party summaries)",
    "validity": "a language model's proposals need validation (third-party summaries)",
}
#: the paper's benchmarks and the problem that stands for each here (None: not run)
PAPER_BENCHMARKS = {"LiH": "lih", "H2O": None, "portfolio": "portfolio", "MaxCut": "maxcut", "TSP": None}

_EVIDENCE = (
    "tests/quantum/qgas/test_qgas_claims.py::test_figures_are_the_summarys",
    "tests/quantum/qgas/test_qgas_study_panel.py::test_comparison_holds_every_searcher_references_and_noisy_scores",
)

_PROPOSER = Assumption(
    name="proposer",
    value="local mutation proposer (no language model)",
    choices=("local mutation proposer (no language model)",),
    sourced=False,
    why="the paper prompts GPT-4 (and GPT-3.5 for QASM); no model is called here: a deterministic grammar-based "
    "proposer driven by the same feedback stands in",
)
_STUDY = Assumption(
    name="setting",
    value="4-5 qubit problems, seed 0, fake_jakarta",
    choices=("4-5 qubit problems, seed 0, fake_jakarta",),
    sourced=False,
    why="LiH in a 4-qubit active space, H2, 5-node MaxCut, 4-asset portfolio; other seeds are in the notebook's "
    "seed table (a search costs 10-25 s: not swept here)",
)


def _summary() -> dict[str, Any]:
    return study.default_summary()


def _comparable(*, proposals: int, proposer: str, setting: str) -> Figure:
    excess, where = study.excess_over_baselines(_summary(), int(proposals))
    return Figure(excess, note=f"worst at {where}" if excess > 0 else "the local proposer is not above them")


def _coverage() -> Figure:
    run = [name for name, problem in PAPER_BENCHMARKS.items() if problem in PROBLEMS]
    return Figure(len(run) / len(PAPER_BENCHMARKS), note=f"run: {', '.join(run)}")


def _noise(*, proposer: str, setting: str) -> Figure:
    worse = {
        name: p["local_best"]["noisy_error"] > p["local_best"]["error"]
        for name, p in _summary()["problems"].items()
        if p["local_best"] and p["local_best"]["noisy_error"] is not None
    }
    return Figure(sum(worse.values()) / len(worse), note=f"{sum(worse.values())} of {len(worse)} problems")


def _validity(**_: Any) -> float:
    raise NotTestedHere(
        "no language model is called here: a model's share of invalid proposals was not measured (the grammar-based "
        "proposers are valid by construction; the tests' 4 hand-written chat answers are examples, not a measurement)"
    )


_QAS = Baseline(
    name="random and evolutionary search through the same loop",
    why="stand-ins for state-of-the-art QAS, with the same training, scoring and proposal budget",
    strongest=False,
    stronger="QuantumNAS (the paper's state-of-the-art QAS), not run here",
)


def _claims() -> tuple[Claim, ...]:
    return (
        Claim(
            technique="qgas",
            key="comparable",
            text="after a few iterations the proposed ansatz is comparable to state-of-the-art QAS: its best error is "
            "at most one target (1.6 mHa chemistry, 1e-3 otherwise) above the best baseline's, on every problem",
            kind="error",
            paper=1.0,
            paper_source=f"{PAPER_VERSION} ('comparable', no number: read as within one target)",
            unit="x target",
            baseline=_QAS,
            assumptions=(
                Assumption(
                    name="proposals",
                    value=12,
                    lo=4,
                    hi=12,
                    integer=True,
                    sourced=False,
                    unit="proposals",
                    why="'a few iterations' (abstract); read from each search's best-error curve",
                ),
                _PROPOSER,
                _STUDY,
            ),
            evidence=_EVIDENCE,
            measure=_comparable,
        ),
        Claim(
            technique="qgas",
            key="benchmarks",
            text="evaluated on LiH, H2O, portfolio, MaxCut and TSP (share of the paper's benchmarks run here)",
            kind="accuracy",
            paper=1.0,
            paper_source=f"{PAPER_VERSION}; the benchmark list from third-party summaries",
            unit="",
            baseline=Baseline(name="the paper's benchmark list", why="a coverage figure: what we run of it"),
            assumptions=(),
            evidence=("tests/quantum/qgas/test_qgas_problems.py", "tests/quantum/qgas/test_qgas_claims.py"),
            measure=_coverage,
        ),
        Claim(
            technique="qgas",
            key="noise",
            text="results hold mainly noiselessly: the best ansatz loses accuracy under device noise (share of "
            "problems where it does)",
            kind="accuracy",
            paper=1.0,
            paper_source="arXiv 2307.08191v1, limitations as reported by third-party summaries (qualitative: read "
            "as on every problem)",
            unit="",
            baseline=Baseline(
                name="the same trained circuit, noiseless",
                why="the parameters trained noiselessly, scored again under the device snapshot's calibrated noise",
            ),
            assumptions=(_PROPOSER, _STUDY),
            evidence=_EVIDENCE,
            measure=_noise,
        ),
        Claim(
            technique="qgas",
            key="validity",
            text="a language model's proposals need validation: some are invalid (share of invalid proposals)",
            kind="gain",
            paper=0.0,
            paper_source="arXiv 2307.08191v1, limitations as reported by third-party summaries (qualitative)",
            unit="",
            baseline=Baseline(name="every proposal parsed and validated", why="invalid ones are logged and skipped"),
            assumptions=(),
            evidence=("tests/quantum/qgas/test_qgas_qasm.py",),
            measure=_validity,
        ),
    )


CLAIMS = _claims()
