"""The recorded training: the NAPA H2 ansatz that every pulse-ZNE sweep plays, trained noiselessly at the config's
defaults (two layers, 400 COBYLA evaluations on fake_jakarta (0, 1)); about a CPU-minute.

``python -m workbench.quantum.pulse_zne.record`` trains it again (no cache, no record read) and writes
``trained_ansatz.json`` beside this module: the training's key (:func:`workbench.quantum.pulse_zne.zne.train_key`:
device, calibrated pulses, Hamiltonian, layers, budget, seed), its parameters, energy, evaluations and the first
:data:`QUICK_EVALUATIONS` losses of the COBYLA run. :func:`workbench.quantum.pulse_zne.experiment.trained` reads the
record when the key matches (else it trains). ``--quick`` is the check a test runs: the same training stopped after
:data:`QUICK_EVALUATIONS` evaluations (COBYLA's path does not depend on the budget, so its losses are the record's
first ones) and the energy of the recorded parameters recomputed; it writes nothing and exits 1 when they differ.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from workbench.atomic import atomic_write
from workbench.quantum.napa.ansatz import PulseAnsatz
from workbench.quantum.pulse_zne.config import PulseZneConfig
from workbench.quantum.pulse_zne.experiment import pulse_problem
from workbench.quantum.pulse_zne.zne import RECORDED_TRAINING, energy_at, recorded_training, train_key, trained_ansatz

__all__ = ["COMMAND", "QUICK_EVALUATIONS", "SEED", "record", "write", "quick_check"]

COMMAND = "python -m workbench.quantum.pulse_zne.record"
#: the COBYLA evaluations the quick form repeats
QUICK_EVALUATIONS = 10
SEED = 0  # the ansatz's initial parameters (trained_ansatz's default)


def record(config: PulseZneConfig | None = None, *, budget: int | None = None) -> dict[str, Any]:
    """Train ``config``'s ansatz (default: the config's defaults) from scratch for ``budget`` evaluations (default:
    ``config.budget``); the record: ``{"key", "molecule", "bond_length", "device", "qubits", "layers", "budget",
    "seed", "x", "energy" (Ha), "evaluations", "first_losses" (Ha)}`` (``key`` is that of ``config.budget``)."""
    config = config or PulseZneConfig()
    natives, ham = pulse_problem(config)
    losses: list[float] = []
    tr = trained_ansatz(natives, ham.terms, layers=config.layers, budget=budget or config.budget, seed=SEED,
                        on_loss=losses.append, cache=False, recorded=False)  # fmt: skip
    return {
        "key": train_key(natives, ham.terms, config.layers, config.budget, SEED),
        "molecule": config.molecule, "bond_length": config.bond_length, "device": config.device,
        "qubits": [config.qubit, config.target], "layers": config.layers, "budget": config.budget, "seed": SEED,
        "x": tr.x.tolist(), "energy": tr.energy, "evaluations": tr.evaluations,
        "first_losses": losses[:QUICK_EVALUATIONS],
    }  # fmt: skip


def write(output: Path = RECORDED_TRAINING) -> dict[str, Any]:
    """Record the default training into ``output`` (atomic)."""
    data = {"command": COMMAND, "records": [record()]}
    with atomic_write(output, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)
    return data


def quick_check(config: PulseZneConfig | None = None) -> dict[str, float]:
    """The quick form: ``{"first_losses", "energy"}`` -> largest |difference| (Ha) between the shipped record of
    ``config`` (default: the defaults) and today's code (:data:`QUICK_EVALUATIONS` evaluations, and the energy of
    the recorded parameters). ValueError when no shipped record has today's key (calibration or Hamiltonian changed:
    run :data:`COMMAND`)."""
    config = config or PulseZneConfig()
    natives, ham = pulse_problem(config)
    key = train_key(natives, ham.terms, config.layers, config.budget, SEED)
    shipped = recorded_training(key)
    if shipped is None:
        raise ValueError(f"no recorded training has key {key} (the calibration or Hamiltonian changed): run {COMMAND}")
    quick = record(config, budget=QUICK_EVALUATIONS)
    clean = natives.device.noiseless()
    energy = energy_at(clean, PulseAnsatz(natives, config.layers).schedule(np.array(shipped["x"])), ham.terms,
                       readout=False)  # fmt: skip
    n = min(len(quick["first_losses"]), len(shipped["first_losses"]))
    return {
        "first_losses": float(np.max(np.abs(np.subtract(quick["first_losses"][:n], shipped["first_losses"][:n])))),
        "energy": abs(energy - float(shipped["energy"])),
    }


if __name__ == "__main__":  # pragma: no cover - the recorded command
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="compare the record with a 10-evaluation training")
    parser.add_argument("--output", type=Path, default=RECORDED_TRAINING)
    args = parser.parse_args()
    if args.quick:
        diff = quick_check()
        print(json.dumps(diff))
        sys.exit(0 if max(diff.values()) < 1e-9 else 1)
    write(args.output)
