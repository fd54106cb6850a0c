"""Prediction for user circuits: read OpenQASM 2 or 3, place the circuit on a device, predict its PST with a
checkpoint's models and (optionally) simulate it with aer under the same calibration.

The circuit is transpiled to the device (its basis ``rz, sx, x`` and ``cx``, ``ecr`` or ``cz``, coupling map and noise-aware layout,
:func:`~workbench.quantum.circuits.transpile_to_device`) and compacted to the qubits it uses; the device's
calibration of those qubits (gate and readout errors x ``noise_scale``, T1/T2 kept, as in the dataset's noise
levels) feeds both the features and the simulation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from workbench.quantum.calibration import DeviceCalibration, calibration_subset
from workbench.quantum.circuits import DeviceCircuit, compact, transpile_to_device
from workbench.quantum.device import Device, require_device
from workbench.quantum.qasm import read_qasm as read_program
from workbench.quantum.quest.batching import encoded_batch
from workbench.quantum.quest.checkpoint import Checkpoint
from workbench.quantum.quest.config import check_device, quest_devices
from workbench.quantum.quest.encoding import encode_batch
from workbench.quantum.quest.net import infer
from workbench.quantum.quest.train import torch_threads

__all__ = ["read_qasm", "quest_devices", "check_device", "on_device", "place", "predict_pst", "simulate_pst"]


def read_qasm(source: str | Path) -> Any:
    """A qiskit circuit from an OpenQASM 2 or 3 file path (or program text), through the quantum area's guarded
    reader (:func:`workbench.quantum.qasm.read_qasm`). Raises ValueError (a ``QasmError``) naming ``qasm``."""
    return read_program(source, what="qasm")


def on_device(circuit: Any, device: Device) -> bool:
    """Whether ``circuit`` (over the device's qubits, ``circuit.num_qubits == device qubits``) is already in the
    device's basis with every two-qubit gate on a calibrated pair, so placing it needs no transpilation."""
    cal = device.calibration
    if circuit.num_qubits != cal.num_qubits:
        return False
    basis = set(device.basis_gates) | {"barrier", "measure"}
    index = {q: i for i, q in enumerate(circuit.qubits)}
    for inst in circuit.data:
        if inst.name not in basis:
            return False
        if len(inst.qubits) == 2 and cal.gate(inst.name, tuple(index[q] for q in inst.qubits)) is None:
            return False
    return True


def place(circuit: Any, device: Device, *, noise_scale: float = 1.0, seed: int = 0) -> DeviceCircuit:
    """Transpile ``circuit`` to ``device`` (ValueError when it is wider) and take the calibration of its qubits
    with gate and readout errors x ``noise_scale``. A circuit already on the device (:func:`on_device`: its
    qubits are the device's, its gates the device's basis on calibrated pairs) is not transpiled again, only
    compacted to the qubits it uses."""
    check_device(require_device(device).name)
    body = circuit.remove_final_measurements(inplace=False)
    if on_device(body, device):
        small, physical = compact(body)
        placed = DeviceCircuit(small, physical, calibration_subset(device.calibration, physical))
    else:
        placed = transpile_to_device(body, device, seed=seed)
    return replace(placed, calibration=placed.calibration.scaled(noise_scale, relaxation=False))


def predict_pst(
    ckpt: Checkpoint,
    circuits: Sequence[Any],
    calibrations: Sequence[DeviceCalibration],
    models: Sequence[str] = ("transformer",),
    *,
    threads: int | None = 1,
) -> dict[str, np.ndarray]:
    """Predicted PST ``[C]`` per model name for device-basis ``circuits`` under ``calibrations`` (one batch),
    clipped to the probability range [0, 1] (the regression head is unbounded).

    threads: torch intra-op threads for the forward pass (default 1: these graphs are small, and splitting
    their scatter/gather kernels over threads costs more than it saves, badly so on a busy machine; measured
    0.07 ms vs 1.7-4 ms per circuit for 64 circuits with 2 threads on 2 busy cores). None keeps torch's setting.
    Raises ValueError when the two lists differ in length.
    """
    if len(circuits) != len(calibrations):
        raise ValueError(f"{len(circuits)} circuits and {len(calibrations)} calibrations: give one per circuit")
    encoded = encode_batch(circuits, calibrations)  # all circuits at once, equal to encode() one by one
    with torch_threads(threads), torch.inference_mode():
        batch = encoded_batch(encoded, ckpt.normalizer)
        return {
            name: np.clip(infer(ckpt.models[name], batch).reshape(-1).numpy().astype(np.float64), 0.0, 1.0)
            for name in models
        }


def simulate_pst(circuit: Any, calibration: DeviceCalibration) -> float:
    """PST by aer's density-matrix simulation of circuit + inverse under ``calibration``'s noise."""
    from workbench.quantum.quest.labels import noise_model, pst

    return float(pst([circuit], noise_model(calibration))[0])
