"""The orchestration of NAPA's runs, shared by the runner (``workbench run napa``) and the study (panel, notebook):
NAPA's VQE on one setting and the two gate baselines, memoised and cached on disk.

One schedule: a run's ``energy`` is the best evaluation's, ``params`` are that evaluation's parameters (the whole
``layers``-layer vector: a progressive stage's layers not grown yet are identity layers, which play nothing) and
``duration_ns`` is their schedule's; re-evaluating ``params`` gives ``energy`` (tested).

Caches: :func:`vqe` and :func:`baseline` are memoised and written to ``cache_dir("napa")`` (JSON, atomic, keyed
by every setting and :data:`CACHE_VERSION`); :func:`clear_caches` empties the memory caches.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from workbench.atomic import atomic_write
from workbench.data import cache_dir
from workbench.quantum.common.pulse.calibrated import calibrated_natives
from workbench.quantum.common.pulse.device import PulseDevice
from workbench.quantum.common.pulse.natives import NativeGates
from workbench.quantum.napa.ansatz import PulseAnsatz
from workbench.quantum.napa.baselines import GateAnsatz, hea_circuit, uccsd_circuit
from workbench.quantum.napa.config import NapaConfig
from workbench.quantum.napa.energy import energy, energy_and_gradient, measured_hamiltonian
from workbench.quantum.napa.hamiltonians import ReducedHamiltonian, load
from workbench.quantum.napa.train import Gradient, Trace, multistart, progressive

__all__ = [
    "CACHE_VERSION",
    "CHEMICAL_ACCURACY_HA",
    "VqeRun",
    "accuracy",
    "correlation_recovered",
    "hartree_fock",
    "device_and_natives",
    "napa_objective",
    "vqe",
    "baseline",
    "cached",
    "clear_caches",
]

CACHE_VERSION = 2  # 2: one schedule per run (energy, params, duration), Hartree-Fock energy, gradient and starts
CHEMICAL_ACCURACY_HA = 1.6e-3


def accuracy(e: float, exact: float) -> float:
    """The (presumed) paper metric: ``1 - |E - E0| / |E0|`` (Hartree-Fock scores 98.2 % on H2 at 0.735 A)."""
    return 1 - abs(e - exact) / abs(exact)


def correlation_recovered(e: float, exact: float, hf: float) -> float:
    """The fraction of the correlation energy recovered, ``(E_HF - E) / (E_HF - E0)``: 0 at Hartree-Fock, 1 exact."""
    return (hf - e) / (hf - exact)


def hartree_fock(h: ReducedHamiltonian) -> tuple[int, float]:
    """The Hartree-Fock determinant (bit q = qubit q occupied; the lowest diagonal entry) and its energy (Ha)."""
    diag = np.real(np.diag(h.matrix()))
    return int(np.argmin(diag)), float(diag.min())


@dataclass(frozen=True)
class VqeRun:
    """One optimisation: the best energy (Ha; as measured: readout error and shots included when set), the exact
    ground energy, |error|, Hartree-Fock's energy, the duration of the best parameters' schedule (ns), the
    evaluations, the best-so-far energy after each evaluation (``trace``), and the best parameters."""

    kind: str
    energy: float
    exact: float
    error_hartree: float
    hf: float
    duration_ns: float
    evaluations: int
    trace: tuple[float, ...]
    params: tuple[float, ...]

    @property
    def accuracy(self) -> float:
        return accuracy(self.energy, self.exact)

    @property
    def correlation(self) -> float:
        """Fraction of the correlation energy recovered (:func:`correlation_recovered`)."""
        return correlation_recovered(self.energy, self.exact, self.hf)

    @property
    def to_chemical_accuracy(self) -> int | None:
        """Evaluations until the best-so-far error is within chemical accuracy (1.6 mHa), None if never."""
        hit = np.flatnonzero(np.abs(np.array(self.trace) - self.exact) <= CHEMICAL_ACCURACY_HA)
        return int(hit[0]) + 1 if hit.size else None


def device_and_natives(config: NapaConfig) -> tuple[PulseDevice, NativeGates]:
    """``config``'s pulse device (noiseless, or its T1/T2 scaled by ``noise_scale``) and calibrated natives."""
    natives = calibrated_natives(config.resolved_device(), config.control, config.target, 3)
    dev = natives.device
    if config.noise == "none":
        dev = dev.noiseless()
    elif config.noise_scale != 1.0:
        dev = dev.scaled_noise(config.noise_scale)
    return dev, natives


def _path(kind: str, config: NapaConfig) -> Path:
    key = json.dumps({"v": CACHE_VERSION, "kind": kind, **config.to_flat_dict()}, sort_keys=True)
    return cache_dir("napa") / f"{kind}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.json"


_memo: dict[tuple[str, NapaConfig], VqeRun] = {}


def cached(kind: str, config: NapaConfig) -> VqeRun | None:
    """A run computed before (memory or disk), else None."""
    if (kind, config) in _memo:
        return _memo[kind, config]
    path = _path(kind, config)
    if path.exists():
        try:
            data = json.loads(path.read_text())
            run = VqeRun(**{k: tuple(v) if isinstance(v, list) else v for k, v in data.items()})
        except (ValueError, TypeError):
            return None
        _memo[kind, config] = run
        return run
    return None


