"""Learning is unchanged: a small MLP on scikit-learn's digits, the training set expanded into records (one
record per image: its 64 pixel values as float32), trained with the orders the loaders serve.

Orders: full shuffle (RandomSampler), Redox at a few K, block shuffle at the same memory (K resident chunks), over chunks of ``chunk_records`` records in the digits' shipped order (or sorted by
class, the pitfall). The order of an epoch is the loader's own (the same functions the loaders run; a test
checks that serving the records from their files gives the same order and the same features). Test accuracy
after every epoch, over several seeds.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch

from workbench.llm.redox.baselines import block_shuffle_order, random_sampler_order
from workbench.llm.redox.redox import epoch_seed, plan_local, request_stream


@lru_cache(maxsize=1)
def digits_split() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(x_train, y_train, x_test, y_test): digits scaled to [0, 1], the last quarter held out."""
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32)
    cut = int(len(x) * 0.75)
    return x[:cut], y[:cut].astype(np.int64), x[cut:], y[cut:].astype(np.int64)


def chunk_table(n: int, chunk_records: int) -> np.ndarray:
    return np.arange(n, dtype=np.int64) // chunk_records


def epoch_order(kind: str, n: int, chunk_of: np.ndarray, *, resident: int, seed: int, epoch: int) -> np.ndarray:
    """The order loader ``kind`` (full-shuffle, redox, block-shuffle) serves in ``epoch``."""
    if kind == "full-shuffle":
        return random_sampler_order(n, seed, epoch)
    if kind == "redox":
        return plan_local(request_stream(n, seed, epoch), chunk_of, resident, epoch_seed(seed, epoch) ^ 0x5EED).order
    if kind == "block-shuffle":
        return block_shuffle_order(chunk_of, resident, epoch_seed(seed, epoch))
    raise ValueError(f"order={kind!r} is not allowed: valid values are 'full-shuffle', 'redox', 'block-shuffle'")


@dataclass(frozen=True)
class Curve:
    kind: str
    resident: int
    seed: int
    accuracy: tuple[float, ...]  # test accuracy after each epoch


def train(
    kind: str,
    *,
    resident: int,
    seed: int,
    epochs: int = 8,
    batch: int = 32,
    chunk_records: int = 64,
    layout: str = "shipped",
    hidden: int = 64,
    lr: float = 0.1,
) -> Curve:
    """Train the MLP for ``epochs`` with loader ``kind``'s order; returns test accuracy per epoch."""
    x, y, xt, yt = digits_split()
    if layout == "class-sorted":
        perm = np.argsort(y, kind="stable")
        x, y = x[perm], y[perm]
    elif layout != "shipped":
        raise ValueError(f"layout={layout!r} is not allowed: valid values are 'shipped', 'class-sorted'")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a 64-wide MLP: more threads only contend (20x slower on a busy 2-core machine)
    try:
        return _train(kind, x, y, xt, yt, resident, seed, epochs, batch, chunk_records, hidden, lr)
    finally:
        torch.set_num_threads(threads)


def _train(kind, x, y, xt, yt, resident, seed, epochs, batch, chunk_records, hidden, lr) -> Curve:
    n = len(x)
    chunk_of = chunk_table(n, chunk_records)
    torch.manual_seed(seed)
    net = torch.nn.Sequential(torch.nn.Linear(64, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 10))
    opt = torch.optim.SGD(net.parameters(), lr=lr, momentum=0.9)
    xs, ys, xts, yts = map(torch.from_numpy, (x, y, xt, yt))
    acc = []
    for epoch in range(epochs):
        order = torch.from_numpy(epoch_order(kind, n, chunk_of, resident=resident, seed=seed, epoch=epoch))
        for k in range(0, n, batch):
            idx = order[k : k + batch]
            opt.zero_grad()
            torch.nn.functional.cross_entropy(net(xs[idx]), ys[idx]).backward()
            opt.step()
        with torch.no_grad():
            acc.append(float((net(xts).argmax(1) == yts).float().mean()))
    return Curve(kind, resident, seed, tuple(acc))
