"""What a stage plan needs at its peak: every tensor live at once, counted independently of the cost model.

The cost model (:mod:`~workbench.llm.dawnpiper.costs`) prices a stage at ``static + k * act``: the weights,
gradients and optimizer state, and the tensors autograd *saves*, after swap and recompute, of the ``k``
micro-batches in flight. The real pipeline's accounting (:mod:`~workbench.llm.dawnpiper.pipeline`) counts the
same saved tensors, so the two agree exactly; both leave out what a device also holds while a micro-batch runs:

- the forward working set: a value no backward saves is still live from its producer to its last reader (the
  GPT's logits, made by the LM head and read by the loss, are never saved, yet live beside the loss's own buffer
  of the same size);
- a value the plan swaps or recomputes exists on the device from its production until its last saver has saved
  it (it cannot leave before), and again in backward from its last saver's backward to its first's (swapped back
  in, or recomputed), or longer when a recomputed value is made from it (its recompute reads it);
- the gradient of a unit's output while that unit's backward runs.

:func:`stage_peak` walks one micro-batch through a stage, forward then backward, with the other ``k - 1``
micro-batches' saved tensors held (as the plan keeps them), and returns the largest total and every tensor live
there. It is a lower bound: every tensor is freed at its last use, a swapped one leaves the instant it is saved
and comes back only for the units that saved it, a received value lives from the stage's start, gradients of a
unit's inputs and allocator fragmentation are not counted. A plan whose lower bound exceeds the device cannot run.
Without the output gradients it equals, to the byte, the real pipeline's ledger of what each stage keeps
(:mod:`~workbench.llm.dawnpiper.pipeline`, tested per stage).
Bytes throughout; the graph must record ``value_last_use`` (generated and traced graphs do).
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.claims import Fit
from workbench.llm.dawnpiper.costs import Partition, StagePlan
from workbench.llm.dawnpiper.graph import NodeGraph

__all__ = ["StagePeak", "stage_peak", "partition_peaks", "partition_fit"]

STATIC = "weights, gradients, optimizer state"
SAVED = "saved activations of this micro-batch"
LEAVING = "saved, not yet swapped out or dropped"
TRANSIT = "forward working set (not saved)"
BACK = "swapped back in / recomputed"
GRAD = "gradients"


@dataclass(frozen=True)
class StagePeak:
    """One stage at its peak: ``phase`` ("forward of head.loss"), ``live`` (name -> bytes: the static state, the
    other micro-batches in flight, and this micro-batch's tensors, the largest by name, the rest by role)."""

    stage: int
    phase: str
    live: dict[str, float]

    @property
    def total(self) -> float:
        return float(sum(self.live.values()))


def _other(plan: StagePlan) -> dict[str, float]:
    out = {STATIC: float(plan.static_bytes)}
    if plan.in_flight > 1:
        out[f"saved activations of {plan.in_flight - 1} other micro-batches in flight"] = float(
            (plan.in_flight - 1) * plan.act_bytes
        )
    return out


def stage_peak(graph: NodeGraph, plan: StagePlan, *, name_above: float = 0.05) -> StagePeak:
    """The largest live total of ``plan``'s stage over one micro-batch's forward and backward (see the module
    docstring); a tensor of at least ``name_above`` of that total is listed by name, the rest by role.

    Raises ValueError when the graph does not record ``value_last_use``.
    """
    if graph.value_last_use is None:
        raise ValueError("graph has no value_last_use: regenerate or re-trace it (generate_graph / profile)")
    a, b = plan.start, plan.stop
    saved = {int(v) for v in graph.saved_in(a, b)}
    moved = set(plan.swap) | set(plan.recompute)
    # per relevant value: (bytes, start, forward end or None when kept, first and last saver in the stage)
    values: list[tuple[int, int, int, int | None, int, int]] = []
    for v in range(len(graph.value_names)):
        prod, last = int(graph.value_producer[v]), int(graph.value_last_use[v])
        savers = [s for s in graph.value_savers[v] if a <= s < b]
        if prod < 0:  # a graph input: loaded by the stage that reads it, never sent
            if not savers:
                continue
            start = savers[0]
        elif prod < a:  # received from the previous stage (or passed through it)
            if last < a:
                continue
            start = a
        elif prod < b:
            start = prod
        else:
            continue
        if v in saved and v not in moved:
            end = None  # kept to its backward
        elif v in saved:
            end = max(min(last, b - 1), savers[-1])
        else:
            end = min(max(last, start), b - 1)
        lo, hi = (savers[0], savers[-1]) if savers else (b, -1)
        values.append((v, int(graph.value_bytes[v]), start, end, lo, hi))
    back = _back_ranges(graph, plan, {v: (lo, hi) for v, _, _, _, lo, hi in values if v in moved})

    def forward(u: int) -> list[tuple[int, int, str]]:
        out = []
        for v, nb, start, end, _, _ in values:
            if start <= u and (end is None or u <= end):
                out.append((v, nb, SAVED if end is None else (LEAVING if v in saved else TRANSIT)))
        return out

    def backward(u: int) -> list[tuple[int, int, str]]:
        out = []
        for v, nb, _start, end, lo, _hi in values:
            if end is None and lo <= u:
                out.append((v, nb, SAVED))
            elif v in back and back[v][0] <= u <= back[v][1]:
                out.append((v, nb, BACK))
        for v in range(len(graph.value_names)):  # the gradient of u's outputs read later (position ids have none)
            if graph.value_producer[v] == u and graph.value_last_use[v] > u and graph.value_names[v] != "arange":
                out.append((v, int(graph.value_bytes[v]), GRAD))
        return out

    best: tuple[int, str, list[tuple[int, int, str]]] | None = None
    for phase, fn, order in (("forward", forward, range(a, b)), ("backward", backward, range(b - 1, a - 1, -1))):
        for u in order:
            live = fn(u)
            total = sum(nb for _, nb, _ in live)
            if best is None or total > best[0]:
                best = (total, f"{phase} of {graph.names[u]}", live)
    assert best is not None
    _, phase, live = best
    out = _other(plan)
    total = sum(out.values()) + best[0]
    groups: dict[str, float] = {}
    for v, nb, role in sorted(live, key=lambda x: -x[1]):
        if nb >= name_above * total:
            prod = int(graph.value_producer[v])
            made = graph.names[prod] if prod >= 0 else "input"
            what = "gradient of " if role == GRAD else ""
            out[f"{what}{graph.value_names[v]} ({made}; {role})"] = float(nb)
        else:
            groups[role] = groups.get(role, 0.0) + nb
    out.update({f"{role}, the rest" if any(role in k for k in out) else role: nb for role, nb in groups.items()})
    return StagePeak(stage=plan.stage, phase=phase, live=out)


def _back_ranges(graph: NodeGraph, plan: StagePlan, ranges: dict[int, tuple[int, int]]) -> dict:
    """Per moved value: the units whose backward it is on the device for: its savers' (first to last), widened to
    those of every recomputed value whose recompute reads it (a chain is followed from its last link back)."""
    out = dict(ranges)
    for v in sorted(plan.recompute, key=lambda v: (int(graph.value_producer[v]), v), reverse=True):
        for w in graph.value_inputs[v] or ():
            if w in out and v in out:
                out[w] = (min(out[w][0], out[v][0]), max(out[w][1], out[v][1]))
    return out


def partition_peaks(graph: NodeGraph, part: Partition) -> list[StagePeak]:
    """:func:`stage_peak` of every stage of ``part`` (bytes)."""
    return [stage_peak(graph, s) for s in part.stages]


def partition_fit(graph: NodeGraph, part: Partition, device_bytes: float) -> Fit:
    """The :class:`~workbench.claims.Fit` of ``part``'s worst stage (the most over ``device_bytes``, or the
    fullest when all fit), ``where`` naming the partitioner, the stage and the phase."""
    worst = max(partition_peaks(graph, part), key=lambda p: p.total)
    return Fit(worst.live, float(device_bytes), where=f"{part.name} stage {worst.stage} ({worst.phase})")
