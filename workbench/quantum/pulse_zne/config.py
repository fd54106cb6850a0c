"""Parameters of ``pulse-zne``: the molecule and device, the noise, the ZNE scale factors and extrapolation."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.config import Config, param
from workbench.quantum.device import OnDevice, pulse_device_names
from workbench.quantum.pulse_zne.extrapolation import EXTRAPOLATIONS
from workbench.quantum.pulse_zne.reversal import check_fold_factors, check_stretch_factors

METHODS = ("folding", "stretching")


def parse_scale_factors(text: str) -> tuple[float, ...]:
    """``"1,3,5"`` -> (1.0, 3.0, 5.0) (ValueError naming ``scale_factors`` on anything else)."""
    try:
        values = tuple(float(v) for v in str(text).split(",") if v.strip())
    except ValueError:
        raise ValueError(f"scale_factors={text!r} is not a comma-separated list of numbers, e.g. 1,3,5") from None
    if len(values) < 2:
        raise ValueError(f"scale_factors={text!r} has {len(values)} value(s): valid lists have 2..8 values")
    if len(values) > 8:
        raise ValueError(f"scale_factors={text!r} has {len(values)} values: valid lists have 2..8 values")
    return values


@dataclass(frozen=True, kw_only=True)
class PulseZneConfig(OnDevice, Config):
    """Pulse ZNE of a noiselessly trained NAPA ansatz for ``molecule`` on transmons ``qubit`` ->
    ``target`` of ``device``, under T1/T2 divided by ``noise_scale``."""

    molecule: str = param("H2", choices=("H2", "HeH+"), label="molecule", help="2-qubit Hamiltonian (STO-3G)")
    bond_length: float = param(0.735, lo=0.4, hi=2.0, unit="A", label="bond length", help="a shipped geometry")
    device: str = param(
        "fake_jakarta", choices=pulse_device_names(), label="device", help="device snapshot with Hamiltonian data"
    )
    qubit: int = param(0, lo=0, hi=126, label="control qubit", help="device qubit of the ansatz's qubit 0")
    target: int = param(1, lo=0, hi=126, label="target qubit", help="device qubit of the ansatz's qubit 1")
    noise_scale: float = param(
        30.0, lo=0.0, hi=1000.0, label="noise scale", help="T1 and T2 divided by this (1: the device's own)"
    )
    scale_factors: str = param("1,3,5", label="scale factors", help="noise scale factors lambda, comma-separated")
    extrapolation: str = param("richardson", choices=EXTRAPOLATIONS, label="extrapolation", help="to lambda = 0")
    method: str = param("folding", choices=METHODS, label="noise scaling", help="folding S(S^R S)^k or stretching")
    readout: bool = param(False, label="readout error", help="apply the device's readout error (ZNE does not scale it)")
    layers: int = param(2, lo=1, hi=3, label="ansatz layers", help="NAPA layers (SNP x 2 + echoed CR each)")
    budget: int = param(400, lo=5, hi=2000, label="training evaluations", help="COBYLA evaluations (noiseless)")
    true_fidelity: bool = param(
        True, label="true fidelity", help="also compute the schedule's process fidelity (seconds) beside F_est"
    )
    gate_baseline: bool = param(True, label="gate-level ZNE", help="also run mitiq gate folding on a gate ansatz")

    def factors(self) -> tuple[float, ...]:
        values = parse_scale_factors(self.scale_factors)
        if self.method == "folding":
            return tuple(float(v) for v in check_fold_factors(values))
        check_stretch_factors(values)
        if len(set(values)) != len(values):
            raise ValueError(f"scale_factors={self.scale_factors!r} repeats a value")
        return values

    def check_combination(self) -> None:
        count = self.resolved_device().require_hamiltonian().num_qubits
        for name in ("qubit", "target"):
            value = getattr(self, name)
            if value >= count:
                raise ValueError(f"{name}={value} is out of range for {self.device}: valid range is 0..{count - 1}")
        if self.target not in self.resolved_device().coupled_qubits(self.qubit):
            raise ValueError(
                f"target={self.target} is not coupled to qubit={self.qubit} on {self.device}: valid targets are "
                f"{', '.join(map(str, self.resolved_device().coupled_qubits(self.qubit)))}"
            )
        factors = self.factors()
        if self.extrapolation == "exponential" and len(factors) < 3:
            raise ValueError(f"scale_factors={self.scale_factors!r}: exponential extrapolation needs at least 3")
