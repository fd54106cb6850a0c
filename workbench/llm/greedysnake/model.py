"""MODEL: a discrete-event simulator of offloaded training over HBM / DRAM / SSD, and the LP configuration search.

Everything here is a model, labelled "MODEL" wherever it is shown. It walks the same task lists as the real
engine (:mod:`.schedule`) with the same residency rules (a unit's weights are loaded once per run of tasks on
it; an inter-layer tensor leaves the device only when the very next task does not consume it) and prices each
step on five resources: the GPU (compute), PCIe host-to-device and device-to-host (per GPU), SSD read and SSD
write (per node), and the CPU running Adam (per node). Transfers start as soon as their inputs exist and their
resources are free; with ``prefetch`` a unit's weights are requested when the previous run starts (double
buffering) and an input one task ahead, as ZeRO-Infinity and FlexTrain do.

Compute: per token, a block's forward costs ``2 n_block + 2 s d`` FLOPs (matmuls + causal attention); a
backward task recomputes the forward and runs the backward, ``3x`` the forward (the "8 Psi" rule with
recomputation: 2 + 2 + 4 per parameter per token); the fused last unit ``3x`` without recomputation.
Widths: fp16 compute copy and activations (2 B), fp32 gradient accumulation (4 B), fp32 master + Adam m, v
(12 B), as in the paper's mixed-precision setting.

Layouts (:func:`~.schedule.unit_entries`): ``offloaded`` (the default here: every unit, embedding and head
included, loaded from SSD/DRAM) or ``flextrain`` (embedding and head resident on the GPU: the units are the
blocks, unit 0 runs the embedding and the last unit is fused with head and loss; their optimizer steps read and
write only master and Adam states, and the new compute copy goes to the GPU over PCIe).

Optimizer: horizontal (ZeRO-Infinity) steps every unit after the last backward; vertical steps unit u on the
CPU as soon as its gradient is complete (overlapping the backward of the units below); vertical-overlap
additionally defers a fraction alpha of each unit's step to the next iteration, ahead of that unit's forward.

:func:`configuration_search` is the authors' LP (FlexTrain ``auto_config.py``, re-derived, solved with
``scipy.optimize.linprog``/HiGHS): the fraction of checkpoints, fp16 parameters and optimizer states placed on
SSD (the rest in DRAM) and per-layer forward/backward times, for each alpha on a grid.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from scipy.optimize import linprog

from workbench.llm.gpt import GPTShape, block_param_count
from workbench.llm.greedysnake.schedule import tasks_for, tensor_consumers, unit_entries

__all__ = ["Rates", "Placement", "Widths", "SimResult", "simulate", "LPResult", "configuration_search", "horizontal_search",
           "horizontal_lp_rows", "horizontal_lp_bytes",
           "unit_sizes_of", "unit_flops_of", "unit_flops_for", "activation_bytes_per_layer"]  # fmt: skip


@dataclass(frozen=True)
class Rates:
    """Rates of one node: GPU FLOP/s (per GPU), PCIe B/s (per GPU per direction), SSD B/s, CPU Adam elem/s."""

    flops: float
    pcie: float
    ssd_read: float
    ssd_write: float
    adam: float
    gpu_memory: float = float("inf")
    host_memory: float = float("inf")


@dataclass(frozen=True)
class Placement:
    """Fraction of each tensor class on SSD (the rest in host DRAM). ``grad_ssd``: horizontal only, the share of
    its fp32 gradient-accumulation buffer on SSD (read, added to and written back every micro-batch, read once
    more by the optimizer); the snake sends each unit's gradient once and never accumulates on the host."""

    ckpt_ssd: float = 0.0
    para_ssd: float = 1.0
    opt_ssd: float = 1.0
    grad_ssd: float = 0.0


@dataclass(frozen=True)
class Widths:
    """Bytes per element: compute copy w, gradient g, optimizer o (master + m + v), activations x."""

    w: int = 2
    g: int = 4
    o: int = 12
    x: int = 2


@dataclass
class SimResult:
    """One simulated configuration: steady-state iteration seconds, throughput, busy seconds per resource,
    bytes per iteration by resource and class (SSD), and the compute-only time."""

    iteration_s: float
    tokens: int
    compute_s: float
    busy: dict[str, float]
    ssd_bytes: dict[str, float]
    pcie_bytes: float
    events: list[tuple[str, float, float, str]] = field(default_factory=list)

    @property
    def throughput(self) -> float:
        return self.tokens / self.iteration_s


