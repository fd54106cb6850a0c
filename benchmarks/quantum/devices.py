"""Quantum simulator: our torch simulator against qiskit-aer, side by side in one process.

Cases (each side converts the qiskit circuits itself inside the timed call):

(a) one wide statevector circuit (20 qubits full, 12 quick): 10 brick layers of ``rx, rz`` on every qubit and
    ``cx`` on alternating neighbours. Ours: ``workbench.quantum.statevector`` (gate fusion up to 4 qubits);
    aer: ``AerSimulator(method="statevector")`` with ``save_statevector`` (its own fusion on), result fetched.
(b) a batch of 1,000 different random 5-qubit device circuits (QuEst-style: 50 gates from ``rz, sx, x, cx`` on
    ``fake_lima``'s coupling map) under ``fake_lima``'s calibrated noise, exact outcome probabilities from
    the density matrix. Ours: ``probabilities(circuits, noise=spec)`` (one batched call); aer: one ``run`` of
    all circuits with ``AerSimulator(method="density_matrix")`` and the equivalent ``NoiseModel`` built once
    outside the timing, ``save_probabilities``.
(c) the variational regime: one 5-qubit parameterised ansatz at 256 parameter sets under the same noise.
    Ours: ``probabilities(circuit, theta[256, P])``; aer: one ``run`` with ``parameter_binds``.

complex128 is compared with aer's default double precision and complex64 with ``precision="single"``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from benchmarks.common import Section, Table, fmt_ms, fmt_ratio, fmt_sci, interleaved, median
from benchmarks.machine import load_average

log = logging.getLogger(__name__)


def _brick_circuit(n: int, layers: int, seed: int) -> Any:
    from qiskit import QuantumCircuit

    rng = np.random.default_rng(seed)
    qc = QuantumCircuit(n)
    for layer in range(layers):
        for q in range(n):
            qc.rx(float(rng.uniform(0, 2 * np.pi)), q)
            qc.rz(float(rng.uniform(0, 2 * np.pi)), q)
        for q in range(layer % 2, n - 1, 2):
            qc.cx(q, q + 1)
    return qc


def _ansatz(n: int, layers: int) -> tuple[Any, int]:
    from qiskit import QuantumCircuit
    from qiskit.circuit import ParameterVector

    t = ParameterVector("t", 2 * n * layers)
    qc = QuantumCircuit(n)
    k = 0
    for _ in range(layers):
        for q in range(n):
            qc.ry(t[k], q)
            qc.rz(t[k + 1], q)
            k += 2
        for q in range(n - 1):
            qc.cx(q, q + 1)
    return qc, len(t)


def _time(fns: dict[str, Callable[[], Any]], rounds: int) -> dict[str, Any]:
    times = interleaved(fns, rounds=rounds)
    ratios = [a / b for a, b in zip(times["ours"], times["aer"])]
    return {"ours_s": median(times["ours"]), "aer_s": median(times["aer"]), "ratio": median(ratios)}


def _case_statevector(n: int, rounds: int, dtype: torch.dtype) -> dict[str, Any]:
    from qiskit_aer import AerSimulator

    from workbench.quantum import statevector

    qc = _brick_circuit(n, 10, seed=n)
    saved = qc.copy()
    saved.save_statevector()
    sim = AerSimulator(method="statevector", precision="double" if dtype == torch.complex128 else "single")

    def aer() -> np.ndarray:
        return np.asarray(sim.run(saved).result().get_statevector())

    def ours() -> torch.Tensor:
        return statevector(qc, dtype=dtype)

    diff = float(np.abs(ours().numpy() - aer()).max())
    return {
        "case": f"(a) statevector, {n} qubits, {qc.size()} gates",
        "dtype": str(dtype).removeprefix("torch."),
        **_time({"ours": ours, "aer": aer}, rounds),
        "max_abs_diff": diff,
    }


def _noisy_batch(count: int, seed: int) -> tuple[list[Any], Any]:
    from workbench.quantum import NoiseSpec
    from workbench.quantum.calibration import load_calibration
    from workbench.quantum.circuits import random_device_circuit

    cal = load_calibration("fake_lima")
    rng = np.random.default_rng(seed)
    return [random_device_circuit(5, 50, cal.coupling_map, rng) for _ in range(count)], NoiseSpec.device(cal)


def _case_batch(count: int, rounds: int, dtype: torch.dtype) -> dict[str, Any]:
    from qiskit_aer import AerSimulator

    from workbench.quantum import probabilities
    from workbench.quantum.aer import readout_from_model

    circuits, spec = _noisy_batch(count, seed=1)
    model = spec.to_aer(gate_names=("rz", "sx", "x", "cx"))
    sim = AerSimulator(
        method="density_matrix", noise_model=model, precision="double" if dtype == torch.complex128 else "single"
    )
    saved = []
    for c in circuits:
        s = c.copy()
        s.save_probabilities()
        saved.append(s)
    confusion = readout_from_model(model, 5)

    def aer() -> np.ndarray:
        result = sim.run(saved).result()
        probs = np.stack([np.asarray(result.data(i)["probabilities"]) for i in range(len(saved))])
        for q in range(5):  # aer's readout errors, applied to the exact probabilities (as aer_probabilities)
            p = probs.reshape(len(saved), *[2] * 5)
            probs = np.moveaxis(np.tensordot(p, confusion[q].T, axes=([5 - q], [0])), -1, 5 - q).reshape(len(saved), -1)
        return probs

    def ours() -> torch.Tensor:
        return probabilities(circuits, noise=spec, dtype=dtype)

    diff = float(np.abs(ours().numpy() - aer()).max())
    return {
        "case": f"(b) {count} random 5-qubit device circuits, 50 gates, fake_lima noise (density matrix)",
        "dtype": str(dtype).removeprefix("torch."),
        **_time({"ours": ours, "aer": aer}, rounds),
        "max_abs_diff": diff,
    }


def _case_params(batch: int, rounds: int, dtype: torch.dtype) -> dict[str, Any]:
    from qiskit import transpile
    from qiskit_aer import AerSimulator

    from workbench.quantum import NoiseSpec, probabilities
    from workbench.quantum.calibration import fake_backend

    qc, count = _ansatz(5, 3)
    tq = transpile(qc, fake_backend("fake_lima"), optimization_level=1, seed_transpiler=0)
    from workbench.quantum.circuits import compact

    small, physical = compact(tq)
    from workbench.quantum.calibration import calibration_subset, load_calibration

    spec = NoiseSpec.device(calibration_subset(load_calibration("fake_lima"), physical), readout=False)
    theta = np.random.default_rng(0).uniform(-np.pi, np.pi, (batch, count))
    real = torch.float64 if dtype == torch.complex128 else torch.float32
    theta_t = torch.tensor(theta, dtype=real)
    saved = small.copy()
    saved.save_probabilities()
    sim = AerSimulator(
        method="density_matrix",
        noise_model=spec.to_aer(gate_names=("rz", "sx", "x", "cx")),
        precision="double" if dtype == torch.complex128 else "single",
    )
    binds = [{p: theta[:, i].tolist() for i, p in enumerate(small.parameters)}]

    def aer() -> np.ndarray:
        result = sim.run([saved], parameter_binds=binds).result()
        return np.stack([np.asarray(result.data(i)["probabilities"]) for i in range(batch)])

    def ours() -> torch.Tensor:
        return probabilities(small, theta_t, noise=spec, dtype=dtype)

    diff = float(np.abs(ours().numpy() - aer()).max())
    return {
        "case": f"(c) 5-qubit ansatz ({small.size()} gates, {count} params) x {batch} parameter sets, noisy",
        "dtype": str(dtype).removeprefix("torch."),
        **_time({"ours": ours, "aer": aer}, rounds),
        "max_abs_diff": diff,
    }


def run(*, quick: bool) -> Section:
    """Cases (a)-(c) in complex128 and complex64; ``data["rows"]`` holds the raw numbers."""
    import qiskit_aer
    import qiskit_aer.library  # noqa: F401  (save_* methods)

    load_start = load_average()
    rows = []
    for dtype in (torch.complex128, torch.complex64):
        log.info("quantum sim: statevector %s", dtype)
        rows.append(_case_statevector(12 if quick else 20, 1 if quick else 3, dtype))
        log.info("quantum sim: noisy batch %s", dtype)
        rows.append(_case_batch(40 if quick else 1000, 1 if quick else 3, dtype))
        log.info("quantum sim: parameter batch %s", dtype)
        rows.append(_case_params(16 if quick else 256, 1 if quick else 5, dtype))
    table = Table(
        headers=("case", "dtype", "ours (ms)", "aer (ms)", "ours / aer", "max abs diff"),
        rows=tuple(
            (
                r["case"],
                r["dtype"],
                fmt_ms(r["ours_s"]),
                fmt_ms(r["aer_s"]),
                fmt_ratio(r["ratio"]),
                fmt_sci(r["max_abs_diff"]),
            )
            for r in rows
        ),
    )
    summary = tuple(
        (f"quantum sim ours / aer time: {r['case'].split(',')[0]}, {r['dtype']}", fmt_ratio(r["ratio"])) for r in rows
    )
    intro = (
        f"Peer: qiskit-aer {qiskit_aer.__version__} in the same process (its own thread pool), torch "
        f"{torch.__version__} with {torch.get_num_threads()} threads. Each side runs once untimed, then in "
        "interleaved rounds; times are medians and `ours / aer` the median per-round ratio (below 1: ours is "
        "faster). `max abs diff` compares the two results (amplitudes or probabilities). Goal (issue): at least "
        "as fast as aer on batched small noisy circuits, cases (b) and (c)."
    )
    note = f"Load average at the start: {load_start}; at the end: {load_average()} (2 shared cores)."
    return Section(
        title="Quantum simulator vs qiskit-aer",
        intro=intro,
        tables=(table,),
        notes=(note,),
        summary=summary,
        data={"rows": rows},
    )


if __name__ == "__main__":
    import sys

    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    print(run(quick="--quick" in sys.argv).markdown())
