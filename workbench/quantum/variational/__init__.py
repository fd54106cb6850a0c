"""The variational layer shared by the quantum techniques that train parameterised circuits (RobustState,
TopGen, QGAS): circuits on the torch simulator, a counted noisy "machine", losses and optimisers.

- :mod:`.ansatz`: :class:`Ansatz` (the topology-aware block ansatz in native rz/sx/cx gates),
  :func:`connected_layout` and :func:`device_edges` (placing it on a device snapshot).
- :mod:`.machine`: :class:`Machine` (density-matrix simulation of a device snapshot's incoherent noise plus
  seeded :class:`CoherentErrors`, finite shots in Pauli bases, every call counted as circuits x shots).
- :mod:`.shadows`: Pauli settings, classical-shadow reconstruction and fidelity estimates.
- :mod:`.losses`: state fidelity, the Frobenius loss, and the straight-through (measured-forward,
  simulated-backward) loss; the VQE energy (dense H on the statevector simulator) and the energy of a Pauli
  sum read from Pauli-basis outcomes.
- :mod:`.optimizers`: Adam training on the noiseless simulator, parameter-shift gradients, SPSA, batched
  multi-restart L-BFGS.

Everything is complex128 / float64 and seeded.
"""

from workbench.quantum.variational.ansatz import Ansatz, connected_layout, device_edges
from workbench.quantum.variational.losses import (
    energy_function,
    frobenius_loss,
    pauli_energy,
    state_fidelity,
    straight_through_loss,
)
from workbench.quantum.variational.machine import CoherentErrors, Machine
from workbench.quantum.variational.optimizers import (
    SPSA,
    Minimised,
    lbfgs_restarts,
    parameter_shift_gradient,
    pretrain_noiseless,
)
from workbench.quantum.variational.shadows import (
    all_settings,
    fidelity_to_pure,
    random_settings,
    shadow_density,
    shadow_fidelity,
    term_settings,
)

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
    "energy_function",
    "pauli_energy",
    "Minimised",
    "lbfgs_restarts",
    "term_settings",
]