def unit_sizes_of(shape: GPTShape) -> list[int]:
    """Elements per unit: embedding (token + position), blocks, final LayerNorm + head."""
    d = shape.hidden
    return [shape.vocab * d + shape.seq * d] + [block_param_count(shape)] * shape.layers + [2 * d + d * shape.vocab]


def unit_flops_of(shape: GPTShape) -> list[float]:
    """Forward FLOPs per token of each unit (embedding lookups: none; blocks: matmuls + causal attention)."""
    d, f = shape.hidden, shape.ffn_mult * shape.hidden
    block = 2 * (4 * d * d + 2 * d * f) + 2 * shape.seq * d
    return [0.0] + [float(block)] * shape.layers + [2.0 * d * shape.vocab]


def unit_flops_for(shape: GPTShape, layout: str) -> list[float]:
    """Forward FLOPs per token of each *unit* of ``layout`` (:func:`~.schedule.unit_entries`)."""
    flops = unit_flops_of(shape)
    return [float(sum(flops[e] for e in entries)) for entries, _ in unit_entries(shape.layers, layout)]


def activation_bytes_per_layer(shape: GPTShape, micro_batch: int, width: int = 2) -> float:
    """Activation memory of one block's forward for one micro-batch (Korthikanti et al. 2022, arXiv 2205.05198
    v1, Eq. 2 for 16-bit: ``s b d (34 + 5 a s / d)`` bytes), scaled to ``width`` bytes per value."""
    s, d, a = shape.seq, shape.hidden, shape.heads
    return s * micro_batch * d * (34 + 5 * a * s / d) * width / 2


class _Res:
    """One resource used in order: a transfer or compute job starts when both it is ready and the resource is."""

    def __init__(self) -> None:
        self.free, self.busy = 0.0, 0.0

    def take(self, start: float, dur: float) -> float:
        free = self.free
        s = free if free > start else start  # max(start, free), without the call (the DES's hottest line)
        self.free = s + dur
        self.busy += dur
        return s


_RESOURCES = ("gpu", "h2d", "d2h", "ssd_read", "ssd_write", "cpu")


def _runs_of(tasks: list) -> tuple[list[tuple[int, int, int]], dict[int, int]]:
    """Runs of consecutive tasks on one unit as (unit, first task, last task), and each task's run."""
    runs: list[tuple[int, int, int]] = []
    for i, t in enumerate(tasks):
        if runs and runs[-1][0] == t.unit:
            runs[-1] = (t.unit, runs[-1][1], i)
        else:
            runs.append((t.unit, i, i))
    return runs, {i: r for r, (_, a, b) in enumerate(runs) for i in range(a, b + 1)}


@functools.lru_cache(maxsize=64)
def _plan(schedule: str, units: int, micro_batches: int) -> tuple:
    """What a simulation of one task list reuses: the tasks, each task's inputs, the outputs that must leave the
    device (consumed later than by the next task), the runs, each task's run and each unit's last backward."""
    tasks = tasks_for(schedule, units, micro_batches)
    cons = tensor_consumers(tasks)
    in_keys = [_inputs(t) for t in tasks]
    out_keys = [[k for k in _outputs(t, units) if any(j > i + 1 for j in cons.get(k, []))] for i, t in enumerate(tasks)]
    runs, run_of = _runs_of(tasks)
    last_bwd = {t.unit: i for i, t in enumerate(tasks) if t.kind != "fwd"}
    first_bwd = {t.unit: i for i, t in reversed(list(enumerate(tasks))) if t.kind != "fwd"}
    return tasks, in_keys, out_keys, runs, run_of, last_bwd, first_bwd


