"""The cost model every partitioner is judged by: per-stage memory under a pipeline schedule, the per-tensor choice
of swap or recompute that makes a stage fit, stage times and the iteration time.

Memory of stage x (0-based, of S) with M micro-batches in flight at most ``k_x``:

    peak_x = static_x + (k_x - 1) * act_x + live_x      (what must fit the device)
    saved_x = static_x + k_x * act_x                    (saved tensors only: the pipeline's saved-tensor ledger)
    k_x = min(S - x, M) under 1F1B (PipeDream-flush) and PipeDream's asynchronous 1F1B; M under GPipe
    static_x = weights + gradients + optimizer state of the stage (measured Adam state on traced graphs, else
               params_x * state_bytes_per_param)  (+ (k_x - 1) * params_x * weight_bytes_per_param for PipeDream's
               weight stashing: every micro-batch in flight keeps the weight version it started with)
    act_x   = bytes of the values (see :mod:`graph`) with a saver in the stage, minus those swapped or recomputed
    live_x  = the most bytes one micro-batch has on the device at once while it runs through the stage, forward
              then backward (:func:`live_bytes`): its saved tensors as they accumulate, the forward working set
              (a value no backward saves lives from its producer to its last reader: the LM head's logits beside
              the loss's buffer), a swapped or recomputed value until its last saver has saved it and again while
              the units that saved it run backward (swapped back in or recomputed), and the gradient of a unit's
              output during its backward. It equals the independent walk of
              :func:`~workbench.llm.dawnpiper.feasibility.stage_peak` (tested); graphs without ``value_last_use``
              fall back to ``k_x * act_x``.

Swap or recompute, per tensor (our reading of DawnPiper's "cost-model based memory optimization"; the paper's rule
is not readable): a swapped value goes to host after its micro-batch's forward and comes back before its backward,
``bytes / pcie`` each way (PCIe is full duplex), hidden while a micro-batch's swaps fit in the stage's compute of a
micro-batch and exposed beyond it; a recomputed value costs its producer's forward time again in backward and
needs the producer's inputs held (they then stay). The greedy choice: first fill the free swap window with the
values that are dearest to recompute, then take the cheapest bytes (recompute ``t_f / bytes`` or exposed swap
``1 / pcie``) until the saved bytes fit; if the live peak still overflows, ask for that much more (a few rounds,
then everything movable) and call the stage infeasible if even that does not fit. A value can be recomputed when its producer is in the stage and every input
of the producer is a value the stage saves (kept, swapped back in, or itself recomputed first: chains are allowed).
Swapped bytes of all micro-batches in flight must fit in the stage's share of host memory.

Stage time per micro-batch ``T_x = max(t_f + t_b + recompute + exposed swap, comm_in, comm_out)`` (activations
and gradients overlap compute, as DawnPiper's objective assumes); iteration time ``(M + S - 1) * max_x T_x``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from workbench.cluster import PRESETS, ClusterSpec
from workbench.llm.dawnpiper.graph import NodeGraph, activation_table, static_bytes

__all__ = [
    "SCHEDULES",
    "StageBudget",
    "StagePlan",
    "Partition",
    "in_flight",
    "live_bytes",
    "plan_stage",
    "evaluate",
    "StageCache",
]

SCHEDULES = ("1f1b", "gpipe", "pipedream")


@dataclass(frozen=True, kw_only=True)
class StageBudget:
    """What the cost model allows one stage: its memory budget (bytes), the bytes per parameter of static state
    (weights, gradients, optimizer) and of one stashed weight, and the host memory it may fill with swapped
    tensors (bytes; all its micro-batches in flight together), on the GPUs of ``cluster`` (the hardware: its
    PCIe prices swaps, its NVLink the inter-stage link)."""

    memory_bytes: float
    cluster: ClusterSpec = PRESETS["a100-40gb-sxm-nvlink"]
    state_bytes_per_param: float = 16.0
    weight_bytes_per_param: float = 2.0
    host_bytes: float = math.inf

    @property
    def pcie_bytes_per_s(self) -> float:
        return self.cluster.pcie_bw_gbps * 1e9

    @property
    def link_bytes_per_s(self) -> float:
        return self.cluster.intra_node_bytes_per_second

    @property
    def link_latency_s(self) -> float:
        return self.cluster.intra_node_latency_s


@dataclass(frozen=True, kw_only=True)
class StagePlan:
    """One stage: units [start, stop), what it holds, what it swaps and recomputes, and its time per micro-batch.
    ``peak_bytes`` is every tensor live at the stage's peak (static, other micro-batches' saved tensors, this one's
    live set); ``saved_peak_bytes`` the saved tensors only (``static + in_flight * act_bytes``)."""

    start: int
    stop: int
    stage: int
    in_flight: int
    compute_s: float
    static_bytes: float
    act_bytes: int
    act_bytes_before: int
    peak_bytes: float
    saved_peak_bytes: float
    swap: tuple[int, ...]
    recompute: tuple[int, ...]
    swap_bytes: int
    recompute_bytes: int
    added_s: float
    comm_s: float
    time_s: float
    feasible: bool


@dataclass(frozen=True, kw_only=True)
class Partition:
    """A partition: ``cuts`` (unit index where stage 1, 2, ... begins), its stages, iteration time, feasibility."""

    name: str
    cuts: tuple[int, ...]
    stages: tuple[StagePlan, ...]
    iteration_s: float
    feasible: bool
    search_s: float = 0.0

    @property
    def stage_peak_bytes(self) -> list[float]:
        return [s.peak_bytes for s in self.stages]

    @property
    def bottleneck_s(self) -> float:
        return max(s.time_s for s in self.stages)


def in_flight(schedule: str, stage: int, stages: int, micro_batches: int) -> int:
    """Micro-batches whose activations stage ``stage`` holds at its peak (see the module docstring)."""
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule={schedule!r} is unknown: valid values are {SCHEDULES}")
    return micro_batches if schedule == "gpipe" else min(stages - stage, micro_batches)


def _comm_s(graph: NodeGraph, cut: int, hw: StageBudget) -> float:
    """Seconds to send the values crossing the cut before unit ``cut`` (one direction, one micro-batch)."""
    if cut <= 0 or cut >= graph.n:
        return 0.0
    return hw.link_latency_s + float(graph.crossing_bytes[cut - 1]) / hw.link_bytes_per_s


def plan_stage(
    graph: NodeGraph,
    start: int,
    stop: int,
    stage: int,
    stages: int,
    micro_batches: int,
    hw: StageBudget,
    schedule: str = "1f1b",
    *,
    optimize: bool = True,
    granularity: str = "tensor",
) -> StagePlan:
    """Plan stage ``stage`` of units [start, stop): memory, and (``optimize``) the swap/recompute choice, per
    tensor (DawnPiper) or per layer (``granularity="layer"``: a whole layer swapped or recomputed, vPipe's way).

    An infeasible stage (static memory above the budget, or activations that no choice brings under it; or any
    overflow when ``optimize`` is False) has ``feasible`` False and ``time_s`` infinite.
    """
    if not 0 <= start < stop <= graph.n:
        raise ValueError(f"stage units [{start}, {stop}) are invalid: valid is 0 <= start < stop <= {graph.n}")
    k = in_flight(schedule, stage, stages, micro_batches)
    params = float(graph.param_bytes[start:stop].sum()) / graph.param_elem_bytes
    static = float(static_bytes(graph, hw.state_bytes_per_param)[start:stop].sum())
    if schedule == "pipedream":
        static += (k - 1) * params * hw.weight_bytes_per_param
    act = int(round(activation_table(graph)[start, stop]))
    compute = float(graph.compute_s[start:stop].sum())
    comm = max(_comm_s(graph, start, hw), _comm_s(graph, stop, hw))
    budget = hw.memory_bytes
    choice = _Moves((), (), 0, 0, 0.0, True)
    peak = _peak(graph, start, stop, k, static, act, choice)
    feasible = peak <= budget
    if not feasible and optimize and static < budget:
        choice, peak = _fit_moves(graph, start, stop, k, static, act, compute, hw, granularity, peak)
        feasible = choice.ok and peak <= budget
    swap, recompute, swap_bytes, rec_bytes, added = choice[:5]
    act_after = act - swap_bytes - rec_bytes
    time_s = max(compute + added, comm) if feasible else math.inf
    return StagePlan(
        start=start,
        stop=stop,
        stage=stage,
        in_flight=k,
        compute_s=compute,
        static_bytes=static,
        act_bytes=act_after,
        act_bytes_before=act,
        peak_bytes=peak,
        saved_peak_bytes=static + k * act_after,
        swap=tuple(swap),
        recompute=tuple(recompute),
        swap_bytes=swap_bytes,
        recompute_bytes=rec_bytes,
        added_s=added,
        comm_s=comm,
        time_s=time_s,
        feasible=feasible,
    )


class _Moves(NamedTuple):
    """A swap/recompute choice: value ids, bytes freed per micro-batch each way, added seconds, enough freed."""

    swap: tuple[int, ...]
    recompute: tuple[int, ...]
    swap_bytes: int
    rec_bytes: int
    added_s: float
    ok: bool


#: rounds of "free what the live peak still overflows by" before trying everything movable
_ROUNDS = 6


def _peak(graph: NodeGraph, start: int, stop: int, k: int, static: float, act: int, moves: _Moves) -> float:
    """``static + (k - 1) * act_after + live`` of a stage under ``moves`` (bytes)."""
    act_after = act - moves.swap_bytes - moves.rec_bytes
    if graph.value_last_use is None:  # no lifetimes recorded: saved tensors only
        return static + k * act_after
    return static + (k - 1) * act_after + live_bytes(graph, start, stop, moves.swap, moves.recompute)


def _fit_moves(
    graph: NodeGraph, start: int, stop: int, k: int, static: float, act: int, compute: float, hw: StageBudget,
    granularity: str, peak: float,
) -> tuple[_Moves, float]:  # fmt: skip
    """The greedy choice that brings the stage's peak (``peak`` bytes with nothing moved) under the budget: free
    per micro-batch what the saved bytes or the peak overflow by over ``k`` (each moved byte frees at most ``k``),
    then, while the peak still overflows, more by a secant step on the peak's fall per freed byte (``_ROUNDS``
    rounds), then everything movable. Returns the last choice and its peak (bytes)."""
    held = graph.saved_in(start, stop)
    choose = _choose if granularity == "tensor" else _choose_layers
    budget = hw.memory_bytes
    reduce = max(1, math.ceil((static + k * act - budget) / k), math.ceil((peak - budget) / k))
    moves, freed_before, peak_before = _Moves((), (), 0, 0, 0.0, False), 0, peak
    for attempt in range(_ROUNDS + 1):
        if attempt == _ROUNDS or reduce >= act:
            reduce = act  # the last try: everything the choice can move
        moves = _Moves(*choose(graph, held, start, stop, reduce, compute, hw, hw.host_bytes / k))
        moves = moves._replace(swap=tuple(moves.swap), recompute=tuple(moves.recompute))
        peak = _peak(graph, start, stop, k, static, act, moves)
        if not moves.ok or peak <= budget or reduce >= act:
            return moves, peak
        # the next request: the peak's fall per byte freed so far, carried on to the budget (a secant step)
        freed = moves.swap_bytes + moves.rec_bytes
        rate = (peak_before - peak) / max(freed - freed_before, 1)
        step = (peak - budget) / rate if rate > 0 else act
        reduce = max(reduce + 1, freed + math.ceil(step))
        freed_before, peak_before = freed, peak
    return moves, peak


def live_bytes(
    graph: NodeGraph, start: int, stop: int, swap: Sequence[int] = (), recompute: Sequence[int] = (), *,
    gradients: bool = True,
) -> float:  # fmt: skip
    """The most bytes one micro-batch has on the device at once in stage [start, stop), forward then backward,
    when the values ``swap`` and ``recompute`` (ids) are swapped or recomputed (see the module docstring; the same
    walk as :func:`~workbench.llm.dawnpiper.feasibility.stage_peak`, vectorised: one difference array per phase).
    A moved value is back on the device while the units that saved it run backward, and also while a recomputed
    value made from it is (its recompute reads it). ``gradients=False`` leaves out the gradients of the units'
    outputs. Raises ValueError when the graph does not record ``value_last_use``."""
    a, b = start, stop
    last_all = graph.value_last_use
    if last_all is None:
        raise ValueError("graph has no value_last_use: regenerate or re-trace it (generate_graph / profile)")
    prod_all = graph.value_producer
    first_all = graph.next_saver_table()[a]  # first saver at or after a (n: none)
    # the values this stage sees: made here, received (made before, read here or later), or inputs saved here
    ids = np.nonzero(np.where(prod_all < 0, first_all < b, (prod_all < b) & (last_all >= a)))[0]
    prod, last, first = prod_all[ids], last_all[ids], first_all[ids]
    final = graph.prev_saver_table()[b][ids]  # last saver before b (-1: none)
    nb = graph.value_bytes[ids].astype(np.float64)
    saved = first < b
    mask = np.zeros(len(prod_all), dtype=bool)
    mask[list(swap) + list(recompute)] = True
    is_moved = mask[ids]
    start_u = np.where(prod < 0, first, np.maximum(prod, a))  # where each value's life in the stage starts
    leaving = saved & is_moved
    transit = ~saved
    end_u = np.full(len(ids), b - 1)
    end_u[leaving] = np.maximum(np.minimum(last[leaving], b - 1), final[leaving])
    end_u[transit] = np.minimum(np.maximum(last[transit], start_u[transit]), b - 1)
    width = b - a
    fwd = np.bincount(start_u - a, weights=nb, minlength=width + 1)
    fwd -= np.bincount(end_u - a + 1, weights=nb, minlength=width + 1)
    # backward: kept to its backward (from the last unit back to its first saver); back in (swapped or
    # recomputed) while its savers' backward runs; the gradient of a unit's output during its backward
    back_lo, back_hi = first.copy(), final.copy()
    if len(recompute):
        _extend_back(graph, ids, mask, recompute, back_lo, back_hi)
    bwd = np.bincount(back_lo[saved] - a, weights=nb[saved], minlength=width + 1)
    bwd -= np.bincount(back_hi[leaving] - a + 1, weights=nb[leaving], minlength=width + 1)
    grads = _grad_mask(graph)[ids] & (prod >= a) & gradients
    back = np.cumsum(bwd[:width]) + np.bincount(prod[grads] - a, weights=nb[grads], minlength=width)[:width]
    return float(max(np.cumsum(fwd[:width]).max(), back.max()))


def _extend_back(graph: NodeGraph, ids: np.ndarray, moved: np.ndarray, recompute: Sequence[int],
                 back_lo: np.ndarray, back_hi: np.ndarray) -> None:  # fmt: skip
    """Widen the backward range [back_lo, back_hi] of a moved value to that of every recomputed value whose
    recompute reads it (latest producer first, so chains carry through); arrays indexed like ``ids``."""
    where = {int(v): i for i, v in enumerate(ids)}
    for v in sorted(recompute, key=lambda v: (int(graph.value_producer[v]), v), reverse=True):
        i = where[int(v)]
        for w in graph.value_inputs[v] or ():
            if moved[w] and w in where:
                j = where[w]
                back_lo[j], back_hi[j] = min(back_lo[j], back_lo[i]), max(back_hi[j], back_hi[i])


def _grad_mask(graph: NodeGraph) -> np.ndarray:
    """Values whose gradient is live during their producer's backward: made by a unit and read later (position
    ids, ``arange``, have none)."""
    if "grad" not in graph._cache:
        last = graph.value_last_use
        names = np.array(graph.value_names)
        graph._cache["grad"] = (graph.value_producer >= 0) & (last > graph.value_producer) & (names != "arange")
    return graph._cache["grad"]


def _choose(
    graph: NodeGraph,
    held: np.ndarray,
    start: int,
    stop: int,
    reduce: int,
    window_s: float,
    hw: StageBudget,
    host_cap: float = math.inf,
) -> tuple[list[int], list[int], int, int, float, bool]:
    """The greedy swap/recompute choice that frees ``reduce`` bytes per micro-batch (see the module docstring)."""
    held = np.asarray(held, dtype=np.int64)
    sizes = graph.value_bytes[held]
    prod = graph.value_producer[held]
    inputs = _inputs_table(graph)[held]  # (h, width), -1 padded
    is_held = np.zeros(len(graph.value_names) + 1, dtype=bool)
    is_held[held] = True
    is_held[-1] = True  # the padding index
    rec_ok = _recomputable(graph)[held] & (prod >= start) & (prod < stop) & is_held[inputs].all(axis=1)
    rec_cost = np.where(rec_ok, graph.fwd_s[np.maximum(prod, 0)] / np.maximum(sizes, 1), np.inf)
    window_bytes = window_s * hw.pcie_bytes_per_s
    swap_per_byte = 1.0 / hw.pcie_bytes_per_s
    # 1) the free swap window, dearest-to-recompute values first (not recomputable = dearest)
    order = np.lexsort((held, -sizes, -rec_cost)).tolist()
    size_of, cost_of, ids = sizes.tolist(), rec_cost.tolist(), held.tolist()
    cap1 = min(window_bytes, host_cap)
    chosen_swap: list[int] = []
    chosen_rec: list[int] = []
    taken = [False] * len(ids)
    freed = swapped = 0
    for i in order:
        if freed >= reduce:
            break
        if swapped + size_of[i] > cap1:
            continue
        chosen_swap.append(ids[i])
        taken[i] = True
        swapped += size_of[i]
        freed += size_of[i]
    # 2) the cheapest bytes: recompute at t_f / bytes, or swap beyond the window at 1 / pcie
    if freed < reduce:
        ranked = np.lexsort((held, -sizes, np.minimum(rec_cost, swap_per_byte))).tolist()
        for i in ranked:
            if freed >= reduce:
                break
            size = size_of[i]
            if taken[i] or size == 0:
                continue
            if cost_of[i] < swap_per_byte:
                chosen_rec.append(ids[i])
            elif swapped + size > host_cap:
                continue
            else:
                chosen_swap.append(ids[i])
                swapped += size
            taken[i] = True
            freed += size
    rec = np.asarray(chosen_rec, dtype=np.int64)
    rec_bytes = int(graph.value_bytes[rec].sum())
    rec_time = float(graph.fwd_s[graph.value_producer[rec]].sum())
    exposed = max(0.0, swapped / hw.pcie_bytes_per_s - window_s)
    return sorted(chosen_swap), sorted(chosen_rec), swapped, rec_bytes, rec_time + exposed, freed >= reduce


def _recomputable(graph: NodeGraph) -> np.ndarray:
    if "recomputable" not in graph._cache:
        graph._cache["recomputable"] = np.array([i is not None for i in graph.value_inputs], dtype=bool)
    return graph._cache["recomputable"]


def _inputs_table(graph: NodeGraph) -> np.ndarray:
    """``(V, width)`` value ids of each value's recompute inputs, padded with -1 (an always-held slot)."""
    if "inputs" not in graph._cache:
        width = max((len(i) for i in graph.value_inputs if i), default=1)
        table = np.full((len(graph.value_names), width), -1, dtype=np.int64)
        for v, inp in enumerate(graph.value_inputs):
            if inp:
                table[v, : len(inp)] = inp
        graph._cache["inputs"] = table
    return graph._cache["inputs"]


