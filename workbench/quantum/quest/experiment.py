"""The orchestration of QuEst's runs, shared by the runner (``workbench run quest``) and the study (panel,
notebook): the dataset's spec and cache folder, loading or generating it, its summary and the PST-vs-fidelity
rank check, training the three models into a :class:`~workbench.quantum.quest.checkpoint.Checkpoint`, evaluating
one on its held-out split, and the issue's targets.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from workbench.quantum.quest.batching import NormalizedSet, Normalizer
from workbench.quantum.quest.checkpoint import Checkpoint
from workbench.quantum.quest.config import QuestConfig
from workbench.quantum.quest.dataset import DEVICE_KINDS, FAMILIES, KINDS, DatasetSpec, QuestDataset, load_or_generate
from workbench.quantum.quest.net import ABLATIONS, MODELS, build_model
from workbench.quantum.quest.train import (
    TrainSettings,
    fit,
    metrics_by_device,
    metrics_by_kind,
    predict_indices,
    split_by_group,
)

__all__ = [
    "dataset_spec",
    "cache_dir",
    "load_dataset",
    "fidelity_check",
    "dataset_summary",
    "train_checkpoint",
    "evaluate_checkpoint",
    "targets",
    "device_warnings",
]


def dataset_spec(config: QuestConfig) -> DatasetSpec:
    """The dataset of ``config`` (sample counts, noise draws and levels, fidelity share, seed)."""
    return DatasetSpec(
        random_samples=config.random_samples,
        algorithm_samples=config.algorithm_samples,
        noise_draws=config.noise_draws,
        scale_log2_max=config.scale_log2_max,
        duration_log2_max=config.duration_log2_max,
        fidelity_fraction=config.fidelity_fraction,
        seed=config.seed,
    )


def cache_dir() -> Path:
    """Where generated datasets (and default checkpoints) are cached: the per-user cache folder's ``quest/``
    (``$WORKBENCH_CACHE/quest``), never the possibly read-only data folder."""
    from workbench.data.registry import cache_dir as user_cache

    return user_cache("quest")


def load_dataset(spec: DatasetSpec, workers: int, *, progress: bool = True) -> tuple[QuestDataset, dict[str, Any]]:
    """The dataset of ``spec`` (cached under :func:`cache_dir`, generated on ``workers`` processes when missing)
    and where it was read: ``{"path", "cached", "seconds"}``."""
    start = time.perf_counter()
    data, path, cached = load_or_generate(spec, cache_dir(), workers=workers, progress=progress)
    return data, {"path": str(path), "cached": cached, "seconds": time.perf_counter() - start}


def fidelity_check(data: QuestDataset) -> dict[str, Any]:
    """Spearman rank correlation of PST and density-matrix state fidelity over the samples that have both."""
    from scipy.stats import pearsonr, spearmanr

    mask = ~torch.isnan(data.fidelity)
    n = int(mask.sum())
    if n < 3:
        return {"n": n, "spearman": math.nan, "pearson": math.nan}
    p, f = data.pst[mask].numpy(), data.fidelity[mask].numpy()
    return {"n": n, "spearman": float(spearmanr(p, f).statistic), "pearson": float(pearsonr(p, f).statistic)}


def dataset_summary(data: QuestDataset) -> dict[str, Any]:
    """Sample counts by kind and family, PST range, and the fidelity rank check."""
    kind, family = data.meta["kind"], data.meta["family"]
    return {
        "samples": len(data),
        "by_kind": {name: int((kind == k).sum()) for k, name in enumerate(KINDS)},
        "by_family": {name: int((family == k).sum()) for k, name in enumerate(FAMILIES) if (family == k).any()},
        "circuits": int(torch.unique(data.meta["structure"]).numel())
        if "structure" in data.meta
        else int(torch.unique(data.meta["group"]).numel()),
        "groups": int(torch.unique(data.meta["group"]).numel()),
        "by_device_kind": (
            {name: int((data.meta["device_kind"] == k).sum()) for k, name in enumerate(DEVICE_KINDS)}
            if "device_kind" in data.meta
            else {}
        ),
        "unseen_device_samples": int(data.meta["unseen"].sum()) if "unseen" in data.meta else 0,
        "pst": {"min": float(data.pst.min()), "mean": float(data.pst.mean()), "max": float(data.pst.max())},
        "fidelity_check": fidelity_check(data),
    }


def _test_record(data: QuestDataset, indices: torch.Tensor, preds: dict[str, torch.Tensor]) -> dict[str, list]:
    return {
        "pst": data.pst[indices].tolist(),
        "kind": data.meta["kind"][indices].tolist(),
        "family": data.meta["family"][indices].tolist(),
        "width": data.meta["width"][indices].tolist(),
        "gates": data.meta["gates"][indices].tolist(),
        **{f"pred_{name}": p.double().tolist() for name, p in preds.items()},
    }


def train_checkpoint(
    data: QuestDataset,
    spec: DatasetSpec,
    settings: TrainSettings,
    *,
    layers: int = 2,
    progress: bool = False,
    command: str = "",
    on_epoch: Callable[[str, int, float, float], None] | None = None,
) -> Checkpoint:
    """Train the transformer, both baselines and the ablation on the same split; held-out metrics and predictions
    included."""
    split = split_by_group(data, spec.seed)
    if len(split.train) == 0 or len(split.val) == 0:
        raise ValueError(
            f"the dataset has {len(data)} samples in {int(torch.unique(data.meta['group']).numel())} "
            "circuits: valid datasets have at least 3 circuits (train, validation and test)"
        )
    norm = Normalizer.fit(data, split.train)
    normed = NormalizedSet.build(data, norm)
    models, history, preds = {}, {}, {}
    for name in MODELS + ABLATIONS:
        torch.manual_seed(settings.seed)  # the initial weights: training is reproducible from the seed
        model = build_model(name, layers)
        hook = (lambda e, a, b, name=name: on_epoch(name, e, a, b)) if on_epoch is not None else None
        history[name] = fit(model, normed, split, settings, progress=progress, on_epoch=hook).to_dict()
        models[name] = model.eval()
        preds[name] = predict_indices(model, normed, split.test)
    metric = {
        name: {**metrics_by_kind(preds[name], data, split.test), **metrics_by_device(preds[name], data, split.test)}
        for name in preds
    }
    return Checkpoint(
        norm,
        models,
        layers,
        spec,
        spec.seed,
        settings,
        history,
        metric,
        _test_record(data, split.test, preds),
        dataset_summary(data),
        command,
    )


def evaluate_checkpoint(ckpt: Checkpoint, data: QuestDataset) -> dict[str, Any]:
    """Metrics of every model on the held-out split of ``data`` (the checkpoint's own dataset: same spec)."""
    split = split_by_group(data, ckpt.split_seed)
    normed = NormalizedSet.build(data, ckpt.normalizer)
    out = {}
    for name, model in ckpt.models.items():
        pred = predict_indices(model, normed, split.test)
        out[name] = {**metrics_by_kind(pred, data, split.test), **metrics_by_device(pred, data, split.test)}
    return out


def targets(metric: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The issue's targets on held-out circuits: each with its measured value and whether it is met (NaN: not)."""
    t, g, liu = metric["transformer"], metric["global"], metric["liu"]
    rows = [
        ("random circuits: RMSE <= 0.05", t["random"]["rmse"], lambda v: v <= 0.05),
        ("random circuits: R^2 >= 0.90", t["random"]["r2"], lambda v: v >= 0.90),
        ("algorithm circuits: R^2 >= 0.85", t["algorithm"]["r2"], lambda v: v >= 0.85),
        ("RMSE below the global-features MLP", t["all"]["rmse"], lambda v: v < g["all"]["rmse"]),
        ("RMSE below the Liu MLP", t["all"]["rmse"], lambda v: v < liu["all"]["rmse"]),
    ]
    return [{"target": name, "value": value, "met": bool(check(value))} for name, value, check in rows]


def device_warnings(device: str, placed: Any) -> tuple[str, ...]:
    """Why a prediction on ``device`` for the placed circuit ``placed`` (a
    :class:`~workbench.quantum.circuits.DeviceCircuit`) may not be trusted: a device outside the data set (e.g.
    fake_kyoto, left out for its broken edges), a device seen only as held out, or gates the calibration reports
    broken (error 1: the prediction was never trained on them)."""
    from workbench.quantum.quest.dataset import DEVICES, TRAIN_DEVICES

    out = []
    if device not in DEVICES:
        out.append(
            f"device={device!r} is outside QuEst's data set ({len(DEVICES)} devices; fake_kyoto and fake_cairo are "
            "left out): the prediction extrapolates"
        )
    elif device not in TRAIN_DEVICES:
        out.append(f"device={device!r} is held out of training (an unseen device of the data set)")
    index = {q: i for i, q in enumerate(placed.circuit.qubits)}
    broken = set()
    for inst in placed.circuit.data:
        if inst.operation.name in ("barrier", "measure"):
            continue
        qubits = tuple(index[q] for q in inst.qubits)
        gate = placed.calibration.gate(inst.operation.name, qubits)
        if gate is not None and gate.error >= 1.0:
            broken.add((inst.operation.name, tuple(placed.physical[q] for q in qubits)))
    if broken:
        shown = ", ".join(f"{name} {qs}" for name, qs in sorted(broken)[:4])
        out.append(
            f"the placed circuit uses {len(broken)} gate(s) that {device} reports broken (error 1: {shown}); the data "
            "set holds no broken gate, so the prediction extrapolates"
        )
    return tuple(out)