class _Simulation:
    """The state of one :func:`simulate` call: the six resources, the byte counters and the task list. One
    :meth:`iteration` walks the tasks: load a run's weights, read inputs back, compute, prefetch the next run,
    store outputs that are not consumed next, send gradients; then the optimizer steps that remain."""

    def __init__(self, shape: GPTShape, schedule: str, micro_batches: int, micro_batch_size: int, gpus: int,
                 rates: Rates, placement: Placement, widths: Widths, alpha: float, *, prefetch: bool,
                 optimizer: bool, sync_optimizer: bool, record: bool, layout: str = "offloaded",
                 park_ssd: bool = False) -> None:  # fmt: skip
        entry_sizes, entry_flops = unit_sizes_of(shape), unit_flops_of(shape)
        plan = unit_entries(shape.layers, layout)
        self.sizes = [entry_sizes[off] for _, off in plan]  # loaded elements of each unit
        self.res = [sum(entry_sizes[e] for e in entries if e != off) for entries, off in plan]  # resident ones
        self.uflops = [sum(entry_flops[e] for e in entries) for entries, _ in plan]
        self.park_ssd = park_ssd
        self.U, self.M, self.G = len(plan), micro_batches, gpus
        self.tokens_mb = micro_batch_size * shape.seq
        self.X = self.tokens_mb * shape.hidden * widths.x  # one inter-layer tensor of one rank
        self.schedule, self.rates, self.placement, self.widths = schedule, rates, placement, widths
        self.prefetch, self.optimizer, self.sync_optimizer, self.record = prefetch, optimizer, sync_optimizer, record
        self.tasks, self.in_keys, self.out_keys, self.runs, self.run_of, self.last_bwd, self.first_bwd = _plan(
            schedule, self.U, micro_batches
        )
        self.a_frac = alpha if schedule == "vertical-overlap" else 0.0
        self.grad_ssd = placement.grad_ssd * widths.g if schedule == "horizontal" else 0.0  # bytes per element
        self.rs = {k: _Res() for k in _RESOURCES}
        self.gpu, self.h2d, self.d2h = self.rs["gpu"], self.rs["h2d"], self.rs["d2h"]
        self.sr, self.sw, self.cpu = self.rs["ssd_read"], self.rs["ssd_write"], self.rs["cpu"]
        self.ssd_bytes = {"weights": 0.0, "gradients": 0.0, "optimizer": 0.0, "checkpoints": 0.0}
        self.pcie_total = 0.0
        self.compute_total = 0.0
        self.events: list[tuple[str, float, float, str]] = []

    # ---- jobs on the resources ----------------------------------------------------------------------------
    def xfer(self, ready: float, link: _Res, pcie_bytes: float, ssd: _Res | None, ssd_b: float, cls: str) -> float:
        """A PCIe transfer on ``link`` with ``ssd_b`` bytes through ``ssd`` at the same time; returns its end."""
        rates = self.rates
        d_p = pcie_bytes / rates.pcie
        start = link.free if link.free > ready else ready
        if ssd is not None and ssd_b:
            d_s = ssd_b / (rates.ssd_read if ssd is self.sr else rates.ssd_write)
            if ssd.free > start:
                start = ssd.free
            link.take(start, d_p)
            ssd.take(start, d_s)
            self.ssd_bytes[cls] += ssd_b
        else:
            d_s = 0.0
            if start < 0.0:
                start = 0.0
            link.take(start, d_p)
        self.pcie_total += pcie_bytes
        return start + (d_s if d_s > d_p else d_p)

    def opt_job(self, ready: float, n: float, n_res: float = 0.0, grad_read: float = 0.0) -> float:
        """An optimizer step of ``n`` loaded and ``n_res`` resident elements: SSD read (states, the gradient
        buffer's SSD share, ``grad_read`` parked gradient bytes), CPU Adam, SSD write (states, the loaded
        elements' new compute copy) pipelined; the resident ones' new copy goes to the GPU. Returns its end."""
        if not self.optimizer:
            return ready
        w, p, rates = self.widths, self.placement, self.rates
        k = n + n_res
        rb = w.o * k * p.opt_ssd + self.grad_ssd * n + grad_read
        wb = w.o * k * p.opt_ssd + w.w * n * p.para_ssd
        r0 = self.sr.take(ready, rb / rates.ssd_read)
        r1 = r0 + rb / rates.ssd_read
        c0 = self.cpu.take(r0, k / rates.adam)
        c1 = max(c0 + k / rates.adam, r1)
        w0 = self.sw.take(c0, wb / rates.ssd_write)
        self.ssd_bytes["optimizer"] += 2 * w.o * k * p.opt_ssd
        self.ssd_bytes["gradients"] += self.grad_ssd * n + grad_read
        self.ssd_bytes["weights"] += w.w * n * p.para_ssd
        end = max(w0 + wb / rates.ssd_write, c1)
        if n_res:
            end = self.xfer(c1, self.h2d, w.w * n_res / self.G, None, 0.0, "weights")
        return end

    def load(self, ready: float, u: int) -> float:
        """Unit ``u``'s compute copy to the device; returns when it is there."""
        n = self.sizes[u]
        return self.xfer(ready, self.h2d, self.widths.w * n / self.G, self.sr,
                         self.widths.w * n * self.placement.para_ssd, "weights")  # fmt: skip

    # ---- one iteration --------------------------------------------------------------------------------------
    def iteration(self, start: float, *, deferred: bool, last: bool) -> tuple[float, dict, dict, float]:
        """Simulate one iteration from ``start``; returns its end, busy seconds, SSD bytes and PCIe bytes."""
        busy0 = {k: r.busy for k, r in self.rs.items()}
        bytes0, pcie0 = dict(self.ssd_bytes), self.pcie_total
        self._begin(start, deferred)
        for i, t in enumerate(self.tasks):
            self._task(i, t, last)
        end = self._finish()
        busy = {k: r.busy - busy0[k] for k, r in self.rs.items()}
        return end, busy, {k: self.ssd_bytes[k] - bytes0[k] for k in bytes0}, self.pcie_total - pcie0

    def _begin(self, start: float, deferred: bool) -> None:
        # deferred parts of the previous iteration (their gradients wait in DRAM: FlexTrain borrows checkpoint and
        # parameter buffers): unit u's part is issued in M chunks from unit u-2's forward on, and unit u's
        # forward waits for it. Optimizer steps are split into M chunks, one issued per task (FlexTrain plans a
        # unit's step per micro-batch), so they share the SSD and the CPU with the checkpoint traffic.
        self.start, self.deferred = start, deferred
        self.gpu.free = max(self.gpu.free, start)
        self.loads: dict[int, float] = {}
        self.compute_start: dict[int, float] = {}
        self.prev_end = start
        self.opt_done: list[float] = []
        self.ready_a = {u: start for u in range(self.U)}
        self.queue_a: deque[tuple[int, float]] = deque()  # (unit, elements) of deferred chunks
        self.queue_b: deque[tuple[int, float, float, float]] = deque()  # (unit, loaded, resident, ready) chunks
        self.issued: set[int] = set()
        self.stored: dict[tuple, float] = {}
        self.produced: dict[tuple, int] = {}
        self._issue_deferred(0)
        self._issue_deferred(1)

    def _issue_deferred(self, u: int) -> None:
        if self.deferred and u < self.U and u not in self.issued:
            self.issued.add(u)
            self.queue_a.extend([(u, self.a_frac * self.sizes[u] / self.M)] * self.M)

    def _drain_a(self, at: float, until_unit: int | None = None) -> None:
        """Issue one deferred chunk at ``at``, or every chunk of units <= until_unit."""
        while self.queue_a and (until_unit is None or self.queue_a[0][0] <= until_unit):
            u, n = self.queue_a.popleft()
            self.ready_a[u] = self.opt_job(at, n, grad_read=self.widths.g * n if self.park_ssd else 0.0)
            if until_unit is None:
                return

    def _drain_b(self, at: float, everything: bool = False) -> None:
        """Issue one backward optimizer chunk at ``at`` (or all of them)."""
        while self.queue_b:
            u, n, n_res, ready = self.queue_b.popleft()
            self.opt_done.append(self.opt_job(max(at, ready), n, n_res))
            if not everything:
                return

    def _load_run(self, r: int, at: float, *, before: bool) -> None:
        """Load run ``r``'s weights from ``at``; a forward run waits for its unit's deferred optimizer part."""
        u = self.runs[r][0]
        forward = self.tasks[self.runs[r][1]].kind != "bwd"
        if before:
            self._issue_deferred(u)
        if forward:
            if not before:
                self._issue_deferred(u)
            self._drain_a(at, until_unit=u)  # unit u's forward waits only for its deferred part
        self.loads[r] = self.load(max(at, self.ready_a[u] if forward else 0.0), u)

    def _inputs_ready(self, i: int, t: Any, ready: float) -> float:
        """When task ``i``'s inputs are on the device: those not produced by the previous task come back."""
        for key in self.in_keys[i]:
            if key in self.stored and self.produced[key] != i - 1:
                req = self.compute_start.get(i - 1, self.start) if self.prefetch else self.prev_end
                done = self.xfer(max(req, self.stored[key]), self.h2d, self.X, self.sr,
                                 self.X * self.G * self.placement.ckpt_ssd, "checkpoints")  # fmt: skip
                ready = max(ready, done)
        return ready

    def _compute(self, i: int, t: Any, r: int, ready: float, last: bool) -> float:
        """Run task ``i`` on the GPU (a backward task recomputes its forward: 3x); returns its start."""
        dur = (1 if t.kind == "fwd" else 3) * self.uflops[t.unit] * self.tokens_mb / self.rates.flops
        s = self.gpu.take(max(ready, self.prev_end), dur)
        self.compute_start[i] = s
        if t.kind == "fwd" and self.runs[r][1] == i:
            self._issue_deferred(t.unit + 2)  # two units ahead: a whole unit's forward of slack
        if self.queue_a:
            self._drain_a(s)
        if self.queue_b:
            self._drain_b(s)
        self.prev_end = s + dur
        if last:
            self.compute_total += dur
            if self.record:
                self.events.append(("gpu", s, self.prev_end, f"{t.kind} u{t.unit} m{t.mb}"))
        return s

    def _store_outputs(self, i: int, t: Any) -> None:
        """Outputs consumed later than the next task leave the device (to DRAM or SSD)."""
        for key in self.out_keys[i]:
            self.stored[key] = self.xfer(self.prev_end, self.d2h, self.X, self.sw,
                                         self.X * self.G * self.placement.ckpt_ssd, "checkpoints")  # fmt: skip
            self.produced[key] = i

    def _gradients(self, i: int, t: Any) -> None:
        """Send task ``i``'s gradient: horizontal every micro-batch (fp16 partials; resident entries accumulate
        on the GPU and go once, after the last), vertical once per unit, then its optimizer step (synchronous, or
        queued in M chunks)."""
        n, n_res, w, G = self.sizes[t.unit], self.res[t.unit], self.widths, self.G
        if self.schedule == "horizontal":
            g_done = self.xfer(self.prev_end, self.d2h, w.w * n / G, None, 0.0, "gradients")
            if self.grad_ssd:  # the accumulation buffer's SSD share: read (from the task's start), add, write back
                b = self.grad_ssd * n
                first = i == self.first_bwd[t.unit]  # the buffer holds nothing before the first micro-batch
                r0 = self.compute_start[i] if first else self.sr.take(self.compute_start[i], b / self.rates.ssd_read)
                w0 = self.sw.take(max(r0 + (0 if first else b / self.rates.ssd_read), g_done), b / self.rates.ssd_write)
                g_done = w0 + b / self.rates.ssd_write
                self.ssd_bytes["gradients"] += b if first else 2 * b
            if i == self.last_bwd[t.unit]:
                if n_res:
                    g_done = max(g_done, self.xfer(self.prev_end, self.d2h, w.g * n_res / G, None, 0.0, "gradients"))
                self.opt_done.append(g_done)
        elif i == self.last_bwd[t.unit]:
            g_done = self.xfer(self.prev_end, self.d2h, w.g * (n + n_res) / G, None, 0.0, "gradients")
            if self.park_ssd and self.a_frac:  # the deferred part's gradient waits on SSD (the real engine)
                self.sw.take(g_done, w.g * self.a_frac * n / self.rates.ssd_write)
                self.ssd_bytes["gradients"] += w.g * self.a_frac * n
            if self.sync_optimizer:
                done = self.opt_job(g_done, (1 - self.a_frac) * n, n_res)
                self.opt_done.append(done)
                self.gpu.free = max(self.gpu.free, done)
                self.prev_end = max(self.prev_end, done)
            else:
                self.queue_b.extend([(t.unit, (1 - self.a_frac) * n / self.M, n_res / self.M, g_done)] * self.M)

    def _task(self, i: int, t: Any, last: bool) -> None:
        r = self.run_of[i]
        if r not in self.loads:
            self._load_run(r, self.prev_end, before=True)
        s = self._compute(i, t, r, self._inputs_ready(i, t, self.loads[r]), last)
        if self.prefetch and self.runs[r][1] == i and r + 1 < len(self.runs):  # the next run's weights
            self._load_run(r + 1, s, before=False)
        self._store_outputs(i, t)
        if t.kind != "fwd":
            self._gradients(i, t)

    def _finish(self) -> float:
        """The remaining optimizer work (horizontal: every unit after the last gradient); the iteration's end."""
        self._drain_b(self.prev_end, everything=True)
        if self.schedule == "horizontal":
            grads_in = max(self.opt_done) if self.opt_done else self.prev_end
            self.opt_done = [self.opt_job(max(grads_in, self.prev_end), self.sizes[u], self.res[u])
                             for u in range(self.U)]  # fmt: skip
        return max([self.prev_end, *self.opt_done, *self.ready_a.values()])


