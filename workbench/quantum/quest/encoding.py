"""A device circuit as QuEst's graph: the circuit DAG with gate nodes carrying gate-type, qubit and device-noise
features, plus global circuit statistics (paper section 3; authors' ``circ_dag_converter``).

Nodes are one input node per used wire, one node per gate (circuit order) and one output node per used wire;
barriers and final measurements are dropped, idle wires too. Edges follow the wires (predecessor -> gate),
one per wire, so a cx after a cx on the same two wires gives two parallel edges, as in qiskit's DAG.

Node feature (24, raw units; :class:`~workbench.quantum.quest.normalize.Normalizer` standardises them)::

    0-5    one-hot type: in, out, rz, x, sx, cx
    6-15   one-hot (two-hot for cx) qubit, wires renumbered in first-use order (at most 10)
    16-19  T1, T2 of qubit a, T1, T2 of qubit b (us; b = 0 for one-qubit nodes)
    20     gate error (1 - average gate fidelity; 0 for in/out and virtual rz)
    21-22  readout P(0|1), P(1|0) of qubit a
    23     topological index (position in the order in-nodes, gates, out-nodes)

Global feature (6): depth, width, and the counts of rz, x, sx, cx. The Liu baseline's feature (110): per-wire
one-qubit gate counts (10) and the cx count of every (control, target) wire pair (10 x 10).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.quantum.calibration import DeviceCalibration

__all__ = ["CircuitGraph", "encode", "GATE_TYPES", "NODE_TYPES", "MAX_QUBITS", "NODE_FEATURES", "GLOBAL_FEATURES",
           "LIU_FEATURES", "CONTINUOUS_COLUMNS", "ENCODING_VERSION", "gate_count"]

NODE_TYPES = ("in", "out", "rz", "x", "sx", "cx")
GATE_TYPES = ("rz", "x", "sx", "cx")
MAX_QUBITS = 10
NODE_FEATURES = 24
GLOBAL_FEATURES = 6
LIU_FEATURES = MAX_QUBITS + MAX_QUBITS * MAX_QUBITS
#: node-feature columns with physical values (standardised); the rest are one-hot
CONTINUOUS_COLUMNS = tuple(range(16, 24))
#: bump when the encoding changes: cached datasets carry it in their key
ENCODING_VERSION = 1
_IGNORED = frozenset({"barrier", "measure"})
_T_CAP_US = 1e4  # an unreported (infinite) T1/T2 is encoded as 10 ms


@dataclass(frozen=True, eq=False)
class CircuitGraph:
    """``x [N, 24]`` float32 node features (raw units), ``edges [2, E]`` int64 (source, target node),
    ``globals [6]`` and ``liu [110]`` float32."""

    x: np.ndarray
    edges: np.ndarray
    globals: np.ndarray
    liu: np.ndarray


def gate_count(circuit: Any) -> int:
    """Instructions of ``circuit`` that become gate nodes (barriers and measurements are not gates)."""
    return sum(1 for inst in circuit.data if inst.name not in _IGNORED)


def _t_us(t: float) -> float:
    return min(t * 1e6, _T_CAP_US) if math.isfinite(t) else _T_CAP_US


def _gate_list(circuit: Any) -> tuple[list[int], list[int], list[int], int]:
    """Type index (into GATE_TYPES), qubit a and qubit b (-1 for one-qubit gates) of every gate, and the
    circuit depth over them (one pass over the instructions)."""
    index = {q: i for i, q in enumerate(circuit.qubits)}
    code = {name: i for i, name in enumerate(GATE_TYPES)}
    kinds, qa, qb = [], [], []
    level = [0] * circuit.num_qubits
    for inst in circuit.data:
        name = inst.name
        k = code.get(name)
        if k is None:
            if name in _IGNORED:
                continue
            raise ValueError(f"gate {name!r} is not in the device basis QuEst encodes: valid gates are "
                             f"{', '.join(GATE_TYPES)} (transpile the circuit to the device first)")
        qubits = inst.qubits
        a = index[qubits[0]]
        kinds.append(k)
        qa.append(a)
        if len(qubits) == 2:
            b = index[qubits[1]]
            qb.append(b)
            level[a] = level[b] = max(level[a], level[b]) + 1
        else:
            qb.append(-1)
            level[a] += 1
    return kinds, qa, qb, max(level, default=0)


def _wire_edges(a: np.ndarray, b: np.ndarray, remap: np.ndarray, width: int, gates: int) -> np.ndarray:
    """Edges ``[2, E]`` along the wires: in-node -> first gate -> ... -> last gate -> out-node of each wire.
    Gate g is node ``width + g``; renumbered wire w has in-node w and out-node ``width + gates + w``."""
    two = b >= 0
    gate_of_event = np.concatenate([np.arange(gates), np.flatnonzero(two)])
    wire_of_event = np.concatenate([remap[a], remap[b[two]]])
    order = np.lexsort((gate_of_event, wire_of_event))  # by wire, then by gate (circuit order)
    node = width + gate_of_event[order]
    wire = wire_of_event[order]
    first = np.ones(len(wire), dtype=bool)
    first[1:] = wire[1:] != wire[:-1]
    last = np.ones(len(wire), dtype=bool)
    last[:-1] = wire[1:] != wire[:-1]
    src = np.concatenate([wire[first], node[:-1][~first[1:]], node[last]])
    dst = np.concatenate([node[first], node[1:][~first[1:]], width + gates + wire[last]])
    return np.stack([src, dst]).astype(np.int64)


def encode(circuit: Any, calibration: DeviceCalibration) -> CircuitGraph:
    """The QuEst graph of ``circuit`` (a qiskit circuit over ``rz, x, sx, cx``; qubit i of the circuit is
    qubit i of ``calibration``) with the noise values of ``calibration``.

    Raises ValueError for other gates, an empty circuit, more than 10 used wires or a circuit wider than the
    calibration.
    """
    if circuit.num_qubits > calibration.num_qubits:
        raise ValueError(f"circuit has {circuit.num_qubits} qubits but the calibration {calibration.name} has "
                         f"{calibration.num_qubits}: valid widths are 1..{calibration.num_qubits}")
    kinds, qa, qb, depth = _gate_list(circuit)
    if not kinds:
        raise ValueError("circuit has no gates: QuEst needs at least one rz, x, sx or cx gate")
    kind = np.asarray(kinds, dtype=np.int64)
    a = np.asarray(qa, dtype=np.int64)
    b = np.asarray(qb, dtype=np.int64)
    two = b >= 0
    # wires in first-use order: a gate's qubit a is used before its qubit b
    events = np.stack([a, b], axis=1).reshape(-1)
    events = events[events >= 0]
    used, first_at = np.unique(events, return_index=True)
    phys = used[np.argsort(first_at)]  # physical qubit of renumbered wire w
    width = len(phys)
    if width > MAX_QUBITS:
        raise ValueError(f"circuit uses {width} qubits: QuEst's encoding holds at most {MAX_QUBITS} "
                         f"(valid range 1..{MAX_QUBITS})")
    gates = len(kinds)
    n = 2 * width + gates
    remap = np.full(calibration.num_qubits, -1, dtype=np.int64)
    remap[phys] = np.arange(width)

    t1 = np.array([_t_us(t) for t in calibration.t1])
    t2 = np.array([_t_us(t) for t in calibration.t2])
    p10 = np.asarray(calibration.readout_p10, dtype=np.float64)
    p01 = np.asarray(calibration.readout_p01, dtype=np.float64)
    table = _error_table(calibration)
    error = table[kind, a, np.where(two, b, a)]

    x = np.zeros((n, NODE_FEATURES), dtype=np.float32)
    ins, outs, ops = np.arange(width), np.arange(width + gates, n), np.arange(width, width + gates)
    x[ins, 0] = 1
    x[outs, 1] = 1
    x[ops, 2 + kind] = 1
    for nodes in (ins, outs):
        x[nodes, 6 + np.arange(width)] = 1
        x[nodes, 16], x[nodes, 17] = t1[phys], t2[phys]
        x[nodes, 21], x[nodes, 22] = p10[phys], p01[phys]
    x[ops, 6 + remap[a]] = 1
    x[ops[two], 6 + remap[b[two]]] = 1
    x[ops, 16], x[ops, 17] = t1[a], t2[a]
    x[ops[two], 18], x[ops[two], 19] = t1[b[two]], t2[b[two]]
    x[ops, 20] = error
    x[ops, 21], x[ops, 22] = p10[a], p01[a]
    x[:, 23] = np.arange(n)

    counts = np.bincount(kind, minlength=len(GATE_TYPES))
    globals_ = np.array([depth, width, *counts], dtype=np.float32)
    liu = np.zeros(LIU_FEATURES, dtype=np.float32)
    np.add.at(liu, remap[a[~two]], 1)
    np.add.at(liu, MAX_QUBITS + remap[a[two]] * MAX_QUBITS + remap[b[two]], 1)
    return CircuitGraph(x, _wire_edges(a, b, remap, width, gates), globals_, liu)


def _error_table(calibration: DeviceCalibration) -> np.ndarray:
    """``[4, n, n]`` gate error by (type, qubit a, qubit b; b = a for one-qubit gates), 0 where not calibrated."""
    n = calibration.num_qubits
    table = np.zeros((len(GATE_TYPES), n, n))
    for g in calibration.gates:
        if g.name in GATE_TYPES and len(g.qubits) in (1, 2):
            q0 = g.qubits[0]
            q1 = g.qubits[1] if len(g.qubits) == 2 else q0
            table[GATE_TYPES.index(g.name), q0, q1] = g.error
    return table

