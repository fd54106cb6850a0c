"""NAPA's claims (PAN, the earlier version of arXiv 2208.01215: abstracts and the first author's QCE 2023 slides).

PAN reports VQE accuracy as ``1 - |E - E0| / |E0|``: H2 96.482 % (average), HeH+ 99.336 % (average, best
99.895 %), and an 86 % average latency reduction against gate ansaetze. That metric cannot tell a working ansatz
from none: Hartree-Fock alone scores 98.2 % on H2, 99.75 % on HeH+ and 99.997 % on LiH here, and H2's 96.482 %
means |dE| ~ 40 mHa, worse than Hartree-Fock's 20.3 mHa. So the paper's percentages are quoted, but the verdicts
rest on figures that can fail: the error in mHa against chemical accuracy (1.6 mHa, the bar slide 48 names) on H2,
and against the 3 mHa slide 48 gives for HeH+'s best run. Every note shows Hartree-Fock's error beside ours.

Our figures are NAPA's seeded VQE runs (:func:`workbench.quantum.napa.study.vqe`) in the workbench's transmon
simulator on fake_jakarta (0, 1). A run takes about a minute, too slow for a scoreboard, so a measure reads the
run from the study's cache (memory or disk) or, failing that, from ``benchmarks/recorded.json`` (written by
``python -m benchmarks.run --only napa``, whose NAPA section computes every run below: :func:`figures`); without
either it is ``not tested here``.
"""

from __future__ import annotations

import functools

import numpy as np

from workbench.claims import Assumption, Baseline, Claim, Figure, NotTestedHere, recorded
from workbench.quantum.napa.config import NapaConfig

__all__ = ["CLAIMS", "PAPER", "PAPER_VERSION", "CHEMICAL_ACCURACY_MHA", "configs", "figures", "run_key"]

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

#: the seeds of the notebook's runs (a "best of" is over these)
SEEDS = (0, 1)
_BOND = {"H2": 0.735, "HeH+": 1.0}


def run_key(config: NapaConfig, kind: str = "napa") -> str:
    """The recorded-figure key of one run: ``napa.run[H2@0.735,L2,B200,none,s0,napa]``."""
    return (f"napa.run[{config.molecule}@{config.bond_length:g},L{config.layers},B{config.budget},{config.noise},"
            f"s{config.seed},{kind}]")  # fmt: skip


def _run(config: NapaConfig, kind: str = "napa", *, compute: bool = False) -> dict[str, float]:
    """|error| (mHa) and schedule (ns) of one run: computed (``compute``, the benchmark) or the recorded figure
    (:class:`NotTestedHere` when it is not recorded)."""
    from workbench.quantum.napa import study

    if compute:  # the benchmark's path (the study's disk cache makes a rerun cheap)
        run = study.cached(kind, config) or (study.vqe(config) if kind == "napa" else study.baseline(config, kind))
        return {"error_mha": run.error_hartree * 1e3, "duration_ns": run.duration_ns}
    # the claims read the recorded figure only, so the verdict is the same on every machine, cache or none
    key = run_key(config, kind)
    return {"error_mha": recorded(f"{key}.error_mha"), "duration_ns": recorded(f"{key}.duration_ns")}


@functools.lru_cache(maxsize=16)
def _hartree_fock_mha(molecule: str) -> float:
    """Hartree-Fock's error (mHa): the lowest diagonal entry of the reduced Hamiltonian (its HF determinant)."""
    from workbench.quantum.napa.hamiltonians import load

    h = load(molecule, _BOND[molecule])
    return float(np.min(np.real(np.diag(h.matrix()))) - h.exact) * 1e3


@functools.lru_cache(maxsize=16)
def _gate_ns(molecule: str, layers: int, kind: str) -> float:
    """The gate baseline's schedule (ns): fixed by the compiled circuit, so no training is needed."""
    from workbench.quantum.napa.baselines import GateAnsatz, hea_circuit, uccsd_circuit
    from workbench.quantum.napa.hamiltonians import load
    from workbench.quantum.napa.study import device_and_natives

    config = _config(molecule, layers=layers)
    _, natives = device_and_natives(config)
    hf = int(np.argmin(np.real(np.diag(load(molecule, _BOND[molecule]).matrix()))))
    return float(GateAnsatz(hea_circuit(layers) if kind == "hea" else uccsd_circuit(hf), natives).duration_ns)


def _config(molecule: str, *, layers: int = 2, budget: int = 200, noise: str = "none", seed: int = 0,
            trainable_frequency: bool = True, optimizer: str = "cobyla") -> NapaConfig:  # fmt: skip
    return NapaConfig(molecule=molecule, bond_length=_BOND[molecule], layers=int(layers), budget=int(budget),
                      noise=noise, seed=int(seed), trainable_frequency=bool(trainable_frequency),
                      optimizer=optimizer)  # fmt: skip