def simulate(
    shape: GPTShape,
    *,
    schedule: str,
    micro_batches: int,
    micro_batch_size: int,
    gpus: int,
    rates: Rates,
    placement: Placement = Placement(),
    widths: Widths = Widths(),
    alpha: float = 0.0,
    prefetch: bool = True,
    optimizer: bool = True,
    sync_optimizer: bool = False,
    iterations: int = 3,
    record: bool = False,
    layout: str = "offloaded",
    park_ssd: bool = False,
) -> SimResult:
    """Simulate ``iterations`` iterations; the result is the last one (steady state).

    Parameters: ``micro_batches`` and ``micro_batch_size`` are per GPU; the node's ``gpus`` run in lockstep
    (data parallel, ZeRO-3 partitioned state). ``optimizer=False`` prices the optimizer at zero (to measure
    the exposed optimizer time); ``sync_optimizer`` makes the GPU wait for every optimizer step (the real
    engine's plain vertical schedule on one CPU). ``record`` keeps the last iteration's GPU events. ``layout``:
    ``offloaded`` or ``flextrain`` (embedding and head resident on the GPU). ``park_ssd``: the deferred part's
    gradient waits on SSD (the real engine, crash-consistent) rather than in DRAM (FlexTrain).
    """
    sim = _Simulation(shape, schedule, micro_batches, micro_batch_size, gpus, rates, placement, widths, alpha,
                      prefetch=prefetch, optimizer=optimizer, sync_optimizer=sync_optimizer, record=record,
                      layout=layout, park_ssd=park_ssd)  # fmt: skip
    start = 0.0
    for it in range(iterations):
        end, busy, it_bytes, it_pcie = sim.iteration(start, deferred=bool(sim.a_frac and it > 0),
                                                     last=it == iterations - 1)  # fmt: skip
        iteration_s, start = end - start, end
    return SimResult(
        iteration_s=iteration_s, tokens=gpus * micro_batches * sim.tokens_mb, compute_s=sim.compute_total, busy=busy,
        ssd_bytes=it_bytes, pcie_bytes=it_pcie, events=sim.events,
    )  # fmt: skip


