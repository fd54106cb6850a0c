"""Pulse ZNE's claims (arXiv 2305.12597 v1, abstract; the rest of the paper is not retrievable).

The abstract: append the time-reversed, sign-flipped pulse so that the noiseless result is the initial state; the
return probability is a fidelity estimator; the reversal scales noise for zero-noise extrapolation (ZNE) of VQE,
with a "54.1% average reduction of the VQE energy deviation". The reversal rule, the fold placement and the
extrapolation are derived here, not quoted, so they are assumptions.

Our figures: the ZNE sweep of a noiselessly trained two-layer NAPA H2 ansatz on fake_jakarta (0, 1) with T1/T2
divided by a noise scale (:func:`workbench.quantum.pulse_zne.experiment.sweep`); it takes minutes, so a measure reads
it from the study's cache (memory or disk) or, failing that, from ``benchmarks/recorded.json``
(``python -m benchmarks.run --only pulse_zne`` computes the sweeps: :func:`figures`); without either it is
``not tested here``. The reversal's exactness and the estimator's correlation are computed (seconds).
"""

from __future__ import annotations

from workbench.claims import Assumption, Baseline, Claim, Figure, recorded
from workbench.quantum.pulse_zne.config import PulseZneConfig

__all__ = ["CLAIMS", "PAPER", "PAPER_VERSION", "NOISE_SCALES", "configs", "figures", "run_key"]

PAPER_VERSION = "arXiv 2305.12597 v1, abstract"

#: quoted from the abstract
PAPER = {"zne_reduction": 0.541}

#: T1/T2 divided by these (the notebook's): the device's own T1/T2 leave too small an error on a ~570 ns schedule
NOISE_SCALES = (10.0, 30.0, 100.0)
_REFERENCES = {"exact": "reduction", "noiseless ansatz": "ideal_reduction"}


def run_key(config: PulseZneConfig, reference: str) -> str:
    """The recorded key of one reduction: ``pulse-zne.reduction[x30,folding,richardson,1,3,5,exact]``."""
    return (f"pulse-zne.reduction[x{config.noise_scale:g},{config.method},{config.extrapolation},"
            f"{config.scale_factors},{reference}]")  # fmt: skip


def _config(noise_scale: float, method: str, extrapolation: str, factors: str) -> PulseZneConfig:
    return PulseZneConfig(noise_scale=float(noise_scale), method=method, extrapolation=extrapolation,
                          scale_factors=factors, layers=2, budget=400)  # fmt: skip


def _reduction(config: PulseZneConfig, reference: str, *, compute: bool = False) -> float:
    from workbench.quantum.pulse_zne import experiment

    if not compute:  # the claims read the recorded figure only: the same verdict on every machine
        return recorded(run_key(config, reference))
    data = experiment.cached_sweep(config) or experiment.sweep(config)
    return float(getattr(experiment.zne_view(config, data), _REFERENCES[reference]))


def _zne(*, method: str, noise_scale: float, extrapolation: str, factors: str, reference: str) -> Figure:
    config = _config(noise_scale, method, extrapolation, factors)
    ours = _reduction(config, reference)
    return Figure(ours, note=f"H2, 2-layer NAPA ansatz, fake_jakarta T1/T2 / {noise_scale:g}, {method} at "
                             f"lambda = {factors}, {extrapolation}, error against the {reference} energy")  # fmt: skip


_CASES = {
    "coupled_pair": "coupled_pair_infidelity",
    "three_level": "three_level_infidelity",
    "detuned_1mhz": "detuned_1mhz_infidelity",
    "two_level": "two_level_infidelity",
    "bare_cr": "",  # a bare CR pulse on the pair: study.bare_cr_echo, the worst amplitude
}


def _reversal(*, case: str) -> Figure:
    from workbench.quantum.device import get_device
    from workbench.quantum.pulse_zne.study import reversal_exactness

    if case == "bare_cr":
        from workbench.quantum.pulse_zne.study import bare_cr_echo

        worst = min(bare_cr_echo(get_device("fake_jakarta")), key=lambda r: r["echo_fidelity"])
        return Figure(worst["echo_fidelity"], note=f"echo S S^R of a bare CR (amp {worst['amp']:g}, 560 dt, noiseless) "
                                                   f"on fake_jakarta (0, 1): control Z phase "
                                                   f"{worst['control_z_phase']:+.2f} rad (AC Stark shift, even in the "
                                                   "amplitude); average gate fidelity against I")  # fmt: skip
    ex = reversal_exactness(get_device("fake_jakarta"))
    return Figure(1 - ex[_CASES[case]], note=f"echo S S^R on fake_jakarta, {case.replace('_', ' ')}: infidelity "
                                             f"{ex[_CASES[case]]:.1e} (no drift: max |U - I| "
                                             f"{ex['two_level_max_abs']:.1e})")  # fmt: skip


def _estimator(*, scenario: str) -> Figure:
    from workbench.quantum.device import get_device
    from workbench.quantum.pulse_zne.study import estimator_validity

    r = estimator_validity(get_device("fake_jakarta"), 0)["correlation"][scenario]
    return Figure(r, note=f"Pearson r of F_est and the true average gate fidelity as {scenario} varies "
                          "(3-level transmon, device T1/T2)")  # fmt: skip


