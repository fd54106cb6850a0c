"""qiskit-aer as the reference: the same circuits and the same noise description, run by aer.

Used by the tests (equivalence), the benchmark (speed peer), the panel and the notebook (side by side).
:func:`aer_probabilities` is exact: aer's density-matrix method saves the outcome probabilities of all
qubits (``save_probabilities``), then the readout errors *of the aer ``NoiseModel``* (its ``to_dict()``
``roerror`` entries, so the model, not our spec, supplies them) are applied to them, because aer applies
readout errors only to sampled shots. :func:`aer_counts` samples shots with aer's own readout errors.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from workbench.quantum.noise import NoiseSpec

__all__ = [
    "aer_statevector",
    "aer_density_matrix",
    "aer_probabilities",
    "aer_counts",
    "aer_noise_model",
    "readout_from_model",
    "exact_noise_model",
    "apply_confusion",
]


def aer_noise_model(noise: NoiseSpec | Any | None, circuits: Sequence[Any] = ()) -> Any:
    """A qiskit-aer ``NoiseModel`` (or None): a :class:`NoiseSpec` becomes ``noise.to_aer(gate names used)``;
    an aer model is returned as is."""
    if noise is None or (isinstance(noise, NoiseSpec) and noise.is_ideal):
        return None
    if isinstance(noise, str):
        raise TypeError(f"noise={noise!r}: pass a NoiseSpec (get_device(name).noise()) or an aer NoiseModel")
    if isinstance(noise, NoiseSpec):
        names = {inst.operation.name for c in circuits for inst in c.data} or None
        return noise.to_aer(gate_names=names)
    return noise


def exact_noise_model(model: Any) -> Any:
    """A copy of an aer ``NoiseModel`` whose quantum errors are each one exact Kraus channel (see
    ``NoiseSpec.to_aer(exact=...)``: aer drops small terms of mixture-form errors); readout errors kept."""
    from qiskit.quantum_info import Kraus, SuperOp
    from qiskit_aer.noise import NoiseModel, QuantumError, ReadoutError

    out = NoiseModel(basis_gates=model.basis_gates)
    for error in model.to_dict().get("errors", []):
        if error["type"] == "qerror":
            channel = QuantumError(Kraus(SuperOp(QuantumError.from_dict(error))))
            for qubits in error.get("gate_qubits") or [None]:
                if qubits is None:
                    out.add_all_qubit_quantum_error(channel, error["operations"], warnings=False)
                else:
                    out.add_quantum_error(channel, error["operations"], list(qubits), warnings=False)
        elif error["type"] == "roerror":
            readout = ReadoutError(error["probabilities"])
            for qubits in error.get("gate_qubits") or [None]:
                if qubits is None:
                    out.add_all_qubit_readout_error(readout, warnings=False)
                else:
                    out.add_readout_error(readout, list(qubits), warnings=False)
    return out


def _simulator(method: str, model: Any) -> Any:
    from qiskit_aer import AerSimulator

    return AerSimulator(method=method, noise_model=model) if model is not None else AerSimulator(method=method)


def _prepared(circuit: Any, save: str) -> Any:
    import qiskit_aer.library  # noqa: F401  (registers QuantumCircuit.save_* methods)

    qc = circuit.remove_final_measurements(inplace=False)
    getattr(qc, save)()
    return qc


def aer_statevector(circuit: Any) -> np.ndarray:
    """aer's statevector of ``circuit`` (final measurements removed), ``[2**n]`` complex128."""
    qc = _prepared(circuit, "save_statevector")
    return np.asarray(_simulator("statevector", None).run(qc).result().get_statevector(), dtype=np.complex128)


def aer_density_matrix(circuit: Any, noise: NoiseSpec | Any | None = None) -> np.ndarray:
    """aer's density matrix ``[2**n, 2**n]`` under ``noise`` (a NoiseSpec or an aer NoiseModel)."""
    model = aer_noise_model(noise, [circuit])
    qc = _prepared(circuit, "save_density_matrix")
    return np.asarray(_simulator("density_matrix", model).run(qc).result().data(0)["density_matrix"])


def readout_from_model(model: Any, num_qubits: int) -> np.ndarray | None:
    """Per-qubit confusion matrices ``[n, 2, 2]`` (``A[q, measured, prepared]``) of an aer NoiseModel's readout
    errors (local ones override the all-qubit one, as in aer); None when it has none."""
    if model is None:
        return None
    default = None
    local: dict[int, np.ndarray] = {}
    for error in model.to_dict().get("errors", []):
        if error.get("type") != "roerror":
            continue
        probs = np.asarray(error["probabilities"], dtype=np.float64)  # [prepared, measured]
        if probs.shape != (2, 2):
            raise ValueError(f"only single-qubit readout errors are supported, got shape {probs.shape}")
        if error.get("gate_qubits"):
            for qubits in error["gate_qubits"]:
                local[int(qubits[0])] = probs.T
        else:
            default = probs.T
    if default is None and not local:
        return None
    eye = np.eye(2)
    return np.stack([local.get(q, default if default is not None else eye) for q in range(num_qubits)])


def apply_confusion(probs: np.ndarray, confusion: np.ndarray | None, n: int) -> np.ndarray:
    """``probs`` of ``n`` qubits after readout error: each qubit's 2x2 ``confusion[q]`` (None: unchanged)."""
    if confusion is None:
        return probs
    p = probs.reshape([2] * n)
    for q in range(n):
        axis = n - 1 - q
        p = np.moveaxis(np.tensordot(confusion[q], p, axes=([1], [axis])), 0, axis)
    return p.reshape(-1)


def aer_probabilities(circuits: Any, noise: NoiseSpec | Any | None = None, *, readout: bool = True) -> np.ndarray:
    """Exact outcome probabilities from aer's density-matrix method: ``[2**n]``, or ``[C, 2**n]`` for a list
    of circuits (one ``run`` call for all of them, as aer batches experiments); readout errors of the aer model
    applied when ``readout``."""
    single = not isinstance(circuits, (list, tuple))
    batch = [circuits] if single else list(circuits)
    model = aer_noise_model(noise, batch)
    prepared = [_prepared(c, "save_probabilities") for c in batch]
    result = _simulator("density_matrix", model).run(prepared).result()
    out = []
    for i, c in enumerate(batch):
        n = c.num_qubits
        probs = np.asarray(result.data(i)["probabilities"], dtype=np.float64)
        if probs.shape[0] != 2**n:  # aer trims nothing for save_probabilities on all qubits; guard anyway
            raise ValueError(f"aer returned {probs.shape[0]} probabilities for {n} qubits")
        out.append(apply_confusion(probs, readout_from_model(model, n), n) if readout else probs)
    return out[0] if single else np.stack(out)


def aer_counts(circuit: Any, noise: NoiseSpec | Any | None, *, shots: int, seed: int) -> np.ndarray:
    """Sampled outcome frequencies ``[2**n]`` from aer with measurement of every qubit (aer applies its own
    readout errors to the shots)."""
    model = aer_noise_model(noise, [circuit])
    qc = circuit.remove_final_measurements(inplace=False)
    qc.measure_all()
    counts = _simulator("density_matrix", model).run(qc, shots=shots, seed_simulator=seed).result().get_counts()
    n = circuit.num_qubits
    freq = np.zeros(2**n)
    for key, value in counts.items():
        freq[int(key.replace(" ", ""), 2)] += value
    return freq / max(1, math.fsum(freq))
