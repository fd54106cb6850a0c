"""Prediction vs the noisy simulation that labels a circuit, like for like, on the same fresh circuits.

The circuits: ``count`` random device circuits (widths 1-5, gate counts from the dataset's list) on one
connected 5-qubit piece of ``device`` under **one** QuEst noise draw, a circuit of width w on the piece's first
w qubits (a prefix of a connected growth is connected), so one aer ``NoiseModel`` serves all of them and each
circuit's calibration for QuEst is the same draw restricted to its qubits.

Pairings (seconds per circuit; every one timed in this call):

- **batched vs batched** (the headline): aer at its best, the shared noise model built once and **one** ``run``
  over the list of echo circuits, with the fastest of the exact
  density-matrix method (its experiments in parallel or one after another, whichever is faster) and the
  paper's 2,048-shot statevector sampling; against QuEst encoding every circuit (the batch encoder,
  :func:`~workbench.quantum.quest.encoding.encode_batch`) and one forward pass over all of them. QuEst reads
  the same one calibration for every circuit as aer reads one noise model, and rebuilds its device tables
  inside each timing as aer builds its noise model there.
- **one vs one**: one aer ``run`` per circuit (shared model and simulator, the method that won above)
  against encoding and one forward pass per circuit.
- other pairings, listed below the headline: the labelling path (a noise model built per circuit, one circuit
  per run: what the dataset generator pays) against batched and single prediction, each aer method alone.

The two sides of each like-for-like pairing are timed back to back in alternating rounds (best of the rounds), so
that both see the same load of the shared machine; besides wall seconds, CPU seconds of the process (all its
threads: aer's parallel experiments count in full) give a ratio of work that the other users' load moves less.
The ``>= 100x`` goal is judged on the batched-vs-batched figure (wall).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from workbench.quantum.calibration import calibration_subset
from workbench.quantum.circuits import random_device_circuit
from workbench.quantum.device import Device, get_device, require_device
from workbench.quantum.quest.checkpoint import Checkpoint
from workbench.quantum.quest.config import SPEED_DEVICE
from workbench.quantum.quest.dataset import DEVICES, GATE_COUNTS, connected_qubits
from workbench.quantum.quest.encoding import clear_device_tables
from workbench.quantum.quest.labels import echo_circuit, effective_calibration, noise_model
from workbench.quantum.quest.predict import predict_pst

__all__ = ["speed_comparison", "width_sweep", "GOAL", "SHOTS"]

GOAL = 100.0
SHOTS = 2048  # the paper's shots for random circuits


def _best_of(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def _timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """Wall seconds, CPU seconds of this process (all threads) and the result of one call."""
    wall, used = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - wall, time.process_time() - used, out


def _simulator(model: Any, method: str, parallel: bool = True) -> Any:
    """aer's simulator; ``parallel``: experiments of one run in parallel on every core (0), else one after another
    (1). On a busy machine the parallel form can be the slower one, so both are timed."""
    from qiskit_aer import AerSimulator

    return AerSimulator(method=method, noise_model=model, max_parallel_experiments=0 if parallel else 1)


def _aer_batched(
    echoes: list[Any], model: Any, method: str, sim: Any = None, readout: dict[int, Any] | None = None
) -> np.ndarray:
    """All-zero probability of every echo circuit from one aer ``run`` (exact for density_matrix; 2,048 shots
    for statevector). ``sim``: a simulator built once (default: built here); ``readout``: the model's confusion
    matrices by width, read once (default: read here, once per width)."""
    import qiskit_aer.library  # noqa: F401  (registers save_probabilities)

    from workbench.quantum.aer import apply_confusion, readout_from_model

    sim = _simulator(model, method) if sim is None else sim
    if readout is None:
        readout = {n: readout_from_model(model, n) for n in {e.num_qubits for e in echoes}}
    if method == "density_matrix":
        prepared = []
        for e in echoes:
            qc = e.copy()
            qc.save_probabilities()
            prepared.append(qc)
        result = sim.run(prepared).result()
        out = []
        for i, e in enumerate(echoes):
            probs = np.asarray(result.data(i)["probabilities"], dtype=np.float64)
            out.append(apply_confusion(probs, readout[e.num_qubits], e.num_qubits)[0])
        return np.asarray(out)
    measured = []
    for e in echoes:
        qc = e.copy()
        qc.measure_all()
        measured.append(qc)
    result = sim.run(measured, shots=SHOTS, seed_simulator=1).result()
    return np.asarray([result.get_counts(i).get("0" * e.num_qubits, 0) / SHOTS for i, e in enumerate(echoes)])


def _fresh_circuits(device: Device, count: int, seed: int) -> tuple[list[Any], list[Any], Any]:
    """``count`` random device circuits (widths 1-5) on one connected 5-qubit piece of ``device`` under one noise
    draw: the circuits, each one's calibration (the draw restricted to its qubits) and the shared draw."""
    rng = np.random.default_rng(seed)
    cal = device.calibration
    piece = calibration_subset(cal, connected_qubits(cal, 5, rng))
    shared = effective_calibration(piece, rng)  # one noise draw for every circuit
    two = DEVICES[device.name][0]
    circuits, cals = [], []
    for _ in range(count):
        width = int(rng.integers(1, 6))
        sub = calibration_subset(shared, tuple(range(width)))
        gates = int(rng.choice(GATE_COUNTS))
        circuits.append(random_device_circuit(width, gates, sub.coupling_map, rng, two_qubit_gate=two))
        cals.append(sub)
    return circuits, cals, shared


