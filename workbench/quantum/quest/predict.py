"""Prediction for user circuits: read OpenQASM 2 or 3, place the circuit on a device, predict its PST with a
checkpoint's models and (optionally) simulate it with aer under the same calibration.

The circuit is transpiled to the device (its basis ``rz, sx, x, cx``, coupling map and noise-aware layout,
:func:`~workbench.quantum.circuits.transpile_to_device`) and compacted to the qubits it uses; the device's
calibration of those qubits (gate and readout errors x ``noise_scale``, T1/T2 kept, as in the dataset's noise
levels) feeds both the features and the simulation.
"""

from __future__ import annotations

import functools
import re
from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch

from workbench.quantum.circuits import DeviceCircuit, transpile_to_device
from workbench.quantum.calibration import DeviceCalibration, device_basis
from workbench.quantum.quest.batching import graphs_batch
from workbench.quantum.quest.checkpoint import Checkpoint
from workbench.quantum.quest.config import quest_devices
from workbench.quantum.quest.dataset import RANDOM_DEVICES
from workbench.quantum.quest.encoding import GATE_TYPES, encode

__all__ = ["read_qasm", "quest_devices", "check_device", "place", "predict_pst", "simulate_pst"]


def read_qasm(source: str | Path) -> Any:
    """A qiskit circuit from an OpenQASM 2 or 3 file path (or program text). Raises ValueError with the parser's
    message for bad programs or unknown gates."""
    from qiskit import qasm2, qasm3

    if _is_path(source):
        try:
            text = Path(source).read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"qasm={str(source)!r} is not a text file (byte {exc.start} is not UTF-8): valid input "
                             "is an OpenQASM 2 or 3 program") from None
    else:
        text = str(source)
    header = re.search(r"^\s*OPENQASM\s+(\d)", re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S), re.M | re.I)
    version3 = header is not None and header.group(1) == "3"
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


def check_device(device: str) -> None:
    """Raise ValueError unless ``device`` is a snapshot whose basis holds every gate QuEst encodes."""
    basis = device_basis(device)  # ValueError naming the valid devices for an unknown name
    missing = [g for g in GATE_TYPES if g not in basis]
    if missing:
        shown = ", ".join(sorted(set(basis) - {"measure", "reset", "delay"}))
        raise ValueError(f"device={device!r} has no {', '.join(missing)} among its basis gates ({shown}): QuEst "
                         f"encodes devices with {', '.join(GATE_TYPES)}, e.g. {', '.join(RANDOM_DEVICES)}")


def place(circuit: Any, device: str, *, noise_scale: float = 1.0, seed: int = 0) -> DeviceCircuit:
    """Transpile ``circuit`` to ``device`` (ValueError when it is wider) and take the calibration of its qubits
    with gate and readout errors x ``noise_scale``."""
    check_device(device)
    placed = transpile_to_device(circuit.remove_final_measurements(inplace=False), device, seed=seed)
    return replace(placed, calibration=placed.calibration.scaled(noise_scale, relaxation=False))


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

