"""MODEL: machine executions per training step of each method, and what a budget buys, at any scale.

Closed forms (``P`` parameters, ``K`` measurement settings per estimate, ``S`` shots per circuit):

- robuststate: ``K S`` per step (one shadow tomography; independent of P)
- parameter-shift: ``2 P K S`` per step (a shadow fidelity estimate at each of 2P shifted points)
- spsa: ``2 K S`` per step
- bo: ``K S`` per evaluation (at most ``max_evaluations``)
- unaware: 0 (trained on the noiseless simulator only)

The runs count every execution through the machine; tests check counted == this model. At the paper's
ansatz sizes (tutorial slide 9: 12 two-qubit gates for 4 qubits, 20 for 5, 40 for 6; our block ansatz has
``P = 3 n + 6 blocks``) parameter shift costs ``2 P`` times RobustState per step: 168x, 270x, 516x.
"""

from __future__ import annotations

__all__ = ["executions_per_step", "steps_within", "executions_spent", "num_parameters", "PAPER_BLOCKS", "LABEL"]

LABEL = "MODEL"
#: two-qubit gates at which the paper's noiseless fidelity reaches ~1 (tutorial slide 9), by width
PAPER_BLOCKS = {3: 6, 4: 12, 5: 20, 6: 40}
BO_MAX_EVALUATIONS = 60


def num_parameters(qubits: int, blocks: int) -> int:
    """Parameters of the block ansatz: a rotation layer (3 n) plus 6 per block."""
    return 3 * qubits + 6 * blocks


def executions_per_step(method: str, *, parameters: int, bases: int, shots: int) -> int:
    """Machine executions of one update (one evaluation for bo)."""
    ks = bases * shots
    per = {"robuststate": ks, "parameter-shift": 2 * parameters * ks, "spsa": 2 * ks, "bo": ks, "unaware": 0}
    if method not in per:
        raise ValueError(f"method={method!r} is not supported: valid values are {', '.join(per)}")
    return per[method]


def steps_within(method: str, budget: int, *, parameters: int, bases: int, shots: int) -> int:
    """Updates a budget affords (bo: capped at :data:`BO_MAX_EVALUATIONS`; unaware: 0)."""
    per = executions_per_step(method, parameters=parameters, bases=bases, shots=shots)
    if per == 0:
        return 0
    steps = budget // per
    return min(steps, BO_MAX_EVALUATIONS) if method == "bo" else steps


def executions_spent(method: str, budget: int, *, parameters: int, bases: int, shots: int) -> int:
    """Executions a run with this budget spends (whole steps only)."""
    per = executions_per_step(method, parameters=parameters, bases=bases, shots=shots)
    return per * steps_within(method, budget, parameters=parameters, bases=bases, shots=shots)
