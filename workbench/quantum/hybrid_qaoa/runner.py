"""Headless runner of ``hybrid-qaoa``: ``workbench run hybrid-qaoa --graph "0-1,1-2,..." --p 1 --device D --json``.

Trains the gate QAOA and the hybrid (same transpiled cost layers, a pulse mixer) with equal budgets and prints
``{"optimum_cut", "approx_ratio_hybrid", "approx_ratio_gate", "mixer_ns_hybrid", "mixer_ns_gate", ...}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.quantum.hybrid_qaoa.config import HybridQaoaConfig
from workbench.quantum.hybrid_qaoa.experiment import compare
from workbench.registry import Technique
from workbench.results import Result

__all__ = ["HybridQaoaResult", "run", "format_table", "TECHNIQUE"]


@dataclass(frozen=True, kw_only=True)
class HybridQaoaResult(Result):
    """What ``workbench run hybrid-qaoa`` prints."""

    technique: str = "hybrid-qaoa"
    graph: str
    nodes: int
    p: int
    device: str
    noise: str
    optimum_cut: float
    approx_ratio_hybrid: float
    approx_ratio_gate: float
    gain: float
    mixer_ns_hybrid: float
    mixer_ns_gate: float
    start_ratio: float
    evaluations_per_ansatz: int
    grid_evaluations: int
    active_qubits: tuple[int, ...]
    gate_counts: dict[str, int]


def run(config: HybridQaoaConfig) -> HybridQaoaResult:
    """Train both ansaetze (memoised and cached by the experiment) and report their approximation ratios."""
    c = compare(config)
    return HybridQaoaResult(
        graph=config.graph, nodes=config.parsed_graph().n, p=config.p, device=config.device, noise=config.noise,
        optimum_cut=c.optimum_cut, approx_ratio_hybrid=c.approx_ratio_hybrid, approx_ratio_gate=c.approx_ratio_gate,
        gain=c.gain, mixer_ns_hybrid=c.mixer_ns_hybrid, mixer_ns_gate=c.mixer_ns_gate, start_ratio=c.start_ratio,
        evaluations_per_ansatz=config.budget, grid_evaluations=c.grid_evaluations, active_qubits=c.active_qubits,
        gate_counts=c.gate_counts,
    )  # fmt: skip


def format_table(result: dict[str, Any]) -> str:
    """Both ansaetze side by side."""
    head = (
        f"MaxCut {result['graph']} ({result['nodes']} nodes, optimum {result['optimum_cut']:g}), p = {result['p']}, "
        f"{result['device']} qubits {tuple(result['active_qubits'])}, noise {result['noise']}, "
        f"{result['evaluations_per_ansatz']} COBYLA evaluations each after a {result['grid_evaluations']}-point start"
    )
    return "\n".join([
        head,
        f"{'ansatz':<8}{'approx ratio':>14}{'mixer ns':>10}",
        f"{'gate':<8}{result['approx_ratio_gate']:>14.4f}{result['mixer_ns_gate']:>10.1f}",
        f"{'hybrid':<8}{result['approx_ratio_hybrid']:>14.4f}{result['mixer_ns_hybrid']:>10.1f}",
        f"gain {result['gain']:+.2%}; mixer {1 - result['mixer_ns_hybrid'] / result['mixer_ns_gate']:.0%} shorter",
    ])  # fmt: skip


TECHNIQUE = Technique(
    name="hybrid-qaoa",
    config=HybridQaoaConfig,
    run=run,
    format_table=format_table,
    panel="widgets.quantum.hybrid_qaoa:HybridQaoaPanel",
    notebook="notebooks/quantum/hybrid_qaoa.ipynb",
    smoke={"graph": "ring-4", "budget": 10, "grid": 2},
    processes=False,
)