def _inputs(t) -> list[tuple]:  # noqa: ANN001
    out = [("x", t.unit, t.mb)] if t.unit > 0 else []
    return out + ([("dy", t.unit, t.mb)] if t.kind == "bwd" else [])


def _outputs(t, U: int) -> list[tuple]:  # noqa: ANN001
    if t.kind == "fwd":
        return [("x", t.unit + 1, t.mb)]
    if t.kind == "last":
        return [("dy", U - 2, t.mb)]
    return [("dy", t.unit - 1, t.mb)] if t.unit > 0 else []


@dataclass(frozen=True)
class LPResult:
    """The LP's choice for one (M, alpha): SSD fractions, per-layer forward/backward seconds, throughput."""

    micro_batches: int
    alpha: float
    placement: Placement
    unit_fwd_s: float
    unit_bwd_s: float
    throughput: float
    feasible: bool


def configuration_search(
    shape: GPTShape,
    *,
    micro_batches: int,
    micro_batch_size: int,
    gpus: int,
    rates: Rates,
    widths: Widths = Widths(),
    alphas: Sequence[float] = tuple(np.round(np.arange(0.0, 0.31, 0.05), 2)),
) -> LPResult:
    """The authors' LP (FlexTrain ``auto_config.py``), best over ``alphas``; variables x = [c, p, o, T_f, T_b]
    (SSD fractions of checkpoints, fp16 parameters, optimizer states; per-layer forward and backward seconds),
    minimising ``T_f + T_b + 0.01 (p + o)`` subject to compute, CPU-Adam, PCIe, SSD and DRAM constraints.
    """
    M, G, L = micro_batches, gpus, shape.layers
    N = block_param_count(shape)
    psi = sum(unit_sizes_of(shape))
    tokens = micro_batch_size * shape.seq
    X = tokens * shape.hidden * widths.x
    t_f = unit_flops_of(shape)[1] * tokens / rates.flops
    t_b = 2 * t_f
    para, opts = widths.w * N, widths.o * N
    ck = G * X * max(M - 4, 0)  # the authors keep the first 4 micro-batches' checkpoints in DRAM
    best = None
    for a in alphas:
        c_obj = [0, 0.01, 0.01, 1, 1]
        A, b = [], []
        R, W = rates.ssd_read, rates.ssd_write
        # SSD forward: [(1-a) P + a O]/R + [ck c + a P + a O]/W <= T_f
        A.append([ck / W, (1 - a) * para / R + a * para / W, a * opts / R + a * opts / W, -1, 0])
        b.append(0)
        # SSD backward: [ck c + P + (1-a) O]/R + [(1-a) P + (1-a) O]/W <= T_b
        A.append([ck / R, para / R + (1 - a) * para / W, (1 - a) * opts / R + (1 - a) * opts / W, 0, -1])
        b.append(0)
        # DRAM: (1-p) psi w + (1-o) psi o + (1-c) L G M X + a psi g <= 0.95 host
        A.append([-L * G * M * X, -psi * widths.w, -psi * widths.o, 0, 0])
        b.append(0.95 * rates.host_memory - psi * widths.w - psi * widths.o - L * G * M * X - a * psi * widths.g)
        lo_f = max(t_f * M, a * N / rates.adam, (2 * X * M + para / G) / rates.pcie)
        lo_b = max((t_f + t_b) * M, (1 - a) * N / rates.adam,
                   (3 * X * M + para / G + widths.g * N / G) / rates.pcie)  # fmt: skip
        bounds = [(0, 1), (0, 1), (0, 1), (lo_f, None), (lo_b, None)]
        res = linprog(c_obj, A_ub=np.array(A), b_ub=np.array(b), bounds=bounds, method="highs")
        if res.status != 0:
            continue
        c, p, o, Tf, Tb = res.x
        thr = G * M * tokens / (L * (Tf + Tb))
        cand = LPResult(M, float(a), Placement(float(c), float(p), float(o)), float(Tf), float(Tb), float(thr), True)
        if best is None or cand.throughput > best.throughput * 1.0000001:
            best = cand
    if best is None:
        return LPResult(M, float("nan"), Placement(1.0, 1.0, 1.0), float("inf"), float("inf"), 0.0, False)
    return best


