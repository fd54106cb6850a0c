"""Shared helpers of the GreedySnake tests: tiny GPTs, a fast run folder, a trainer factory."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

from workbench.llm.gpt import GPTConfig
from workbench.llm.greedysnake.engine import OffloadedTrainer


@contextmanager
def run_dir():
    """A fresh folder, in /dev/shm when there is one (the exactness tests need files, not a fast disk)."""
    base = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(dir=base, prefix="greedysnake-test-") as d:
        yield Path(d)


def tiny(layers: int = 2, dtype: str = "float64", **kw) -> GPTConfig:
    args = {"hidden": 8, "heads": 2, "seq": 5, "vocab": 11} | kw
    return GPTConfig(layers=layers, dtype=dtype, **args)


def trainer(cfg: GPTConfig, folder, schedule: str, M: int, **kw) -> OffloadedTrainer:
    args = {"micro_batch_size": 2, "alpha": 0.25, "checkpoints": "host", "memory_budget": 10**8, "lr": 1e-3} | kw
    return OffloadedTrainer(cfg, folder, schedule=schedule, micro_batches=M, **args)
