"""The QuEst workflow on top of the pieces: dataset summary and the PST-vs-fidelity rank check, training the
three models into a :class:`~workbench.quantum.quest.checkpoint.Checkpoint`, and evaluating one on its held-out
split."""

from __future__ import annotations

import math
from typing import Any, Callable

import torch

from workbench.quantum.quest.batching import NormalizedSet, Normalizer
from workbench.quantum.quest.checkpoint import Checkpoint
from workbench.quantum.quest.dataset import FAMILIES, KINDS, DatasetSpec, QuestDataset
from workbench.quantum.quest.net import ABLATIONS, MODELS, build_model
from workbench.quantum.quest.train import TrainSettings, fit, metrics_by_kind, predict_indices, split_by_group

__all__ = ["dataset_summary", "fidelity_check", "train_checkpoint", "evaluate_checkpoint", "targets"]


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
    return {"samples": len(data),
            "by_kind": {name: int((kind == k).sum()) for k, name in enumerate(KINDS)},
            "by_family": {name: int((family == k).sum()) for k, name in enumerate(FAMILIES) if (family == k).any()},
            "circuits": int(torch.unique(data.meta["group"]).numel()),
            "pst": {"min": float(data.pst.min()), "mean": float(data.pst.mean()), "max": float(data.pst.max())},
            "fidelity_check": fidelity_check(data)}


def _test_record(data: QuestDataset, indices: torch.Tensor, preds: dict[str, torch.Tensor]) -> dict[str, list]:
    return {"pst": data.pst[indices].tolist(), "kind": data.meta["kind"][indices].tolist(),
            "family": data.meta["family"][indices].tolist(), "width": data.meta["width"][indices].tolist(),
            "gates": data.meta["gates"][indices].tolist(),
            **{f"pred_{name}": p.double().tolist() for name, p in preds.items()}}


def train_checkpoint(data: QuestDataset, spec: DatasetSpec, settings: TrainSettings, *, layers: int = 2,
                     progress: bool = False, command: str = "",
                     on_epoch: Callable[[str, int, float, float], None] | None = None) -> Checkpoint:
    """Train the transformer, both baselines and the ablation on the same split; held-out metrics and predictions
    included."""
    split = split_by_group(data, spec.seed)
    if len(split.train) == 0 or len(split.val) == 0:
        raise ValueError(f"the dataset has {len(data)} samples in {int(torch.unique(data.meta['group']).numel())} "
                         "circuits: valid datasets have at least 3 circuits (train, validation and test)")
    norm = Normalizer.fit(data, split.train)
    normed = NormalizedSet.build(data, norm)
    models, history, preds = {}, {}, {}
    for name in MODELS + ABLATIONS:
        model = build_model(name, layers)
        hook = (lambda e, a, b, name=name: on_epoch(name, e, a, b)) if on_epoch is not None else None
        history[name] = fit(model, normed, split, settings, progress=progress, on_epoch=hook).to_dict()
        models[name] = model.eval()
        preds[name] = predict_indices(model, normed, split.test)
    metric = {name: metrics_by_kind(preds[name], data, split.test) for name in preds}
    return Checkpoint(norm, models, layers, spec, spec.seed, settings, history, metric,
                      _test_record(data, split.test, preds), dataset_summary(data), command)


def evaluate_checkpoint(ckpt: Checkpoint, data: QuestDataset) -> dict[str, Any]:
    """Metrics of every model on the held-out split of ``data`` (the checkpoint's own dataset: same spec)."""
    split = split_by_group(data, ckpt.split_seed)
    normed = NormalizedSet.build(data, ckpt.normalizer)
    out = {}
    for name, model in ckpt.models.items():
        out[name] = metrics_by_kind(predict_indices(model, normed, split.test), data, split.test)
    return out


def targets(metric: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The issue's targets on held-out circuits: each with its measured value and whether it is met (NaN: not)."""
    t, g, liu = metric["transformer"], metric["global"], metric["liu"]
    rows = [("random circuits: RMSE <= 0.05", t["random"]["rmse"], lambda v: v <= 0.05),
            ("random circuits: R^2 >= 0.90", t["random"]["r2"], lambda v: v >= 0.90),
            ("algorithm circuits: R^2 >= 0.85", t["algorithm"]["r2"], lambda v: v >= 0.85),
            ("RMSE below the global-features MLP", t["all"]["rmse"], lambda v: v < g["all"]["rmse"]),
            ("RMSE below the Liu MLP", t["all"]["rmse"], lambda v: v < liu["all"]["rmse"])]
    return [{"target": name, "value": value, "met": bool(check(value))} for name, value, check in rows]
