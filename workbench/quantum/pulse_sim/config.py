"""Parameters of ``pulse-sim``: the device and qubits, one pulse to explore, and the check mode's sizes."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.config import Config, param
from workbench.quantum.device import OnDevice, pulse_device_names

SHAPES = ("gaussian", "drag", "gaussian_square", "constant")


@dataclass(frozen=True, kw_only=True)
class PulseSimConfig(OnDevice, Config):
    """``mode="pulse"``: play one pulse on ``qubit`` from |0> and follow the populations; ``mode="check"``:
    compare with qutip, calibrate X/SX on ``qubit`` and the ECR/CX from ``qubit`` to ``target``."""

    mode: str = param("pulse", choices=("pulse", "check"), help="pulse: one pulse; check: qutip + calibration")
    device: str = param(
        "fake_jakarta", choices=pulse_device_names(), label="device", help="device snapshot with Hamiltonian data"
    )
    qubit: int = param(0, lo=0, hi=126, label="qubit", help="the driven qubit (control of the CR)")
    target: int = param(1, lo=0, hi=126, label="CR target", help="check mode: target of the cross-resonance gate")
    levels: int = param(3, choices=(2, 3), label="levels", help="transmon levels kept (3 shows leakage)")
    shape: str = param("drag", choices=SHAPES, label="pulse shape", help="envelope of the explored pulse")
    amp: float = param(0.17, lo=0.0, hi=1.0, label="amplitude", help="peak amplitude (dimensionless, device limit 1)")
    duration: int = param(160, lo=16, hi=4000, unit="dt", label="duration", help="pulse length in samples of dt")
    sigma: float = param(40.0, lo=1.0, hi=1000.0, unit="dt", label="sigma", help="Gaussian width (samples)")
    beta: float = param(0.0, lo=-10.0, hi=10.0, unit="dt", label="DRAG beta", help="DRAG quadrature coefficient")
    width: float = param(64.0, lo=0.0, hi=4000.0, unit="dt", label="flat width", help="GaussianSquare flat top")
    phase: float = param(0.0, lo=-6.3, hi=6.3, unit="rad", label="phase", help="rotation axis in the XY plane")
    detuning_mhz: float = param(
        0.0, lo=-100.0, hi=100.0, unit="MHz", label="detuning", help="drive frequency minus qubit frequency"
    )
    noise_scale: float = param(
        0.0, lo=0.0, hi=1000.0, label="noise scale", help="T1 and T2 divided by this (0: no relaxation)"
    )
    substeps: int = param(
        0, lo=0, hi=64, label="sub-steps", help="propagation intervals per dt (0: the fewest that meet the tolerance)"
    )
    tolerance: float = param(
        1e-3, lo=1e-8, hi=0.1, label="tolerance",
        help="error budget against continuous time, max |U - U_exact| (chooses the sub-steps when they are 0)",
    )  # fmt: skip

    def check_combination(self) -> None:
        count = self.resolved_device().require_hamiltonian().num_qubits
        for name in ("qubit", "target"):
            value = getattr(self, name)
            if value >= count:
                raise ValueError(f"{name}={value} is out of range for {self.device}: valid range is 0..{count - 1}")
        if self.shape == "gaussian_square" and self.width > self.duration:
            raise ValueError(f"width={self.width:g} is out of range: valid range is 0..duration={self.duration}")
        if self.mode == "check" and self.target not in self.resolved_device().coupled_qubits(self.qubit):
            raise ValueError(
                f"target={self.target} is not coupled to qubit={self.qubit} on {self.device}: valid targets are "
                f"{', '.join(map(str, self.resolved_device().coupled_qubits(self.qubit)))}"
            )
