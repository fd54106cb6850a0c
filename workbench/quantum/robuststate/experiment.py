"""The runs both the runner and the study call, memoised: the problem (pre-training memoised apart), one method's
fine-tuning run (:func:`train`), the machine's readout choice and the paper's baseline, arithmetic
decomposition (:func:`arithmetic_baseline`).

Readout (:data:`READOUTS`): ``props`` (default) gives each qubit the asymmetric ``P(1|0)``, ``P(0|1)`` of the
snapshot's props file; ``aer`` the symmetric rate qiskit-aer's ``NoiseModel.from_backend`` uses (the backend
target's ``measure`` error, about the mean of the two; outcome probabilities differ by ~0.01).

Arithmetic decomposition (the paper's baseline, slide 8): qiskit's ``StatePreparation`` of the target,
transpiled by qiskit (``optimization_level=3``, its layout and routing) to the device's ``rz/sx/x/cx`` gates
on the same physical qubits as the variational ansatz, run on the same machine (incoherent noise and coherent
errors). Its fidelity is against the target permuted by the transpiler's final layout.

Caches live here only (:func:`clear_caches`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import torch

from workbench.quantum.calibration import DeviceCalibration
from workbench.quantum.common.variational import CoherentErrors, Machine, connected_layout, device_edges
from workbench.quantum.device import Device
from workbench.quantum.noise import NoiseSpec
from workbench.quantum.robuststate import model
from workbench.quantum.robuststate.bayesopt import train_bo
from workbench.quantum.robuststate.config import READOUTS, RobustStateConfig
from workbench.quantum.robuststate.parameter_shift import train_parameter_shift
from workbench.quantum.robuststate.problem import (
    Evaluation,
    Problem,
    evaluate,
    make_machine,
    make_problem,
    split_error,
)
from workbench.quantum.robuststate.spsa import train_spsa
from workbench.quantum.robuststate.straight_through import train_robuststate
from workbench.quantum.robuststate.targets import target_state
from workbench.quantum.robuststate.trace import Trace

__all__ = [
    "RunRecord",
    "ArithmeticBaseline",
    "problem",
    "pretrained",
    "problem_of",
    "train",
    "trained_run",
    "aer_readout",
    "arithmetic_circuit",
    "arithmetic_machine",
    "arithmetic_baseline",
    "permuted_state",
    "clear_caches",
]


@dataclass(frozen=True, kw_only=True)
class RunRecord:
    """One method's run on one configuration: the machine before (noise-unaware deployment) and after, the
    curve, counted executions and steps."""

    before: Evaluation
    after: Evaluation
    trace: Trace
    executions: int
    circuits: int
    steps: int
    noiseless_fidelity: float
    layout: tuple[int, ...]
    num_parameters: int


@dataclass(frozen=True, kw_only=True)
class ArithmeticBaseline:
    """The arithmetic-decomposition circuit on the machine: its true state's :class:`Evaluation`, its size
    after transpilation (``cx`` count, depth) and its noiseless fidelity (1 up to rounding)."""

    evaluation: Evaluation
    cx: int
    depth: int
    noiseless_fidelity: float


# ---- readout ---------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=16)
def aer_readout(device: Device) -> tuple[float, ...]:
    """Per-qubit symmetric readout error of qiskit-aer's ``NoiseModel.from_backend`` on ``device`` (P(1|0) =
    P(0|1), read back from the model)."""
    from qiskit_aer.noise import NoiseModel

    from workbench.quantum.aer import readout_from_model

    confusion = readout_from_model(NoiseModel.from_backend(device.backend), device.num_qubits)
    if confusion is None:
        return (0.0,) * device.num_qubits
    return tuple(float(a[1, 0]) for a in confusion)


def with_readout(
    calibration: DeviceCalibration, device: Device, layout: tuple[int, ...], readout: str
) -> DeviceCalibration:
    """``calibration`` (of ``layout``'s qubits, renumbered) with the readout rates of ``readout``."""
    if readout not in READOUTS:
        raise ValueError(f"readout={readout!r} is not supported: valid values are {', '.join(READOUTS)}")
    if readout == "props":
        return calibration
    sym = aer_readout(device)
    rates = tuple(sym[q] for q in layout)
    return replace(calibration, readout_p01=rates, readout_p10=rates)


# ---- problems and runs -----------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=64)
def pretrained(target: str, qubits: int, device: Device, blocks: int, seed: int) -> tuple[torch.Tensor, float]:
    """Noiselessly pre-trained (theta0, fidelity) of the placed ansatz."""
    pb = make_problem(target, qubits, device, blocks=blocks, coherent_strength=0.0, seed=seed)
    return pb.theta0, pb.noiseless_fidelity


@functools.lru_cache(maxsize=64)
def problem(
    target: str,
    qubits: int,
    device: Device,
    blocks: int,
    strength: float,
    incoherent: bool,
    seed: int,
    readout: str = "props",
) -> Problem:
    """The memoised problem (pre-training memoised apart: it does not depend on the noise)."""
    pb = make_problem(
        target,
        qubits,
        device,
        blocks=blocks,
        coherent_strength=strength,
        incoherent=incoherent,
        seed=seed,
        pretrained=pretrained(target, qubits, device, blocks, seed),
    )
    if readout == "props":
        return pb
    sub = with_readout(pb.calibration, device, pb.layout, readout)
    return replace(pb, calibration=sub, noise=NoiseSpec.device(sub, scale=1.0 if incoherent else 0.0))


def problem_of(config: RobustStateConfig) -> Problem:
    """The memoised problem of ``config``."""
    return problem(
        config.target,
        config.qubits,
        config.resolved_device(),
        config.num_blocks,
        float(config.coherent_strength),
        bool(config.incoherent),
        int(config.seed),
        config.readout,
    )


_RUNS: dict[RobustStateConfig, RunRecord] = {}


def _fine_tune(config: RobustStateConfig, pb: Problem, machine: Machine, before: Evaluation, progress) -> Trace:
    """The trace of ``config.method`` on ``machine`` from the pre-trained parameters."""
    kw = {"budget": int(config.budget), "bases": int(config.bases), "mitigate": config.mitigate_readout}
    if config.method == "unaware":
        trace = Trace("unaware", [0], [before.fidelity], [before.coherent_error], [before.incoherent_error])
        trace.theta = pb.theta0.clone()
        return trace
    if config.method == "robuststate":
        every = max(1, int(config.budget) // (config.bases * config.shots * 40))  # ~40 curve points
        return train_robuststate(
            machine, pb.theta0, pb.psi, lr=config.lr, seed=config.seed, progress=progress, record_every=every, **kw
        )
    if config.method == "parameter-shift":
        return train_parameter_shift(
            machine, pb.theta0, pb.psi, lr=config.lr, seed=config.seed, progress=progress, **kw
        )
    if config.method == "spsa":
        return train_spsa(machine, pb.theta0, pb.psi, seed=config.seed, progress=progress, **kw)
    if config.method == "bo":
        return train_bo(
            machine,
            pb.theta0,
            pb.psi,
            seed=config.seed,
            progress=progress,
            max_evaluations=model.BO_MAX_EVALUATIONS,
            **kw,
        )
    raise ValueError(f"method={config.method!r} is not supported")  # the config's choices make this unreachable


def train(config: RobustStateConfig, progress: Callable[[float], None] | None = None) -> RunRecord:
    """Pre-train (noiseless), deploy on the machine, fine-tune with ``config.method`` within ``config.budget``
    executions; memoised by the whole config. Raises ValueError for bad input (see the config)."""
    if config in _RUNS:
        return _RUNS[config]
    pb = problem_of(config)
    machine = make_machine(pb, shots=config.shots, seed=config.seed)
    before = evaluate(machine, pb.theta0, pb.psi)
    trace = _fine_tune(config, pb, machine, before, progress)
    record = RunRecord(
        before=before,
        after=evaluate(machine, trace.theta, pb.psi),
        trace=trace,
        executions=machine.executions,
        circuits=machine.circuits,
        steps=trace.steps,
        noiseless_fidelity=pb.noiseless_fidelity,
        layout=pb.layout,
        num_parameters=pb.ansatz.num_parameters,
    )
    _RUNS[config] = record
    return record


def trained_run(config: RobustStateConfig) -> RunRecord | None:
    """The memoised run of ``config`` if it was trained in this process (no computation), else None."""
    return _RUNS.get(config)


# ---- the paper's baseline: arithmetic decomposition ------------------------------------------------------------
def permuted_state(psi: np.ndarray, final: list[int] | tuple[int, ...]) -> np.ndarray:
    """``psi`` ``[2**n]`` (qiskit order) with virtual qubit ``v`` moved to position ``final[v]``."""
    n = len(final)
    out = np.zeros_like(psi)
    for index in range(psi.size):
        moved = 0
        for v in range(n):
            if (index >> v) & 1:
                moved |= 1 << final[v]
        out[moved] = psi[index]
    return out


@functools.lru_cache(maxsize=64)
def arithmetic_circuit(target: str, qubits: int, device: Device, seed: int):
    """(transpiled circuit on qubits ``0..n-1`` of the ansatz's layout, final layout ``[n]``): qiskit's
    ``StatePreparation`` of the target, transpiled at ``optimization_level=3`` to the layout's directed
    ``cx`` coupling and ``rz/sx/x/cx``."""
    from qiskit import QuantumCircuit, transpile
    from qiskit.circuit.library import StatePreparation
    from qiskit.transpiler import CouplingMap

    layout = connected_layout(device.calibration, qubits)
    qc = QuantumCircuit(qubits)
    qc.append(StatePreparation(target_state(target, qubits, seed=seed).numpy()), range(qubits))
    tqc = transpile(
        qc,
        basis_gates=["rz", "sx", "x", "cx"],
        coupling_map=CouplingMap([list(e) for e in device.subset(layout).coupling_map]),
        optimization_level=3,
        seed_transpiler=seed,
    )
    final = tqc.layout.final_index_layout() if tqc.layout is not None else list(range(qubits))
    return tqc, tuple(final)


def arithmetic_machine(
    target: str, qubits: int, device: Device, strength: float, incoherent: bool, seed: int, readout: str = "props"
) -> tuple[Machine, np.ndarray]:
    """(exact machine running :func:`arithmetic_circuit` with the problem's noise, coherent errors and readout;
    the target ``[2**n]`` permuted by the transpiler's final layout)."""
    tqc, final = arithmetic_circuit(target, qubits, device, seed)
    layout = connected_layout(device.calibration, qubits)
    sub = with_readout(device.subset(layout), device, layout, readout)
    coherent = CoherentErrors.draw(qubits, device_edges(sub), strength=strength, seed=10_000 + seed)  # the problem's
    noise = NoiseSpec.device(sub, scale=1.0 if incoherent else 0.0)
    psi = permuted_state(target_state(target, qubits, seed=seed).numpy(), final)
    return Machine(tqc, noise=noise, coherent=coherent, shots=None), psi


@functools.lru_cache(maxsize=128)
def arithmetic_baseline(
    target: str, qubits: int, device: Device, strength: float, incoherent: bool, seed: int, readout: str = "props"
) -> ArithmeticBaseline:
    """The arithmetic-decomposition circuit's true state on the machine of the problem (same incoherent noise,
    coherent errors and readout as the variational runs; the state is read before measurement)."""
    from qiskit.quantum_info import Statevector

    machine, psi = arithmetic_machine(target, qubits, device, strength, incoherent, seed, readout)
    tqc = machine.circuit
    noiseless = float(abs(np.vdot(psi, Statevector(tqc).data)) ** 2)
    with torch.no_grad():
        ev = split_error(machine.density(torch.zeros(0, dtype=torch.float64)), torch.as_tensor(psi))
    return ArithmeticBaseline(
        evaluation=ev,
        cx=int(tqc.count_ops().get("cx", 0)),
        depth=int(tqc.depth()),
        noiseless_fidelity=noiseless,
    )


def clear_caches() -> None:
    """Forget every memoised problem, run, readout and baseline."""
    problem.cache_clear()
    pretrained.cache_clear()
    aer_readout.cache_clear()
    arithmetic_circuit.cache_clear()
    arithmetic_baseline.cache_clear()
    _RUNS.clear()
