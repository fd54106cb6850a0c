"""Algorithm circuits of the QuEst dataset (logical circuits, before transpilation to a device).

Each family takes a width and a ``numpy`` generator for its random choices (secret string, marked state,
problem graph, angles), so a (family, width, seed) triple names one circuit::

    ghz                      from workbench.quantum.circuits
    qft_input(width, rng)    QFT or inverse QFT (1/2 each) of a random non-zero basis state (x gates first)
    grover(width, rng)       one marked basis state, floor(pi/4 sqrt(2**n)) iterations (at most 2)
    bernstein_vazirani       a random non-zero secret over width-1 data qubits plus one ancilla
    qaoa(width, rng)         MaxCut on a random connected graph, p = 1 or 2 layers, random angles
    hea(width, rng)          hardware-efficient ansatz: ry/rz layers with a cx chain, 1..3 repetitions
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from workbench.quantum.circuits import ghz

__all__ = ["ALGORITHMS", "algorithm_circuit", "grover", "bernstein_vazirani", "qaoa", "hea", "qft_input", "MIN_WIDTH"]

MIN_WIDTH = 2


def grover(width: int, rng: np.random.Generator) -> Any:
    """Grover search for one random marked state; at most 2 iterations keep the transpiled depth sane."""
    from qiskit import QuantumCircuit
    from qiskit.circuit.library import MCXGate

    marked = int(rng.integers(2**width))
    iterations = max(1, min(2, int(math.floor(math.pi / 4 * math.sqrt(2**width)))))
    qc = QuantumCircuit(width, name=f"grover{width}")
    qc.h(range(width))

    def phase_flip_all_ones() -> None:
        qc.h(width - 1)
        qc.append(MCXGate(width - 1), list(range(width)))
        qc.h(width - 1)

    for _ in range(iterations):
        zeros = [q for q in range(width) if not (marked >> q) & 1]
        if zeros:
            qc.x(zeros)
        phase_flip_all_ones()
        if zeros:
            qc.x(zeros)
        qc.h(range(width))
        qc.x(range(width))
        phase_flip_all_ones()
        qc.x(range(width))
        qc.h(range(width))
    return qc


def qft_input(width: int, rng: np.random.Generator) -> Any:
    """The QFT (or, with probability 1/2, its inverse) of a random non-zero basis state: ``x`` on a random
    non-empty subset of the qubits, then qiskit's ``synth_qft_full`` (controlled-phase gates and final swaps).
    The all-zero input is never drawn, so a plain QFT of ``|0..0>`` (``examples/qft4.qasm``) is not a
    training circuit gate for gate."""
    from qiskit import QuantumCircuit
    from qiskit.synthesis import synth_qft_full

    bits = int(rng.integers(1, 2**width))
    inverse = bool(rng.random() < 0.5)
    qc = QuantumCircuit(width, name=f"{'iqft' if inverse else 'qft'}{width}")
    for q in range(width):
        if (bits >> q) & 1:
            qc.x(q)
    qc.compose(synth_qft_full(width, inverse=inverse), inplace=True)
    return qc


def bernstein_vazirani(width: int, rng: np.random.Generator) -> Any:
    """Bernstein-Vazirani with a random non-zero secret on ``width - 1`` data qubits and an ancilla."""
    from qiskit import QuantumCircuit

    data = width - 1
    secret = int(rng.integers(1, 2**data))
    qc = QuantumCircuit(width, name=f"bv{width}")
    qc.x(data)
    qc.h(range(width))
    for q in range(data):
        if (secret >> q) & 1:
            qc.cx(q, data)
    qc.h(range(data))
    return qc


def _connected_graph(width: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    order = rng.permutation(width)
    edges = {tuple(sorted((int(order[i]), int(order[int(rng.integers(i))])))) for i in range(1, width)}
    for a in range(width):
        for b in range(a + 1, width):
            if rng.random() < 0.3:
                edges.add((a, b))
    return sorted(edges)


def qaoa(width: int, rng: np.random.Generator) -> Any:
    """QAOA for MaxCut on a random connected graph, p in {1, 2}, angles uniform in [0, pi)."""
    from qiskit import QuantumCircuit

    edges = _connected_graph(width, rng)
    layers = int(rng.integers(1, 3))
    qc = QuantumCircuit(width, name=f"qaoa{width}")
    qc.h(range(width))
    for _ in range(layers):
        gamma, beta = rng.uniform(0, math.pi, size=2)
        for a, b in edges:
            qc.rzz(2 * float(gamma), a, b)
        qc.rx(2 * float(beta), range(width))
    return qc


def hea(width: int, rng: np.random.Generator) -> Any:
    """Hardware-efficient ansatz: ``reps`` in 1..3 layers of ry, rz on every qubit and a linear cx chain,
    then a final ry, rz layer; angles uniform in [0, 2 pi)."""
    from qiskit import QuantumCircuit

    reps = int(rng.integers(1, 4))
    qc = QuantumCircuit(width, name=f"hea{width}")
    for layer in range(reps + 1):
        for q in range(width):
            qc.ry(float(rng.uniform(0, 2 * math.pi)), q)
            qc.rz(float(rng.uniform(0, 2 * math.pi)), q)
        if layer < reps:
            for q in range(width - 1):
                qc.cx(q, q + 1)
    return qc


ALGORITHMS: dict[str, Callable[[int, np.random.Generator], Any]] = {
    "ghz": lambda width, rng: ghz(width),
    "qft": qft_input,
    "grover": grover,
    "bv": bernstein_vazirani,
    "qaoa": qaoa,
    "hea": hea,
}


def algorithm_circuit(family: str, width: int, seed: int) -> Any:
    """The logical circuit of ``family`` on ``width`` qubits with random choices drawn from ``seed``."""
    if family not in ALGORITHMS:
        raise ValueError(f"family={family!r} is unknown: valid families are {', '.join(ALGORITHMS)}")
    if width < MIN_WIDTH:
        raise ValueError(f"width={width} is out of range: valid range is {MIN_WIDTH}.. (qubits)")
    return ALGORITHMS[family](width, np.random.default_rng(seed))
