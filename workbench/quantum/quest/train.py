"""Training and evaluation of QuEst's models: split by structure and noise draw, MSE loss, Adam, early stopping
on the validation RMSE (the best epoch's weights are kept), metrics per sample kind and per kind of device.

The split (:func:`split_by_group`) keeps each group on one side: an algorithm's logical circuit with every
placement and noise draw of it (deterministic families such as GHZ-3 are one group), and a random-circuit noise
draw with every circuit simulated under it. Groups are split 80/10/10 from a seed; groups entirely on devices
kept out of training go to the test part, and samples on those devices whose group is not a test group are left
out, so no test sample shares a structure or a noise draw with a training sample and no training or validation
sample comes from an unseen device (``tests/quantum/quest/test_quest_split.py`` checks all three).
"""

from __future__ import annotations

import contextlib
import copy
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import Tensor, nn

from workbench.quantum.quest.batching import NormalizedSet
from workbench.quantum.quest.dataset import DEVICE_KINDS, KINDS, QuestDataset

__all__ = [
    "Split",
    "split_by_group",
    "TrainSettings",
    "fit",
    "predict_indices",
    "metrics",
    "metrics_by_kind",
    "metrics_by_device",
    "History",
    "torch_threads",
    "linked_groups",
    "skeleton_keys",
]


@dataclass(frozen=True, eq=False)
class Split:
    """Sample indices ``[k]`` (int64) of each part; ``excluded``: samples on unseen devices whose group is a
    training or validation group (in no part)."""

    train: Tensor
    val: Tensor
    test: Tensor
    excluded: Tensor = field(default_factory=lambda: torch.zeros(0, dtype=torch.int64))


def skeleton_keys(data: QuestDataset) -> np.ndarray:
    """``[S]`` int64 hash of each sample's device circuit as the model sees it without noise: gate types, wires
    (first-use order) and edges (rz angles are not encoded, so circuits differing only in angles share a key)."""
    import hashlib

    from workbench.quantum.quest.encoding import PHYSICAL_COLUMN

    keys = np.zeros(len(data), dtype=np.int64)
    for i in range(len(data)):
        g = data.graph(i)
        digest = hashlib.sha256(np.ascontiguousarray(g.x[:, :PHYSICAL_COLUMN]).tobytes() + g.edges.tobytes())
        keys[i] = int.from_bytes(digest.digest()[:7], "big")
    return keys