def _aer_methods(echoes: list[Any], shared: Any, repeats: int) -> tuple[dict[str, float], np.ndarray, tuple[str, bool]]:
    """Seconds per circuit of each aer batched method (the noise model built inside each timing), the exact PST
    (density matrix) and the fastest (method, parallel)."""
    count = len(echoes)

    def aer_method(method: str, parallel: bool) -> tuple[float, np.ndarray]:
        def once() -> np.ndarray:
            shared_model = noise_model(shared)  # built once per batch, inside the timing
            return _aer_batched(echoes, shared_model, method, _simulator(shared_model, method, parallel))

        seconds, values = _best_of(once, repeats)
        return seconds / count, values

    per: dict[str, float] = {}
    per["aer_batched_density_matrix"], exact = aer_method("density_matrix", True)
    per["aer_batched_density_matrix_serial"], _ = aer_method("density_matrix", False)
    per["aer_batched_statevector_shots"], _ = aer_method("statevector", True)
    options = {
        ("density_matrix", True): per["aer_batched_density_matrix"],
        ("density_matrix", False): per["aer_batched_density_matrix_serial"],
        ("statevector", True): per["aer_batched_statevector_shots"],
    }
    best, _ = min(options.items(), key=lambda kv: kv[1])  # timed again in the paired rounds
    return per, exact, best


def _paired_timings(
    plan: list[tuple[str, Callable[[], Any], int]], count: int, repeats: int
) -> tuple[dict[str, float], dict[str, float], dict[str, Any]]:
    """Wall and CPU seconds per circuit (best of the rounds) and the last output of each ``(key, fn, rounds)``
    of ``plan``: the sides are timed back to back in alternating rounds, so that both see the same load of the
    shared machine."""
    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}
    outputs: dict[str, Any] = {}
    for round_ in range(max(repeats, 1)):
        for key, fn, rounds in plan:
            if round_ >= rounds:
                continue
            seconds, used, outputs[key] = _timed(fn)
            wall[key] = min(wall.get(key, math.inf), seconds / count)
            cpu[key] = min(cpu.get(key, math.inf), used / count)
    return wall, cpu, outputs


