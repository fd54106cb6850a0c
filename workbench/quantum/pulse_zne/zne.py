"""Pulse ZNE on a NAPA-style H2 pulse ansatz: energies under folding and stretching, a trained ansatz, and
gate-level ZNE with mitiq as the baseline.

- :func:`energy_at` plays a schedule (optionally stretched in time) from |00> under the device's T1/T2, folds
  leakage, and measures every Pauli term with the device's readout confusion (NAPA's measurement, reused);
- :func:`scaled_energies` gives ``E(lambda)`` for folding (``S (S^R S)^k``) or stretching (the ansatz rebuilt
  with every amplitude and DRAG beta divided by ``c``, played ``c`` times slower);
- :func:`trained_ansatz` trains a :class:`PulseAnsatz` noiselessly with COBYLA (cached as JSON under
  ``cache_dir("pulse_zne")``; a training recorded in the shipped :data:`RECORDED_TRAINING` by
  ``python -m workbench.quantum.pulse_zne.record`` is read from there when its key matches);
- :func:`gate_zne` is the gate-level baseline: a hardware-efficient circuit for the same Hamiltonian, folded by
  mitiq (``fold_global``), transpiled to rz/sx/x/ecr, compiled to the same calibrated pulses and simulated here.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.optimize
import torch

from workbench.atomic import atomic_write
from workbench.data import cache_dir
from workbench.quantum.common.pulse.device import PulseDevice
from workbench.quantum.common.pulse.hamiltonian import hamiltonian_steps
from workbench.quantum.common.pulse.natives import NativeGates
from workbench.quantum.common.pulse.propagate import evolve_density
from workbench.quantum.common.pulse.schedule import Play, Schedule
from workbench.quantum.napa.ansatz import PulseAnsatz
from workbench.quantum.napa.energy import energy_of_state
from workbench.quantum.pulse_zne.reversal import check_fold_factors, check_stretch_factors, fold

__all__ = [
    "energy_at",
    "stretched_ansatz",
    "scaled_energies",
    "TrainedAnsatz",
    "trained_ansatz",
    "train_key",
    "recorded_training",
    "RECORDED_TRAINING",
    "gate_circuit",
    "gate_zne",
]

METHODS = ("folding", "stretching")


def energy_at(
    device: PulseDevice, schedule: Schedule, terms, *, time_scale: float = 1.0, readout: bool = True,
    substeps: int = 2,
) -> float:  # fmt: skip
    """<H> after ``schedule`` from |00> on ``device`` (played ``time_scale`` times slower)."""
    rho = torch.zeros(device.dim, device.dim, dtype=torch.complex128)
    rho[0, 0] = 1
    steps = hamiltonian_steps(device, schedule, substeps=substeps, time_scale=time_scale)
    return energy_of_state(device, evolve_density(rho, steps, device).numpy(), terms, readout=readout)


def stretched_ansatz(ansatz: PulseAnsatz, x: np.ndarray, factor: float) -> Schedule:
    """The ansatz's schedule for stretching by ``factor``: built with DRAG beta (in samples, which last ``factor``
    times longer) and calibrated detunings divided by ``factor`` (the frame phase each pulse accumulates is kept),
    then every sample divided by ``factor``. The plays are those of the unstretched schedule (the ansatz's
    drop rule for tiny amplitudes is applied before the division, so no pulse disappears). Play it with
    ``time_scale=factor``."""
    (c,) = check_stretch_factors([factor])
    nat = ansatz.natives
    scaled = {q: dataclasses.replace(p, beta=p.beta / c, detuning=p.detuning / c) for q, p in nat.x.items()}
    natives = NativeGates(nat.device, scaled, nat.sx, nat.ecr)
    base = PulseAnsatz(natives, ansatz.layers, ansatz.trainable_frequency).schedule(np.asarray(x, dtype=float))
    plays = tuple(Play(p.channel, p.samples / c, p.start, p.detuning) for p in base.plays)
    return Schedule(plays, base.min_duration)


def scaled_energies(
    device: PulseDevice, ansatz: PulseAnsatz, x: np.ndarray, terms, method: str, scale_factors, *,
    readout: bool = True, on_point: Callable[[int, int], None] | None = None,
) -> np.ndarray:  # fmt: skip
    """``E(lambda)`` for every scale factor, by ``method`` ("folding": odd integers; "stretching": 1..10)."""
    if method not in METHODS:
        raise ValueError(f"method={method!r} is not known: valid values are {', '.join(METHODS)}")
    lams = check_fold_factors(scale_factors) if method == "folding" else check_stretch_factors(scale_factors)
    base = ansatz.schedule(x)
    out = []
    for i, lam in enumerate(lams):
        if method == "folding":
            out.append(energy_at(device, fold(base, int(lam)), terms, readout=readout))
        else:
            s = base if lam == 1 else stretched_ansatz(ansatz, x, lam)
            out.append(energy_at(device, s, terms, time_scale=float(lam), readout=readout))
        if on_point:
            on_point(i + 1, len(lams))
    return np.array(out)


@dataclass(frozen=True)
class TrainedAnsatz:
    """A one-layer NAPA ansatz trained noiselessly: parameters, noiseless energy, evaluations."""

    ansatz: PulseAnsatz
    x: np.ndarray
    energy: float
    evaluations: int


#: the shipped trainings (``python -m workbench.quantum.pulse_zne.record`` writes it)
RECORDED_TRAINING = Path(__file__).with_name("trained_ansatz.json")


def train_key(natives: NativeGates, terms, layers: int, budget: int, seed: int) -> str:
    """What a training depends on (device, its calibrated pulses, Hamiltonian, layers, budget, seed), hashed; the
    amplitudes rounded to 1e-9 so that a calibration equal up to the last bits on another CPU keeps the key."""
    d = natives.device
    key = json.dumps([d.name, d.qubits, d.levels, round(natives.x[0].amp, 9), round(natives.ecr[(0, 1)].amp, 9), terms,
                      layers, budget, seed])  # fmt: skip
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def recorded_training(key: str) -> dict | None:
    """The shipped training of :func:`train_key` ``key`` (``{"x", "energy", "evaluations", "first_losses", ...}``),
    or None when none matches (another setting, or the calibration or Hamiltonian changed since it was recorded)."""
    if not RECORDED_TRAINING.is_file():
        return None
    records = json.loads(RECORDED_TRAINING.read_text())["records"]
    return next((r for r in records if r["key"] == key), None)


def _load(ansatz: PulseAnsatz, path: Path | None, key: str, recorded: bool) -> TrainedAnsatz | None:
    """The shipped record (if ``recorded``), else the disk cache at ``path`` (if given), else None."""
    data = recorded_training(key) if recorded else None
    if data is None and path is not None and path.exists():
        try:
            data = json.loads(path.read_text())
        except ValueError:
            data = None  # damaged: train again
    if data is None or not {"x", "energy", "evaluations"} <= set(data):
        return None
    return TrainedAnsatz(ansatz, np.array(data["x"]), float(data["energy"]), int(data["evaluations"]))


def trained_ansatz(
    natives: NativeGates, terms, *, layers: int = 1, budget: int = 200, seed: int = 0,
    on_evaluation: Callable[[int, int], None] | None = None, on_loss: Callable[[float], None] | None = None,
    cache: bool = True, recorded: bool = True,
) -> TrainedAnsatz:  # fmt: skip
    """COBYLA (``rhobeg`` 0.1, ``budget`` evaluations, noiseless, no readout error) on the ansatz's [0, 1]
    parameters from ``initial(seed)``; read from the shipped record (``recorded``) or the disk cache (``cache``)
    when there, else trained (and cached when ``cache``). ``on_loss``: each evaluation's energy (Ha)."""
    ansatz = PulseAnsatz(natives, layers)
    key = train_key(natives, terms, layers, budget, seed)
    path = cache_dir("pulse_zne") / f"train-{key}.json"
    hit = _load(ansatz, path if cache else None, key, recorded)
    if hit is not None:
        return hit
    clean = natives.device.noiseless()
    count = [0]

    def loss(x: np.ndarray) -> float:
        count[0] += 1
        if on_evaluation:
            on_evaluation(count[0], budget)
        e = energy_at(clean, ansatz.schedule(np.clip(x, 0, 1)), terms, readout=False)
        if on_loss:
            on_loss(e)
        return e

    res = scipy.optimize.minimize(loss, ansatz.initial(seed), method="COBYLA",
                                  options={"rhobeg": 0.1, "maxiter": budget})  # fmt: skip
    x = np.clip(res.x, 0, 1)
    e = energy_at(clean, ansatz.schedule(x), terms, readout=False)
    if cache:
        with atomic_write(path, "w", encoding="utf-8") as f:
            json.dump({"x": x.tolist(), "energy": e, "evaluations": count[0]}, f)
    return TrainedAnsatz(ansatz, x, e, count[0])


