"""Parameters of ``hybrid-qaoa``: the MaxCut instance, QAOA depth, device, mixer pulse, noise and budget."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.config import Config, param
from workbench.quantum.device import OnDevice, pulse_device_names
from workbench.quantum.hybrid_qaoa.maxcut import Graph, parse_graph


@dataclass(frozen=True, kw_only=True)
class HybridQaoaConfig(OnDevice, Config):
    """Gate QAOA vs hybrid (gate cost layer, pulse mixer) on ``graph`` with ``p`` layers on ``device``."""

    graph: str = param(
        "ring-5",
        label="graph",
        help="edge list 'u-v,u-v:w,...' or a generator ring-N, complete-N, regular3-N, random-N[-sSEED]",
    )
    p: int = param(1, lo=1, hi=3, unit="layers", label="QAOA layers p", help="cost + mixer layers")
    device: str = param(
        "fake_jakarta", choices=pulse_device_names(), label="device", help="device snapshot with Hamiltonian data"
    )
    mixer_dt: int = param(
        128, lo=16, hi=640, unit="dt", label="hybrid mixer", help="duration of the hybrid's mixer pulse (samples)"
    )
    noise: str = param("device", choices=("device", "none"), label="noise", help="device noise or none")
    budget: int = param(100, lo=5, hi=5000, unit="evaluations", label="budget", help="COBYLA evaluations per ansatz")
    grid: int = param(6, lo=2, hi=20, unit="points", label="start grid", help="grid points per axis for the start")
    seed: int = param(0, lo=0, hi=2**31 - 1, label="transpiler seed", help="seed_transpiler of the layout")
    optimization_level: int = param(1, lo=0, hi=3, label="transpiler level", help="qiskit optimization_level")

    def check_combination(self) -> None:
        g = self.parsed_graph()
        qubits = self.resolved_device().require_hamiltonian().num_qubits
        if g.n > qubits:
            raise ValueError(f"graph={self.graph!r} has {g.n} nodes: valid range on {self.device} is 2..{qubits}")
        if g.n > 7:
            raise ValueError(f"graph={self.graph!r} has {g.n} nodes: valid range is 2..7 (density matrices)")

    def parsed_graph(self) -> Graph:
        return parse_graph(self.graph)
