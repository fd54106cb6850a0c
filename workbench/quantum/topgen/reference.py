"""The slow, obvious versions the kernels are tested against: qiskit ``Statevector`` per parameter vector,
``state_fidelity`` per pair, ``partial_trace`` per qubit for Meyer-Wallach, and a qiskit statevector
expectation per sample for the QNN logits."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

__all__ = ["draw_parameters", "reference_fidelities", "reference_meyer_wallach", "reference_kl"]


def draw_parameters(circuit: Any, count: int, generator: torch.Generator) -> np.ndarray:
    """The same draws as :func:`~workbench.quantum.topgen.expressibility.sample_states`: ``[count, P]``."""
    p = circuit.num_parameters
    return (torch.rand(count, p, generator=generator, dtype=torch.float64) * (2 * math.pi)).numpy()


def _state(circuit: Any, values: np.ndarray) -> Any:
    from qiskit.quantum_info import Statevector

    bound = circuit.assign_parameters(list(values)) if circuit.num_parameters else circuit
    return Statevector(bound)


def reference_fidelities(circuit: Any, pairs: int, seed: int) -> np.ndarray:
    """Fidelities of ``pairs`` pairs drawn as :func:`~workbench.quantum.topgen.expressibility.fidelities`
    draws them (one chunk: ``pairs <= 4096``), each by qiskit ``state_fidelity``."""
    from qiskit.quantum_info import state_fidelity

    g = torch.Generator().manual_seed(int(seed))
    theta = draw_parameters(circuit, 2 * pairs, g)
    return np.array(
        [state_fidelity(_state(circuit, theta[i]), _state(circuit, theta[pairs + i])) for i in range(pairs)]
    )


def reference_meyer_wallach(state: Any) -> float:
    """Meyer-Wallach Q of one qiskit ``Statevector`` (or amplitude array) through ``partial_trace``."""
    from qiskit.quantum_info import Statevector, partial_trace

    sv = state if isinstance(state, Statevector) else Statevector(np.asarray(state))
    n = sv.num_qubits
    total = 0.0
    for q in range(n):
        rho = partial_trace(sv, [k for k in range(n) if k != q])
        total += float(np.real(rho.purity()))
    return 2.0 * (1.0 - total / n)


def reference_kl(fid: np.ndarray, num_qubits: int, bins: int) -> float:
    """KL to Haar written out bin by bin with the Haar density integrated numerically (scipy quad)."""
    from scipy.integrate import quad

    n = 2**num_qubits
    total = 0.0
    for j in range(bins):
        lo, hi = j / bins, (j + 1) / bins
        inside = np.sum((fid >= lo) & (fid < hi)) if j < bins - 1 else np.sum((fid >= lo) & (fid <= hi))
        p = inside / len(fid)
        if p == 0:
            continue
        q, _ = quad(lambda f: (n - 1) * (1 - f) ** (n - 2), lo, hi)
        total += p * math.log(p / q)
    return total


def reference_logits(circuit: Any, x: np.ndarray, w: np.ndarray, classes: int, scale: float) -> np.ndarray:
    """QNN logits one image at a time: bind ``x[i]`` and ``w`` by parameter name, qiskit ``Statevector``,
    ``scale * <Z_c>`` from ``expectation_value`` of a ``Z`` Pauli label per readout qubit c."""
    from qiskit.quantum_info import Pauli, Statevector

    n = circuit.num_qubits
    out = np.zeros((len(x), classes))
    for i, row in enumerate(x):
        values = {
            p: (row[int(p.name[2:-1])] if p.name.startswith("x[") else w[int(p.name[2:-1])]) for p in circuit.parameters
        }
        sv = Statevector(circuit.assign_parameters(values))
        for c in range(classes):
            label = "".join("Z" if q == c else "I" for q in reversed(range(n)))
            out[i, c] = scale * float(np.real(sv.expectation_value(Pauli(label))))
    return out