def linked_groups(data: QuestDataset) -> np.ndarray:
    """``[S]`` group of each sample: the connected components of samples linked by a shared ``group`` (a
    logical circuit or a random-circuit noise draw), ``structure``, ``noise`` draw or skeleton
    (:func:`skeleton_keys`), by union-find."""
    columns = [data.meta["group"].numpy()]
    columns += [data.meta[k].numpy() for k in ("structure", "noise") if k in data.meta]
    columns.append(skeleton_keys(data))
    parent = list(range(len(data)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for column in columns:
        first: dict[int, int] = {}
        for i, key in enumerate(column.tolist()):
            j = first.setdefault(key, i)
            if j != i:
                ri, rj = find(i), find(j)
                if ri != rj:
                    parent[ri] = rj
    return np.array([find(i) for i in range(len(data))], dtype=np.int64)


def split_by_group(data: QuestDataset, seed: int = 42, fractions: tuple[float, float] = (0.8, 0.1)) -> Split:
    """80/10/10 split of the linked groups (:func:`linked_groups`: every sample sharing a logical circuit, a
    noise draw or a noise-free device circuit with another is on its side), reproducible from ``seed``; groups
    whose samples are all on unseen devices are test groups (see the module docstring)."""
    groups = linked_groups(data)
    unseen = data.meta["unseen"].numpy().astype(bool) if "unseen" in data.meta else np.zeros(len(groups), bool)
    unique = np.unique(groups)
    seen_groups = np.unique(groups[~unseen])
    forced = np.setdiff1d(unique, seen_groups)  # groups only on unseen devices
    order = np.random.default_rng(seed).permutation(seen_groups)
    n_train = int(round(fractions[0] * len(order)))
    n_val = int(round(fractions[1] * len(order)))
    if len(order) >= 3:
        n_train, n_val = min(max(n_train, 1), len(order) - 2), max(n_val, 1)
    part = {int(g): 0 if i < n_train else 1 if i < n_train + n_val else 2 for i, g in enumerate(order)}
    part.update({int(g): 2 for g in forced})
    which = np.array([part[int(g)] for g in groups])
    which[unseen & (which != 2)] = 3
    pick = lambda k: torch.from_numpy(np.flatnonzero(which == k)).long()  # noqa: E731
    return Split(pick(0), pick(1), pick(2), pick(3))


@contextlib.contextmanager
def torch_threads(count: int | None) -> Iterator[None]:
    """torch's intra-op threads set to ``count`` inside the block (None: unchanged), restored after."""
    if count is None:
        yield
        return
    if not isinstance(count, int) or count < 1:
        raise ValueError(f"threads={count!r} is out of range: valid values are None or 1.. (threads)")
    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@dataclass(frozen=True)
class TrainSettings:
    """The paper's optimiser (Adam, lr 5e-4, weight decay 1e-4); epochs and batch size are ours (the paper
    trains 100 epochs with batches of 1,000 on ~45k samples)."""

    epochs: int = 300
    batch_size: int = 128
    lr: float = 5e-4
    weight_decay: float = 1e-4
    patience: int = 30
    seed: int = 42
    #: torch intra-op threads while training (None: torch's setting). These graphs are small: splitting their
    #: kernels over threads gains little and, on a busy machine, costs a lot (measured on 2 shared cores at load
    #: 10: 71 s for the first epoch with 2 threads, 2.5 s with 1)
    threads: int | None = 1


@dataclass
class History:
    """Per epoch: training and validation RMSE; the best epoch (1-based) and wall seconds."""

    train_rmse: list[float] = field(default_factory=list)
    val_rmse: list[float] = field(default_factory=list)
    best_epoch: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {
            "train_rmse": self.train_rmse,
            "val_rmse": self.val_rmse,
            "best_epoch": self.best_epoch,
            "seconds": self.seconds,
        }


@torch.inference_mode()
def predict_indices(model: nn.Module, data: NormalizedSet, indices: Tensor, chunk: int = 2048) -> Tensor:
    """Model outputs ``[k]`` for samples ``indices``."""
    model.eval()
    parts = [model(data.batch(indices[i : i + chunk])) for i in range(0, len(indices), chunk)]
    return torch.cat(parts) if parts else torch.zeros(0)


def _rmse(a: Tensor, b: Tensor) -> float:
    return float(torch.sqrt(torch.mean((a - b) ** 2))) if len(a) else math.nan


def fit(
    model: nn.Module,
    data: NormalizedSet,
    split: Split,
    settings: TrainSettings = TrainSettings(),
    *,
    progress: bool = False,
    on_epoch: Callable[[int, float, float], None] | None = None,
) -> History:
    """Train ``model`` in place (best validation epoch kept); ``on_epoch(epoch, train_rmse, val_rmse)``."""
    with torch_threads(settings.threads):
        return _fit(model, data, split, settings, progress=progress, on_epoch=on_epoch)


def _fit(
    model: nn.Module,
    data: NormalizedSet,
    split: Split,
    settings: TrainSettings,
    *,
    progress: bool,
    on_epoch: Callable[[int, float, float], None] | None,
) -> History:
    from tqdm.auto import tqdm

    torch.manual_seed(settings.seed)
    generator = torch.Generator().manual_seed(settings.seed)
    opt = torch.optim.Adam(model.parameters(), lr=settings.lr, weight_decay=settings.weight_decay)
    history, best, best_state, waited = History(), math.inf, None, 0
    start = time.perf_counter()
    bar = tqdm(range(1, settings.epochs + 1), desc=type(model).__name__, unit="epoch", disable=not progress)
    for epoch in bar:
        model.train()
        order = split.train[torch.randperm(len(split.train), generator=generator)]
        total, count = 0.0, 0
        for i in range(0, len(order), settings.batch_size):
            idx = order[i : i + settings.batch_size]
            loss = nn.functional.mse_loss(model(data.batch(idx)), data.target[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
            count += len(idx)
        train_rmse = math.sqrt(total / max(count, 1))
        val_rmse = _rmse(predict_indices(model, data, split.val), data.target[split.val])
        history.train_rmse.append(train_rmse)
        history.val_rmse.append(val_rmse)
        bar.set_postfix(train=f"{train_rmse:.4f}", val=f"{val_rmse:.4f}")
        if on_epoch is not None:
            on_epoch(epoch, train_rmse, val_rmse)
        if val_rmse < best or best_state is None:
            best, best_state, waited, history.best_epoch = val_rmse, copy.deepcopy(model.state_dict()), 0, epoch
        else:
            waited += 1
            if waited >= settings.patience:
                break
    bar.close()
    if best_state is not None:
        model.load_state_dict(best_state)
    history.seconds = time.perf_counter() - start
    return history


def metrics(pred: Tensor, true: Tensor) -> dict[str, float]:
    """RMSE, MAE, R^2 and Spearman rank correlation of predictions against labels (NaN when empty)."""
    from scipy.stats import spearmanr

    pred, true = pred.double(), true.double()
    n = len(true)
    if n == 0:
        return {"n": 0, "rmse": math.nan, "mae": math.nan, "r2": math.nan, "spearman": math.nan}
    resid = float(torch.sum((pred - true) ** 2))
    spread = float(torch.sum((true - true.mean()) ** 2))
    rho = float(spearmanr(pred.numpy(), true.numpy()).statistic) if n > 2 else math.nan
    return {
        "n": n,
        "rmse": math.sqrt(resid / n),
        "mae": float(torch.mean(torch.abs(pred - true))),
        "r2": 1 - resid / spread if spread > 0 else math.nan,
        "spearman": rho,
    }


def metrics_by_kind(pred: Tensor, data: QuestDataset, indices: Tensor) -> dict[str, dict[str, float]]:
    """:func:`metrics` of ``pred`` (for ``indices``) on all samples and per kind (random, algorithm)."""
    true = data.pst[indices]
    kind = data.meta["kind"][indices]
    out = {"all": metrics(pred, true)}
    for k, name in enumerate(KINDS):
        mask = kind == k
        out[name] = metrics(pred[mask], true[mask])
    return out


def metrics_by_device(pred: Tensor, data: QuestDataset, indices: Tensor) -> dict[str, dict[str, float]]:
    """:func:`metrics` of ``pred`` (for ``indices``) per kind of device (``cx``, ``ecr``, ``cz``) on devices seen
    in training and on devices kept out of it (``"cx/seen"``, ``"cx/unseen"``, ..., ``"all/unseen"``)."""
    true = data.pst[indices]
    kind = data.meta["device_kind"][indices]
    unseen = data.meta["unseen"][indices].bool()
    out = {}
    for k, name in [(k, n) for k, n in enumerate(DEVICE_KINDS)] + [(None, "all")]:
        for flag, label in ((False, "seen"), (True, "unseen")):
            mask = unseen == flag
            if k is not None:
                mask &= kind == k
            out[f"{name}/{label}"] = metrics(pred[mask], true[mask])
    return out
