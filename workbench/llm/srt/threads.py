"""One intra-op thread while decoding the small policy: its matmuls are tiny, and on a shared 2-core machine
torch's thread pool costs more than it gives (a 16 x 64 linear: ~17 us on one thread, ~270 us on two under load).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

__all__ = ["one_thread"]


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Run the block with ``torch.set_num_threads(1)``, restoring the previous count after."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