def _accuracy(error_mha: float, molecule: str) -> float:
    from workbench.quantum.napa.hamiltonians import load

    return 1 - error_mha * 1e-3 / abs(load(molecule, _BOND[molecule]).exact)


def _note(molecule: str, error_mha: float, config: NapaConfig) -> str:
    hf = _hartree_fock_mha(molecule)
    parts = [f"Hartree-Fock {hf:.2f} mHa (paper metric: ours {_accuracy(error_mha, molecule):.3%}, HF "
             f"{_accuracy(hf, molecule):.3%})"]  # fmt: skip
    try:
        parts.append(f"HEA on the same pulses {_run(config, 'hea')['error_mha']:.2f} mHa")
    except NotTestedHere:
        pass
    return "; ".join(parts)


# ---- assumptions -----------------------------------------------------------------------------------------------
_FREQUENCY = Assumption(
    name="trainable_frequency", value=True, sourced=True,
    why="the abstract: trainable amplitude and frequency of the native pulses",
)  # fmt: skip
_OPTIMIZER = Assumption(
    name="optimizer", value="cobyla", sourced=True,
    why="gradient-free (abstract); COBYLA with rhobeg 0.1 in the first author's companion code (QPulse vqe.py)",
)  # fmt: skip
_LAYERS = Assumption(
    name="layers", value=2, lo=1, hi=3, integer=True, sourced=False, cutoff=True, unit="layers",
    why="PAN's layer count is not readable (its growth stops on a tolerance); ours 2, up to 3 swept",
)  # fmt: skip
_BUDGET = Assumption(
    name="budget", value=200, choices=(100, 200, 400), sourced=False, cutoff=True, unit="evaluations",
    why="the companion code's default is 100 COBYLA iterations; PAN's budget is not readable",
)  # fmt: skip
_NOISE = Assumption(
    name="noise", value="none", choices=("none", "device"), sourced=False,
    why="PAN ran on IBM devices; noiseless simulation is the ansatz's best case, the device's T1/T2 and readout "
    "error from its calibration snapshot the other",
)  # fmt: skip
_SEED = Assumption(
    name="seed", value=0, choices=SEEDS, sourced=False,
    why="initial parameters; the notebook's seeds (PAN averages over runs it does not list)",
)  # fmt: skip

_HF_BASELINE = Baseline(
    name="Hartree-Fock and HEA on the same calibrated pulses",
    why="the trivial point the optimiser starts from (an ansatz result counts only away from it) and the "
    "hardware-efficient gate ansatz compiled to the same pulses with the same COBYLA budget (H2: 0.72 mHa)",
)


def _h2_error(*, layers: int, budget: int, noise: str, seed: int, trainable_frequency: bool,
              optimizer: str) -> Figure:  # fmt: skip
    config = _config("H2", layers=layers, budget=budget, noise=noise, seed=seed,
                     trainable_frequency=trainable_frequency, optimizer=optimizer)  # fmt: skip
    err = _run(config)["error_mha"]
    return Figure(err, note=_note("H2", err, config))


def _heh_best_error(*, layers: int, budget: int, noise: str, trainable_frequency: bool, optimizer: str) -> Figure:
    runs = {
        s: _run(
            _config(
                "HeH+",
                layers=layers,
                budget=budget,
                noise=noise,
                seed=s,
                trainable_frequency=trainable_frequency,
                optimizer=optimizer,
            )
        )["error_mha"]  # fmt: skip
        for s in SEEDS
    }
    best = min(runs, key=runs.__getitem__)
    note = _note("HeH+", runs[best], _config("HeH+", layers=layers, budget=budget, noise=noise, seed=best))
    return Figure(runs[best], note=f"best of seeds {', '.join(map(str, SEEDS))} at seed {best}; {note}")


def _latency_reduction(*, layers: int, budget: int, noise: str, trainable_frequency: bool, optimizer: str) -> Figure:
    """Mean of ``1 - NAPA ns / gate ns`` over H2 and HeH+ and both gate ansaetze; a molecule where NAPA does not
    improve on Hartree-Fock counts 0 (its schedule is where the optimiser stopped, not a result)."""
    reductions, parts = [], []
    for molecule in _BOND:
        config = _config(molecule, layers=layers, budget=budget, noise=noise,
                         trainable_frequency=trainable_frequency, optimizer=optimizer)  # fmt: skip
        napa = _run(config)
        result = napa["error_mha"] < _hartree_fock_mha(molecule)
        for kind in ("hea", "uccsd"):
            gate = _gate_ns(molecule, int(layers), kind)
            reductions.append(1 - napa["duration_ns"] / gate if result else 0.0)
            parts.append(f"{molecule} {napa['duration_ns']:.0f} vs {kind} {gate:.0f} ns")
        if not result:
            parts.append(f"{molecule}: NAPA {napa['error_mha']:.2f} mHa does not improve on Hartree-Fock "
                         f"({_hartree_fock_mha(molecule):.2f} mHa), so it counts 0")  # fmt: skip
    return Figure(float(np.mean(reductions)), note="; ".join(parts))


