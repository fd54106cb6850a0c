"""Prediction for user circuits: read OpenQASM 2 or 3, place the circuit on a device, predict its PST with a
checkpoint's models and (optionally) simulate it with aer under the same calibration.

The circuit is transpiled to the device (its basis ``rz, sx, x, cx``, coupling map and noise-aware layout,
:func:`~workbench.quantum.circuits.transpile_to_device`) and compacted to the qubits it uses; the device's
calibration of those qubits (gate and readout errors x ``noise_scale``, T1/T2 kept, as in the dataset's noise
levels) feeds both the features and the simulation.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch

from workbench.quantum.circuits import DeviceCircuit, transpile_to_device
from workbench.quantum.devices import DeviceCalibration, device_basis, device_names, load_calibration
from workbench.quantum.quest.batching import graphs_batch
from workbench.quantum.quest.checkpoint import Checkpoint
from workbench.quantum.quest.encoding import GATE_TYPES, encode

__all__ = ["read_qasm", "quest_devices", "place", "predict_pst", "simulate_pst", "Placed"]


def read_qasm(source: str | Path) -> Any:
    """A qiskit circuit from an OpenQASM 2 or 3 file path (or program text). Raises ValueError with the parser's
    message for bad programs or unknown gates."""
    from qiskit import qasm2, qasm3

    text = Path(source).read_text() if _is_path(source) else str(source)
    version3 = text.lstrip().upper().startswith("OPENQASM 3")
    try:
        if version3:
            return qasm3.loads(text)
        return qasm2.loads(text, custom_instructions=qasm2.LEGACY_CUSTOM_INSTRUCTIONS)
    except Exception as exc:  # qiskit's parsers raise their own error types
        kind = "OpenQASM 3" if version3 else "OpenQASM 2"
        raise ValueError(f"qasm: not a valid {kind} program: {exc}") from None


def _is_path(source: str | Path) -> bool:
    if isinstance(source, Path):
        return True
    if "\n" in source or ";" in source:
        return False
    path = Path(source)
    if not path.is_file():
        raise ValueError(f"qasm={source!r}: no such file")
    return True


@functools.lru_cache(maxsize=1)
def quest_devices() -> tuple[str, ...]:
    """Device snapshots whose basis holds ``rz, sx, x, cx`` (the gates QuEst encodes; older snapshots with
    ``u1/u2/u3`` or ``ecr``/``cz`` devices are left out)."""
    return tuple(n for n in device_names() if set(GATE_TYPES) <= set(device_basis(n)))


@dataclass(frozen=True, eq=False)
class Placed:
    """A circuit on a device: the compact device circuit and the calibration (scaled) of its qubits."""

    circuit: Any
    physical: tuple[int, ...]
    calibration: DeviceCalibration


def place(circuit: Any, device: str, *, noise_scale: float = 1.0, seed: int = 0) -> Placed:
    """Transpile ``circuit`` to ``device`` and take the calibration of its qubits x ``noise_scale``."""
    if device not in quest_devices():
        raise ValueError(f"device={device!r} is not a device snapshot with basis rz, sx, x, cx: valid devices are "
                         f"{', '.join(quest_devices())}")
    if circuit.num_qubits > load_calibration(device).num_qubits:
        raise ValueError(f"circuit has {circuit.num_qubits} qubits but device {device} has "
                         f"{load_calibration(device).num_qubits}: valid widths are 1..{load_calibration(device).num_qubits}")
    body = circuit.remove_final_measurements(inplace=False)
    placed: DeviceCircuit = transpile_to_device(body, device, seed=seed)
    return Placed(placed.circuit, placed.physical, placed.calibration.scaled(noise_scale, relaxation=False))


@torch.no_grad()
def predict_pst(ckpt: Checkpoint, circuits: Sequence[Any], calibrations: Sequence[DeviceCalibration],
                models: Sequence[str] = ("transformer",)) -> dict[str, np.ndarray]:
    """Predicted PST ``[C]`` per model name for device-basis ``circuits`` under ``calibrations`` (one batch),
    clipped to the probability range [0, 1] (the regression head is unbounded)."""
    if len(circuits) != len(calibrations):
        raise ValueError(f"{len(circuits)} circuits and {len(calibrations)} calibrations: give one per circuit")
    batch = graphs_batch([encode(c, cal) for c, cal in zip(circuits, calibrations)], ckpt.normalizer)
    return {name: np.clip(ckpt.models[name](batch).reshape(-1).numpy().astype(np.float64), 0.0, 1.0)
            for name in models}


def simulate_pst(circuit: Any, calibration: DeviceCalibration) -> float:
    """PST by aer's density-matrix simulation of circuit + inverse under ``calibration``'s noise."""
    from workbench.quantum.quest.labels import noise_model, pst

    return float(pst([circuit], noise_model(calibration))[0])


def timed(fn: Any, *args: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start