def _choose_layers(
    graph: NodeGraph,
    held: np.ndarray,
    start: int,
    stop: int,
    reduce: int,
    window_s: float,
    hw: StageBudget,
    host_cap: float = math.inf,
) -> tuple[list[int], list[int], int, int, float, bool]:
    """vPipe's granularity (our model of its paper's description): a whole layer is swapped, or recomputed from
    its input (activation checkpointing: everything the layer made is dropped except its output, the next
    layer's checkpoint; the cost is the layer's forward again)."""
    groups: dict[int, list[int]] = {}
    for v in held:
        v = int(v)
        p = int(graph.value_producer[v])
        home = p if start <= p < stop else next(s for s in graph.value_savers[v] if start <= s < stop)
        groups.setdefault(int(graph.layer[home]), []).append(v)
    options = []
    for layer, values in groups.items():
        units = [u for u in range(start, stop) if graph.layer[u] == layer]
        made = [v for v in values if start <= int(graph.value_producer[v]) < stop]
        output = max(made, key=lambda v: int(graph.value_producer[v]), default=None)
        rec = [v for v in made if v != output]
        rec_bytes = sum(int(graph.value_bytes[v]) for v in rec)
        swap_bytes = sum(int(graph.value_bytes[v]) for v in values)
        rec_time = float(graph.fwd_s[units].sum())
        options.append((layer, values, rec, rec_bytes, swap_bytes, rec_time))
    window_bytes = window_s * hw.pcie_bytes_per_s
    chosen_swap: list[int] = []
    chosen_rec: list[int] = []
    freed = swapped = rec_total = 0
    rec_time_total = 0.0
    order = sorted(options, key=lambda o: (o[5] / max(o[3], 1), o[0]), reverse=True)
    rest = []
    for o in order:
        if freed < reduce and swapped + o[4] <= min(window_bytes, host_cap):
            chosen_swap += o[1]
            swapped += o[4]
            freed += o[4]
        else:
            rest.append(o)
    per_byte = 1.0 / hw.pcie_bytes_per_s
    rest.sort(key=lambda o: (min(o[5] / max(o[3], 1), per_byte), o[0]))
    for _layer, values, rec, rec_bytes, swap_bytes, rec_time in rest:
        if freed >= reduce:
            break
        if rec_bytes and rec_time / rec_bytes < per_byte:
            chosen_rec += rec
            rec_total += rec_bytes
            rec_time_total += rec_time
            freed += rec_bytes
        elif swapped + swap_bytes <= host_cap:
            chosen_swap += values
            swapped += swap_bytes
            freed += swap_bytes
    exposed = max(0.0, swapped / hw.pcie_bytes_per_s - window_s)
    return sorted(chosen_swap), sorted(chosen_rec), swapped, rec_total, rec_time_total + exposed, freed >= reduce


