"""MODEL: closed-form CNOT counts of TopGen's ansatz, carried to paper-scale devices (27-127 qubits).

A TopGen block costs ``sum_f cx(template_f) + |stitch edges|`` native CNOTs (``cx``/``cz``: 1, ``crx``: 2) and a
grown block ``2 |region edges|`` (one ``rzz`` = 2 CNOTs per coupling edge); nothing is routed, so this is the
count after transpiling (tested: counted == model). A hardware-efficient ansatz with a linear CNOT chain costs
``Q - 1`` per block before routing; routing adds 3 CNOTs per SWAP, which is not closed-form: the study counts it
with qiskit's router. Labelled MODEL wherever it is drawn.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from workbench.quantum.common.variational.gate_ansatz import TWO_QUBIT_CX
from workbench.quantum.topgen.generate import ENTANGLERS, ROTATIONS, Template

__all__ = [
    "template_cx",
    "topgen_cx",
    "hea_cx_unrouted",
    "template_space",
    "topgen_space",
    "supercircuit_space",
    "LABEL",
]

LABEL = "MODEL"


def template_cx(template: Template) -> int:
    """Native CNOTs of one template: layers x edges x cost of its entangler."""
    return template.layers * len(template.edges) * TWO_QUBIT_CX[template.entangler]


def topgen_cx(templates: Sequence[Template], stitches: int, blocks: int, grown: int = 0, region_edges: int = 0) -> int:
    """CNOTs of ``blocks`` generated blocks (``templates`` per fragment, ``stitches`` stitch edges) plus
    ``grown`` grown blocks over ``region_edges`` coupling edges."""
    per_block = sum(template_cx(t) for t in templates) + stitches
    return blocks * per_block + grown * 2 * region_edges


def hea_cx_unrouted(num_qubits: int, blocks: int) -> int:
    """CNOTs of the hardware-efficient ansatz before routing: ``blocks (Q - 1)``."""
    return blocks * (num_qubits - 1)


def template_space(num_edges: int) -> int:
    """Templates our grammar can write on a fragment with ``num_edges`` coupling edges: rotation sets x
    entanglers x edge orders x directions x (1 or 2 layers) x (final rotation or not); 5 for a lone qubit."""
    if num_edges == 0:
        return len(ROTATIONS)
    return len(ROTATIONS) * len(ENTANGLERS) * math.factorial(num_edges) * 2**num_edges * 2 * 2


def topgen_space(fragment_edges: Sequence[int], blocks: int) -> int:
    """Ansätze TopGen's generator can build: every fragment picks a template independently in every block
    (stitches are fixed by the tiling)."""
    per_block = math.prod(template_space(e) for e in fragment_edges)
    return per_block**blocks


def supercircuit_space(num_qubits: int, blocks: int) -> int:
    """Sub-circuits of the QuantumNAS-style SuperCircuit: 1..``blocks`` blocks, each with 1..Q leading ``u3``
    and 0..R leading ring ``cu3`` (R = Q for Q > 2)."""
    ring = num_qubits if num_qubits > 2 else 1
    per_block = num_qubits * (ring + 1)
    return sum(per_block**b for b in range(1, blocks + 1))