def with_rates(rates: Rates, **changes: float) -> Rates:
    return replace(rates, **changes)


def horizontal_lp_rows(shape: GPTShape, *, micro_batches: int, micro_batch_size: int, gpus: int,
                       widths: Widths = Widths(), layout: str = "offloaded") -> dict[str, tuple[float, ...]]:  # fmt: skip
    """SSD bytes of :func:`horizontal_search`'s phases per unit SSD fraction: ``{"forward read": (c, p, o, q),
    ...}`` coefficients of the checkpoint, parameter, optimizer and gradient-buffer fractions, per layer and
    micro-batch for ``forward``/``backward``, per iteration for ``optimizer``. The LP's constraints are these
    divided by the SSD's rates; :func:`horizontal_lp_bytes` sums them over an iteration."""
    M, G = micro_batches, gpus
    N = block_param_count(shape)
    psi = sum(unit_sizes_of(shape))
    loaded = sum(unit_sizes_of(shape)[off] for _, off in unit_entries(shape.layers, layout))
    X = micro_batch_size * shape.seq * shape.hidden * widths.x
    w, o, g = widths.w, widths.o, widths.g
    return {
        "forward read": (0.0, w * N, 0.0, 0.0),
        "forward written": (G * X, 0.0, 0.0, 0.0),
        "backward read": (G * X, w * N, 0.0, g * N * (M - 1) / M),  # the buffer is empty at the first micro-batch
        "backward written": (0.0, 0.0, 0.0, g * N),
        "optimizer read": (0.0, 0.0, o * psi, g * loaded),
        "optimizer written": (0.0, w * loaded, o * psi, 0.0),
    }


