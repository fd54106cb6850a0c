"""What the hybrid-qaoa runner and study both run: both ansaetze trained on one instance with equal budgets.

Caches: :func:`compare` is memoised here and on disk (``cache_dir("hybrid_qaoa")``, JSON written atomically,
keyed by every config field and :data:`CACHE_VERSION`); :func:`clear_caches` empties the memory cache.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

from workbench.atomic import atomic_write
from workbench.data import cache_dir
from workbench.quantum.hybrid_qaoa.circuits import qaoa_layout
from workbench.quantum.hybrid_qaoa.config import HybridQaoaConfig
from workbench.quantum.hybrid_qaoa.maxcut import max_cut
from workbench.quantum.hybrid_qaoa.simulate import GATE_MIXER_DT, Evaluator
from workbench.quantum.hybrid_qaoa.train import Training, grid_start, train

__all__ = ["CACHE_VERSION", "Comparison", "evaluator", "compare", "cached_comparison", "clear_caches"]

CACHE_VERSION = 2  # 2: the gate-equivalent hybrid start is calibrated (equivalent_pulse)


@dataclass(frozen=True)
class Comparison:
    """Both ansaetze on one setting: approximation ratios (best expected cut / optimum), traces of the
    best-so-far ratio per evaluation, cut-value distributions at the best parameters, mixer durations (ns)."""

    optimum_cut: float
    optimum_assignments: tuple[int, ...]
    approx_ratio_gate: float
    approx_ratio_hybrid: float
    start_ratio: float
    trace_gate: tuple[float, ...]
    trace_hybrid: tuple[float, ...]
    cut_distribution_gate: dict[str, float]
    cut_distribution_hybrid: dict[str, float]
    mixer_ns_gate: float
    mixer_ns_hybrid: float
    grid_evaluations: int
    params_gate: tuple[float, ...]
    params_hybrid: tuple[float, ...]
    active_qubits: tuple[int, ...]
    gate_counts: dict[str, int]

    @property
    def gain(self) -> float:
        """Relative improvement of the hybrid's approximation ratio over the gate QAOA's."""
        return self.approx_ratio_hybrid / self.approx_ratio_gate - 1

    @property
    def mixer_reduction(self) -> float:
        return 1 - self.mixer_ns_hybrid / self.mixer_ns_gate


def evaluator(config: HybridQaoaConfig) -> Evaluator:
    """The evaluator of ``config``'s transpiled instance (noise as configured)."""
    layout = qaoa_layout(config.parsed_graph(), config.p, config.resolved_device(), seed_transpiler=config.seed,
                         optimization_level=config.optimization_level)  # fmt: skip
    return Evaluator(layout, config.noise == "device", config.mixer_dt)


def _distribution(evaluator: Evaluator, kind: str, params: np.ndarray) -> dict[str, float]:
    probs = evaluator.probabilities(kind, params)
    out: dict[str, float] = {}
    for value, pr in zip(evaluator.cuts, probs):
        key = f"{value:g}"
        out[key] = out.get(key, 0.0) + float(pr)
    return dict(sorted(out.items(), key=lambda kv: float(kv[0])))


def _cache_path(config: HybridQaoaConfig):
    key = json.dumps({"v": CACHE_VERSION, **config.to_flat_dict()}, sort_keys=True)
    return cache_dir("hybrid_qaoa") / f"compare-{hashlib.sha256(key.encode()).hexdigest()[:16]}.json"


def cached_comparison(config: HybridQaoaConfig) -> Comparison | None:
    """The comparison of ``config`` if it was computed before (memory or disk), else None."""
    if config in _memo:
        return _memo[config]
    path = _cache_path(config)
    if path.exists():
        try:
            data = json.loads(path.read_text())
            result = Comparison(**{k: tuple(v) if isinstance(v, list) else v for k, v in data.items()})
            _memo[config] = result
            return result
        except (ValueError, TypeError):
            return None
    return None


_memo: dict[HybridQaoaConfig, Comparison] = {}


@dataclass(frozen=True)
class _GateSide:
    """What the gate QAOA's side of a comparison gives (it never plays the hybrid's mixer, so it does not depend
    on ``mixer_dt``): the grid's start, its ratio numerator, the COBYLA run and the best parameters seen."""

    x0: np.ndarray
    grid_evaluations: int
    start: float
    training: Training
    best: np.ndarray

    @property
    def evaluations(self) -> int:
        return self.grid_evaluations + self.training.evaluations