def gate_circuit(theta: np.ndarray):
    """Hardware-efficient 2-qubit circuit: RY RY, CX(0 -> 1), RY RY (qiskit)."""
    from qiskit import QuantumCircuit

    qc = QuantumCircuit(2)
    qc.ry(float(theta[0]), 0)
    qc.ry(float(theta[1]), 1)
    qc.cx(0, 1)
    qc.ry(float(theta[2]), 0)
    qc.ry(float(theta[3]), 1)
    return qc


def _exact_theta(terms) -> np.ndarray:
    from qiskit.quantum_info import SparsePauliOp, Statevector

    op = SparsePauliOp.from_list([(lbl, c) for c, lbl in terms])

    def f(t):
        return float(np.real(Statevector(gate_circuit(t)).expectation_value(op)))

    best = min((scipy.optimize.minimize(f, x0, method="BFGS") for x0 in np.random.default_rng(0).uniform(-3, 3, (4, 4))),
               key=lambda r: r.fun)  # fmt: skip
    return best.x


def gate_zne(
    natives: NativeGates, device: PulseDevice, terms, scale_factors, extrapolation: str = "richardson",
) -> dict[str, object]:  # fmt: skip
    """Gate-level ZNE with mitiq: ``fold_global`` on the circuit at each scale factor, each folded circuit
    transpiled to rz/sx/x/ecr (optimisation level 0: folds are kept), compiled to ``natives``' pulses and run
    on ``device`` (our density-matrix simulator), extrapolated by mitiq's factory.

    Returns ``{"energies", "unmitigated", "mitigated", "duration_ns", "noiseless"}`` (the last: the compiled
    circuit at lambda = 1 on the noiseless device)."""
    from mitiq.zne.inference import ExpFactory, LinearFactory, PolyFactory, RichardsonFactory
    from mitiq.zne.scaling import fold_global
    from qiskit import transpile

    from workbench.quantum.common.pulse.natives import circuit_schedule, frame_rotation

    theta = _exact_theta(terms)
    circuit = gate_circuit(theta)
    energies, durations, ideal = [], [], None
    for lam in scale_factors:
        folded = fold_global(circuit, float(lam))
        native = transpile(folded, basis_gates=["rz", "sx", "x", "ecr"], coupling_map=[[0, 1]], optimization_level=0,
                           initial_layout=[0, 1], seed_transpiler=0)  # fmt: skip
        schedule, frames = circuit_schedule(native, natives)
        frame = frame_rotation(frames, device)
        for dev in (device, device.noiseless()) if ideal is None else (device,):
            rho = torch.zeros(dev.dim, dev.dim, dtype=torch.complex128)
            rho[0, 0] = 1
            rho = evolve_density(rho, hamiltonian_steps(dev, schedule, substeps=2), dev)
            rho = frame @ rho @ frame.mH
            e = energy_of_state(dev, rho.numpy(), terms, readout=dev is device)
            if dev is device:
                energies.append(e)
            else:
                ideal = e
        durations.append(schedule.duration * device.dt)
    lams = [float(v) for v in scale_factors]
    factory = {"richardson": lambda: RichardsonFactory.extrapolate(lams, energies),
               "linear": lambda: LinearFactory.extrapolate(lams, energies),
               "polynomial": lambda: PolyFactory.extrapolate(lams, energies, min(2, len(lams) - 1)),
               "exponential": lambda: ExpFactory.extrapolate(lams, energies)}[extrapolation]  # fmt: skip
    return {"energies": energies, "unmitigated": energies[0], "mitigated": float(factory()), "duration_ns": durations,
            "noiseless": ideal}  # fmt: skip