CLAIMS = (
    Claim(
        technique="napa",
        key="h2_chemical_accuracy",
        text="H2: the native-pulse ansatz reaches chemical accuracy (PAN's H2 accuracy 96.482 % means ~40 mHa, "
        "worse than Hartree-Fock, so the bar tested is chemical accuracy)",
        kind="error",
        paper=CHEMICAL_ACCURACY_MHA,
        paper_source=f"{PAPER_VERSION} (the bar slide 48 names; H2 average 96.482 %)",
        unit="mHa",
        baseline=_HF_BASELINE,
        assumptions=(_FREQUENCY, _OPTIMIZER, _LAYERS, _BUDGET, _NOISE, _SEED),
        evidence=("tests/quantum/napa/test_napa_claims.py::test_verdicts", "benchmarks/quantum/napa.py"),
        measure=_h2_error,
    ),
    Claim(
        technique="napa",
        key="heh_best_error",
        text="HeH+: the best run is within 3 mHa of the exact energy (accuracy 99.895 %; average 99.336 %)",
        kind="error",
        paper=PAPER["HeH+ best error mHa"],
        paper_source=f'{PAPER_VERSION} ("0.003H", best accuracy 99.895 %)',
        unit="mHa",
        baseline=_HF_BASELINE,
        assumptions=(_FREQUENCY, _OPTIMIZER, _LAYERS, _BUDGET, _NOISE),
        evidence=("tests/quantum/napa/test_napa_claims.py::test_verdicts", "benchmarks/quantum/napa.py"),
        measure=_heh_best_error,
        up_to=True,
    ),
    Claim(
        technique="napa",
        key="latency_reduction",
        text="average latency reduction of the native-pulse schedule against gate ansaetze",
        kind="gain",
        paper=PAPER["latency_reduction"],
        paper_source="PAN (arXiv 2208.01215, earlier version) abstract",
        unit="",
        baseline=Baseline(
            name="HEA and reduced UCCSD compiled by qiskit to rz/sx/x/ecr on the same calibrated pulses",
            why="PAN's comparison (gate ansaetze on the device's calibrated gates); mean over H2 and HeH+ and both "
            "ansaetze; a schedule counts only where NAPA improves on Hartree-Fock (else it saves nothing)",
            strongest=False,
            stronger="pulse-efficient gate compilation (scaled cross-resonance RZX, Earnest et al. 2021; an option "
            "in the group's own QAOA harness)",
        ),
        assumptions=(_FREQUENCY, _OPTIMIZER, _LAYERS, _BUDGET, _NOISE),
        evidence=("tests/quantum/napa/test_napa_claims.py::test_verdicts", "benchmarks/quantum/napa.py"),
        measure=_latency_reduction,
    ),
)


def configs() -> list[tuple[NapaConfig, str]]:
    """Every (config, kind) run the claims read at the quick grid: what the benchmark computes and records."""
    out: dict[tuple[NapaConfig, str], None] = {}
    for claim in CLAIMS:
        base = claim.settings
        points = [base] + [{**base, a.name: v} for a in claim.inferred for v in a.grid(quick=True)]
        for p in points:
            seeds = [p["seed"]] if "seed" in p else (SEEDS if claim.key == "heh_best_error" else [0])
            molecules = {"h2_chemical_accuracy": ["H2"], "heh_best_error": ["HeH+"]}.get(claim.key, list(_BOND))
            for m in molecules:
                for s in seeds:
                    kw = {k: v for k, v in p.items() if k != "seed"}
                    out[_config(m, seed=s, **kw), "napa"] = None
    for m in _BOND:
        out[_config(m), "hea"] = None
    return list(out)


def figures() -> dict[str, float]:
    """Every run of :func:`configs`, computed (or read from the study's cache): ``run_key`` -> figure."""
    out = {}
    for config, kind in configs():
        r = _run(config, kind, compute=True)
        out[f"{run_key(config, kind)}.error_mha"] = r["error_mha"]
        out[f"{run_key(config, kind)}.duration_ns"] = r["duration_ns"]
    return out