def horizontal_lp_bytes(shape: GPTShape, placement: Placement, *, micro_batches: int, micro_batch_size: int,
                        gpus: int, widths: Widths = Widths(), layout: str = "offloaded") -> dict[str, float]:  # fmt: skip
    """SSD bytes per iteration the horizontal LP charges at ``placement``, by class (``weights``, ``gradients``,
    ``optimizer``, ``checkpoints``): its per-layer, per-micro-batch rows times ``L M``, plus the optimizer's."""
    rows = horizontal_lp_rows(shape, micro_batches=micro_batches, micro_batch_size=micro_batch_size, gpus=gpus,
                              widths=widths, layout=layout)  # fmt: skip
    frac = (placement.ckpt_ssd, placement.para_ssd, placement.opt_ssd, placement.grad_ssd)
    out = dict.fromkeys(("checkpoints", "weights", "optimizer", "gradients"), 0.0)
    for key, coef in rows.items():
        times = 1 if key.startswith("optimizer") else shape.layers * micro_batches
        for cls, c, f in zip(out, coef, frac, strict=True):
            out[cls] += times * c * f
    return out


def horizontal_search(
    shape: GPTShape,
    *,
    micro_batches: int,
    micro_batch_size: int,
    gpus: int,
    rates: Rates,
    widths: Widths = Widths(),
    gradients_on_ssd: bool = True,
    layout: str = "offloaded",
) -> LPResult:
    """The same LP solved for horizontal (ZeRO-Infinity's order), so the baseline is priced at its own best
    placement. SSD read and write are separate resources here, as in :func:`simulate` (the authors' LP for the
    snake adds them). Variables x = [c, p, o, q, T_f, T_b, T_o]: SSD fractions of checkpoints, fp16 parameters, optimizer
    states and the fp32 gradient-accumulation buffer; per-layer per-micro-batch forward and backward seconds; the
    optimizer phase after the last backward. Minimises the iteration ``L M (T_f + T_b) + T_o`` (+ 0.01 (p + o + q),
    the authors' tie-break) subject to:

    - forward of one layer, one micro-batch: compute ``t_f``; PCIe ``(w N / G + X)``; SSD read ``p w N / R``; SSD
      write ``c G X / W``;
    - backward: compute ``3 t_f`` (recompute + backward); PCIe ``(2 w N / G + X)`` (weights in, checkpoint in,
      fp16 partial gradient out); SSD read ``(p w N + c G X + (M-1)/M q g N) / R`` (the buffer is empty at
      the first micro-batch, so it is read M-1 times, as :func:`simulate` and the engine do); SSD write
      ``q g N / W``;
    - optimizer: CPU ``psi / adam``; SSD read ``(o O psi + q g B) / R``; SSD write ``(o O psi + p w B) / W``,
      ``B`` the loaded elements of ``layout`` (``psi`` in ``offloaded``, the blocks ``L N`` in ``flextrain``,
      whose embedding and head stay on the device);
    - DRAM: ``(1-p) psi w + (1-o) psi O + (1-c) L G M X + (1-q) psi g <= 0.95 host`` (horizontal keeps every
      layer's checkpoint of every micro-batch, and accumulates the fp32 gradient over the whole backward).

    Returns an :class:`LPResult` with ``alpha = 0``, ``unit_fwd_s``/``unit_bwd_s`` per layer for all M
    micro-batches (``M T_f``, ``M T_b``), the placement (``grad_ssd`` = q) and the LP's throughput (tokens/s).
    ``gradients_on_ssd=False`` keeps the whole gradient buffer in DRAM (q = 0), as DeepSpeed does.
    """
    M, G, L = micro_batches, gpus, shape.layers
    N, psi = block_param_count(shape), sum(unit_sizes_of(shape))
    tokens = micro_batch_size * shape.seq
    X = tokens * shape.hidden * widths.x
    t_f = unit_flops_of(shape)[1] * tokens / rates.flops
    R, W = rates.ssd_read, rates.ssd_write
    w, o, g = widths.w, widths.o, widths.g
    rows = horizontal_lp_rows(shape, micro_batches=M, micro_batch_size=micro_batch_size, gpus=G, widths=widths,
                              layout=layout)  # fmt: skip
    A = [
        [*(v / (R if "read" in k else W) for v in rows[k]), *t]
        for k, t in (
            ("forward read", (-1, 0, 0)),
            ("forward written", (-1, 0, 0)),
            ("backward read", (0, -1, 0)),
            ("backward written", (0, -1, 0)),
            ("optimizer read", (0, 0, -1)),
            ("optimizer written", (0, 0, -1)),
        )
    ]
    A.append([-L * G * M * X, -psi * w, -psi * o, -psi * g, 0, 0, 0])  # DRAM
    b = [0] * 6 + [0.95 * rates.host_memory - psi * (w + o + g) - L * G * M * X]
    bounds = [(0, 1)] * 3 + [(0, 1 if gradients_on_ssd else 0)] + [(max(t_f, (w * N / G + X) / rates.pcie), None),
                             (max(3 * t_f, (2 * w * N / G + X) / rates.pcie), None), (psi / rates.adam, None)]  # fmt: skip
    cost = [0, 0.01, 0.01, 0.01, L * M, L * M, 1]
    res = linprog(cost, A_ub=np.array(A), b_ub=np.array(b), bounds=bounds, method="highs")
    if res.status != 0:
        return LPResult(M, 0.0, Placement(1.0, 1.0, 1.0, 1.0), float("inf"), float("inf"), 0.0, False)
    c, p, o_frac, q, Tf, Tb, To = (float(v) for v in res.x)
    thr = G * M * tokens / (L * M * (Tf + Tb) + To)
    return LPResult(M, 0.0, Placement(c, p, o_frac, q), M * Tf, M * Tb, thr, True)