def _store(kind: str, config: NapaConfig, run: VqeRun) -> VqeRun:
    _memo[kind, config] = run
    with atomic_write(_path(kind, config), "w", encoding="utf-8") as f:
        json.dump(asdict(run), f)
    return run


def napa_objective(config: NapaConfig, layers: int | None = None) -> tuple[PulseAnsatz, Callable, Gradient]:
    """The ansatz of ``layers`` (default ``config.layers``) layers, its measured energy ``x -> Ha`` (readout error
    and shots as ``config`` sets them) and its exact energy and gradient ``x -> (Ha, dE/dx)`` (readout error folded
    into the operator: equal to the measured energy when ``shots=0``)."""
    h = load(config.molecule, config.bond_length)
    dev, natives = device_and_natives(config)
    ansatz = PulseAnsatz(natives, layers or config.layers, config.trainable_frequency)
    readout = config.noise == "device"
    operator = measured_hamiltonian(dev, h.terms, readout=readout)

    def measure(x: np.ndarray) -> float:
        return energy(dev, ansatz.schedule(x), h.terms, readout=readout, shots=config.shots, seed=config.seed)

    def gradient(x: np.ndarray) -> tuple[float, np.ndarray]:
        return energy_and_gradient(dev, ansatz.schedule, x, operator)

    return ansatz, measure, gradient


def _optimise_napa(config: NapaConfig, trace: Trace, tick: Callable[[], None]) -> np.ndarray:
    """Run the optimiser (all layers at once, or progressively) and return the best full parameter vector."""
    hf_bits, _ = hartree_fock(load(config.molecule, config.bond_length))
    use_grad = config.optimizer == "gradient"

    def ticking(f: Callable) -> Callable:
        def g(x: np.ndarray):
            tick()
            return f(x)

        return g

    if not config.progressive:
        ansatz, measure, gradient = napa_objective(config)
        starts = [ansatz.start(config.start, config.seed + k, hf_bits) for k in range(config.starts)]
        return multistart(ticking(measure), starts, config.budget, config.optimizer, trace,
                          grad=ticking(gradient) if use_grad else None, seed=config.seed)  # fmt: skip
    full, _, _ = napa_objective(config)
    one, _, _ = napa_objective(config, 1)

    def init_layer(layer: int, k: int) -> np.ndarray:
        seed = config.seed + 97 * layer + k
        return one.start(config.start, seed, hf_bits) if layer == 0 else one.initial(seed)

    return progressive(
        lambda n: ticking(napa_objective(config, n)[1]), full.per_layer, config.layers, init_layer,
        full.identity_layer(), config.budget, config.optimizer, trace, starts=config.starts, seed=config.seed,
        make_grad=(lambda n: ticking(napa_objective(config, n)[2])) if use_grad else None,
    )  # fmt: skip


def vqe(config: NapaConfig, on_evaluation: Callable[[int, int], None] | None = None) -> VqeRun:
    """NAPA's VQE on ``config`` (memoised and cached on disk); ``on_evaluation(done, budget)`` after each."""
    hit = cached("napa", config)
    if hit is not None:
        return hit
    h = load(config.molecule, config.bond_length)
    trace = Trace()

    def tick() -> None:
        if on_evaluation is not None:
            on_evaluation(trace.evaluations + 1, config.budget)

    x = _optimise_napa(config, trace, tick)
    x = trace.best_x if trace.best_x is not None else x  # the best evaluation's full vector: one schedule
    ansatz, _, _ = napa_objective(config)
    best = trace.energy
    run = VqeRun("napa", best, h.exact, abs(best - h.exact), hartree_fock(h)[1], ansatz.duration_ns(x),
                 trace.evaluations, tuple(float(v) for v in trace.best), tuple(float(v) for v in x))  # fmt: skip
    return _store("napa", config, run)


def baseline(config: NapaConfig, kind: str) -> VqeRun:
    """The gate baseline ``kind`` ("hea": ``config.layers`` entangling layers, or "uccsd") compiled to the same
    calibrated pulses, COBYLA on its angles with ``config.budget`` evaluations (memoised and cached)."""
    if kind not in ("hea", "uccsd"):
        raise ValueError(f"baseline={kind!r} is unknown: valid baselines are hea, uccsd")
    hit = cached(kind, config)
    if hit is not None:
        return hit
    h = load(config.molecule, config.bond_length)
    dev, natives = device_and_natives(config)
    hf_bits, hf_energy = hartree_fock(h)
    ansatz = GateAnsatz(hea_circuit(config.layers) if kind == "hea" else uccsd_circuit(hf_bits), natives)
    trace = Trace()
    readout = config.noise == "device"

    def f(z: np.ndarray) -> float:
        return ansatz.energy(dev, h.terms, z, readout=readout, shots=config.shots, seed=config.seed)

    x = multistart(f, [np.full(ansatz.num_params, 0.5)], config.budget, "cobyla", trace, seed=config.seed)
    best = trace.energy
    run = VqeRun(kind, best, h.exact, abs(best - h.exact), hf_energy, ansatz.duration_ns, trace.evaluations,
                 tuple(float(v) for v in trace.best), tuple(float(v) for v in x))  # fmt: skip
    return _store(kind, config, run)


def clear_caches() -> None:
    """Empty the memory caches (the disk cache stays: delete cache_dir('napa') to recompute)."""
    _memo.clear()
