"""Size of a devices run before it starts (issue #29): ``estimate(config) -> Estimate`` from closed forms.

List: the device snapshots; fidelity: a ``width``-qubit density matrix (4^w complex128) and its channels, ``depth``
layers, in our simulator and/or qiskit-aer.

Constants marked *measured* come from peak RSS (VmHWM after ``clear_refs``) of the smoke run on this repository's
CI machine; ``tests/test_memory.py`` checks every estimate against the measured peak within 2x.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.memory import MB, Estimate

if TYPE_CHECKING:
    from workbench.quantum.devices.config import DevicesConfig

__all__ = ["estimate"]

#: measured: the run's fixed overhead at the smoke settings with an empty cache (lazy imports of qiskit, qiskit-aer and
#: scipy; device data and calibrations)
BASE_BYTES = 12 * MB
#: qiskit-aer's simulator and its transpiled circuits (engine aer or both): an upper bound
AER_BYTES = 100 * MB
#: measured: fixed seconds of a run (transpiling, calibration) and seconds per complex multiply-add of a layer
FIXED_S, UNIT_S = 2.0, 1e-08


def estimate(config: DevicesConfig) -> Estimate:
    """Peak bytes and seconds of ``workbench run devices`` with ``config``."""
    if config.mode != "fidelity":
        return Estimate(BASE_BYTES, FIXED_S)
    dim2 = 4.0**config.width
    engines = 2 if config.engine == "both" else 1
    ops = engines * config.depth * config.width * dim2 * 16  # a two-qubit channel on the density matrix per gate
    aer = AER_BYTES if config.engine != "ours" else 0
    return Estimate(BASE_BYTES + aer + 8 * 16 * dim2, FIXED_S + ops * UNIT_S)
