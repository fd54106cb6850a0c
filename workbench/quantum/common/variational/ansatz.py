"""Topology-aware hardware ansatz in a device's native gates, and a connected layout on a device snapshot.

The RobustState paper's ansatz (arXiv 2311.16035, QCE 2023 tutorial slide 6) places two-qubit BLOCKs on the
coupling-map edges, cycling over the edges: each block is one entangler (``cx`` when pulses are not used)
followed by a single-qubit rotation on both qubits. We write every single-qubit rotation in the IBM basis as
``rz(a) sx rz(b) sx rz(c)`` (a universal SU(2) up to phase: ``U3(b - pi, c - pi, a)``), so the free parameters
sit only in the virtual ``rz`` gates (exact on hardware, and exact under the two-term parameter-shift rule)
while the ``sx`` pulses carry the device noise. A first rotation layer on every qubit precedes the blocks.

Example::

    >>> a = Ansatz(num_qubits=3, edges=((0, 1), (1, 2)), blocks=2)
    >>> a.num_parameters, a.circuit().count_ops()["cx"]
    (21, 2)
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from workbench.quantum.calibration import DeviceCalibration

__all__ = ["Ansatz", "connected_layout", "device_edges"]


@dataclass(frozen=True, kw_only=True)
class Ansatz:
    """``blocks`` two-qubit blocks cycling over ``edges`` (pairs ``(control, target)`` of qubits
    ``0..num_qubits-1``), after one rotation layer on every qubit; 3 parameters per rotation."""

    num_qubits: int
    edges: tuple[tuple[int, int], ...]
    blocks: int

    def __post_init__(self) -> None:
        if not 1 <= self.num_qubits <= 13:
            raise ValueError(f"num_qubits={self.num_qubits} is out of range: valid range is 1..13 (qubits)")
        if self.blocks < 0:
            raise ValueError(f"blocks={self.blocks} is out of range: valid range is >= 0")
        if self.blocks and not self.edges:
            raise ValueError("edges=() is empty: blocks need at least one coupling edge")
        for a, b in self.edges:
            if a == b or not (0 <= a < self.num_qubits and 0 <= b < self.num_qubits):
                raise ValueError(f"edge ({a}, {b}) is not a pair of distinct qubits in 0..{self.num_qubits - 1}")

    @property
    def num_parameters(self) -> int:
        return 3 * self.num_qubits + 6 * self.blocks

    @property
    def cx_count(self) -> int:
        return self.blocks

    def block_edges(self) -> tuple[tuple[int, int], ...]:
        """The edge of each block, in order (cycling over ``edges``)."""
        return tuple(self.edges[i % len(self.edges)] for i in range(self.blocks))

    @functools.cache  # noqa: B019 (frozen dataclass: the circuit is a pure function of the fields)
    def circuit(self):
        """The parameterised qiskit ``QuantumCircuit`` (parameters ``t[0..P-1]`` in order; only rz, sx, cx)."""
        from qiskit import QuantumCircuit
        from qiskit.circuit import ParameterVector

        t = ParameterVector("t", self.num_parameters)
        qc = QuantumCircuit(self.num_qubits, name=f"ansatz{self.num_qubits}x{self.blocks}")
        k = 0

        def rotation(q: int) -> None:
            nonlocal k
            qc.rz(t[k], q)
            qc.sx(q)
            qc.rz(t[k + 1], q)
            qc.sx(q)
            qc.rz(t[k + 2], q)
            k += 3

        for q in range(self.num_qubits):
            rotation(q)
        for a, b in self.block_edges():
            qc.cx(a, b)
            rotation(a)
            rotation(b)
        return qc


def device_edges(cal: DeviceCalibration) -> tuple[tuple[int, int], ...]:
    """Undirected coupling edges ``(a, b)``, ``a < b``, that have a calibrated ``cx`` in the direction
    ``(a, b)`` (else ``(b, a)`` is returned); sorted."""
    out = set()
    for a, b in cal.coupling_map:
        lo, hi = min(a, b), max(a, b)
        if cal.gate("cx", (lo, hi)) is not None:
            out.add((lo, hi))
        elif cal.gate("cx", (hi, lo)) is not None and (lo, hi) not in out:
            out.add((hi, lo))
    return tuple(sorted(out, key=lambda e: (min(e), max(e))))


def connected_layout(cal: DeviceCalibration, num_qubits: int) -> tuple[int, ...]:
    """``num_qubits`` connected physical qubits of ``cal`` with the lowest summed cx error (greedy growth from
    every start qubit, adding the neighbour over the cheapest edge; ties by qubit index).

    Raises ValueError when the device has fewer qubits, or no connected set of that size.
    """
    if num_qubits > cal.num_qubits:
        raise ValueError(
            f"qubits={num_qubits} is wider than device {cal.name}: valid range is 1..{cal.num_qubits} (qubits)"
        )
    edges = device_edges(cal)
    cost = {}
    for a, b in edges:
        g = cal.gate("cx", (a, b))
        cost[frozenset((a, b))] = g.error if g is not None and g.error else 1.0
    best: tuple[float, tuple[int, ...]] | None = None
    for start in range(cal.num_qubits):
        chosen = [start]
        total = 0.0
        while len(chosen) < num_qubits:
            options = [(c, q) for e, c in cost.items() for q in e if q not in chosen and len(e & set(chosen)) == 1]
            if not options:
                break
            c, q = min(options)
            chosen.append(q)
            total += c
        if len(chosen) == num_qubits and (best is None or total < best[0]):
            best = (total, tuple(chosen))
    if best is None:
        raise ValueError(f"device {cal.name} has no connected set of {num_qubits} qubits")
    return tuple(sorted(best[1]))
