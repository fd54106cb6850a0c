"""The gate-level QAOA circuit on a device and its segments.

``p`` layers of ``rzz(gamma_l * w)`` on every edge (the cost layer) and ``rx(2 beta_l)`` on every node (the
mixer), after Hadamards, separated by barriers; transpiled once to the device (its basis gates and coupling
map, ``optimization_level`` and ``seed_transpiler`` fixed, parameters kept free), then cut at the barriers
into cost segments and mixer segments over the *active* physical qubits (renumbered ``0..k-1``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from workbench.quantum.device import Device
from workbench.quantum.hybrid_qaoa.maxcut import Graph

__all__ = ["QaoaLayout", "qaoa_circuit", "qaoa_layout"]


@dataclass(frozen=True, eq=False)
class QaoaLayout:
    """The transpiled QAOA: ``active`` physical qubits; ``segments`` alternate cost (qiskit circuits on the
    active qubits, with free parameters ``gamma[l]``) and mixer (per active qubit: the list of ``(name,
    angle expression)`` the transpiler made of ``rx(2 beta_l)``); ``final`` maps logical node -> active index
    at the end (routing may move nodes); ``mixer_qubits[l]``: active qubits the l-th mixer acts on."""

    graph: Graph
    p: int
    device: Device
    active: tuple[int, ...]
    cost: tuple[object, ...]
    mixers: tuple[dict[int, tuple[tuple[str, object], ...]], ...]
    final: tuple[int, ...]
    gammas: tuple[object, ...]
    betas: tuple[object, ...]
    gate_counts: dict[str, int]


def qaoa_circuit(graph: Graph, p: int):
    from qiskit import QuantumCircuit
    from qiskit.circuit import ParameterVector

    gamma, beta = ParameterVector("gamma", p), ParameterVector("beta", p)
    qc = QuantumCircuit(graph.n)
    qc.h(range(graph.n))
    for layer in range(p):
        for u, v, w in graph.edges:
            qc.rzz(gamma[layer] * w, u, v)
        qc.barrier()
        for q in range(graph.n):
            qc.rx(2 * beta[layer], q)
        qc.barrier()
    return qc, tuple(gamma), tuple(beta)


@functools.lru_cache(maxsize=64)
def qaoa_layout(
    graph: Graph, p: int, device: Device, *, seed_transpiler: int = 0, optimization_level: int = 1
) -> QaoaLayout:
    """Transpile the QAOA of ``graph`` with ``p`` layers to ``device`` and cut it into segments."""
    from qiskit import QuantumCircuit, transpile

    backend = device.backend
    if graph.n > backend.num_qubits:
        raise ValueError(f"graph has {graph.n} nodes but {device.name} has {backend.num_qubits} qubits")
    qc, gamma, beta = qaoa_circuit(graph, p)
    tq = transpile(qc, backend=backend, optimization_level=optimization_level, seed_transpiler=seed_transpiler)
    touched = sorted(
        {tq.find_bit(b).index for inst in tq.data if inst.operation.name != "barrier" for b in inst.qubits}
    )
    index = {q: i for i, q in enumerate(touched)}
    segments: list[list] = [[]]
    for inst in tq.data:
        if inst.operation.name == "barrier":
            segments.append([])
        else:
            segments[-1].append(inst)
    # segments: cost, mixer, cost, mixer, ... and an empty one after the last barrier
    cost, mixers = [], []
    for k in range(p):
        c = QuantumCircuit(len(touched))
        for inst in segments[2 * k]:
            c.append(inst.operation, [index[tq.find_bit(b).index] for b in inst.qubits])
        cost.append(c)
        per_qubit: dict[int, list] = {}
        for inst in segments[2 * k + 1]:
            if len(inst.qubits) != 1 or inst.operation.name not in ("rz", "sx", "x"):
                raise ValueError(f"unexpected {inst.operation.name} in the mixer of {device.name}")
            q = index[tq.find_bit(inst.qubits[0]).index]
            angle = inst.operation.params[0] if inst.operation.params else None
            per_qubit.setdefault(q, []).append((inst.operation.name, angle))
        mixers.append({q: tuple(ops) for q, ops in per_qubit.items()})
    layout = tq.layout.final_index_layout() if tq.layout is not None else list(range(graph.n))
    counts = {k: int(v) for k, v in tq.count_ops().items() if k != "barrier"}
    return QaoaLayout(
        graph=graph, p=p, device=device, active=tuple(touched), cost=tuple(cost), mixers=tuple(mixers),
        final=tuple(index[q] for q in layout[: graph.n]), gammas=gamma, betas=beta, gate_counts=counts,
    )  # fmt: skip
