"""Putting a trained QNN on a device: transpile (qiskit, device basis and coupling map), count depth and
CNOTs, and classify the test set under the device's calibrated noise on the variational layer's
:class:`~workbench.quantum.common.variational.Machine` (density-matrix simulation of the snapshot, every circuit
counted).

TopGen's ansatz is transpiled with ``initial_layout`` = its region (it was built on those qubits' coupling
edges, so routing adds nothing: tested); the baselines get qiskit's own noise-aware layout and SABRE routing
(optimization level 1). The QNN's readout qubits are followed through the final layout.

The noisy evaluation (:func:`place_qnn`, :func:`noisy_logits`): the transpiled circuit on its active
physical qubits, with those qubits' calibration, is a :class:`Machine` with exact probabilities (``shots=None``)
measured in the ``Z`` basis; each test image is one bound circuit, so classifying B images is B counted
machine executions (``DeviceQNN.machine.executions``) per snapshot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor

from workbench.quantum.circuits import compact
from workbench.quantum.common.variational.gate_ansatz import GateAnsatz
from workbench.quantum.common.variational.losses import z_expectations
from workbench.quantum.common.variational.machine import CoherentErrors, Machine
from workbench.quantum.device import Device, all_devices
from workbench.quantum.topgen.qnn import LOGIT_SCALE, QNN, accuracy, assemble, full_circuit
from workbench.threads import one_thread

__all__ = [
    "Placed",
    "transpile_ansatz",
    "counts",
    "DeviceQNN",
    "place_qnn",
    "noisy_logits",
    "noisy_accuracy",
    "same_topology_devices",
]

TWO_QUBIT = ("cx", "ecr", "cz")


@dataclass(frozen=True, eq=False)
class Placed:
    """A transpiled circuit: ``circuit`` (device basis, all device qubits), ``final`` (logical qubit ->
    physical qubit at the end), ``depth`` and two-qubit gate count ``cx_count``, ``swaps`` (SWAPs routing
    inserted, counted before they are decomposed)."""

    circuit: Any
    final: tuple[int, ...]
    depth: int
    cx_count: int
    swaps: int


def transpile_ansatz(circuit: Any, device: Device, layout: Sequence[int] | None, *, seed: int = 0) -> Placed:
    """``circuit`` transpiled to ``device`` (``layout``: fixed initial layout, or None: qiskit chooses)."""
    from qiskit import transpile

    backend = device.backend
    kwargs = dict(backend=backend, optimization_level=1, seed_transpiler=seed)
    if layout is not None:
        kwargs["initial_layout"] = list(layout)
    tq = transpile(circuit, **kwargs)
    # SWAPs: route the same circuit keeping swap gates (translation to the basis would hide them)
    routed = transpile(
        circuit,
        coupling_map=backend.coupling_map,
        initial_layout=tq.layout.initial_index_layout()[: circuit.num_qubits],
        optimization_level=0,
        seed_transpiler=seed,
        basis_gates=None,
    )
    ops = tq.count_ops()
    final = tuple(tq.layout.final_index_layout()[: circuit.num_qubits])
    return Placed(
        tq, final, tq.depth(), int(sum(ops.get(g, 0) for g in TWO_QUBIT)), int(routed.count_ops().get("swap", 0))
    )


def counts(ansatz: GateAnsatz, device: Device, layout: Sequence[int] | None, *, seed: int = 0) -> Placed:
    """The ansatz alone on the device (what the paper's depth and CNOT numbers count)."""
    return transpile_ansatz(ansatz.circuit("w"), device, layout, seed=seed)


def same_topology_devices(device: Device, count: int) -> tuple[Device, ...]:
    """``device`` and up to ``count - 1`` other snapshots with the same undirected coupling map (by name)."""
    from workbench.quantum.topgen.topology import undirected_edges

    ref = device.calibration
    edges = undirected_edges(ref.coupling_map)
    out = [device]
    for other in all_devices():
        if len(out) >= count:
            break
        if other == device:
            continue
        if other.num_qubits == ref.num_qubits and undirected_edges(other.coupling_map) == edges:
            out.append(other)
    return tuple(out)


@dataclass(frozen=True, eq=False)
class DeviceQNN:
    """A QNN placed on a device snapshot: ``placed`` (the transpiled encoder + ansatz), ``physical`` (its
    active physical qubits, the machine's qubits ``0..k-1`` in this order), ``readout`` (the machine qubit
    measured for each class, through the final layout) and ``machine`` (the compact circuit under those
    qubits' calibrated noise, exact probabilities, counted)."""

    model: QNN
    placed: Placed
    physical: tuple[int, ...]
    readout: tuple[int, ...]
    machine: Machine

    def logits(self, x: Tensor) -> Tensor:
        """``LOGIT_SCALE * <Z>`` of the readout qubits ``[B, C]`` for inputs ``x`` ``[B, 16]`` (the model's
        weights): one ``Z``-basis execution per image, exact probabilities (readout errors included)."""
        theta = assemble(self.machine.circuit, x, self.model.weights)
        z_basis = np.zeros((1, self.machine.num_qubits), dtype=np.int64)
        probs = self.machine.measure(theta, z_basis)[:, 0]  # [B, 2**k]
        return z_expectations(probs, self.readout, scale=LOGIT_SCALE)


def place_qnn(
    model: QNN,
    device: Device,
    layout: Sequence[int] | None,
    *,
    seed: int = 0,
    scale: float = 1.0,
    coherent: CoherentErrors | None = None,
) -> DeviceQNN:
    """``model`` transpiled to ``device`` (:func:`transpile_ansatz`) as a :class:`Machine` under the
    snapshot's calibrated noise (gates, relaxation, readout) times ``scale`` on the active qubits, with
    optional ``coherent`` errors (indexed by the machine's qubits), exact probabilities (``shots=None``)."""
    placed = transpile_ansatz(full_circuit(model.ansatz), device, layout, seed=seed)
    small, physical = compact(placed.circuit)
    machine = Machine(small, noise=device.noise(physical, scale=scale), coherent=coherent, shots=None, seed=seed)
    where = {p: i for i, p in enumerate(physical)}
    readout = tuple(where[placed.final[c]] for c in range(model.classes))
    return DeviceQNN(model, placed, tuple(physical), readout, machine)


def noisy_logits(
    model: QNN, x: Tensor, device: Device, layout: Sequence[int] | None, *, seed: int = 0, scale: float = 1.0
) -> Tensor:
    """Logits of ``x`` ``[B, 16]`` under ``device``'s calibrated noise (gates, relaxation, readout) times
    ``scale`` ``[B, C]`` (``scale=0``: the transpiled circuit without noise, equal to the logical logits);
    ``B`` machine executions (see :func:`place_qnn`)."""
    with one_thread():
        return place_qnn(model, device, layout, seed=seed, scale=scale).logits(x)


def noisy_accuracy(
    model: QNN, x: Tensor, y: Tensor, device: Device, layout: Sequence[int] | None, *, seed: int = 0
) -> float:
    """Test accuracy under ``device``'s noise (see :func:`noisy_logits`)."""
    with torch.no_grad():
        return accuracy(noisy_logits(model, x, device, layout, seed=seed), y)
