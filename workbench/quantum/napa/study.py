"""What the NAPA panel, notebook and CLI show: VQE runs of the native-pulse ansatz and of the gate baselines on
one device pair, progressive vs all-at-once, trainable frequency vs amplitude only, error vs schedule duration,
the panel's view of one setting (:func:`panel_view`: energy curve, cached runs, the ansatz's schedule envelopes),
and the raw figures the claims (:mod:`workbench.quantum.napa.claims`) read.

Caches: :func:`vqe` and :func:`baseline` are memoised and written to ``cache_dir("napa")`` (JSON, atomic, keyed
by every setting and :data:`CACHE_VERSION`); :func:`clear_caches` empties the memory caches.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

from workbench.atomic import atomic_write
from workbench.data import cache_dir
from workbench.quantum.device import get_device
from workbench.quantum.napa.ansatz import PulseAnsatz
from workbench.quantum.napa.baselines import GateAnsatz, hea_circuit, uccsd_circuit
from workbench.quantum.napa.config import NapaConfig
from workbench.quantum.napa.energy import energy, energy_and_gradient
from workbench.quantum.napa.hamiltonians import ReducedHamiltonian, bond_lengths, load
from workbench.quantum.napa.train import Trace, optimise, progressive
from workbench.quantum.pulse.calibrated import calibrated_natives
from workbench.quantum.pulse.device import PulseDevice

__all__ = [
    "CACHE_VERSION",
    "VqeRun",
    "NapaView",
    "KINDS",
    "bond_lengths",
    "panel_view",
    "vqe",
    "baseline",
    "cached",
    "accuracy",
    "clear_caches",
    "device_and_natives",
]

CACHE_VERSION = 1
KINDS = ("napa", "hea", "uccsd")  # NAPA and its two gate baselines


@dataclass(frozen=True)
class VqeRun:
    """One optimisation: the best energy (as measured: readout error and shots included when set), the exact
    ground energy, |error|, the schedule duration (ns), evaluations, the best-so-far trace, the parameters."""

    kind: str
    energy: float
    exact: float
    error_hartree: float
    duration_ns: float
    evaluations: int
    trace: tuple[float, ...]
    params: tuple[float, ...]

    @property
    def accuracy(self) -> float:
        return accuracy(self.energy, self.exact)


def accuracy(e: float, exact: float) -> float:
    """The (presumed) paper metric: ``1 - |E - E0| / |E0|``."""
    return 1 - abs(e - exact) / abs(exact)


def device_and_natives(config: NapaConfig) -> tuple[PulseDevice, object]:
    """``config``'s pulse device (noiseless, or its T1/T2 scaled by ``noise_scale``) and calibrated natives."""
    natives = calibrated_natives(get_device(config.device), config.control, config.target, 3)
    dev = natives.device
    if config.noise == "none":
        dev = dev.noiseless()
    elif config.noise_scale != 1.0:
        dev = dev.scaled_noise(config.noise_scale)
    return dev, natives


def _path(kind: str, config: NapaConfig):
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


def _measured(config: NapaConfig, dev: PulseDevice, h: ReducedHamiltonian) -> Callable:
    return lambda schedule: energy(dev, schedule, h.terms, readout=config.noise == "device", shots=config.shots,
                                   seed=config.seed)  # fmt: skip


def vqe(config: NapaConfig, on_evaluation: Callable[[int, int], None] | None = None) -> VqeRun:
    """NAPA's VQE on ``config`` (memoised and cached on disk)."""
    hit = cached("napa", config)
    if hit is not None:
        return hit
    h = load(config.molecule, config.bond_length)
    dev, natives = device_and_natives(config)
    measure = _measured(config, dev, h)
    trace = Trace()

    def tick(f):
        def g(x):
            e = f(x)
            if on_evaluation is not None:
                on_evaluation(trace.evaluations + 1, config.budget)
            return e

        return g

    if config.progressive:
        one = PulseAnsatz(natives, 1, config.trainable_frequency)

        def make_f(layers: int):
            a = PulseAnsatz(natives, layers, config.trainable_frequency)
            return tick(lambda x: measure(a.schedule(x)))

        x = progressive(make_f, one.per_layer, config.layers, lambda layer: one.initial(config.seed + layer),
                        config.budget, config.optimizer, trace, seed=config.seed)  # fmt: skip
    else:
        a = PulseAnsatz(natives, config.layers, config.trainable_frequency)
        hm = h.matrix()
        grad = lambda z: energy_and_gradient(dev, a.schedule, z, hm)  # noqa: E731
        x = optimise(tick(lambda z: measure(a.schedule(z))), a.initial(config.seed), config.budget, config.optimizer,
                     trace, grad=grad, seed=config.seed)  # fmt: skip
    a = PulseAnsatz(natives, config.layers, config.trainable_frequency)
    best = float(min(trace.energies))
    run = VqeRun("napa", best, h.exact, abs(best - h.exact), a.duration_ns(x), trace.evaluations,
                 tuple(float(v) for v in trace.best), tuple(float(v) for v in x))  # fmt: skip
    return _store("napa", config, run)


