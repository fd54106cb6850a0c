"""Prediction vs the noisy simulation that labels a circuit, side by side on the same fresh circuits.

For each of ``count`` random device circuits (widths 1-5, gate counts from the dataset's list, each under its
own randomised noise draw of ``device``) we time:

- ``simulate``: what labelling one sample costs: the aer noise model of its calibration, the echo circuit and
  aer's density-matrix run (PST);
- ``aer_run``: the aer run alone (noise model and echo circuit prepared beforehand);
- ``predict_batched``: encoding every circuit and one forward pass of the transformer over all of them, divided
  by ``count``; ``predict_single``: encoding and a forward pass per circuit.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from workbench.quantum.circuits import random_device_circuit
from workbench.quantum.calibration import calibration_subset, load_calibration
from workbench.quantum.quest.checkpoint import Checkpoint
from workbench.quantum.quest.dataset import GATE_COUNTS, connected_qubits
from workbench.quantum.quest.labels import echo_circuit, effective_calibration, noise_model, pst
from workbench.quantum.quest.predict import predict_pst

__all__ = ["speed_comparison"]


def speed_comparison(ckpt: Checkpoint, *, count: int = 64, device: str = "fake_lima", seed: int = 7
                     ) -> dict[str, Any]:
    """Seconds per circuit of each path (see the module docstring) and the speed-ups of prediction."""
    if not 1 <= count <= 10_000:
        raise ValueError(f"count={count} is out of range: valid range is 1..10000 (circuits)")
    from workbench.quantum.aer import aer_probabilities

    rng = np.random.default_rng(seed)
    cal = load_calibration(device)
    circuits, cals = [], []
    for _ in range(count):
        width = int(rng.integers(1, 6))
        sub = calibration_subset(cal, connected_qubits(cal, width, rng))
        noisy = effective_calibration(sub, rng)
        circuits.append(random_device_circuit(width, int(rng.choice(GATE_COUNTS)), noisy.coupling_map, rng))
        cals.append(noisy)

    pst(circuits[:1], noise_model(cals[0]))  # warm-up: aer's first run pays its start-up
    start = time.perf_counter()
    simulated = [float(pst([c], noise_model(k))[0]) for c, k in zip(circuits, cals)]
    simulate = (time.perf_counter() - start) / count

    models = [noise_model(k) for k in cals]
    echoes = [echo_circuit(c) for c in circuits]
    start = time.perf_counter()
    for e, m in zip(echoes, models):
        aer_probabilities(e, m)
    aer_run = (time.perf_counter() - start) / count

    predict_pst(ckpt, circuits[:2], cals[:2])  # warm-up
    start = time.perf_counter()
    batched = predict_pst(ckpt, circuits, cals)["transformer"]
    predict_batched = (time.perf_counter() - start) / count
    start = time.perf_counter()
    for c, k in zip(circuits, cals):
        predict_pst(ckpt, [c], [k])
    predict_single = (time.perf_counter() - start) / count
    err = np.asarray(batched) - np.asarray(simulated)
    return {"circuits": count, "device": device,
            "seconds_per_circuit": {"simulate": simulate, "aer_run": aer_run, "predict_batched": predict_batched,
                                    "predict_single": predict_single},
            "speedup_batched_vs_simulate": simulate / predict_batched,
            "speedup_batched_vs_aer_run": aer_run / predict_batched,
            "speedup_single_vs_simulate": simulate / predict_single,
            "rmse_on_these_circuits": float(np.sqrt(np.mean(err**2)))}
