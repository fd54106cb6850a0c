"""Headless runner: ``workbench run robuststate --target ghz|w|random --qubits 4 --device D --method M --budget N
--json``.

Pre-trains the device-placed ansatz on the noiseless simulator, deploys it on the machine (the device
snapshot's incoherent noise + seeded coherent errors, finite shots) and fine-tunes with the method until the
budget of machine executions (circuits x shots) is spent. Fidelities are the machine's true state fidelity
(the simulation's privilege; training only ever sees sampled counts).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.quantum.robuststate import model
from workbench.quantum.robuststate.config import RobustStateConfig
from workbench.quantum.robuststate.experiment import train
from workbench.registry import Technique
from workbench.results import Result, fmt

__all__ = ["RobustStateResult", "run", "format_table", "TECHNIQUE", "READOUT_MODELS"]

#: what each readout choice gives the machine
READOUT_MODELS = {
    "props": "asymmetric P(1|0), P(0|1) per qubit from the snapshot's props file",
    "aer": "symmetric per-qubit rate of qiskit-aer's NoiseModel.from_backend (the target's measure error)",
}


@dataclass(frozen=True, kw_only=True)
class Curve:
    """True fidelity on the machine after ``executions`` counted executions."""

    executions: tuple[int, ...]
    fidelity: tuple[float, ...]


@dataclass(frozen=True, kw_only=True)
class RobustStateResult(Result):
    """What ``workbench run robuststate --json`` prints. The issue's keys first: fidelity_before (noise-unaware
    deployment on the machine), fidelity_after, machine_executions (counted: circuits x shots),
    coherent_error_before/after (``lambda_max(rho) - F``). Extra: the incoherent part (``1 - lambda_max``),
    the setting, the machine's readout error (``readout``: props or aer, described in ``readout_model``), the
    counted circuits and steps, the cost MODEL's executions (equal to the counted ones), the
    noiseless fidelity of the pre-trained circuit and the curve."""

    technique: str = "robuststate"
    fidelity_before: float
    fidelity_after: float
    machine_executions: int
    coherent_error_before: float
    coherent_error_after: float
    incoherent_error_before: float
    incoherent_error_after: float
    target: str
    qubits: int
    device: str
    layout: tuple[int, ...]
    method: str
    budget: int
    shots: int
    bases: int
    coherent_strength: float
    readout: str
    readout_model: str
    circuits: int
    steps: int
    model_executions: int
    model_label: str
    num_parameters: int
    noiseless_fidelity: float
    fidelity_estimator: str
    curve: Curve


def run(config: RobustStateConfig) -> RobustStateResult:
    """One fine-tuning run (memoised in :mod:`.study`). Raises ValueError for bad input."""
    r = train(config)
    spent = model.executions_spent(
        config.method, config.budget, parameters=r.num_parameters, bases=config.bases, shots=config.shots
    )
    return RobustStateResult(
        fidelity_before=r.before.fidelity,
        fidelity_after=r.after.fidelity,
        machine_executions=r.executions,
        coherent_error_before=r.before.coherent_error,
        coherent_error_after=r.after.coherent_error,
        incoherent_error_before=r.before.incoherent_error,
        incoherent_error_after=r.after.incoherent_error,
        target=config.target,
        qubits=config.qubits,
        device=config.device,
        layout=r.layout,
        method=config.method,
        budget=config.budget,
        shots=config.shots,
        bases=config.bases,
        coherent_strength=config.coherent_strength,
        readout=config.readout,
        readout_model=READOUT_MODELS[config.readout],
        circuits=r.circuits,
        steps=r.steps,
        model_executions=spent,
        model_label=model.LABEL,
        num_parameters=r.num_parameters,
        noiseless_fidelity=r.noiseless_fidelity,
        fidelity_estimator="true state fidelity <psi|rho|psi> of the simulated machine (not counted); training "
        "uses classical-shadow estimates from sampled counts",
        curve=Curve(executions=tuple(r.trace.executions), fidelity=tuple(r.trace.fidelity)),
    )


def format_table(result: dict[str, Any]) -> str:
    """A short text report of one run."""
    return "\n".join(
        [
            f"robuststate  target={result['target']} qubits={result['qubits']} device={result['device']} "
            f"(qubits {result['layout']})  method={result['method']}",
            f"  fidelity {fmt(result['fidelity_before'])} -> {fmt(result['fidelity_after'])}  "
            f"(noiseless circuit {fmt(result['noiseless_fidelity'])})",
            f"  coherent error {fmt(result['coherent_error_before'])} -> {fmt(result['coherent_error_after'])}; "
            f"incoherent {fmt(result['incoherent_error_before'])} -> {fmt(result['incoherent_error_after'])}",
            f"  readout error: {result['readout']} ({result['readout_model']})",
            f"  machine executions {fmt(result['machine_executions'])} of {fmt(result['budget'])} "
            f"({fmt(result['circuits'])} circuits x {fmt(result['shots'])} shots; {fmt(result['steps'])} steps; "
            f"{result['model_label']} {fmt(result['model_executions'])})",
        ]
    )


TECHNIQUE = Technique(
    name="robuststate",
    config=RobustStateConfig,
    run=run,
    format_table=format_table,
    panel="widgets.quantum.robuststate:RobustStatePanel",
    notebook="notebooks/quantum/robuststate.ipynb",
    smoke={"qubits": 2, "device": "fake_lima", "budget": 4096, "shots": 64, "bases": 4, "blocks": 1},
    processes=False,
)
