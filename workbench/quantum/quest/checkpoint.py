"""A trained QuEst checkpoint: the three models, the normaliser, the dataset spec and split seed they were trained
on, their training curves and held-out metrics, and the test-set predictions (for the notebook's scatter plot).

The repository ships one (:data:`SHIPPED`, ~0.6 MB) trained by the project's own command (stored in it as
``command``; the dataset, 8,800 samples on cx, ecr and cz devices, took 7.4 min to generate on 2 workers, and the
four models 45 min of training on one core, the transformer 33 min of it)::

    workbench run quest --mode train --random-samples 6400 --algorithm-samples 2400 --epochs 600 --patience 50 \
        --checkpoint workbench/quantum/quest/checkpoints/quest.pt --json

Files are read with ``torch.load(weights_only=True)`` (tensors, numbers, strings, lists and dicts only).
"""

from __future__ import annotations

import functools
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

from workbench.atomic import atomic_write, verify_zip
from workbench.quantum.quest.batching import Normalizer
from workbench.quantum.quest.dataset import DatasetSpec
from workbench.quantum.quest.net import build_model
from workbench.quantum.quest.train import TrainSettings

__all__ = ["Checkpoint", "SHIPPED", "save_checkpoint", "load_checkpoint", "FORMAT"]

SHIPPED = Path(__file__).resolve().parent / "checkpoints" / "quest.pt"
#: 3: encoding version 3 (30-d nodes with the echo cost, 9 globals; cx, ecr and cz devices)
FORMAT = 3


@dataclass(eq=False)
class Checkpoint:
    """``models`` by name (transformer, global, liu and the no-noise ablation; eval mode), ``history`` and ``metrics`` by model name,
    ``test``: held-out ``pst``, ``kind``, ``family`` and each model's predictions (lists), ``dataset``: the
    training dataset's summary (sizes, PST range, PST-vs-fidelity rank check)."""

    normalizer: Normalizer
    models: dict[str, nn.Module]
    layers: int
    spec: DatasetSpec
    split_seed: int
    settings: TrainSettings
    history: dict[str, dict[str, Any]] = field(default_factory=dict)
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)
    test: dict[str, list] = field(default_factory=dict)
    dataset: dict[str, Any] = field(default_factory=dict)
    command: str = ""


def save_checkpoint(ckpt: Checkpoint, path: str | os.PathLike[str]) -> Path:
    """Write ``ckpt`` atomically to ``path`` (parent folders created)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "format": FORMAT,
        "normalizer": ckpt.normalizer.to_dict(),
        "models": {k: m.state_dict() for k, m in ckpt.models.items()},
        "layers": ckpt.layers,
        "spec": asdict(ckpt.spec),
        "split_seed": ckpt.split_seed,
        "settings": asdict(ckpt.settings),
        "history": ckpt.history,
        "metrics": ckpt.metrics,
        "test": ckpt.test,
        "dataset": ckpt.dataset,
        "command": ckpt.command,
    }
    with atomic_write(path) as f:  # temp file, fsync, rename: a crash never leaves half a checkpoint
        torch.save(payload, f)
    return path


def load_checkpoint(path: str | os.PathLike[str] | None = None) -> Checkpoint:
    """The checkpoint at ``path`` (default: the shipped one); cached per file and modification time."""
    path = Path(path) if path else SHIPPED
    if not path.is_file():
        raise FileNotFoundError(
            f"checkpoint={str(path)!r} does not exist: train one with "
            "`workbench run quest --mode train --checkpoint PATH`"
        )
    return _load(str(path.resolve()), path.stat().st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _load(path: str, mtime: int) -> Checkpoint:
    verify_zip(
        path, what="QuEst checkpoint", remedy="retrain it with `workbench run quest --mode train --checkpoint PATH`"
    )
    payload = torch.load(path, weights_only=True)
    if payload.get("format") != FORMAT:
        raise ValueError(
            f"checkpoint={path!r} has format {payload.get('format')!r}: valid format is {FORMAT}; "
            "retrain it with `workbench run quest --mode train`"
        )
    models = {}
    for name in payload["models"]:
        model = build_model(name, payload["layers"])
        model.load_state_dict(payload["models"][name])
        models[name] = model.eval()
    return Checkpoint(
        Normalizer.from_dict(payload["normalizer"]),
        models,
        payload["layers"],
        DatasetSpec(**{"duration_log2_max": 0.0, **payload["spec"]}),  # checkpoints before the stretch: none
        payload["split_seed"],
        TrainSettings(**payload["settings"]),
        payload["history"],
        payload["metrics"],
        payload["test"],
        payload.get("dataset", {}),
        payload["command"],
    )
