"""Size of a hybrid-qaoa run before it starts (issue #29): ``estimate(config) -> Estimate`` from closed forms.

A ``grid`` x ``grid`` start grid and ``budget`` COBYLA evaluations for the gate and the hybrid ansatz, each a
density-matrix simulation (4^n complex128, n the graph's vertices) of ``p`` cost layers and pulse mixers of
``mixer_dt`` samples.

Constants marked *measured* come from peak RSS (VmHWM after ``clear_refs``) of the smoke run on this repository's
CI machine; ``tests/test_memory.py`` checks every estimate against the measured peak within 2x.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from workbench.memory import MB, Estimate

if TYPE_CHECKING:
    from workbench.quantum.hybrid_qaoa.config import HybridQaoaConfig

__all__ = ["estimate"]


#: measured: the run's fixed overhead at the smoke settings with an empty cache (lazy imports of qiskit, qiskit-aer and
#: scipy; device data and calibrations)
BASE_BYTES = 25 * MB
#: measured: fixed seconds of a run (transpiling, calibration) and seconds per layer of an evaluation per 4^n element
FIXED_S, UNIT_S = 4.0, 0.0002


def vertices(graph: str) -> int:
    """Vertices of a graph spec (``ring-5``, ``complete-4``, or edges ``0-1:2,1-2``); 0 when it cannot be read (the
    config refuses it)."""
    head, _, tail = graph.strip().partition("-")
    if tail.isdigit() and head.isalpha():
        return int(tail)
    ends = [int(x) for x in re.findall(r"\d+", re.sub(r":[^,]*", "", graph))]
    return max(ends) + 1 if ends else 0


def estimate(config: HybridQaoaConfig) -> Estimate:
    """Peak bytes and seconds of ``workbench run hybrid-qaoa`` with ``config``."""
    n = min(max(vertices(config.graph), 1), 20)
    dim2 = 4.0**n if config.noise == "device" else 2.0**n
    evals = config.grid**2 + 2 * config.budget
    per_eval = config.p * (1 + config.mixer_dt / 128) * max(dim2, 64) * UNIT_S
    return Estimate(BASE_BYTES + 64 * 16 * dim2, FIXED_S + evals * per_eval)
