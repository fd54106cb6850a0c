"""Run small-matrix torch work on one thread.

The pulse simulator works on many tiny matrices (3x3 to 81x81); torch's intra-op thread pool costs more than
it saves there, and on a busy machine it is several times slower (measured: 890 ms with 2 threads vs 150 ms
with 1 for a 640-dt two-transmon density-matrix run under load 3 on 2 cores). :func:`one_thread` sets the pool
to one thread for the call and restores it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

import torch

F = TypeVar("F", bound=Callable)

__all__ = ["one_thread"]


def one_thread(fn: F) -> F:
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        before = torch.get_num_threads()
        if before == 1:
            return fn(*args, **kwargs)
        torch.set_num_threads(1)
        try:
            return fn(*args, **kwargs)
        finally:
            torch.set_num_threads(before)

    return wrapper  # type: ignore[return-value]
