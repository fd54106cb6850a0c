"""scikit-learn's bundled digits (8x8, 1797 images; the TopGen brief's stand-in for MNIST) as QNN tasks.

``digits-2``: 3 vs 6 (QuantumNAS's MNIST-2 pair); ``digits-4``: 0, 1, 2, 3 (MNIST-4). Images are
average-pooled 2x2 to 4x4 = 16 features scaled to [0, pi] (pixel / 16 * pi), the 16 angles a QuantumNAS-style
encoder writes onto the qubits. Split per class, seeded: 60 % train, 20 % validation, 20 % test.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

__all__ = ["TASKS", "Split", "load_task"]

TASKS = {"digits-2": (3, 6), "digits-4": (0, 1, 2, 3)}


@dataclass(frozen=True, eq=False)
class Split:
    """Features ``[N, 16]`` (float64 angles) and labels ``[N]`` (0..C-1) of train/validation/test."""

    x_train: Tensor
    y_train: Tensor
    x_val: Tensor
    y_val: Tensor
    x_test: Tensor
    y_test: Tensor
    classes: tuple[int, ...]

    @property
    def num_classes(self) -> int:
        return len(self.classes)


def load_task(task: str, *, seed: int = 0, max_train: int | None = None, max_test: int | None = None) -> Split:
    """The ``task`` split (see the module docstring); ``max_train`` / ``max_test`` cap the train and the
    validation/test sets (first rows of the seeded shuffle). Raises ValueError for an unknown task."""
    if task not in TASKS:
        raise ValueError(f"task={task!r} is unknown: valid tasks are {', '.join(TASKS)}")
    from sklearn.datasets import load_digits

    digits = load_digits()
    classes = TASKS[task]
    images = digits.images.reshape(-1, 4, 2, 4, 2).mean(axis=(2, 4)).reshape(-1, 16)  # [1797, 16] 2x2 pooling
    rng = np.random.default_rng(seed)
    parts: dict[str, list[np.ndarray]] = {"train": [], "val": [], "test": []}
    for label, digit in enumerate(classes):
        idx = rng.permutation(np.flatnonzero(digits.target == digit))
        a, b = int(0.6 * len(idx)), int(0.8 * len(idx))
        for name, sel in (("train", idx[:a]), ("val", idx[a:b]), ("test", idx[b:])):
            parts[name].append(np.stack([sel, np.full(len(sel), label)], axis=1))

    def take(name: str, cap: int | None) -> tuple[Tensor, Tensor]:
        rows = np.concatenate(parts[name])
        rows = rows[rng.permutation(len(rows))]
        if cap is not None:
            rows = rows[:cap]
        x = torch.as_tensor(images[rows[:, 0]] / 16.0 * np.pi, dtype=torch.float64)
        return x, torch.as_tensor(rows[:, 1], dtype=torch.long)

    xt, yt = take("train", max_train)
    xv, yv = take("val", max_test)
    xs, ys = take("test", max_test)
    return Split(xt, yt, xv, yv, xs, ys, classes)