def _pairings(per: dict[str, float]) -> list[dict[str, Any]]:
    """The pairings (see the module docstring), like for like first, each with its speed-up (aer / QuEst)."""
    rows = [
        ("batched vs batched (like for like, headline)", "aer_batched", "predict_batched"),
        ("one vs one (like for like)", "aer_single", "predict_single"),
        (
            "labelling one at a time (noise model per circuit) vs batched prediction",
            "labelling_single",
            "predict_batched",
        ),
        ("labelling one at a time vs one prediction", "labelling_single", "predict_single"),
        ("aer batched density matrix (exact) vs batched prediction", "aer_batched_density_matrix", "predict_batched"),
        (
            "aer batched density matrix, experiments one after another vs batched prediction",
            "aer_batched_density_matrix_serial",
            "predict_batched",
        ),
        (
            f"aer batched statevector, {SHOTS} shots vs batched prediction",
            "aer_batched_statevector_shots",
            "predict_batched",
        ),
    ]
    return [
        {"pairing": name, "aer": aer, "quest": quest, "speedup": per[aer] / per[quest]} for name, aer, quest in rows
    ]


def speed_comparison(
    ckpt: Checkpoint, *, count: int = 64, device: str | Device = SPEED_DEVICE, seed: int = 7, repeats: int = 2
) -> dict[str, Any]:
    """Seconds per circuit of every path (see the module docstring), the speed-ups, and the RMSE of the batched
    predictions against the exact PST of these circuits.

    A notebook's entry: a device name is resolved here, once. Raises ValueError for ``count`` outside 1..10000 or
    a device QuEst does not know.
    """
    if not 1 <= count <= 10_000:
        raise ValueError(f"count={count} is out of range: valid range is 1..10000 (circuits)")
    device = get_device(device)  # the notebook's boundary (a Device passes through)
    if device.name not in DEVICES:
        raise ValueError(f"device={device.name!r} is unknown here: valid devices are {', '.join(DEVICES)}")
    from workbench.quantum.aer import readout_from_model
    from workbench.quantum.quest.labels import pst

    circuits, cals, shared = _fresh_circuits(device, count, seed)
    echoes = [echo_circuit(c) for c in circuits]
    model = noise_model(shared)
    # QuEst reads the same one calibration for every circuit (circuit qubit i = calibration qubit i; the
    # features equal those under each circuit's own subset, tested), as aer reads one noise model; its device
    # tables are rebuilt inside every timing (cache cleared), as aer's noise model is.
    one_cal = [shared] * count

    # warm-ups: aer's and torch's first calls pay their start-up
    _aer_batched(echoes[:2], model, "density_matrix")
    predict_pst(ckpt, circuits[:2], cals[:2])  # also loads the compiled depth loop

    per, exact, (best_method, best_parallel) = _aer_methods(echoes, shared, repeats)
    seconds, _ = _best_of(lambda: [pst([c], noise_model(k)) for c, k in zip(circuits, cals)], 1)
    per["labelling_single"] = seconds / count  # noise model per circuit, one run each: the dataset's path

    def aer_best() -> np.ndarray:
        shared_model = noise_model(shared)
        return _aer_batched(echoes, shared_model, best_method, _simulator(shared_model, best_method, best_parallel))

    def quest_batched() -> np.ndarray:
        clear_device_tables()
        return predict_pst(ckpt, circuits, one_cal)["transformer"]

    def aer_one_by_one() -> list[np.ndarray]:
        sim = _simulator(model, best_method, best_parallel)  # built once, readout read once: aer at its best
        readout = {n: readout_from_model(model, n) for n in range(1, 6)}
        return [_aer_batched([e], model, best_method, sim, readout) for e in echoes]

    def quest_one_by_one() -> list[np.ndarray]:
        clear_device_tables()  # built once for the run, as aer's simulator and readout above
        return [predict_pst(ckpt, [c], [shared])["transformer"] for c in circuits]

    plan: list[tuple[str, Callable[[], Any], int]] = [
        ("aer_batched", aer_best, repeats),
        ("predict_batched", quest_batched, repeats),
        ("aer_single", aer_one_by_one, 1),
        ("predict_single", quest_one_by_one, 1),
    ]
    wall, cpu, outputs = _paired_timings(plan, count, repeats)
    per.update(wall)
    batched = per["aer_batched"] / per["predict_batched"]
    err = np.asarray(outputs["predict_batched"]) - exact
    return {
        "circuits": count,
        "device": device.name,
        "aer_method": best_method,
        "aer_parallel": best_parallel,
        "shots": SHOTS,
        "seconds_per_circuit": per,
        "cpu_seconds_per_circuit": cpu,
        "speedup_like_for_like_cpu": cpu["aer_batched"] / cpu["predict_batched"],
        "speedup_one_vs_one_cpu": cpu["aer_single"] / cpu["predict_single"],
        "pairings": _pairings(per),
        "speedup_like_for_like": batched,
        "speedup_one_vs_one": per["aer_single"] / per["predict_single"],
        "goal": GOAL,
        "goal_met": bool(batched >= GOAL),
        "rmse_on_these_circuits": float(np.sqrt(np.mean(err**2))),
    }


