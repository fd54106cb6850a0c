"""What the hybrid-qaoa panel and notebook show: both ansaetze trained on one instance (the experiment's
:func:`compare`, re-exported), the mixer-duration sweep, the pulses, the graph (the paper's claims:
:mod:`workbench.quantum.hybrid_qaoa.claims`).

Caches: :func:`compare` is memoised and cached on disk by the experiment; the views here are memoised in memory;
:func:`clear_caches` empties the memory caches.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import networkx as nx
import numpy as np

from workbench.quantum.common.pulse.waveforms import drag
from workbench.quantum.hybrid_qaoa import experiment
from workbench.quantum.hybrid_qaoa.circuits import qaoa_layout
from workbench.quantum.hybrid_qaoa.config import HybridQaoaConfig
from workbench.quantum.hybrid_qaoa.experiment import Comparison, cached_comparison, compare, evaluator
from workbench.quantum.hybrid_qaoa.maxcut import cut_values, max_cut
from workbench.quantum.hybrid_qaoa.simulate import GATE_MIXER_DT, calibrated_sx

__all__ = [
    "Comparison",
    "compare",
    "cached_comparison",
    "duration_sweep",
    "MixerView",
    "mixer_view",
    "graph_view",
    "clear_caches",
]


@functools.lru_cache(maxsize=32)
def duration_sweep(config: HybridQaoaConfig, durations: tuple[int, ...]) -> dict[str, list[float]]:
    """The hybrid's approximation ratio for each mixer duration (samples), the gate QAOA's as reference, and
    the largest rotation a pulse of that duration can make (rad, amplitude 1, mean over qubits)."""
    ratios, reach, ns = [], [], []
    gate = compare(config).approx_ratio_gate
    for d in durations:
        c = config.replace(mixer_dt=d)
        ratios.append(compare(c).approx_ratio_hybrid)
        ev = evaluator(c)
        reach.append(float(np.mean([ev.max_rotation(q) for q in range(ev.num_active)])))
        ns.append(compare(c).mixer_ns_hybrid)
    return {"durations_dt": list(durations), "durations_ns": ns, "hybrid": ratios, "gate": [gate] * len(durations),
            "max_rotation": reach}  # fmt: skip


@dataclass(frozen=True)
class MixerView:
    """The two mixers of one layer as played: envelopes (|amplitude|) over time (ns), for a rotation of
    ``theta`` about X, on the first active qubit."""

    t_gate: np.ndarray
    env_gate: np.ndarray
    t_hybrid: np.ndarray
    env_hybrid: np.ndarray
    mixer_ns_gate: float
    mixer_ns_hybrid: float
    reachable: bool
    t2_ns: float


@functools.lru_cache(maxsize=64)
def mixer_view(config: HybridQaoaConfig, theta: float = np.pi / 2) -> MixerView:
    """Cheap (no training): what each mixer plays for one layer."""
    device = config.resolved_device()
    layout = qaoa_layout(config.parsed_graph(), config.p, device, seed_transpiler=config.seed,
                         optimization_level=config.optimization_level)  # fmt: skip
    q = layout.active[0]
    transmon = device.transmons((q,))
    dt = transmon.dt
    sx = calibrated_sx(device, q, 3)
    one = drag(160, sx.amp, 40, sx.beta).abs().numpy()
    env_gate = np.concatenate([one, one])
    d = config.mixer_dt
    area = float(drag(d, 1.0, d / 4, 0.0).real.sum())
    amp = theta / (transmon.drive[0] * area * dt)
    env_h = drag(d, min(amp, 1.0), d / 4, -1 / (2 * transmon.anharmonicity[0] * dt)).abs().numpy()
    t2 = transmon.t2[0] if config.noise == "device" else float("inf")
    return MixerView(
        np.arange(env_gate.size) * dt, env_gate, np.arange(d) * dt, env_h, GATE_MIXER_DT * dt, d * dt, amp <= 1.0, t2
    )


@functools.lru_cache(maxsize=64)
def graph_view(graph_spec: str) -> dict:
    """Node positions (deterministic spring layout), edges and one optimal cut of a graph spec."""
    from workbench.quantum.hybrid_qaoa.maxcut import parse_graph

    g = parse_graph(graph_spec)
    pos = nx.spring_layout(g.networkx(), seed=1)
    opt, assignments = max_cut(g)
    side = [(assignments[0] >> i) & 1 for i in range(g.n)]
    return {"x": [float(pos[i][0]) for i in range(g.n)], "y": [float(pos[i][1]) for i in range(g.n)],
            "edges": [(u, v) for u, v, _ in g.edges], "side": side, "optimum": opt,
            "cut_values": cut_values(g)}  # fmt: skip


def clear_caches() -> None:
    """Empty the memory caches (the disk cache stays: delete cache_dir('hybrid_qaoa') to reset)."""
    experiment.clear_caches()
    duration_sweep.cache_clear()
    mixer_view.cache_clear()
    graph_view.cache_clear()
