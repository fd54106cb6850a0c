"""Task orders of one training iteration over ``U`` units and ``M`` micro-batches.

A *unit* is one piece of the model executed as a whole. The model's parameters are kept as *entries*: entry 0
the embedding, entries 1..L the transformer blocks, entry L+1 the final LayerNorm + output head. Two layouts map
units to entries (:func:`unit_entries`):

- ``flextrain`` (the authors' FlexTrain): the embedding and head stay resident on the device; the U = L units are
  the blocks, unit 0 runs the embedding before its block and the last unit is fused with head and loss;
- ``offloaded``: every entry is a unit loaded from disk, U = L + 2 (embedding, blocks, head + loss).

A task is

- ``fwd(u, m)``: forward of unit ``u`` (u < U-1) on micro-batch ``m`` without keeping activations (the unit's
  input is the checkpoint; backward recomputes),
- ``last(U-1, m)``: the last unit's forward *fused* with the loss and its backward,
- ``bwd(u, m)``: recompute unit ``u``'s forward from its input checkpoint, then its backward.

Horizontal (ZeRO-Infinity): each micro-batch through all units and back before the next one.

Vertical (GreedySnake): all micro-batches through one unit before the next, in the order of the authors'
``GreedySnakeBlockScheduler`` (npz7yyk/FlexTrain, ``flextrain/scheduler.py``): task ``t`` of the ``M(2U-1)``
tasks is unit ``u = t // M`` while ``u < U-1`` (forward), else ``u = 2U-2 - t // M`` (the last unit then
backward); its micro-batch is ``t % M`` for even ``u`` and ``M-1 - t % M`` for odd ``u``. So the last
micro-batch of one unit is the first of the next one (a *snake*), and its tensor never leaves the device.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Task", "SCHEDULES", "LAYOUTS", "horizontal", "vertical", "tasks_for", "tensor_consumers",
           "micro_batch_tokens", "unit_entries", "resident_entries"]  # fmt: skip

Kind = Literal["fwd", "last", "bwd"]

#: schedule names of the check mode; vertical-overlap runs the vertical order with the deferred optimizer
SCHEDULES = ("horizontal", "vertical", "vertical-overlap")

#: unit layouts (see the module docstring); the first is the default
LAYOUTS = ("flextrain", "offloaded")


def unit_entries(layers: int, layout: str) -> list[tuple[tuple[int, ...], int]]:
    """For each unit: its entries in forward order and the one entry it loads from disk (a block, or in the
    ``offloaded`` layout the entry itself). Raises ValueError for an unknown layout or layers < 1."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout={layout!r} is not supported: valid values are {', '.join(LAYOUTS)}")
    if layers < 1:
        raise ValueError(f"layers={layers} is out of range: valid range is >= 1")
    if layout == "offloaded":
        return [((e,), e) for e in range(layers + 2)]
    units: list[tuple[tuple[int, ...], int]] = [((e + 1,), e + 1) for e in range(layers)]
    units[0] = ((0, *units[0][0]), units[0][1])  # the embedding runs with the first block
    units[-1] = ((*units[-1][0], layers + 1), units[-1][1])  # the head (and loss) with the last
    return units


def resident_entries(layers: int, layout: str) -> tuple[int, ...]:
    """Entries that stay on the device (never loaded from disk): the embedding and head in ``flextrain``."""
    return (0, layers + 1) if layout == "flextrain" else ()


@dataclass(frozen=True)
class Task:
    kind: Kind
    unit: int
    mb: int


def _check(units: int, micro_batches: int) -> None:
    if units < 1:
        raise ValueError(f"units={units} is out of range: valid range is >= 1")
    if micro_batches < 1:
        raise ValueError(f"micro_batches={micro_batches} is out of range: valid range is >= 1")


def horizontal(units: int, micro_batches: int) -> list[Task]:
    """ZeRO-Infinity order: for every micro-batch, forward through units 0..U-2, fused last unit, backward."""
    _check(units, micro_batches)
    out: list[Task] = []
    for m in range(micro_batches):
        out += [Task("fwd", u, m) for u in range(units - 1)]
        out.append(Task("last", units - 1, m))
        out += [Task("bwd", u, m) for u in range(units - 2, -1, -1)]
    return out


def vertical(units: int, micro_batches: int) -> list[Task]:
    """The snake order of FlexTrain's ``GreedySnakeBlockScheduler._generate_task`` (see the module docstring)."""
    _check(units, micro_batches)
    out: list[Task] = []
    for t in range(micro_batches * (2 * units - 1)):
        u = t // micro_batches
        forward = u < units - 1
        if not forward:
            u = 2 * units - 2 - u
        m = t % micro_batches
        if u & 1:
            m = micro_batches - 1 - m
        kind: Kind = "fwd" if forward else ("last" if u == units - 1 else "bwd")
        out.append(Task(kind, u, m))
    return out


def tasks_for(schedule: str, units: int, micro_batches: int) -> list[Task]:
    """The task list of ``schedule`` (one of :data:`SCHEDULES`)."""
    if schedule == "horizontal":
        return horizontal(units, micro_batches)
    if schedule in ("vertical", "vertical-overlap"):
        return vertical(units, micro_batches)
    raise ValueError(f"schedule={schedule!r} is not supported: valid values are {', '.join(SCHEDULES)}")


def tensor_consumers(tasks: list[Task]) -> dict[tuple, list[int]]:
    """For each inter-layer tensor, the indices of the tasks that read it (x: unit input; dy: output gradient)."""
    out: dict[tuple, list[int]] = {}
    for i, t in enumerate(tasks):
        if t.unit > 0:
            out.setdefault(("x", t.unit, t.mb), []).append(i)
        if t.kind == "bwd":
            out.setdefault(("dy", t.unit, t.mb), []).append(i)
    return out


def micro_batch_tokens(gpt_config: Any, micro_batch_size: int, *, seed: int, step: int, mb: int) -> tuple:
    """Tokens and targets of micro-batch ``mb`` of iteration ``step`` (deterministic: a resumed run sees the same)."""
    from workbench.llm.gpt import random_tokens

    return random_tokens(gpt_config, micro_batch_size, seed=seed * 1_000_003 + step * 10_007 + mb)
