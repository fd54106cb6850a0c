"""The slow, obvious checks Redox is tested against.

:func:`replay` walks a served order with an explicit buffer of chunk slots (a dict of chunk -> set of unconsumed
records), loading a chunk when a served record needs it and evicting it when its set empties, and reports
what happened: how often each chunk was read, the peak number held, which records were served. It shares no
code with :func:`workbench.llm.redox.redox.plan_local`. :func:`full_shuffle` is ``RandomSampler`` itself.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import torch
from torch.utils.data import RandomSampler


@dataclass(frozen=True)
class Replay:
    served: Counter  # record id -> times served
    chunk_reads: Counter  # chunk -> times loaded
    peak_resident: int
    evicted_unconsumed: int  # records still unconsumed in a chunk when it had to make room (must be 0)


def replay(order, chunk_of, resident: int) -> Replay:
    """Serve ``order`` from a buffer of ``resident`` chunks the obvious way (see module docstring).

    A record whose chunk is not held loads the chunk; if the buffer is full, the least recently loaded chunk
    is dropped (counting its unconsumed records, which a correct Redox order never leaves).
    """
    members: dict[int, set[int]] = {}
    for i, c in enumerate(chunk_of):
        members.setdefault(int(c), set()).add(i)
    held: dict[int, set[int]] = {}
    served: Counter = Counter()
    reads: Counter = Counter()
    consumed: set[int] = set()
    peak = 0
    lost = 0
    for i in order:
        i = int(i)
        c = int(chunk_of[i])
        served[i] += 1
        if c not in held:
            if len(held) >= resident:
                oldest = next(iter(held))
                lost += len(held.pop(oldest))
            held[c] = set(members[c]) - consumed
            reads[c] += 1
        held[c].discard(i)
        consumed.add(i)
        peak = max(peak, len(held))
        if not held[c]:
            del held[c]
    return Replay(served, reads, peak, lost)


def full_shuffle(n: int, generator_seed: int) -> list[int]:
    """``RandomSampler(range(n))``'s order under a generator seeded with ``generator_seed``."""
    return list(RandomSampler(range(n), generator=torch.Generator().manual_seed(generator_seed)))