_gate_memo: dict[HybridQaoaConfig, _GateSide] = {}


def _gate_side(config: HybridQaoaConfig) -> _GateSide | None:
    """The gate side of ``config``: memoised per config up to ``mixer_dt`` (a duration sweep trains the gate QAOA
    once); None when it was not computed yet."""
    return _gate_memo.get(config.replace(mixer_dt=GATE_MIXER_DT))


def _train_gate(config: HybridQaoaConfig, counting: _Counting) -> _GateSide:
    """Grid start and COBYLA for the gate QAOA on ``counting``'s evaluator (every evaluation counted)."""
    x0, n_grid = grid_start(counting, config.grid)
    start = counting.evaluator.expected_cut("gate", x0)
    gate = train(counting, "gate", x0, config.budget)
    side = _GateSide(x0, n_grid, start, gate, _best(counting, "gate", gate))
    _gate_memo[config.replace(mixer_dt=GATE_MIXER_DT)] = side
    return side


def compare(config: HybridQaoaConfig, on_evaluation: Callable[[int, int], None] | None = None) -> Comparison:
    """Train both ansaetze on ``config``'s instance with equal budgets (see ``train``); memoised and cached (the
    gate side is shared between configs that differ only in ``mixer_dt``)."""
    hit = cached_comparison(config)
    if hit is not None:
        return hit
    ev = evaluator(config)
    graph = config.parsed_graph()
    opt, assignments = max_cut(graph)
    total = config.grid**2 + 2 * config.budget
    done = [0]

    def tick(n: int = 1) -> None:
        done[0] += n
        if on_evaluation is not None:
            on_evaluation(done[0], total)

    counting = _Counting(ev, tick)
    gate_side = _gate_side(config)
    if gate_side is None:
        gate_side = _train_gate(config, counting)
    else:
        tick(gate_side.evaluations)
    gate = gate_side.training
    hybrid = train(counting, "hybrid", ev.hybrid_from_gate(gate_side.x0), config.budget)
    dt = ev.layout.device.require_hamiltonian().dt
    result = Comparison(
        optimum_cut=opt,
        optimum_assignments=assignments,
        approx_ratio_gate=gate.best_cut / opt,
        approx_ratio_hybrid=hybrid.best_cut / opt,
        start_ratio=gate_side.start / opt,
        trace_gate=tuple(float(x) / opt for x in gate.trace),
        trace_hybrid=tuple(float(x) / opt for x in hybrid.trace),
        cut_distribution_gate=_distribution(ev, "gate", gate_side.best),
        cut_distribution_hybrid=_distribution(ev, "hybrid", _best(counting, "hybrid", hybrid)),
        mixer_ns_gate=GATE_MIXER_DT * dt,
        mixer_ns_hybrid=config.mixer_dt * dt,
        grid_evaluations=gate_side.grid_evaluations,
        params_gate=tuple(float(x) for x in gate_side.best),
        params_hybrid=tuple(float(x) for x in _best(counting, "hybrid", hybrid)),
        active_qubits=ev.layout.active,
        gate_counts=ev.layout.gate_counts,
    )
    _memo[config] = result
    with atomic_write(_cache_path(config), "w", encoding="utf-8") as f:
        json.dump(asdict(result), f)
    return result


class _Counting:
    """An evaluator that reports every evaluation and remembers the best parameters per ansatz."""

    def __init__(self, evaluator: Evaluator, tick: Callable[..., None]) -> None:
        self.evaluator, self.tick = evaluator, tick
        self.layout = evaluator.layout
        self.best: dict[str, tuple[float, np.ndarray]] = {}

    def expected_cut(self, kind: str, params: np.ndarray) -> float:
        value = self.evaluator.expected_cut(kind, params)
        self.tick()
        if value > self.best.get(kind, (-np.inf, None))[0]:
            self.best[kind] = (value, np.array(params, dtype=float))
        return value


def _best(counting: _Counting, kind: str, training) -> np.ndarray:
    return counting.best[kind][1] if kind in counting.best else training.params


def clear_caches() -> None:
    """Empty the memory caches (the disk cache stays: delete cache_dir('hybrid_qaoa') to reset)."""
    _memo.clear()
    _gate_memo.clear()
