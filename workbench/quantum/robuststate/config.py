"""Parameters of RobustState (``workbench run robuststate --target ghz --qubits 4 --device fake_nairobi ...``)."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.config import Config, param
from workbench.quantum.device import OnDevice

TARGETS = ("ghz", "w", "random")
METHODS = ("robuststate", "unaware", "parameter-shift", "spsa", "bo")
#: readout error of the machine: the props file's asymmetric rates, or qiskit-aer's from_backend symmetric one
READOUTS = ("props", "aer")
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
class RobustStateConfig(OnDevice, Config):
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
    readout: str = param(
        "props",
        choices=READOUTS,
        help="machine readout error: props (asymmetric P(1|0), P(0|1) of the snapshot's props file) or aer "
        "(the symmetric rate of qiskit-aer's NoiseModel.from_backend)",
    )
    mitigate_readout: bool = param(True, help="invert the snapshot's readout confusion matrices on measured data")
    seed: int = param(0, lo=0, hi=2**31 - 1, help="seed of the coherent-error draw, the random target and shots")

    def check_combination(self) -> None:
        width = self.resolved_device().num_qubits
        if self.qubits > width:
            raise ValueError(
                f"qubits={self.qubits} is wider than device={self.device!r}: valid range is 2..{width} "
                "(qubits of the device)"
            )

    @property
    def num_blocks(self) -> int:
        return self.blocks or self.qubits * (self.qubits - 1)


#: the default study's devices (the paper's machines where a fake backend exists)
STUDY_DEVICES = ("fake_geneva", "fake_hanoi", "fake_lagos", "fake_nairobi", "fake_perth")
#: the study's settings (RobustState and the headline cases / the method comparison)
STUDY_SETTINGS = {
    "shots": 256,
    "bases": 16,
    "lr": 0.005,
    "coherent_strength": 1.0,
    "headline_budget": 300_000,
    "compare_budget": 800_000,
    "compare_qubits": (4,),
    "compare_targets": ("random",),
}


@dataclass(frozen=True, kw_only=True)
class RobustStateViewConfig(OnDevice, Config):
    """The panel's controls: a study case (device, target, width) and the run the button trains."""

    device: str = param("fake_nairobi", choices=STUDY_DEVICES, help="device snapshot of the study")
    target: str = param("ghz", choices=TARGETS, help="target state")
    qubits: int = param(4, lo=2, hi=5, unit="qubits", help="width (the study covers 4 and 5)")
    method: str = param("robuststate", choices=METHODS, help="training method (highlighted; the button trains it)")
    coherent_strength: float = param(
        1.0, lo=0.0, hi=3.0, label="coherent-error strength", help="scales the seeded coherent errors"
    )
    shots: int = param(256, lo=1, hi=8192, unit="shots", help="shots per circuit")
    budget: int = param(1_200_000, lo=0, hi=3_000_000, unit="executions", help="machine executions (circuits x shots)")

    def run_config(self) -> RobustStateConfig:
        """The CLI config of the run the panel's button trains."""
        return RobustStateConfig(
            device=self.device,
            target=self.target,
            qubits=self.qubits,
            method=self.method,
            coherent_strength=self.coherent_strength,
            shots=self.shots,
            budget=self.budget,
            bases=STUDY_SETTINGS["bases"],
            lr=STUDY_SETTINGS["lr"],
        )
