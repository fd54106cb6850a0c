"""One torch intra-op thread for small-tensor work: ``with one_thread(): ...`` or ``@one_thread()``.

Kernels on small tensors (pulse propagators of 3x3 to 81x81 matrices, circuits of at most a few hundred
amplitudes, tens of small graphs) gain nothing from torch's intra-op threads, and on a busy 2-core machine the
spinning threads made them several to 20 times slower (measured: a 640-dt two-transmon density-matrix run 890 ms
with 2 threads vs 150 ms with 1 at load 3; QuEst's redraw batch 390 ms vs 18 ms; a 7-qubit QNN step 390 ms vs
16 ms; SRT's 16 x 64 policy linear ~17 us vs ~270 us). The previous thread count is restored on exit.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

__all__ = ["one_thread"]


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Set torch to one intra-op thread inside the block (also usable as a decorator: ``@one_thread()``)."""
    before = torch.get_num_threads()
    if before != 1:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if before != 1:
            torch.set_num_threads(before)
