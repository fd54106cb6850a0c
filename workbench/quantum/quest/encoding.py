"""A device circuit as QuEst's graph: the circuit DAG with gate nodes carrying gate-type, qubit and device-noise
features, plus global circuit statistics (paper section 3; authors' ``circ_dag_converter``).

Nodes are one input node per used wire, one node per gate (circuit order) and one output node per used wire;
barriers and final measurements are dropped, idle wires too. Edges follow the wires (predecessor -> gate),
one per wire, so a cx after a cx on the same two wires gives two parallel edges, as in qiskit's DAG.

Node feature (30, raw units; :class:`~workbench.quantum.quest.batching.Normalizer` standardises them). The
paper's 24 columns, with the two-qubit gate widened from ``cx`` to today's ``cx``, ``ecr`` and ``cz`` (IBM's
Eagle devices use ``ecr``, Heron devices ``cz``) and, the workbench's extension (encoding versions 2 and 3), each gate's
calibrated duration and what relaxation over it costs::

    0-7    one-hot type: in, out, rz, x, sx, cx, ecr, cz
    8-17   one-hot (two-hot for two-qubit gates) qubit, wires renumbered in first-use order (at most 10)
    18-21  T1, T2 of qubit a, T1, T2 of qubit b (us; b = 0 for one-qubit nodes)
    22     gate error (1 - average gate fidelity; 0 for in/out and virtual rz)
    23-24  readout P(0|1), P(1|0) of qubit a
    25     gate duration (ns; 0 for in/out and virtual rz)
    26     relaxation infidelity r: 1 - average gate fidelity of thermal relaxation (T1, T2) of the gate's
           qubits over its duration, r = 1 - (d F_pro + 1)/(d + 1), F_pro = prod_q (2 - g_q + 2 l_q)/4 with
           g = 1 - exp(-t/T1), l = exp(-t/T2), d = 2**k (T2 capped at 2 T1, as the noise model does)
    27     effective error max(gate error, r): aer's device model adds depolarizing only for the error the
           relaxation leaves, so a gate whose relaxation exceeds its reported error costs r (e.g. fake_toronto's
           5-8 us cx gates)
    28     topological index (position in the order in-nodes, gates, out-nodes)
    29     echo cost (encoding version 3): -log of the first-order survival of the echo under this gate's noise
           channel, after the gate and after its inverse (:mod:`~workbench.quantum.quest._echo`: the ideal state's
           reduced density matrix on the gate's qubits against aer's channel, non-unital relaxation included)

Why durations: without them a device whose gates are slow for its T1/T2 looks like one whose gates are fast,
and the model cannot tell them apart (fake_toronto's cx take 5-8 us against fake_lima's 0.3-0.5 us).

Global feature (9): depth, width, the counts of rz, x, sx and two-qubit gates, and three calibration sums
(workbench extension): ``sum_gates -log(1 - effective error)``, ``sum_wires -log(1 - P(1|0))`` (the
log of the estimated success probability of the circuit's gates and of reading all-zero) and the sum of the echo
costs (column 29). The paper's baselines read only the first six. The Liu baseline's feature (110): per-wire
one-qubit gate counts (10) and the two-qubit gate count of every (qubit a, qubit b) wire pair (10 x 10).

Why echo costs (version 3): a gate's average infidelity does not say what its error costs PST. On fake_toronto
(cx of 5-14 us) the error is mostly relaxation (dephasing and amplitude damping), which costs an echo far less
than depolarizing noise of the same average infidelity when the qubits sit near basis states; version 2's model
read every infidelity as depolarizing and underpredicted controlled-phase circuits there by 0.10-0.15 PST. The
echo cost depends on the state the gate meets, so it needs the rz angles (the only place the encoding reads them).

:func:`encode` is the reference, one circuit at a time; :func:`encode_batch` (the prediction path) gives the same
graphs bit for bit for a whole batch, with numpy over all gates of all circuits at once (tested feature by feature).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.quantum.calibration import DeviceCalibration

__all__ = [
    "CircuitGraph",
    "EncodedBatch",
    "encode",
    "encode_batch",
    "clear_device_tables",
    "GATE_TYPES",
    "NODE_TYPES",
    "ONE_QUBIT_GATES",
    "TWO_QUBIT_GATES",
    "MAX_QUBITS",
    "NODE_FEATURES",
    "GLOBAL_FEATURES",
    "LIU_FEATURES",
    "CONTINUOUS_COLUMNS",
    "QUBIT_COLUMN",
    "PHYSICAL_COLUMN",
    "ENCODING_VERSION",
    "gate_count",
]

NODE_TYPES = ("in", "out", "rz", "x", "sx", "cx", "ecr", "cz")
GATE_TYPES = ("rz", "x", "sx", "cx", "ecr", "cz")
ONE_QUBIT_GATES = ("rz", "x", "sx")
TWO_QUBIT_GATES = ("cx", "ecr", "cz")
MAX_QUBITS = 10
NODE_FEATURES = 30
GLOBAL_FEATURES = 9
LIU_FEATURES = MAX_QUBITS + MAX_QUBITS * MAX_QUBITS
#: first qubit one-hot column, first physical column
QUBIT_COLUMN = len(NODE_TYPES)
PHYSICAL_COLUMN = QUBIT_COLUMN + MAX_QUBITS
#: node-feature columns with physical values (standardised); the rest are one-hot
CONTINUOUS_COLUMNS = tuple(range(PHYSICAL_COLUMN, NODE_FEATURES))
#: bump when the encoding changes: cached datasets carry it in their key
ENCODING_VERSION = 3
_IGNORED = frozenset({"barrier", "measure"})
_CODE = {name: i for i, name in enumerate(GATE_TYPES)}
_FIRST_TWO = GATE_TYPES.index(TWO_QUBIT_GATES[0])
_T_CAP_US = 1e4  # an unreported (infinite) T1/T2 is encoded as 10 ms


@dataclass(frozen=True, eq=False)
class CircuitGraph:
    """``x [N, 30]`` float32 node features (raw units), ``edges [2, E]`` int64 (source, target node),
    ``globals [9]`` and ``liu [110]`` float32."""

    x: np.ndarray
    edges: np.ndarray
    globals: np.ndarray
    liu: np.ndarray


def gate_count(circuit: Any) -> int:
    """Instructions of ``circuit`` that become gate nodes (barriers and measurements are not gates)."""
    return sum(1 for inst in circuit.data if inst.name not in _IGNORED)


def _gate_list(circuit: Any) -> tuple[list[int], list[int], list[int], list[float], int]:
    """Type index (into GATE_TYPES), qubit a, qubit b (-1 for one-qubit gates) and rz angle (0 for other gates) of
    every gate, and the circuit depth over them (one pass over the instructions)."""
    index = {q: i for i, q in enumerate(circuit.qubits)}
    code = _CODE
    kinds, qa, qb, angles = [], [], [], []
    level = [0] * circuit.num_qubits
    for inst in circuit.data:
        name = inst.name
        k = code.get(name)
        if k is None:
            if name in _IGNORED:
                continue
            raise ValueError(
                f"gate {name!r} is not in the device basis QuEst encodes: valid gates are "
                f"{', '.join(GATE_TYPES)} (transpile the circuit to the device first)"
            )
        qubits = inst.qubits
        a = index[qubits[0]]
        kinds.append(k)
        qa.append(a)
        angles.append(float(inst.params[0]) if k == 0 else 0.0)
        if k >= _FIRST_TWO:
            if len(qubits) != 2:
                raise ValueError(
                    f"gate {name!r} on {len(qubits)} qubits: QuEst encodes one-qubit "
                    f"{', '.join(ONE_QUBIT_GATES)} and two-qubit {', '.join(TWO_QUBIT_GATES)}"
                )
            b = index[qubits[1]]
            qb.append(b)
            la, lb = level[a], level[b]
            level[a] = level[b] = (la if la > lb else lb) + 1
        else:
            qb.append(-1)
            level[a] += 1
    return kinds, qa, qb, angles, max(level, default=0)


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


def encode(
    circuit: Any,
    calibration: DeviceCalibration,
    *,
    _tables: tuple[np.ndarray, ...] | None = None,
) -> CircuitGraph:
    """The QuEst graph of ``circuit`` (a qiskit circuit over ``rz, x, sx`` and one of ``cx, ecr, cz``; qubit i of
    the circuit is qubit i of ``calibration``) with the noise values of ``calibration``.

    Raises ValueError for other gates, an empty circuit, more than 10 used wires or a circuit wider than the
    calibration. Example::

        >>> from qiskit import QuantumCircuit
        >>> from workbench.quantum.device import get_device
        >>> qc = QuantumCircuit(2); _ = qc.sx(0); _ = qc.ecr(0, 1)
        >>> encode(qc, get_device("fake_brisbane").subset((0, 1))).x.shape
        (6, 30)
    """
    if circuit.num_qubits > calibration.num_qubits:
        raise ValueError(
            f"circuit has {circuit.num_qubits} qubits but the calibration {calibration.name} has "
            f"{calibration.num_qubits}: valid widths are 1..{calibration.num_qubits}"
        )
    w = _wires(circuit, calibration.num_qubits)
    tables = _device_arrays(calibration) if _tables is None else _tables
    noise = _gate_noise(w, tables)
    x = _node_features(w, tables, noise)
    return CircuitGraph(x, _wire_edges(w.a, w.b, w.remap, w.width, w.gates), *_global_features(w, tables, noise))


@dataclass(frozen=True, eq=False)
class _Wires:
    """A circuit's gate list (``kind``, qubits ``a``, ``b`` (-1: one-qubit gate), ``angles``: ``[G]``), its depth,
    and its used wires: ``phys[w]`` the physical qubit of renumbered wire w, ``remap`` the inverse ``[Q]``."""

    kind: np.ndarray
    a: np.ndarray
    b: np.ndarray
    angles: np.ndarray
    depth: int
    phys: np.ndarray
    remap: np.ndarray

    @property
    def two(self) -> np.ndarray:
        return self.b >= 0

    @property
    def width(self) -> int:
        return len(self.phys)

    @property
    def gates(self) -> int:
        return len(self.kind)


def _wires(circuit: Any, num_qubits: int) -> _Wires:
    """The gate list of ``circuit`` and its wires in first-use order (a gate's qubit a before its qubit b)."""
    kinds, qa, qb, angles, depth = _gate_list(circuit)
    kind = np.asarray(kinds, dtype=np.int64)
    a = np.asarray(qa, dtype=np.int64)
    b = np.asarray(qb, dtype=np.int64)
    if not len(kind):
        raise ValueError("circuit has no gates: QuEst needs at least one rz, x, sx, cx, ecr or cz gate")
    events = np.stack([a, b], axis=1).reshape(-1)
    events = events[events >= 0]
    used, first_at = np.unique(events, return_index=True)
    phys = used[np.argsort(first_at)]  # physical qubit of renumbered wire w
    if len(phys) > MAX_QUBITS:
        raise ValueError(
            f"circuit uses {len(phys)} qubits: QuEst's encoding holds at most {MAX_QUBITS} "
            f"(valid range 1..{MAX_QUBITS})"
        )
    remap = np.full(num_qubits, -1, dtype=np.int64)
    remap[phys] = np.arange(len(phys))
    return _Wires(kind, a, b, np.asarray(angles), depth, phys, remap)


def _device_arrays(calibration: DeviceCalibration) -> tuple[np.ndarray, ...]:
    """T1/T2 (s, and us capped), readout p10/p01 ``[Q]`` and the gate error/duration tables of ``calibration``
    (the tuple :func:`_device_tables` keeps per calibration)."""
    t1_s, t2_s = _times(calibration)
    t1, t2 = np.minimum(t1_s * 1e6, _T_CAP_US), np.minimum(t2_s * 1e6, _T_CAP_US)
    p10 = np.asarray(calibration.readout_p10, dtype=np.float64)
    p01 = np.asarray(calibration.readout_p01, dtype=np.float64)
    errors, durations = _gate_tables(calibration)
    return t1_s, t2_s, t1, t2, p10, p01, errors, durations


def _gate_noise(w: _Wires, tables: tuple[np.ndarray, ...]) -> dict[str, np.ndarray]:
    """Per gate ``[G]``: calibrated ``error``, ``duration`` (s), relaxation infidelity ``relax``, ``effective``
    (the larger of the two) and the ``echo`` column."""
    t1_s, t2_s, _, _, _, _, errors, durations = tables
    a, two = w.a, w.two
    b_or_a = np.where(two, w.b, a)
    error = errors[w.kind, a, b_or_a]  # [G]
    duration = durations[w.kind, a, b_or_a]  # [G] seconds
    relax = _relaxation_infidelity(
        duration, t1_s[a], t2_s[a], np.where(two, t1_s[b_or_a], np.inf), np.where(two, t2_s[b_or_a], np.inf), two
    )  # [G]
    echo = _echo_column(
        w.kind, w.remap[a], np.where(two, w.remap[b_or_a], -1), w.angles, duration, error, relax,
        (t1_s[a], t2_s[a]), (t1_s[b_or_a], t2_s[b_or_a]), np.array([0, w.gates]), np.array([w.width]),
    )  # fmt: skip
    return {"error": error, "duration": duration, "relax": relax, "effective": np.maximum(error, relax), "echo": echo}


def _node_features(w: _Wires, tables: tuple[np.ndarray, ...], noise: dict[str, np.ndarray]) -> np.ndarray:
    """Node features ``[2 * width + G, NODE_FEATURES]``: in-nodes, gate nodes, out-nodes (see the module
    docstring for the columns)."""
    _, _, t1, t2, p10, p01, _, _ = tables
    a, b, two, phys, remap, width, gates = w.a, w.b, w.two, w.phys, w.remap, w.width, w.gates
    n = 2 * width + gates
    x = np.zeros((n, NODE_FEATURES), dtype=np.float32)
    ins, outs, ops = np.arange(width), np.arange(width + gates, n), np.arange(width, width + gates)
    q0, p0 = QUBIT_COLUMN, PHYSICAL_COLUMN
    x[ins, 0] = 1
    x[outs, 1] = 1
    x[ops, 2 + w.kind] = 1
    for nodes in (ins, outs):
        x[nodes, q0 + np.arange(width)] = 1
        x[nodes, p0], x[nodes, p0 + 1] = t1[phys], t2[phys]
        x[nodes, p0 + 5], x[nodes, p0 + 6] = p10[phys], p01[phys]
    x[ops, q0 + remap[a]] = 1
    x[ops[two], q0 + remap[b[two]]] = 1
    x[ops, p0], x[ops, p0 + 1] = t1[a], t2[a]
    x[ops[two], p0 + 2], x[ops[two], p0 + 3] = t1[b[two]], t2[b[two]]
    x[ops, p0 + 4] = noise["error"]
    x[ops, p0 + 5], x[ops, p0 + 6] = p10[a], p01[a]
    x[ops, p0 + 7] = noise["duration"] * 1e9
    x[ops, p0 + 8] = noise["relax"]
    x[ops, p0 + 9] = noise["effective"]
    x[:, p0 + 10] = np.arange(n)
    x[ops, p0 + 11] = noise["echo"]
    return x


def _global_features(
    w: _Wires, tables: tuple[np.ndarray, ...], noise: dict[str, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """The global features (depth, width, gate counts, summed log-errors, echo) and Liu et al.'s gate counts per
    wire and wire pair."""
    p01 = tables[5]
    a, b, two = w.a, w.b, w.two
    counts = np.bincount(w.kind, minlength=len(GATE_TYPES))
    gate_log = float(-np.log1p(-np.minimum(noise["effective"], 0.999)).sum())
    readout_log = float(-np.log1p(-np.minimum(p01[w.phys], 0.5)).sum())
    globals_ = np.array(
        [w.depth, w.width, counts[0], counts[1], counts[2], counts[3:].sum(), gate_log, readout_log,
         noise["echo"].sum()],
        dtype=np.float32,
    )  # fmt: skip
    liu = np.zeros(LIU_FEATURES, dtype=np.float32)
    np.add.at(liu, w.remap[a[~two]], 1)
    np.add.at(liu, MAX_QUBITS + w.remap[a[two]] * MAX_QUBITS + w.remap[b[two]], 1)
    return globals_, liu


def _relaxation_infidelity(
    t: np.ndarray, t1a: np.ndarray, t2a: np.ndarray, t1b: np.ndarray, t2b: np.ndarray, two: np.ndarray
) -> np.ndarray:
    """``[G]`` 1 - average gate fidelity of thermal relaxation over each gate's duration ``t`` (s) on its
    qubit(s) (qubit b's T1 = T2 = inf for one-qubit gates: no factor)."""

    def process_fidelity(t1: np.ndarray, t2: np.ndarray) -> np.ndarray:
        t2 = np.minimum(t2, 2 * t1)
        with np.errstate(divide="ignore", invalid="ignore"):
            g = 1 - np.exp(-np.where(np.isfinite(t1), t / t1, 0.0))
            lam = np.exp(-np.where(np.isfinite(t2), t / t2, 0.0))
        return (2 - g + 2 * lam) / 4  # (1 + PTM_XX + PTM_YY + PTM_ZZ) / 4

    f_pro = process_fidelity(t1a, t2a) * process_fidelity(t1b, t2b)
    d = np.where(two, 4.0, 2.0)
    return np.clip(1 - (d * f_pro + 1) / (d + 1), 0.0, 1.0)


def _echo_column(
    kind: np.ndarray,
    wire_a: np.ndarray,
    wire_b: np.ndarray,
    angle: np.ndarray,
    duration: np.ndarray,
    error: np.ndarray,
    relax: np.ndarray,
    times_a: tuple[np.ndarray, np.ndarray],
    times_b: tuple[np.ndarray, np.ndarray],
    gate_ptr: np.ndarray,
    width: np.ndarray,
) -> np.ndarray:
    """``[G]`` echo cost of every gate (column 29; :func:`~workbench.quantum.quest._echo.echo_costs`) from its
    duration (s), error, relaxation infidelity and its qubits' (T1, T2) in seconds; ``wire_b`` -1 for one-qubit
    gates (qubit b's values are then ignored). aer's depolarizing parameter is the error left after relaxation
    (:func:`~workbench.quantum.noise.device_depolarizing_parameter`, over all gates at once)."""
    from workbench.quantum.noise import device_depolarizing_parameter
    from workbench.quantum.quest._echo import echo_costs

    two = wire_b >= 0

    def decay(times: tuple[np.ndarray, np.ndarray], on: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        t1, t2 = times
        e = np.exp(-duration / t1)
        lam = np.exp(-duration / np.minimum(t2, 2 * t1))
        return np.where(on, e, 1.0), np.where(on, lam, 1.0)

    p = device_depolarizing_parameter(error, 1 - relax, np.where(two, 2, 1))
    return echo_costs(kind, wire_a, wire_b, angle, decay(times_a, duration > 0), decay(times_b, two & (duration > 0)),
                      p, gate_ptr, width)  # fmt: skip


def _times(calibration: DeviceCalibration) -> tuple[np.ndarray, np.ndarray]:
    """T1, T2 ``[n]`` in seconds; an unreported (infinite) value becomes the 10 ms cap."""
    cap = _T_CAP_US * 1e-6
    t1 = np.array([t if math.isfinite(t) else cap for t in calibration.t1])
    t2 = np.array([t if math.isfinite(t) else cap for t in calibration.t2])
    return t1, t2


def _gate_tables(calibration: DeviceCalibration) -> tuple[np.ndarray, np.ndarray]:
    """``[6, n, n]`` gate error and duration (s) by (type, qubit a, qubit b; b = a for one-qubit gates), 0 where
    not calibrated."""
    n = calibration.num_qubits
    errors = np.zeros((len(GATE_TYPES), n, n))
    durations = np.zeros((len(GATE_TYPES), n, n))
    for g in calibration.gates:
        k = _CODE.get(g.name)
        if k is not None and len(g.qubits) in (1, 2):
            q0 = g.qubits[0]
            q1 = g.qubits[1] if len(g.qubits) == 2 else q0
            errors[k, q0, q1] = g.error
            durations[k, q0, q1] = g.duration
    return errors, durations


# --- batch encoding (the prediction path) -------------------------------------------------------------------
#
# :func:`encode_batch` gives, for a list of circuits, exactly the graphs :func:`encode` gives one by one (every
# feature bit for bit, edges in the same order; tested), but does everything after reading the instructions as
# numpy over all gates of all circuits at once: one Python pass per instruction remains (qiskit hands out its
# instructions one object at a time), the circuit depth is one compiled loop over the batch, and a device's
# gate tables are built once per calibration object and kept.


@dataclass(frozen=True, eq=False)
class EncodedBatch:
    """Graphs of a batch stacked: ``x [N, 30]`` float32 (raw units), ``edges [2, E]`` int64 with **batch** node
    indices, ``node_ptr [C+1]``, ``edge_ptr [C+1]`` (graph c owns nodes ``node_ptr[c]:node_ptr[c+1]``),
    ``globals [C, 9]`` and ``liu [C, 110]`` float32."""

    x: np.ndarray
    edges: np.ndarray
    node_ptr: np.ndarray
    edge_ptr: np.ndarray
    globals: np.ndarray
    liu: np.ndarray

    def __len__(self) -> int:
        return int(self.globals.shape[0])

    def graph(self, c: int) -> CircuitGraph:
        """Graph ``c`` on its own (node indices from 0), as :func:`encode` gives it."""
        n0, n1 = int(self.node_ptr[c]), int(self.node_ptr[c + 1])
        e0, e1 = int(self.edge_ptr[c]), int(self.edge_ptr[c + 1])
        return CircuitGraph(self.x[n0:n1], self.edges[:, e0:e1] - n0, self.globals[c], self.liu[c])


_TABLES: dict[int, tuple[Any, tuple[np.ndarray, ...]]] = {}


def clear_device_tables() -> None:
    """Forget every kept device table (benchmarks time the cold path with it)."""
    _TABLES.clear()


def _device_tables(calibration: DeviceCalibration) -> tuple[np.ndarray, ...]:
    """``(t1_s, t2_s, t1_us, t2_us, p10, p01, errors, durations)`` (:func:`_device_arrays`) of a calibration, built
    once per calibration object (calibrations are frozen) and kept while it lives."""
    import weakref

    key = id(calibration)
    hit = _TABLES.get(key)
    if hit is not None and hit[0]() is calibration:
        return hit[1]
    tables = _device_arrays(calibration)
    if len(_TABLES) > 4096:
        _TABLES.clear()
    try:
        ref = weakref.ref(calibration, lambda _r, k=key: _TABLES.pop(k, None))  # type: ignore[misc]  # mypy cannot infer a lambda with a default argument
    except TypeError:  # not weak-referenceable: do not keep
        return tables
    _TABLES[key] = (ref, tables)
    return tables


def _instructions(circuit: Any) -> tuple[list[int], list[int], list[int], list[float]]:
    """Gate-type codes (-1: barrier/measure, -2: a gate QuEst does not encode), qubit counts, the flat qubit
    indices and the rz angles (0 for other instructions) of every instruction of ``circuit`` (the only
    per-instruction Python of the batch path)."""
    index = {q: i for i, q in enumerate(circuit.qubits)}
    code = _CODE
    names, qubits, angles = [], [], []
    for inst in circuit.data:  # one pass: qiskit builds each instruction object anew on every access
        name = inst.name
        names.append(name)
        qubits.append(inst.qubits)
        angles.append(float(inst.params[0]) if name == "rz" else 0.0)
    kinds = [code.get(name, -2) for name in names]
    sizes = list(map(len, qubits))
    flat = [index[q] for qs in qubits for q in qs]
    if -2 in kinds:
        for i, name in enumerate(names):
            if kinds[i] == -2 and name in _IGNORED:
                kinds[i] = -1
        if -2 in kinds:
            name = names[kinds.index(-2)]
            raise ValueError(
                f"gate {name!r} is not in the device basis QuEst encodes: valid gates are "
                f"{', '.join(GATE_TYPES)} (transpile the circuit to the device first)"
            )
    return kinds, sizes, flat, angles


def _checked_gates(
    kind_all: np.ndarray, size_all: np.ndarray, flat: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """From instruction codes, sizes and flat qubits: the kept instructions' mask, gate types, qubit a and qubit b
    (-1 for one-qubit gates); ValueError for a two-qubit type on another number of qubits."""
    start = np.cumsum(size_all) - size_all
    keep = kind_all >= 0
    bad = keep & (kind_all >= _FIRST_TWO) & (size_all != 2)
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        name = TWO_QUBIT_GATES[int(kind_all[j]) - _FIRST_TWO]
        raise ValueError(
            f"gate {name!r} on {int(size_all[j])} qubits: QuEst encodes one-qubit "
            f"{', '.join(ONE_QUBIT_GATES)} and two-qubit {', '.join(TWO_QUBIT_GATES)}"
        )
    kind = kind_all[keep]
    two = kind >= _FIRST_TWO
    a = flat[start[keep]]
    b = np.where(two, flat[np.minimum(start[keep] + 1, max(len(flat) - 1, 0))], -1)
    return keep, kind, a, b


def _depths(a: np.ndarray, b: np.ndarray, gate_ptr: np.ndarray, wires: np.ndarray) -> np.ndarray:
    """Depth of every circuit (the level recurrence of :func:`_gate_list`), one compiled loop over the batch
    (numba, imported on first use: the module stays light for code that never predicts)."""
    from workbench.quantum.quest._depth import depths

    return depths(a, b, gate_ptr, wires)


@dataclass(frozen=True, eq=False)
class _BatchGates:
    """The kept gates of a batch, circuit-major: circuit ``gc [G]``, type ``kind``, qubits ``a``, ``b`` (-1 for
    one-qubit gates) and ``two`` (two-qubit mask); ``gates [C]`` per circuit, ``gate_ptr [C+1]``; rz ``angle``."""

    gc: np.ndarray
    kind: np.ndarray
    a: np.ndarray
    b: np.ndarray
    two: np.ndarray
    gates: np.ndarray
    gate_ptr: np.ndarray
    angle: np.ndarray


@dataclass(frozen=True, eq=False)
class _BatchWires:
    """Wires in first-use order per circuit: circuit ``wire_c [W]``, physical qubit ``phys``, index within its
    circuit ``wire_local``; ``width [C]`` and ``wire_ptr [C+1]``; each gate's wires ``ra``, ``rb`` (-1)."""

    wire_c: np.ndarray
    phys: np.ndarray
    wire_local: np.ndarray
    width: np.ndarray
    wire_ptr: np.ndarray
    ra: np.ndarray
    rb: np.ndarray


@dataclass(frozen=True, eq=False)
class _BatchNoise:
    """Device values: per-qubit tables concatenated over the batch's calibrations (``t1u, t2u`` in us, ``p10``,
    ``p01``) with circuit offsets ``qoff [C]``, each gate's qubit indices into them (``ga``, ``gb_or_a``), and per
    gate ``error``, ``duration`` (s), ``relax``, ``effective`` and ``echo``."""

    t1u: np.ndarray
    t2u: np.ndarray
    p10: np.ndarray
    p01: np.ndarray
    qoff: np.ndarray
    ga: np.ndarray
    gb_or_a: np.ndarray
    error: np.ndarray
    duration: np.ndarray
    relax: np.ndarray
    effective: np.ndarray
    echo: np.ndarray


def _one_graph_batch(circuit: Any, calibration: DeviceCalibration) -> EncodedBatch:
    """One circuit: :func:`encode` itself (fewer array operations than the batch form), with kept tables."""
    g = encode(circuit, calibration, _tables=_device_tables(calibration))
    n, e = g.x.shape[0], g.edges.shape[1]
    return EncodedBatch(
        g.x, g.edges, np.array([0, n], dtype=np.int64), np.array([0, e], dtype=np.int64), g.globals[None], g.liu[None]
    )


def _batch_gates(
    circuits: Sequence[Any], calibrations: Sequence[DeviceCalibration]
) -> tuple[_BatchGates, list[tuple[np.ndarray, ...]]]:
    """Every circuit's instructions read once and checked (widths, gate types, at least one gate each), and the
    device tables of each circuit's calibration."""
    kinds_l: list[int] = []
    sizes_l: list[int] = []
    flat_l: list[int] = []
    angle_l: list[float] = []
    inst_ptr = [0]
    tables = []
    for i, (circuit, cal) in enumerate(zip(circuits, calibrations)):
        if circuit.num_qubits > cal.num_qubits:
            raise ValueError(
                f"circuit {i} has {circuit.num_qubits} qubits but the calibration {cal.name} has "
                f"{cal.num_qubits}: valid widths are 1..{cal.num_qubits}"
            )
        k, s, f, t = _instructions(circuit)
        kinds_l += k
        sizes_l += s
        flat_l += f
        angle_l += t
        inst_ptr.append(len(kinds_l))
        tables.append(_device_tables(cal))
    count = len(circuits)
    kind_all = np.asarray(kinds_l, dtype=np.int64)
    inst_circ = np.repeat(np.arange(count), np.diff(inst_ptr))
    keep, kind, a, b = _checked_gates(kind_all, np.asarray(sizes_l, dtype=np.int64), np.asarray(flat_l, dtype=np.int64))
    gc = inst_circ[keep]  # circuit of each gate
    gates = np.bincount(gc, minlength=count)
    if (gates == 0).any():
        i = int(np.flatnonzero(gates == 0)[0])
        raise ValueError(f"circuit {i} has no gates: QuEst needs at least one rz, x, sx, cx, ecr or cz gate")
    gate_ptr = np.concatenate([[0], np.cumsum(gates)])
    angle = np.asarray(angle_l)[keep]
    return _BatchGates(gc, kind, a, b, kind >= _FIRST_TWO, gates, gate_ptr, angle), tables


def _batch_wires(g: _BatchGates, count: int, stride: int) -> _BatchWires:
    """Wires in first-use order per circuit (qubit a of a gate is used before its qubit b), and each gate's wires;
    ``stride``: the widest circuit's qubit count. ValueError past :data:`MAX_QUBITS` used qubits."""
    ev_q = np.stack([g.a, g.b], axis=1).reshape(-1)
    ev_c = np.repeat(g.gc, 2)
    real = ev_q >= 0
    ev_key = ev_c[real] * stride + ev_q[real]
    used, first_at = np.unique(ev_key, return_index=True)
    order = np.argsort(first_at)  # circuit-major, then first use
    wire_key = used[order]
    wire_c = wire_key // stride
    phys = wire_key % stride  # physical qubit of each wire, batch order
    width = np.bincount(wire_c, minlength=count)
    if (width > MAX_QUBITS).any():
        w = int(width[width > MAX_QUBITS][0])
        raise ValueError(
            f"circuit uses {w} qubits: QuEst's encoding holds at most {MAX_QUBITS} (valid range 1..{MAX_QUBITS})"
        )
    wire_ptr = np.concatenate([[0], np.cumsum(width)])
    wire_local = np.arange(len(wire_key)) - wire_ptr[wire_c]
    rank = np.empty(len(used), dtype=np.int64)
    rank[order] = wire_local  # renumbered wire of each sorted key

    def remap(c: np.ndarray, q: np.ndarray) -> np.ndarray:
        return rank[np.searchsorted(used, c * stride + q)]

    ra = remap(g.gc, g.a)
    rb = np.where(g.two, remap(g.gc, np.where(g.two, g.b, g.a)), -1)
    return _BatchWires(wire_c, phys, wire_local, width, wire_ptr, ra, rb)


def _batch_noise(tables: list[tuple[np.ndarray, ...]], g: _BatchGates, w: _BatchWires) -> _BatchNoise:
    """Device values of every gate: each calibration's tables concatenated and gathered with per-circuit offsets
    (one calibration for the whole batch: its tables as they are), relaxation, effective error and echo cost."""
    count = len(tables)
    if all(t is tables[0] for t in tables):
        qn = np.full(count, len(tables[0][0]), dtype=np.int64)
        qoff = toff = np.zeros(count, dtype=np.int64)
        t1_s, t2_s, t1u, t2u, p10, p01, err_t, dur_t = tables[0]
        err_t, dur_t = err_t.ravel(), dur_t.ravel()
    else:
        qn = np.asarray([len(t[0]) for t in tables], dtype=np.int64)
        qoff = np.concatenate([[0], np.cumsum(qn)[:-1]])
        toff = np.concatenate([[0], np.cumsum(len(GATE_TYPES) * qn * qn)[:-1]])
        t1_s, t2_s, t1u, t2u, p10, p01, err_t, dur_t = (
            np.concatenate([t[j].ravel() for t in tables]) for j in range(8)
        )
    gc, two, a = g.gc, g.two, g.a
    b_or_a = np.where(two, g.b, a)
    ga, gb_or_a = qoff[gc] + a, qoff[gc] + b_or_a
    cell = toff[gc] + (g.kind * qn[gc] + a) * qn[gc] + b_or_a
    error, duration = err_t[cell], dur_t[cell]
    relax = _relaxation_infidelity(
        duration, t1_s[ga], t2_s[ga], np.where(two, t1_s[gb_or_a], np.inf), np.where(two, t2_s[gb_or_a], np.inf), two
    )
    echo = _echo_column(
        g.kind, w.ra, w.rb, g.angle, duration, error, relax, (t1_s[ga], t2_s[ga]), (t1_s[gb_or_a], t2_s[gb_or_a]),
        g.gate_ptr, w.width,
    )  # fmt: skip
    return _BatchNoise(t1u, t2u, p10, p01, qoff, ga, gb_or_a, error, duration, relax, np.maximum(error, relax), echo)


def _batch_nodes(
    g: _BatchGates, w: _BatchWires, d: _BatchNoise
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Node features ``x [N, 30]`` (per graph: in-nodes by wire, gates, out-nodes by wire), ``node_ptr [C+1]``,
    each gate's node ``ops [G]`` and each wire's qubit index into the noise tables ``wq [W]``."""
    sizes = 2 * w.width + g.gates
    node_ptr = np.concatenate([[0], np.cumsum(sizes)])
    n = int(node_ptr[-1])
    gc, two, ra, rb = g.gc, g.two, w.ra, w.rb
    gate_local = np.arange(len(g.kind)) - g.gate_ptr[gc]
    ops = node_ptr[gc] + w.width[gc] + gate_local
    ins = node_ptr[w.wire_c] + w.wire_local
    outs = node_ptr[w.wire_c] + w.width[w.wire_c] + g.gates[w.wire_c] + w.wire_local
    wq = d.qoff[w.wire_c] + w.phys
    x = np.zeros((n, NODE_FEATURES), dtype=np.float32)
    q0, p0 = QUBIT_COLUMN, PHYSICAL_COLUMN
    x[ins, 0] = 1
    x[outs, 1] = 1
    x[ops, 2 + g.kind] = 1
    for nodes in (ins, outs):
        x[nodes, q0 + w.wire_local] = 1
        x[nodes, p0], x[nodes, p0 + 1] = d.t1u[wq], d.t2u[wq]
        x[nodes, p0 + 5], x[nodes, p0 + 6] = d.p10[wq], d.p01[wq]
    x[ops, q0 + ra] = 1
    x[ops[two], q0 + rb[two]] = 1
    x[ops, p0], x[ops, p0 + 1] = d.t1u[d.ga], d.t2u[d.ga]
    x[ops[two], p0 + 2], x[ops[two], p0 + 3] = d.t1u[d.gb_or_a[two]], d.t2u[d.gb_or_a[two]]
    x[ops, p0 + 4] = d.error
    x[ops, p0 + 5], x[ops, p0 + 6] = d.p10[d.ga], d.p01[d.ga]
    x[ops, p0 + 7] = d.duration * 1e9
    x[ops, p0 + 8] = d.relax
    x[ops, p0 + 9] = d.effective
    x[:, p0 + 10] = np.arange(n) - np.repeat(node_ptr[:-1], sizes)
    x[ops, p0 + 11] = d.echo
    return x, node_ptr, ops, wq


def _batch_edges(
    g: _BatchGates, w: _BatchWires, node_ptr: np.ndarray, ops: np.ndarray, count: int
) -> tuple[np.ndarray, np.ndarray]:
    """Edges along the wires ``[2, E]`` (batch node indices), per graph: in-edges (by wire), inner edges (by wire,
    gate), out-edges (by wire); and ``edge_ptr [C+1]``."""
    ev_gate = np.concatenate([np.arange(len(g.kind)), np.flatnonzero(g.two)])
    ev_wire = np.concatenate([w.ra, w.rb[g.two]])
    ev_circ = g.gc[ev_gate]
    srt = np.lexsort((ev_gate, ev_wire, ev_circ))
    node = ops[ev_gate[srt]]
    wire = ev_wire[srt]
    circ = ev_circ[srt]
    new = np.ones(len(wire), dtype=bool)
    new[1:] = (wire[1:] != wire[:-1]) | (circ[1:] != circ[:-1])
    end = np.ones(len(wire), dtype=bool)
    end[:-1] = new[1:]
    inner = ~new[1:]
    out_node = node_ptr[circ[end]] + w.width[circ[end]] + g.gates[circ[end]] + wire[end]
    src = np.concatenate([node_ptr[circ[new]] + wire[new], node[:-1][inner], node[end]])
    dst = np.concatenate([node[new], node[1:][inner], out_node])
    part = np.concatenate([np.zeros(int(new.sum())), np.ones(int(inner.sum())), np.full(int(end.sum()), 2)])
    owner = np.concatenate([circ[new], circ[1:][inner], circ[end]])
    by_graph = np.lexsort((part, owner))  # stable: keeps the (wire, gate) order inside each part
    edges = np.stack([src[by_graph], dst[by_graph]]).astype(np.int64)
    return edges, np.concatenate([[0], np.cumsum(np.bincount(owner, minlength=count))])


def _batch_globals(
    g: _BatchGates, w: _BatchWires, d: _BatchNoise, wq: np.ndarray, num_q: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Global features ``[C, 9]`` (depth, width, gate counts, error, readout and echo sums) and Liu's counts
    ``[C, 110]``."""
    count = len(num_q)
    depth = _depths(g.a, g.b, g.gate_ptr, num_q)
    counts = np.bincount(g.gc * len(GATE_TYPES) + g.kind, minlength=count * len(GATE_TYPES)).reshape(count, -1)
    gate_terms = -np.log1p(-np.minimum(d.effective, 0.999))
    read_terms = -np.log1p(-np.minimum(d.p01[wq], 0.5))
    gp, wp = g.gate_ptr, w.wire_ptr
    glob = np.empty((count, GLOBAL_FEATURES), dtype=np.float32)
    glob[:, 0] = depth
    glob[:, 1] = w.width
    glob[:, 2:5] = counts[:, :3]
    glob[:, 5] = counts[:, 3:].sum(1)
    glob[:, 6] = [float(gate_terms[gp[c] : gp[c + 1]].sum()) for c in range(count)]
    glob[:, 7] = [float(read_terms[wp[c] : wp[c + 1]].sum()) for c in range(count)]
    glob[:, 8] = [float(d.echo[gp[c] : gp[c + 1]].sum()) for c in range(count)]
    liu_slot = np.where(g.two, MAX_QUBITS + w.ra * MAX_QUBITS + np.maximum(w.rb, 0), w.ra)
    liu = np.bincount(g.gc * LIU_FEATURES + liu_slot, minlength=count * LIU_FEATURES)
    return glob, liu.astype(np.float32).reshape(count, LIU_FEATURES)


def encode_batch(circuits: Sequence[Any], calibrations: Sequence[DeviceCalibration]) -> EncodedBatch:
    """The QuEst graphs of ``circuits`` under ``calibrations`` (one each), stacked; graph c equals
    ``encode(circuits[c], calibrations[c])`` exactly. Raises the ValueErrors of :func:`encode` (naming the
    circuit's position) and when the two lists differ in length."""
    if len(circuits) != len(calibrations):
        raise ValueError(f"{len(circuits)} circuits and {len(calibrations)} calibrations: give one per circuit")
    if not circuits:
        raise ValueError("circuits is empty: give at least one circuit")
    if len(circuits) == 1:
        return _one_graph_batch(circuits[0], calibrations[0])
    count = len(circuits)
    gates, tables = _batch_gates(circuits, calibrations)
    num_q = np.asarray([c.num_qubits for c in circuits], dtype=np.int64)
    wires = _batch_wires(gates, count, int(num_q.max()))
    noise = _batch_noise(tables, gates, wires)
    x, node_ptr, ops, wq = _batch_nodes(gates, wires, noise)
    edges, edge_ptr = _batch_edges(gates, wires, node_ptr, ops, count)
    glob, liu = _batch_globals(gates, wires, noise, wq, num_q)
    return EncodedBatch(x, edges, node_ptr.astype(np.int64), edge_ptr.astype(np.int64), glob, liu)