def baseline(config: NapaConfig, kind: str) -> VqeRun:
    """The gate baseline ``kind`` ("hea": ``config.layers`` entangling layers, or "uccsd") compiled to the same
    calibrated pulses, COBYLA on its angles with the same budget (memoised and cached)."""
    if kind not in ("hea", "uccsd"):
        raise ValueError(f"baseline={kind!r} is unknown: valid baselines are hea, uccsd")
    hit = cached(kind, config)
    if hit is not None:
        return hit
    h = load(config.molecule, config.bond_length)
    dev, natives = device_and_natives(config)
    hf = int(np.argmin(np.real(np.diag(h.matrix()))))
    ansatz = GateAnsatz(hea_circuit(config.layers) if kind == "hea" else uccsd_circuit(hf), natives)
    trace = Trace()
    readout = config.noise == "device"
    f = lambda z: ansatz.energy(dev, h.terms, z, readout=readout, shots=config.shots, seed=config.seed)  # noqa: E731
    x = optimise(f, np.full(ansatz.num_params, 0.5), config.budget, "cobyla", trace, seed=config.seed)
    best = float(min(trace.energies))
    run = VqeRun(kind, best, h.exact, abs(best - h.exact), ansatz.duration_ns, trace.evaluations,
                 tuple(float(v) for v in trace.best), tuple(float(v) for v in x))  # fmt: skip
    return _store(kind, config, run)


@dataclass(frozen=True)
class NapaView:
    """What the NAPA panel draws at one setting: the molecule's exact ground energy along its shipped bond
    lengths and at the chosen one, the runs computed so far (None: not optimised yet), and the NAPA schedule's
    |envelope| per channel, one value per sample of ``dt_ns`` (``envelopes[channel][k]`` at ``times_ns[k]``): of
    the trained parameters when NAPA has run, else of the seeded initial ones."""

    config: NapaConfig
    bond_lengths: tuple[float, ...]
    curve: tuple[float, ...]
    exact: float
    runs: dict[str, VqeRun | None]
    samples: int
    dt_ns: float
    envelopes: dict[str, np.ndarray]

    @property
    def trained(self) -> bool:
        return self.runs["napa"] is not None

    @property
    def times_ns(self) -> np.ndarray:
        return np.arange(self.samples) * self.dt_ns

    @property
    def duration_ns(self) -> float:
        return self.samples * self.dt_ns

    def envelope(self, channel: str) -> np.ndarray:
        """|envelope| on ``channel`` (zeros where the schedule plays nothing on it)."""
        return self.envelopes.get(channel, np.zeros(self.samples))


def panel_view(config: NapaConfig) -> NapaView:
    """The NAPA panel's view of ``config`` (reads the run caches only: :func:`vqe` and :func:`baseline` compute)."""
    lengths = bond_lengths(config.molecule)
    runs = {kind: cached(kind, config) for kind in KINDS}
    natives = calibrated_natives(get_device(config.device), config.control, config.target, 3)
    ansatz = PulseAnsatz(natives, config.layers, config.trainable_frequency)
    napa = runs["napa"]
    x = np.array(napa.params) if napa is not None else ansatz.initial(config.seed, scale=0.5)
    schedule = ansatz.schedule(x)
    n = schedule.duration
    envelopes: dict[str, np.ndarray] = {}
    for p in schedule.plays:
        env = envelopes.setdefault(p.channel, np.zeros(n))
        env[p.start : p.stop] += np.abs(p.samples.detach().numpy())
    return NapaView(
        config=config,
        bond_lengths=tuple(lengths),
        curve=tuple(load(config.molecule, b).exact for b in lengths),
        exact=load(config.molecule, config.bond_length).exact,
        runs=runs,
        samples=n,
        dt_ns=float(natives.device.dt),
        envelopes=envelopes,
    )


def clear_caches() -> None:
    """Empty the memory caches (the disk cache stays: delete cache_dir('napa') to recompute)."""
    _memo.clear()
