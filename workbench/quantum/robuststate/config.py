"""Parameters of RobustState (``workbench run robuststate --target ghz --qubits 4 --device fake_nairobi ...``)."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.config import Config, param
from workbench.quantum.device import get_device

TARGETS = ("ghz", "w", "random")
METHODS = ("robuststate", "unaware", "parameter-shift", "spsa", "bo")
#: snapshots with an rz/sx/x/cx basis (the ansatz's native gates) and 4..27 qubits; listed (loading every
#: snapshot to filter them takes seconds), checked against the calibrations in tests/quantum/robuststate
DEVICES = (
    "fake_algiers", "fake_athens", "fake_auckland", "fake_belem", "fake_bogota", "fake_cairo", "fake_casablanca",
    "fake_fractional", "fake_geneva", "fake_guadalupe", "fake_hanoi", "fake_jakarta", "fake_kolkata", "fake_lagos",
    "fake_lima", "fake_manila", "fake_melbourne", "fake_montreal", "fake_mumbai", "fake_nairobi", "fake_oslo",
    "fake_ourense", "fake_paris", "fake_perth", "fake_quito", "fake_rome", "fake_santiago", "fake_sydney",
    "fake_toronto", "fake_valencia", "fake_vigo", "fake_yorktown",
)  # fmt: skip
#: the density-matrix machine stays below ~0.1 s per call up to here on 2 cores
MAX_QUBITS = 6


@dataclass(frozen=True, kw_only=True)
class RobustStateConfig(Config):
    """Prepare ``target`` on ``qubits`` qubits of ``device`` (with seeded coherent errors): pre-train noiseless,
    deploy on the machine, then fine-tune with ``method`` until ``budget`` machine executions are spent."""

    target: str = param("ghz", choices=TARGETS, help="target state: GHZ, W, or a Haar-random state (seed)")
    qubits: int = param(4, lo=2, hi=MAX_QUBITS, unit="qubits", help="width of the target state")
    device: str = param("fake_nairobi", choices=DEVICES, help="device snapshot (qiskit-ibm-runtime fake backend)")
    method: str = param(
        "robuststate",
        choices=METHODS,
        help="robuststate (machine forward, simulator backward); unaware (noiseless training only); "
        "parameter-shift, spsa, bo (Bayesian optimisation) on the machine",
    )
    budget: int = param(
        200_000, lo=0, hi=10**10, unit="executions", help="machine executions (circuits x shots) for fine-tuning"
    )
    shots: int = param(256, lo=1, hi=10**6, unit="shots", help="shots per circuit (per measurement setting)")
    bases: int = param(
        16, lo=1, hi=729, unit="settings", label="measurement settings", help="random Pauli settings per estimate"
    )
    coherent_strength: float = param(
        1.0, lo=0.0, hi=10.0, label="coherent-error strength", help="scales the seeded coherent errors (0: none)"
    )
    incoherent: bool = param(True, help="include the device's calibrated incoherent noise (False: coherent only)")
    lr: float = param(0.005, lo=1e-5, hi=1.0, label="learning rate", help="Adam step (robuststate, parameter-shift)")
    blocks: int = param(
        0, lo=0, hi=100, unit="blocks", help="two-qubit blocks of the ansatz (0: n(n-1), the paper's size)"
    )
    mitigate_readout: bool = param(True, help="invert the snapshot's readout confusion matrices on measured data")
    seed: int = param(0, lo=0, hi=2**31 - 1, help="seed of the coherent-error draw, the random target and shots")

    def check_combination(self) -> None:
        width = get_device(self.device).num_qubits
        if self.qubits > width:
            raise ValueError(
                f"qubits={self.qubits} is wider than device={self.device!r}: valid range is 2..{width} "
                "(qubits of the device)"
            )

    @property
    def num_blocks(self) -> int:
        return self.blocks or self.qubits * (self.qubits - 1)
