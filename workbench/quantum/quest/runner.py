"""Headless runner of QuEst: ``workbench run quest --mode generate|train|evaluate|predict ... --json``.

- ``generate``: the dataset (cached under ``<data>/quest/``): sample counts, PST range, PST-vs-fidelity check.
- ``train``: trains the graph transformer and both baselines, writes the checkpoint, prints held-out metrics,
  the issue's targets and training curves' summary.
- ``evaluate``: a checkpoint (default: the shipped one) on its own dataset's held-out split, its targets, and
  prediction vs simulation speed on fresh circuits.
- ``predict``: ``{"predicted_pst": x, ...}`` for an OpenQASM 2/3 file on a device; ``--simulate`` adds
  ``"simulated_pst"`` from qiskit-aer.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.quantum.quest.config import QuestConfig
from workbench.registry import Technique
from workbench.results import Result

__all__ = [
    "run",
    "format_table",
    "TECHNIQUE",
    "GenerateResult",
    "TrainResult",
    "EvaluateResult",
    "PredictResult",
    "QuestResult",
    "EXAMPLE_QASM",
]

#: a 3-qubit GHZ circuit in OpenQASM 2 (the smoke run predicts it: ``--qasm`` takes a file or program text)
EXAMPLE_QASM = 'OPENQASM 2.0; include "qelib1.inc"; qreg q[3]; h q[0]; cx q[0],q[1]; cx q[1],q[2];'


# The JSON of each mode. ``dataset`` is ``experiment.dataset_summary`` plus where it was read (path, cached, seconds);
# ``metrics`` is model -> kind -> {n, rmse, mae, r2, spearman}; ``targets`` is ``experiment.targets``; ``speed`` is
# ``speed.speed_comparison``.
@dataclass(frozen=True, kw_only=True)
class GenerateResult(Result):
    technique: str = "quest"
    mode: str = "generate"
    dataset: Mapping[str, Any]


@dataclass(frozen=True, kw_only=True)
class TrainResult(Result):
    technique: str = "quest"
    mode: str = "train"
    dataset: Mapping[str, Any]
    checkpoint: str
    command: str
    training: Mapping[str, Mapping[str, Any]]  # model -> {epochs, best_epoch, seconds, best_val_rmse}
    metrics: Mapping[str, Any]
    targets: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True, kw_only=True)
class EvaluateResult(Result):
    technique: str = "quest"
    mode: str = "evaluate"
    checkpoint: str  # the file given, or "shipped"
    dataset: Mapping[str, Any]
    metrics: Mapping[str, Any]
    targets: tuple[Mapping[str, Any], ...]
    speed: Mapping[str, Any]


@dataclass(frozen=True, kw_only=True)
class PredictResult(Result):
    """One circuit on one device: its physical qubits and gate count after placement, the transformer's PST and
    the baselines', qiskit-aer's with ``--simulate``, and the seconds each took."""

    OMIT_NONE = ("simulated_pst", "warnings")

    technique: str = "quest"
    mode: str = "predict"
    qasm: str
    device: str
    noise_scale: float
    physical_qubits: tuple[int, ...]
    gates: int
    predicted_pst: float
    baselines: Mapping[str, float]  # "global", "liu"
    simulated_pst: float | None = None
    #: "load" (reading the checkpoint), "first_predict" (the process's first prediction: numba's one-time start-up
    #: of the compiled encoding loops, ~0.4 s on a quiet machine), "predict" (the same prediction again: its
    #: steady cost), and "simulate" with --simulate (aer's density matrix)
    seconds: Mapping[str, float]
    warnings: tuple[str, ...] | None = None  # a device outside the data set, or broken gates on the placement


QuestResult = GenerateResult | TrainResult | EvaluateResult | PredictResult


def _generate(config: QuestConfig) -> GenerateResult:
    from workbench.quantum.quest.experiment import dataset_spec, dataset_summary, load_dataset

    data, where = load_dataset(dataset_spec(config), config.workers)
    return GenerateResult(dataset={**dataset_summary(data), **where})


def _command(config: QuestConfig, path: Path) -> str:
    flags = [
        f"--{k.replace('_', '-')} {v}"
        for k, v in config.to_dict().items()
        if k not in ("mode", "checkpoint", "qasm", "device", "noise_scale", "simulate", "speed_circuits")
        and v != QuestConfig.__dataclass_fields__[k].default
    ]
    return " ".join(["workbench run quest --mode train", *flags, "--checkpoint", shlex.quote(str(path)), "--json"])


def _train(config: QuestConfig) -> TrainResult:
    from workbench.quantum.quest.checkpoint import save_checkpoint
    from workbench.quantum.quest.experiment import (
        cache_dir,
        dataset_spec,
        dataset_summary,
        load_dataset,
        targets,
        train_checkpoint,
    )
    from workbench.quantum.quest.train import TrainSettings

    spec = dataset_spec(config)
    data, where = load_dataset(spec, config.workers)
    settings = TrainSettings(
        epochs=config.epochs, batch_size=config.batch_size, lr=config.lr, patience=config.patience, seed=config.seed
    )
    path = Path(config.checkpoint) if config.checkpoint else cache_dir() / f"checkpoint-{spec.key()}.pt"
    ckpt = train_checkpoint(data, spec, settings, layers=config.layers, progress=True, command=_command(config, path))
    save_checkpoint(ckpt, path)
    curves = {
        name: {
            "epochs": len(h["val_rmse"]),
            "best_epoch": h["best_epoch"],
            "seconds": h["seconds"],
            "best_val_rmse": min(h["val_rmse"]),
        }
        for name, h in ckpt.history.items()
    }
    return TrainResult(
        dataset={**dataset_summary(data), **where},
        checkpoint=str(path),
        command=ckpt.command,
        training=curves,
        metrics=ckpt.metrics,
        targets=tuple(targets(ckpt.metrics)),
    )


def _evaluate(config: QuestConfig) -> EvaluateResult:
    from workbench.quantum.quest.checkpoint import load_checkpoint
    from workbench.quantum.quest.experiment import dataset_summary, evaluate_checkpoint, load_dataset, targets
    from workbench.quantum.quest.speed import speed_comparison

    ckpt = load_checkpoint(config.checkpoint or None)
    data, where = load_dataset(ckpt.spec, config.workers)
    metric = evaluate_checkpoint(ckpt, data)
    return EvaluateResult(
        checkpoint=config.checkpoint or "shipped",
        dataset={**dataset_summary(data), **where},
        metrics=metric,
        targets=tuple(targets(metric)),
        speed=speed_comparison(ckpt, count=config.speed_circuits, device=config.speed_device()),
    )


def _predict(config: QuestConfig) -> PredictResult:
    from workbench.quantum.quest.checkpoint import load_checkpoint
    from workbench.quantum.quest.encoding import gate_count
    from workbench.quantum.quest.experiment import device_warnings
    from workbench.quantum.quest.predict import place, predict_pst, read_qasm, simulate_pst

    circuit = read_qasm(config.qasm)
    placed = place(circuit, config.resolved_device(), noise_scale=config.noise_scale, seed=config.seed)
    start = time.perf_counter()
    ckpt = load_checkpoint(config.checkpoint or None)
    seconds = {"load": time.perf_counter() - start}
    for key in ("first_predict", "predict"):
        start = time.perf_counter()
        preds = predict_pst(ckpt, [placed.circuit], [placed.calibration], models=("transformer", "global", "liu"))
        seconds[key] = time.perf_counter() - start
    simulated = None
    if config.simulate:
        start = time.perf_counter()
        simulated = simulate_pst(placed.circuit, placed.calibration)
        seconds["simulate"] = time.perf_counter() - start
    return PredictResult(
        qasm=config.qasm,
        device=config.device,
        noise_scale=config.noise_scale,
        physical_qubits=tuple(int(q) for q in placed.physical),
        gates=gate_count(placed.circuit),
        predicted_pst=float(preds["transformer"][0]),
        baselines={"global": float(preds["global"][0]), "liu": float(preds["liu"][0])},
        simulated_pst=simulated,
        seconds=seconds,
        warnings=device_warnings(config.device, placed) or None,
    )


def run(config: QuestConfig) -> QuestResult:
    """The result ``workbench run quest`` prints (see the module docstring): one typed result per mode."""
    modes: dict[str, Callable[[QuestConfig], QuestResult]] = {
        "generate": _generate,
        "train": _train,
        "evaluate": _evaluate,
        "predict": _predict,
    }
    return modes[config.mode](config)


def _f(x: Any, fmt: str = ".4f") -> str:
    return "-" if x is None or x != x else format(x, fmt)


def format_table(result: dict[str, Any]) -> str:
    lines = [f"QuEst: {result['mode']}"]
    if "dataset" in result:
        d = result["dataset"]
        fc = d["fidelity_check"]
        lines.append(
            f"dataset: {d['samples']} samples ({d['by_kind']['random']} random, {d['by_kind']['algorithm']} "
            f"algorithm) in {d['circuits']} circuits; PST {_f(d['pst']['min'], '.3f')}..{_f(d['pst']['max'], '.3f')}; "
            f"PST vs fidelity Spearman {_f(fc['spearman'])} over {fc['n']}; {d['path']}"
            f"{' (cached)' if d['cached'] else ''}"
        )
    if "metrics" in result:
        lines.append(f"{'model':<12} {'kind':<10} {'n':>5} {'RMSE':>8} {'R^2':>8} {'Spearman':>9}")
        for model, by_kind in result["metrics"].items():
            for kind, m in by_kind.items():
                lines.append(
                    f"{model:<12} {kind:<10} {m['n']:>5} {_f(m['rmse']):>8} {_f(m['r2']):>8} {_f(m['spearman']):>9}"
                )
        for t in result["targets"]:
            lines.append(f"target {t['target']}: {_f(t['value'])} {'met' if t['met'] else 'NOT met'}")
    if "speed" in result:
        s = result["speed"]
        per = s["seconds_per_circuit"]
        lines.append(
            f"speed ({s['circuits']} circuits), like for like: batched vs batched {s['speedup_like_for_like']:.1f}x "
            f"(aer {per['aer_batched'] * 1e3:.2f} ms, {s['aer_method']}; QuEst {per['predict_batched'] * 1e3:.3f} ms "
            f"per circuit), one vs one {s['speedup_one_vs_one']:.1f}x; goal >= {s['goal']:.0f}x "
            f"{'met' if s['goal_met'] else 'NOT met'}"
        )
        for p in s["pairings"][2:]:
            lines.append(f"  other pairing: {p['pairing']}: {p['speedup']:.1f}x")
    if "checkpoint" in result and result["mode"] == "train":
        lines.append(f"checkpoint: {result['checkpoint']}")
    if result["mode"] == "predict":
        lines.append(
            f"{result['qasm']} on {result['device']} (qubits {result['physical_qubits']}, {result['gates']} "
            f"gates): predicted PST {_f(result['predicted_pst'])}"
            + (f", simulated {_f(result['simulated_pst'])}" if "simulated_pst" in result else "")
        )
        lines += [f"warning: {w}" for w in result.get("warnings", ())]
    return "\n".join(lines)


TECHNIQUE = Technique(
    name="quest",
    config=QuestConfig,
    run=run,
    format_table=format_table,
    panel="widgets.quantum.quest:QuestPanel",
    notebook="notebooks/quantum/quest.ipynb",
    #: predict a 3-qubit GHZ circuit with the shipped checkpoint (no simulation, no dataset): about a second
    smoke={"mode": "predict", "qasm": EXAMPLE_QASM, "device": "fake_lima"},
)
