"""QuEst on circuits written outside the dataset generator, on devices kept out of training: prediction against
aer's PST for each (circuit, device) pair, with the issue's target (RMSE <= 0.04, worst error <= 0.08).

The circuits are OpenQASM files written by hand (``examples/qft4.qasm`` and ``examples/qft/*.qasm``: QFT of
|0..0>, an inverse QFT, phase estimation, an approximate QFT, a controlled-phase ring), all built from
controlled-phase gates, the case the issue found underpredicted by 0.10-0.15. Each is placed on every device of
:data:`~workbench.quantum.quest.dataset.UNSEEN_DEVICES` with the device's calibration as it is (noise scale 1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from workbench.quantum.device import Device, get_device
from workbench.quantum.quest.checkpoint import Checkpoint
from workbench.quantum.quest.dataset import DEVICES, TRAIN_DEVICES, UNSEEN_DEVICES
from workbench.quantum.quest.encoding import PHYSICAL_COLUMN, TWO_QUBIT_GATES, encode
from workbench.quantum.quest.predict import place, predict_pst, read_qasm, simulate_pst

__all__ = [
    "EXAMPLES",
    "outside_programs",
    "outside_check",
    "duration_coverage",
    "duration_counterfactual",
    "RMSE_TARGET",
    "WORST_TARGET",
    "RELAXATION_DOMINATED",
]

#: the repository's examples folder (present in a checkout, not in an installed wheel)
EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
RMSE_TARGET = 0.04
WORST_TARGET = 0.08
#: a circuit is relaxation-dominated when thermal relaxation over its gates' durations makes more than half of
#: its summed gate infidelity (sum of r over sum of r + reported error, columns 26 and 22 of the encoding)
RELAXATION_DOMINATED = 0.5


def outside_programs(folder: str | Path = EXAMPLES) -> dict[str, Path]:
    """``qft4`` and every ``qft/*.qasm`` under ``folder``, by name. Raises FileNotFoundError when absent."""
    folder = Path(folder)
    files = ([folder / "qft4.qasm"] if (folder / "qft4.qasm").is_file() else []) + sorted(
        (folder / "qft").glob("*.qasm")
    )
    if not files:
        raise FileNotFoundError(
            f"folder={str(folder)!r} holds no qft4.qasm or qft/*.qasm: run from a checkout of "
            "the workbench, or pass the folder of your own OpenQASM files"
        )
    return {f.stem: f for f in files}


def outside_check(
    ckpt: Checkpoint,
    programs: dict[str, Any] | None = None,
    devices: Sequence[str | Device] = UNSEEN_DEVICES,
    *,
    seed: int = 0,
) -> dict[str, Any]:
    """Predicted and simulated PST of every program on every device (default :data:`UNSEEN_DEVICES`; names are
    resolved here, the notebook's entry); ``rows`` (one per pair), and per kind of device, per device, per regime (``relaxation-dominated``: relaxation
    makes more than half the circuit's summed gate infidelity, see :data:`RELAXATION_DOMINATED`; ``error-dominated``) and overall: ``n``, ``rmse``,
    ``worst`` (largest |error|), ``bias`` (mean predicted - simulated), and whether the targets are met overall.
    Each row also carries its ``relaxation_share`` and ``longest_gate_ns``.

    programs: name -> OpenQASM file path or program text (default :func:`outside_programs`).
    """
    programs = outside_programs() if programs is None else programs
    devices = [get_device(d) for d in devices]  # the notebook's boundary (Devices pass through)
    rows: list[dict[str, Any]] = []
    for name, source in programs.items():
        circuit = read_qasm(source)
        for device in devices:
            placed = place(circuit, device, seed=seed)
            predicted = float(predict_pst(ckpt, [placed.circuit], [placed.calibration])["transformer"][0])
            simulated = simulate_pst(placed.circuit, placed.calibration)
            g = encode(placed.circuit, placed.calibration)
            gate_rows = (g.x[:, 0] == 0) & (g.x[:, 1] == 0)
            relax = float(g.x[gate_rows, PHYSICAL_COLUMN + 8].sum())
            error = float(g.x[gate_rows, PHYSICAL_COLUMN + 4].sum())
            rows.append(
                {
                    "circuit": name,
                    "device": device.name,
                    "kind": DEVICES[device.name][0] if device.name in DEVICES else "",
                    "seen": device.name in DEVICES and not DEVICES[device.name][2],
                    "qubits": [int(q) for q in placed.physical],
                    "gates": len(placed.circuit.data),
                    "predicted": predicted,
                    "simulated": simulated,
                    "error": predicted - simulated,
                    "relaxation_share": relax / (relax + error) if relax + error > 0 else 0.0,
                    "longest_gate_ns": float(g.x[gate_rows, PHYSICAL_COLUMN + 7].max()),
                }
            )

    def summary(subset: list[dict[str, Any]]) -> dict[str, float]:
        if not subset:
            return {"n": 0, "rmse": math.nan, "worst": math.nan, "bias": math.nan}
        err = np.array([r["error"] for r in subset])
        return {
            "n": len(subset),
            "rmse": float(np.sqrt(np.mean(err**2))),
            "worst": float(np.max(np.abs(err))),
            "bias": float(np.mean(err)),
        }

    overall = summary(rows)
    by_kind = {k: summary([r for r in rows if r["kind"] == k]) for k in sorted({r["kind"] for r in rows})}
    by_device = {d: summary([r for r in rows if r["device"] == d]) for d in dict.fromkeys(r["device"] for r in rows)}
    dominated = [r for r in rows if r["relaxation_share"] > RELAXATION_DOMINATED]
    by_regime = {
        "relaxation-dominated": summary(dominated),
        "error-dominated": summary([r for r in rows if r["relaxation_share"] <= RELAXATION_DOMINATED]),
    }
    return {
        "rows": rows,
        "all": overall,
        "by_kind": by_kind,
        "by_device": by_device,
        "by_regime": by_regime,
        "rmse_met": bool(overall["rmse"] <= RMSE_TARGET),
        "worst_met": bool(overall["worst"] <= WORST_TARGET),
    }


def duration_coverage(devices: Sequence[str | Device] | None = None) -> list[dict[str, Any]]:
    """Per device (default: every device of :data:`~workbench.quantum.quest.dataset.DEVICES`; names are resolved
    here, the notebook's entry): kind, whether it
    is kept out of training, and the median and largest calibrated two-qubit gate duration (ns), from the
    snapshots themselves. Shows what range of gate durations (and so of relaxation per gate) training covers."""
    out = []
    for device in [get_device(d) for d in (devices if devices is not None else tuple(DEVICES))]:
        cal, name = device.calibration, device.name
        durations = [g.duration * 1e9 for g in cal.gates if g.name in TWO_QUBIT_GATES and len(g.qubits) == 2]
        out.append(
            {
                "device": name,
                "kind": DEVICES[name][0] if name in DEVICES else "",
                "in_training": name in TRAIN_DEVICES,
                "median_ns": float(np.median(durations)) if durations else math.nan,
                "max_ns": float(np.max(durations)) if durations else math.nan,
            }
        )
    return out


def duration_counterfactual(
    ckpt: Checkpoint,
    programs: dict[str, Any] | None = None,
    device: str | Device = "fake_toronto",
    factors: Sequence[float] = (1, 4, 8, 16),
    *,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """The programs placed on ``device`` (a name is resolved here, the notebook's entry), then every gate duration of its calibration divided by each factor (T1,
    T2 and errors kept), predicted and simulated again: per factor ``longest_gate_ns``, ``rmse``, ``worst`` and
    the ``errors``. When the error falls as the durations come into the training devices' range, the miss on the
    device is extrapolation in gate duration, not the circuits or the other features."""
    programs = outside_programs() if programs is None else programs
    device = get_device(device)  # the notebook's boundary (a Device passes through)
    placed = [place(read_qasm(source), device, seed=seed) for source in programs.values()]
    out = []
    for factor in factors:
        if not factor > 0:
            raise ValueError(f"factors: {factor} is out of range: valid range is > 0")
        errors, longest = [], 0.0
        for p in placed:
            cal = replace(
                p.calibration, gates=tuple(replace(g, duration=g.duration / factor) for g in p.calibration.gates)
            )
            longest = max([longest] + [g.duration * 1e9 for g in cal.gates if len(g.qubits) == 2])
            predicted = float(predict_pst(ckpt, [p.circuit], [cal])["transformer"][0])
            errors.append(predicted - simulate_pst(p.circuit, cal))
        err = np.asarray(errors)
        out.append(
            {
                "factor": float(factor),
                "longest_gate_ns": longest,
                "rmse": float(np.sqrt(np.mean(err**2))),
                "worst": float(np.max(np.abs(err))),
                "errors": [float(e) for e in err],
            }
        )
    return out