def width_sweep(
    ckpt: Checkpoint,
    widths: Sequence[int] = (5, 8, 10),
    *,
    count: int = 8,
    gates: int = 50,
    device: Device,
    seed: int = 7,
    repeats: int = 2,
) -> list[dict[str, Any]]:
    """Batched aer (density matrix, the exact labels) against batched QuEst on ``count`` random circuits of
    ``gates`` gates on **exactly** each width (a connected piece of ``device`` under one noise draw), the two
    sides timed back to back in alternating rounds (best of ``repeats``). aer's cost grows as 4^width; QuEst's
    with the gate count only. Widths above QuEst's encoding (10 qubits) time aer alone (``predict`` None).

    Returns one row per width: ``{"width", "aer", "predict", "aer_cpu", "predict_cpu"}`` (seconds per circuit,
    wall and CPU of this process) and ``"speedup"`` / ``"speedup_cpu"`` (None without a prediction).
    """
    from workbench.quantum.quest.encoding import MAX_QUBITS

    cal = require_device(device).calibration
    if not all(1 <= w <= cal.num_qubits for w in widths):
        raise ValueError(
            f"widths={tuple(widths)} are out of range: valid widths are 1..{cal.num_qubits} ({device.name})"
        )
    rows = []
    for width in widths:
        rng = np.random.default_rng(seed + width)
        shared = effective_calibration(calibration_subset(cal, connected_qubits(cal, width, rng)), rng)
        two = DEVICES[device.name][0]
        circuits = [
            random_device_circuit(width, gates, shared.coupling_map, rng, two_qubit_gate=two) for _ in range(count)
        ]
        echoes = [echo_circuit(c) for c in circuits]

        def aer() -> np.ndarray:
            model = noise_model(shared)  # built inside the timing, as in the headline pairing
            return _aer_batched(echoes, model, "density_matrix", _simulator(model, "density_matrix", False))

        def quest() -> np.ndarray:
            clear_device_tables()
            return predict_pst(ckpt, circuits, [shared] * count)["transformer"]

        sides = {"aer": aer} if width > MAX_QUBITS else {"aer": aer, "predict": quest}
        if "predict" in sides:
            predict_pst(ckpt, circuits[:1], [shared])  # warm-up
        wall: dict[str, float] = {}
        cpu: dict[str, float] = {}
        for _ in range(repeats if width <= MAX_QUBITS else 1):
            for key, fn in sides.items():
                w, c, _ = _timed(fn)
                wall[key] = min(wall.get(key, math.inf), w / count)
                cpu[key] = min(cpu.get(key, math.inf), c / count)
        has = "predict" in wall
        rows.append(
            {
                "width": width,
                "circuits": count,
                "gates": gates,
                "aer": wall["aer"],
                "aer_cpu": cpu["aer"],
                "predict": wall["predict"] if has else None,
                "predict_cpu": cpu["predict"] if has else None,
                "speedup": wall["aer"] / wall["predict"] if has else None,
                "speedup_cpu": cpu["aer"] / cpu["predict"] if has else None,
            }
        )
    return rows