CLAIMS = (
    Claim(
        technique="pulse-zne",
        key="zne_reduction",
        text="pulse ZNE (reversed-pulse folding) reduces the VQE energy deviation by 54.1 % on average",
        kind="gain",
        paper=PAPER["zne_reduction"],
        paper_source=PAPER_VERSION,
        unit="",
        baseline=Baseline(
            name="the unmitigated pulse VQE energy",
            why="the abstract's reduction is against the unmitigated energy",
            strongest=False,
            stronger="gate-level ZNE (mitiq fold_global + Richardson) on the same Hamiltonian and calibrated pulses",
        ),
        assumptions=(
            Assumption(
                name="method",
                value="folding",
                sourced=True,
                why="the abstract: the reversed pulse scales the noise (S (S^R S)^k)",
            ),
            Assumption(
                name="noise_scale",
                value=30.0,
                choices=NOISE_SCALES,
                sourced=False,
                unit="x",
                why="T1/T2 divided by this; the paper's devices and noise are not readable",
            ),
            Assumption(
                name="extrapolation",
                value="richardson",
                choices=("richardson", "linear", "exponential"),
                sourced=False,
                why="the extrapolation model is not in the abstract",
            ),
            Assumption(
                name="factors",
                value="1,3,5",
                choices=("1,3,5", "1,3,5,7"),
                sourced=False,
                why="the noise scale factors are not in the abstract; folding makes odd ones",
            ),
            Assumption(
                name="reference",
                value="exact",
                choices=tuple(_REFERENCES),
                sourced=False,
                why="'VQE energy deviation' from the exact ground energy or from the ansatz's noiseless one",
            ),
        ),  # fmt: skip
        evidence=(
            "tests/quantum/pulse_zne/test_pulse_zne_study.py::test_folding_zne_without_drift_recovers_the_noiseless_energy",
            "tests/quantum/pulse_zne/test_pulse_zne_claims.py::test_zne_reduction",
            "benchmarks/quantum/pulse_zne.py",
        ),
        measure=_zne,
    ),
    Claim(
        technique="pulse-zne",
        key="reversal_identity",
        text="a pulse followed by its reversed, sign-flipped copy returns the initial state without noise",
        kind="accuracy",
        paper=1.0,
        paper_source=f"{PAPER_VERSION} (stated as exact; no figure)",
        unit="",
        baseline=Baseline(name="the identity", why="what the echo should implement"),
        assumptions=(
            Assumption(
                name="case",
                value="coupled_pair",
                choices=tuple(_CASES),
                sourced=False,
                why="a real device's transmons are anharmonic and coupled (drift that negating the amplitude "
                "cannot reverse); the ideal two-level, undetuned qubit is the other end; a bare CR pulse's AC Stark "
                "shift does not change sign with the amplitude",
            ),
        ),  # fmt: skip
        evidence=(
            "tests/quantum/pulse_zne/test_pulse_zne_kernels.py::test_reversal_is_the_inverse_without_drift",
            "tests/quantum/pulse_zne/test_pulse_zne_kernels.py::test_reversal_is_not_the_inverse_with_detuning_or_drift",
        ),
        measure=_reversal,
    ),
    Claim(
        technique="pulse-zne",
        key="fidelity_estimator",
        text="the return probability after S then S^R estimates the pulse's fidelity (correlation with the true one)",
        kind="accuracy",
        paper=1.0,
        paper_source=f"{PAPER_VERSION} (an estimator; no figure: a faithful one correlates, r = 1)",
        unit="",
        baseline=Baseline(
            name="the true average gate fidelity", why="the simulator's channel against the nominal pulse's unitary"
        ),  # fmt: skip
        assumptions=(
            Assumption(
                name="scenario",
                value="noise",
                choices=("noise", "detuning", "amplitude"),
                sourced=False,
                why="what degrades the pulse: T1/T2, frequency drift, or an amplitude miscalibration (which "
                "S^R undoes, so F_est misses it)",
            ),
        ),  # fmt: skip
        evidence=(
            "tests/quantum/pulse_zne/test_pulse_zne_study.py::test_estimator_tracks_noise_and_drift_and_misses_amplitude_errors",
        ),
        measure=_estimator,
    ),
)


def configs() -> list[PulseZneConfig]:
    """The sweeps the reduction claim reads (one per noise scale; every view is an extrapolation of them)."""
    return [_config(eta, "folding", "richardson", "1,3,5") for eta in NOISE_SCALES]


def figures() -> dict[str, float]:
    """Every reduction of the quick grid, computed (or read from the study's cache): ``run_key`` -> reduction."""
    claim = CLAIMS[0]
    base = claim.settings
    points = [base] + [{**base, a.name: v} for a in claim.inferred for v in a.grid(quick=True)]
    out = {}
    for p in points:
        config = _config(p["noise_scale"], p["method"], p["extrapolation"], p["factors"])
        out[run_key(config, p["reference"])] = _reduction(config, p["reference"], compute=True)
    return out
