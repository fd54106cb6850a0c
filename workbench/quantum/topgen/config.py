"""Parameters of TopGen (``workbench run topgen ...``) and of its ``expressibility`` alias.

With ``circuit`` empty the run is the QNN task: generate TopGen's ansatz on ``device``'s topology, train it on
the digits task with dynamic growth, train the baselines, evaluate all under ``snapshots`` device-noise
snapshots. With ``circuit`` set (``sim-1|sim-2|sim-9`` or OpenQASM text) the run only computes that circuit's
expressibility and Meyer-Wallach entangling capability on ``qubits`` qubits (``workbench run expressibility``).
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.config import Config, param
from workbench.quantum.calibration import device_names
from workbench.quantum.device import OnDevice
from workbench.quantum.topgen.digits import TASKS

#: widest QNN: the noisy evaluation simulates density matrices of up to 7 qubits per test batch
MAX_TASK_QUBITS = 7
#: widest circuit whose descriptors are sampled (thousands of 2**12-amplitude states stay well under a GiB)
MAX_CIRCUIT_QUBITS = 12


@dataclass(frozen=True, kw_only=True)
class TopgenConfig(OnDevice, Config):
    """One TopGen run (QNN task) or one circuit's descriptors (``circuit`` set)."""

    circuit: str = param(
        "",
        help="empty: the QNN task; sim-1|sim-2|sim-9 (Sim et al.'s circuits), OpenQASM 2/3 text or the path of an "
        "OpenQASM file: only its expressibility and Meyer-Wallach entangling capability",
    )
    task: str = param(
        "digits-4", choices=tuple(TASKS), label="dataset classes", help="digits-2 (3 vs 6) or digits-4 (0-3)"
    )
    qubits: int = param(4, lo=2, hi=12, unit="qubits", help="QNN width (4..7) or the width of a sim-* circuit")
    device: str = param(
        "fake_jakarta", choices=device_names(), help="device snapshot: topology and first noise snapshot"
    )
    fragment_size: int = param(
        3, lo=1, hi=127, unit="qubits", label="topology fragment", help="largest sub-topology a sub-circuit covers"
    )
    blocks: int = param(
        1, lo=1, hi=4, unit="blocks", label="ansatz depth", help="initial blocks (sub-circuits + stitches)"
    )
    max_blocks: int = param(3, lo=1, hi=6, unit="blocks", help="dynamic growth stops at this many blocks")
    patience: int = param(
        3, lo=1, hi=50, unit="epochs", help="growth trigger: epochs without a better validation accuracy"
    )
    epochs: int = param(
        20, lo=1, hi=300, unit="epochs", help="training epochs (TopGen and the hardware-efficient ansatz)"
    )
    lr: float = param(0.05, lo=1e-4, hi=1.0, help="Adam learning rate")
    batch: int = param(32, lo=1, hi=1024, unit="images", help="minibatch size")
    max_train: int = param(300, lo=8, hi=1100, unit="images", help="training images (first of a seeded shuffle)")
    max_test: int = param(120, lo=4, hi=400, unit="images", help="validation and test images each")
    candidates: int = param(
        12, lo=1, hi=128, unit="templates", help="random sub-circuit templates scored per fragment shape"
    )
    score_pairs: int = param(1000, lo=50, hi=20000, unit="pairs", help="fidelity pairs when scoring a template")
    pairs: int = param(
        5000, lo=50, hi=100000, unit="pairs", help="fidelity pairs of the expressibility estimate (Sim et al.: 5000)"
    )
    bins: int = param(
        75, lo=2, hi=1000, unit="bins", help="histogram bins of the expressibility estimate (Sim et al.: 75)"
    )
    layers: int = param(1, lo=1, hi=8, unit="layers", help="layers L of a sim-* circuit")
    snapshots: int = param(3, lo=1, hi=5, unit="devices", help="noise snapshots (devices with the same coupling map)")
    search_epochs: int = param(6, lo=1, hi=100, unit="epochs", help="QuantumNAS baseline: SuperCircuit training epochs")
    seed: int = param(0, lo=0, hi=2**31 - 1, help="seed of data split, templates, initial weights and search")

    def check_combination(self) -> None:
        if self.circuit.strip():
            from workbench.quantum.topgen.templates import circuit_by_name

            qc = circuit_by_name(self.circuit, self.qubits, self.layers)  # ValueError: unknown circuit / bad QASM
            if qc.num_qubits > MAX_CIRCUIT_QUBITS:
                raise ValueError(
                    f"circuit has {qc.num_qubits} qubits: valid range is 1..{MAX_CIRCUIT_QUBITS} for the "
                    "expressibility sampler"
                )
            return
        cal = self.resolved_device().calibration
        if not 4 <= self.qubits <= MAX_TASK_QUBITS:
            raise ValueError(
                f"qubits={self.qubits} is out of range for the QNN task: valid range is 4..{MAX_TASK_QUBITS} (qubits)"
            )
        if self.qubits > cal.num_qubits:
            raise ValueError(
                f"qubits={self.qubits} is wider than device={self.device!r} ({cal.num_qubits} qubits): valid range "
                f"is 4..{min(cal.num_qubits, MAX_TASK_QUBITS)}"
            )
        if self.fragment_size > cal.num_qubits:
            raise ValueError(
                f"fragment_size={self.fragment_size} is wider than device={self.device!r} ({cal.num_qubits} qubits): "
                f"valid range is 1..{cal.num_qubits}"
            )
        if self.fragment_size > self.qubits:
            raise ValueError(
                f"fragment_size={self.fragment_size} is wider than the ansatz (qubits={self.qubits}): valid range is "
                f"1..{self.qubits}"
            )
        if self.blocks > self.max_blocks:
            raise ValueError(
                f"blocks={self.blocks} > max_blocks={self.max_blocks}: valid values have blocks <= max_blocks"
            )
        if cal.two_qubit_gate != "cx":
            raise ValueError(
                f"device={self.device!r} has native {cal.two_qubit_gate} gates: valid devices have cx (e.g. fake_jakarta)"
            )


@dataclass(frozen=True, kw_only=True)
class TopgenViewConfig(OnDevice, Config):
    """What the panel varies: the device, the QNN width, the fragment size, the initial depth, the task."""

    device: str = param("fake_jakarta", choices=device_names(), help="device snapshot (its coupling map)")
    qubits: int = param(7, lo=4, hi=7, unit="qubits", help="ansatz width")
    fragment_size: int = param(3, lo=1, hi=4, unit="qubits", label="topology fragment", help="largest sub-topology")
    blocks: int = param(1, lo=1, hi=4, unit="blocks", label="ansatz depth", help="blocks of sub-circuits + stitches")
    task: str = param("digits-4", choices=tuple(TASKS), label="dataset classes", help="digits-2 or digits-4")

    def check_combination(self) -> None:
        cal = self.resolved_device().calibration
        if self.qubits > cal.num_qubits:
            raise ValueError(
                f"qubits={self.qubits} is wider than device={self.device!r} ({cal.num_qubits} qubits): valid range "
                f"is 4..{cal.num_qubits}"
            )
        if self.fragment_size > self.qubits:
            raise ValueError(
                f"fragment_size={self.fragment_size} is wider than the ansatz (qubits={self.qubits}): valid range is "
                f"1..{self.qubits}"
            )