class StageCache:
    """Memoised :func:`plan_stage` for one graph, setting and schedule (partition searches ask for the same
    stages many times)."""

    def __init__(
        self,
        graph: NodeGraph,
        stages: int,
        micro_batches: int,
        hw: StageBudget,
        schedule: str,
        optimize: bool = True,
        granularity: str = "tensor",
    ) -> None:
        if stages > graph.n:
            raise ValueError(f"stages={stages} is more than the graph's {graph.n} units: valid stages are 1..{graph.n}")
        self.graph, self.stages, self.micro_batches, self.hw = graph, stages, micro_batches, hw
        self.schedule, self.optimize, self.granularity = schedule, optimize, granularity
        self._plans: dict[tuple[int, int, int], StagePlan] = {}
        self.evaluations = 0

    def plan(self, start: int, stop: int, stage: int) -> StagePlan:
        key = (start, stop, stage)
        if key not in self._plans:
            self.evaluations += 1
            self._plans[key] = plan_stage(
                self.graph, start, stop, stage, self.stages, self.micro_batches, self.hw, self.schedule,
                optimize=self.optimize, granularity=self.granularity,
            )  # fmt: skip
        return self._plans[key]

    def time(self, start: int, stop: int, stage: int) -> float:
        return self.plan(start, stop, stage).time_s

    def partition(self, name: str, cuts: Sequence[int], search_s: float = 0.0) -> Partition:
        bounds = [0, *cuts, self.graph.n]
        plans = tuple(self.plan(bounds[x], bounds[x + 1], x) for x in range(self.stages))
        worst = max(p.time_s for p in plans)
        return Partition(
            name=name,
            cuts=tuple(int(c) for c in cuts),
            stages=plans,
            iteration_s=(self.micro_batches + self.stages - 1) * worst,
            feasible=all(p.feasible for p in plans),
            search_s=search_s,
        )


def evaluate(
    graph: NodeGraph,
    cuts: Sequence[int],
    hw: StageBudget,
    micro_batches: int,
    schedule: str = "1f1b",
    *,
    optimize: bool = True,
    name: str = "",
) -> Partition:
    """The cost model's account of a partition given by its ``cuts`` (S - 1 increasing unit indices in 1..n-1).

    Raises ValueError when the cuts are not increasing or out of range.
    """
    cuts = [int(c) for c in cuts]
    if any(not 0 < c < graph.n for c in cuts) or any(b <= a for a, b in zip(cuts, cuts[1:], strict=False)):
        raise ValueError(f"cuts={cuts} are invalid: valid cuts are increasing unit indices in 1..{graph.n - 1}")
    return StageCache(graph, len(cuts) + 1, micro_batches, hw, schedule, optimize).partition(name, cuts)
