"""Parameters of ``napa``: molecule and bond length, device pair, noise, ansatz size, optimiser and budget."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.config import Config, param
from workbench.quantum.device import OnDevice, pulse_device_names
from workbench.quantum.napa.ansatz import STARTS
from workbench.quantum.napa.hamiltonians import MOLECULES, bond_lengths
from workbench.quantum.napa.train import OPTIMISERS


@dataclass(frozen=True, kw_only=True)
class NapaConfig(OnDevice, Config):
    """VQE with NAPA's native-pulse ansatz on two coupled transmons (``control`` drives the CR on ``target``)."""

    molecule: str = param("H2", choices=tuple(MOLECULES), label="molecule", help="2-qubit reduced Hamiltonian")
    bond_length: float = param(0.735, lo=0.3, hi=3.0, unit="A", label="bond length", help="a shipped bond length")
    device: str = param(
        "fake_jakarta", choices=pulse_device_names(), label="device", help="device snapshot with Hamiltonian data"
    )
    control: int = param(0, lo=0, hi=126, label="control qubit", help="the CR's control (local qubit 0)")
    target: int = param(1, lo=0, hi=126, label="target qubit", help="the CR's target (local qubit 1)")
    noise: str = param("none", choices=("none", "device"), label="noise", help="T1/T2 and readout error, or none")
    noise_scale: float = param(
        1.0, lo=0.0, hi=1000.0, label="noise scale", help="device noise: T1 and T2 divided by this"
    )
    layers: int = param(2, lo=1, hi=4, unit="layers", label="layers", help="NAPA layers (SNPs + echoed CR)")
    optimizer: str = param(
        "gradient", choices=OPTIMISERS, label="optimizer",
        help="gradient: L-BFGS-B, gradients by autograd through the simulator (the paper: cobyla)",
    )  # fmt: skip
    budget: int = param(60, lo=1, hi=5000, unit="evaluations", label="budget",
                        help="energy evaluations (a gradient evaluation counts one)")  # fmt: skip
    start: str = param("hartree-fock", choices=STARTS, label="start",
                       help="initial pulses: Hartree-Fock's pi pulses, or small random amplitudes (the paper's code)")  # fmt: skip
    starts: int = param(2, lo=1, hi=16, label="starts", help="optimisations from different seeds, sharing the budget")
    progressive: bool = param(False, label="progressive",
                              help="grow one layer at a time, only the new one moves (the paper's code)")  # fmt: skip
    trainable_frequency: bool = param(True, label="trainable frequency", help="a detuning per single-qubit pulse")
    shots: int = param(0, lo=0, hi=10**7, unit="shots", label="shots", help="per measurement basis; 0 = exact")
    seed: int = param(0, lo=0, hi=2**31 - 1, label="seed", help="initial parameters and SPSA")

    def check_combination(self) -> None:
        if self.optimizer == "gradient" and self.shots:
            raise ValueError(f"shots={self.shots} with optimizer='gradient': the gradient is of the exact energy; "
                             "valid: shots=0, or a gradient-free optimizer (cobyla, nelder-mead, spsa)")  # fmt: skip
        lengths = bond_lengths(self.molecule)
        if not any(abs(b - self.bond_length) < 1e-9 for b in lengths):
            raise ValueError(
                f"bond_length={self.bond_length} is not shipped for {self.molecule}: valid values are "
                f"{', '.join(f'{b:g}' for b in lengths)}"
            )
        count = self.resolved_device().require_hamiltonian().num_qubits
        for name in ("control", "target"):
            if getattr(self, name) >= count:
                raise ValueError(f"{name}={getattr(self, name)} is out of range for {self.device}: valid range is "
                                 f"0..{count - 1}")  # fmt: skip
        if self.target not in self.resolved_device().coupled_qubits(self.control):
            raise ValueError(
                f"target={self.target} is not coupled to control={self.control} on {self.device}: valid targets are "
                f"{', '.join(map(str, self.resolved_device().coupled_qubits(self.control)))}"
            )
