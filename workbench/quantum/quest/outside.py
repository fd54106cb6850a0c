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
from pathlib import Path
from typing import Any

import numpy as np

from workbench.quantum.quest.checkpoint import Checkpoint
from workbench.quantum.quest.dataset import DEVICES, UNSEEN_DEVICES
from workbench.quantum.quest.predict import place, predict_pst, read_qasm, simulate_pst

__all__ = ["EXAMPLES", "outside_programs", "outside_check", "RMSE_TARGET", "WORST_TARGET"]

#: the repository's examples folder (present in a checkout, not in an installed wheel)
EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
RMSE_TARGET = 0.04
WORST_TARGET = 0.08


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
    ckpt: Checkpoint, programs: dict[str, Any] | None = None, devices: Sequence[str] = UNSEEN_DEVICES, *, seed: int = 0
) -> dict[str, Any]:
    """Predicted and simulated PST of every program on every device; ``rows`` (one per pair), and per kind of
    device and overall: ``n``, ``rmse``, ``worst`` (largest |error|), ``bias`` (mean predicted - simulated),
    and whether the targets are met overall.

    programs: name -> OpenQASM file path or program text (default :func:`outside_programs`).
    """
    programs = outside_programs() if programs is None else programs
    rows = []
    for name, source in programs.items():
        circuit = read_qasm(source)
        for device in devices:
            placed = place(circuit, device, seed=seed)
            predicted = float(predict_pst(ckpt, [placed.circuit], [placed.calibration])["transformer"][0])
            simulated = simulate_pst(placed.circuit, placed.calibration)
            rows.append(
                {
                    "circuit": name,
                    "device": device,
                    "kind": DEVICES[device][0] if device in DEVICES else "",
                    "seen": device in DEVICES and not DEVICES[device][2],
                    "qubits": [int(q) for q in placed.physical],
                    "gates": len(placed.circuit.data),
                    "predicted": predicted,
                    "simulated": simulated,
                    "error": predicted - simulated,
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
    return {
        "rows": rows,
        "all": overall,
        "by_kind": by_kind,
        "rmse_met": bool(overall["rmse"] <= RMSE_TARGET),
        "worst_met": bool(overall["worst"] <= WORST_TARGET),
    }
