"""The variational layer shared by the quantum techniques that train parameterised circuits (RobustState,
TopGen, QGAS): circuits on the torch simulator, a counted noisy "machine", losses and optimisers.

- :mod:`.ansatz`: :class:`Ansatz` (the topology-aware block ansatz in native rz/sx/cx gates),
  :func:`connected_layout` and :func:`device_edges` (placing it on a device snapshot).
- :mod:`.machine`: :class:`Machine` (density-matrix simulation of a device snapshot's incoherent noise plus
  seeded :class:`CoherentErrors`, finite shots in Pauli bases, every call counted as circuits x shots).
- :mod:`.shadows`: Pauli settings, classical-shadow reconstruction and fidelity estimates.
- :mod:`.losses`: state fidelity, the Frobenius loss, and the straight-through (measured-forward,
  simulated-backward) loss; a classifier's ``<Z_q>`` readout (:func:`z_expectations`); the VQE energy (dense H
  on the statevector simulator) and the energy of a Pauli sum read from Pauli-basis outcomes.
- :mod:`.optimizers`: Adam training on the noiseless simulator, parameter-shift gradients, SPSA, batched
  multi-restart L-BFGS.
- :mod:`.gate_ansatz`: :class:`GateAnsatz` (a trainable circuit as a gate list with parameter slots, grown
  block by block; TopGen's generated and baseline ansatze), :class:`Gate`, :class:`GateBuilder`.
- :mod:`.trainability`: :func:`gradient_variance` (the barren-plateau diagnostic, generic in the loss).

Everything is complex128 / float64 and seeded.
"""

from workbench.quantum.common.variational.ansatz import Ansatz, connected_layout, device_edges
from workbench.quantum.common.variational.gate_ansatz import ANGLES, TWO_QUBIT_CX, Gate, GateAnsatz, GateBuilder
from workbench.quantum.common.variational.losses import (
    energy_function,
    frobenius_loss,
    pauli_energy,
    state_fidelity,
    straight_through_loss,
    z_expectations,
    z_signs,
)
from workbench.quantum.common.variational.machine import CoherentErrors, Machine
from workbench.quantum.common.variational.optimizers import (
    SPSA,
    Minimised,
    lbfgs_restarts,
    parameter_shift_gradient,
    pretrain_noiseless,
)
from workbench.quantum.common.variational.shadows import (
    all_settings,
    fidelity_to_pure,
    random_settings,
    shadow_density,
    shadow_fidelity,
    term_settings,
)
from workbench.quantum.common.variational.trainability import gradient_variance

__all__ = [
    "Ansatz",
    "connected_layout",
    "device_edges",
    "CoherentErrors",
    "Machine",
    "state_fidelity",
    "frobenius_loss",
    "straight_through_loss",
    "pretrain_noiseless",
    "parameter_shift_gradient",
    "SPSA",
    "all_settings",
    "random_settings",
    "shadow_density",
    "shadow_fidelity",
    "fidelity_to_pure",
    "Gate",
    "GateAnsatz",
    "GateBuilder",
    "ANGLES",
    "TWO_QUBIT_CX",
    "z_signs",
    "z_expectations",
    "gradient_variance",
    "energy_function",
    "pauli_energy",
    "Minimised",
    "lbfgs_restarts",
    "term_settings",
]
