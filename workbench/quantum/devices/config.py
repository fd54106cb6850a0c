"""Parameters of the ``devices`` technique: list the device snapshots, or measure how GHZ/QFT fidelity falls
with width, depth and noise scale on one of them (our simulator, qiskit-aer, or both side by side)."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.config import Config, param
from workbench.quantum.calibration import device_names
from workbench.quantum.device import OnDevice

#: the density-matrix sweeps of the fidelity mode stay below a second per point on 2 cores up to here
MAX_FIDELITY_WIDTH = 8
NOISE_MODELS = ("device", "device-no-readout", "depolarizing", "thermal", "coherent")


@dataclass(frozen=True, kw_only=True)
class DevicesConfig(OnDevice, Config):
    """``mode="list"``: every snapshot (qubits, coupling map, median errors); ``mode="fidelity"``: GHZ/QFT
    fidelity vs width (2..width) and vs depth (1..depth) on ``device`` under ``noise_model`` x ``noise_scale``."""

    mode: str = param(
        "list", choices=("list", "fidelity"), help="list: all device snapshots; fidelity: fidelity sweeps on one device"
    )
    device: str = param(
        "all",
        choices=("all",) + device_names(),
        label="device",
        help="device snapshot; 'all' (list mode) lists every one",
    )
    min_qubits: int = param(1, lo=1, hi=1000, unit="qubits", help="list mode: smallest device listed")
    max_qubits: int = param(1000, lo=1, hi=1000, unit="qubits", help="list mode: largest device listed")
    coupling: bool = param(True, help="list mode: include each device's coupling map")
    family: str = param("ghz", choices=("ghz", "qft"), label="circuit family", help="fidelity mode: circuit family")
    width: int = param(
        5,
        lo=2,
        hi=MAX_FIDELITY_WIDTH,
        unit="qubits",
        label="width",
        help="fidelity mode: width of the depth sweep and largest width of the width sweep",
    )
    depth: int = param(
        3,
        lo=1,
        hi=8,
        unit="repetitions",
        label="depth",
        help="fidelity mode: U (U^dag U)^(depth-1), i.e. 2*depth-1 copies of the circuit",
    )
    noise_model: str = param(
        "device",
        choices=NOISE_MODELS,
        label="noise model",
        help="device calibration (with or without readout) or a uniform model sized from the device's medians",
    )
    noise_scale: float = param(
        1.0, lo=0.0, hi=20.0, label="noise scale", help="multiplies every error rate (T1, T2 divided by it)"
    )
    engine: str = param("ours", choices=("ours", "aer", "both"), help="fidelity mode: simulator(s) to run")
    seed: int = param(0, lo=0, hi=2**31 - 1, help="transpiler seed (layout and routing)")

    def check_combination(self) -> None:
        if self.min_qubits > self.max_qubits:
            raise ValueError(
                f"min_qubits={self.min_qubits} > max_qubits={self.max_qubits}: valid values have "
                "min_qubits <= max_qubits"
            )
        if self.mode == "fidelity" and self.device == "all":
            raise ValueError("device='all' is only for mode='list': valid values in fidelity mode are device names")
        if self.device != "all":
            qubits = self.resolved_device().num_qubits
            if self.mode == "fidelity" and qubits < 2:
                raise ValueError(
                    f"device={self.device!r} has {qubits} qubit: fidelity mode needs a device with at least 2 qubits"
                )
            if self.mode == "fidelity" and self.width > qubits:
                raise ValueError(
                    f"width={self.width} is out of range for device={self.device!r}: valid range is "
                    f"2..{qubits} (qubits of the device)"
                )
