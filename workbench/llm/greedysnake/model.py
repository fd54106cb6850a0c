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

Optimizer: horizontal (ZeRO-Infinity) steps every unit after the last backward; vertical steps unit u on the
CPU as soon as its gradient is complete (overlapping the backward of the units below); vertical-overlap
additionally defers a fraction alpha of each unit's step to the next iteration, ahead of that unit's forward.

:func:`configuration_search` is the authors' LP (FlexTrain ``auto_config.py``, re-derived, solved with
``scipy.optimize.linprog``/HiGHS): the fraction of checkpoints, fp16 parameters and optimizer states placed on
SSD (the rest in DRAM) and per-layer forward/backward times, for each alpha on a grid.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from scipy.optimize import linprog

from workbench.llm.gpt import GPTShape, block_param_count
from workbench.llm.greedysnake.schedule import tasks_for, tensor_consumers

__all__ = ["Rates", "Placement", "Widths", "SimResult", "simulate", "LPResult", "configuration_search",
           "unit_sizes_of", "unit_flops_of", "activation_bytes_per_layer"]  # fmt: skip


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
    """Fraction of each tensor class on SSD (the rest in host DRAM)."""

    ckpt_ssd: float = 0.0
    para_ssd: float = 1.0
    opt_ssd: float = 1.0


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


def activation_bytes_per_layer(shape: GPTShape, micro_batch: int, width: int = 2) -> float:
    """Activation memory of one block's forward for one micro-batch (Korthikanti et al. 2022, arXiv 2205.05198
    v1, Eq. 2 for 16-bit: ``s b d (34 + 5 a s / d)`` bytes), scaled to ``width`` bytes per value."""
    s, d, a = shape.seq, shape.hidden, shape.heads
    return s * micro_batch * d * (34 + 5 * a * s / d) * width / 2


class _Res:
    def __init__(self) -> None:
        self.free, self.busy = 0.0, 0.0

    def take(self, start: float, dur: float) -> float:
        s = max(start, self.free)
        self.free = s + dur
        self.busy += dur
        return s


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
) -> SimResult:
    """Simulate ``iterations`` iterations; the result is the last one (steady state).

    Parameters: ``micro_batches`` and ``micro_batch_size`` are per GPU; the node's ``gpus`` run in lockstep
    (data parallel, ZeRO-3 partitioned state). ``optimizer=False`` prices the optimizer at zero (to measure
    the exposed optimizer time); ``sync_optimizer`` makes the GPU wait for every optimizer step (the real
    engine's plain vertical schedule on one CPU).
    """
    sizes, uflops = unit_sizes_of(shape), unit_flops_of(shape)
    U, M, G = len(sizes), micro_batches, gpus
    tokens_mb = micro_batch_size * shape.seq
    X = tokens_mb * shape.hidden * widths.x  # one inter-layer tensor of one rank
    tasks = tasks_for(schedule, U, M)
    cons = tensor_consumers(tasks)
    a_frac = alpha if schedule == "vertical-overlap" else 0.0
    gpu, h2d, d2h, sr, sw, cpu = (_Res() for _ in range(6))
    ssd_bytes = {"weights": 0.0, "gradients": 0.0, "optimizer": 0.0, "checkpoints": 0.0}
    pcie_total = [0.0]
    events: list[tuple[str, float, float, str]] = []

    def xfer(ready: float, link: _Res, pcie_bytes: float, ssd: _Res | None, ssd_b: float, cls: str) -> float:
        d_p, d_s = pcie_bytes / rates.pcie, (ssd_b / (rates.ssd_read if ssd is sr else rates.ssd_write)) if ssd else 0
        start = max(ready, link.free, ssd.free if ssd is not None and ssd_b else 0.0)
        link.take(start, d_p)
        if ssd is not None and ssd_b:
            ssd.take(start, d_s)
            ssd_bytes[cls] += ssd_b
        pcie_total[0] += pcie_bytes
        return start + max(d_p, d_s)

    def opt_job(ready: float, n: float) -> float:
        if not optimizer:
            return ready
        rb, wb = (
            widths.o * n * placement.opt_ssd,
            (widths.o * n * placement.opt_ssd + widths.w * n * placement.para_ssd),
        )
        r0 = sr.take(ready, rb / rates.ssd_read)
        r1 = r0 + rb / rates.ssd_read
        c0 = cpu.take(r0, n / rates.adam)
        c1 = max(c0 + n / rates.adam, r1)
        w0 = sw.take(c0, wb / rates.ssd_write)
        ssd_bytes["optimizer"] += rb + widths.o * n * placement.opt_ssd
        ssd_bytes["weights"] += widths.w * n * placement.para_ssd
        return max(w0 + wb / rates.ssd_write, c1)

    def load(ready: float, u: int) -> float:
        return xfer(ready, h2d, widths.w * sizes[u] / G, sr, widths.w * sizes[u] * placement.para_ssd, "weights")

    # runs of consecutive tasks on one unit
    runs: list[tuple[int, int, int]] = []
    for i, t in enumerate(tasks):
        if runs and runs[-1][0] == t.unit:
            runs[-1] = (t.unit, runs[-1][1], i)
        else:
            runs.append((t.unit, i, i))
    run_of = {i: r for r, (_, a, b) in enumerate(runs) for i in range(a, b + 1)}
    last_bwd = {t.unit: i for i, t in enumerate(tasks) if t.kind != "fwd"}

    start_it, it_start_times = 0.0, []
    compute_total = 0.0
    for it in range(iterations):
        it_start_times.append(start_it)
        busy0 = {
            k: r.busy
            for k, r in zip(
                ("gpu", "h2d", "d2h", "ssd_read", "ssd_write", "cpu"), (gpu, h2d, d2h, sr, sw, cpu), strict=True
            )
        }
        bytes0 = dict(ssd_bytes), pcie_total[0]
        gpu.free = max(gpu.free, start_it)
        # deferred parts of the previous iteration (their gradients wait in DRAM: FlexTrain borrows checkpoint and
        # parameter buffers): unit u's part is issued in M chunks from unit u-2's forward on, and unit u's
        # forward waits for it
        deferred = bool(a_frac and it > 0)
        loads: dict[int, float] = {}
        compute_start: dict[int, float] = {}
        prev_end = start_it
        opt_done: list[float] = []
        ready_a = {u: start_it for u in range(U)}

        # optimizer steps are split into M chunks, one issued per task (FlexTrain plans a unit's step per
        # micro-batch), so they share the SSD and the CPU with the checkpoint traffic instead of blocking it
        queue_a: list[tuple[int, float]] = []  # (unit, elements) of deferred chunks
        queue_b: list[tuple[int, float, float]] = []  # (unit, elements, gradient ready) of backward chunks

        def issue_deferred(u: int, at: float) -> None:
            if deferred and u < U and u not in issued:
                issued.add(u)
                queue_a.extend([(u, a_frac * sizes[u] / M)] * M)

        def drain_a(at: float, until_unit: int | None = None) -> None:
            """Issue one deferred chunk at ``at``, or every chunk of units <= until_unit."""
            while queue_a and (until_unit is None or queue_a[0][0] <= until_unit):
                u, n = queue_a.pop(0)
                ready_a[u] = opt_job(at, n)
                if until_unit is None:
                    return

        def drain_b(at: float, everything: bool = False) -> None:
            while queue_b:
                u, n, ready = queue_b.pop(0)
                opt_done.append(opt_job(max(at, ready), n))
                if not everything:
                    return

        issued: set[int] = set()
        issue_deferred(0, start_it)
        issue_deferred(1, start_it)
        stored: dict[tuple, float] = {}
        produced: dict[tuple, int] = {}
        for i, t in enumerate(tasks):
            r = run_of[i]
            if r not in loads:
                issue_deferred(t.unit, prev_end)
                if t.kind != "bwd":
                    drain_a(prev_end, until_unit=t.unit)  # unit u's forward waits only for its deferred part
                loads[r] = load(max(prev_end, ready_a[t.unit] if t.kind != "bwd" else 0.0), t.unit)
            # inputs that come back from the checkpoint tier
            ready_in = loads[r]
            for key in _inputs(t):
                if key in stored and produced[key] != i - 1:  # not produced by the previous task: read it back
                    req = compute_start.get(i - 1, start_it) if prefetch else prev_end
                    done = xfer(max(req, stored[key]), h2d, X, sr, X * G * placement.ckpt_ssd, "checkpoints")
                    ready_in = max(ready_in, done)
            if t.kind == "fwd":
                dur = uflops[t.unit] * tokens_mb / rates.flops
            else:
                dur = 3 * uflops[t.unit] * tokens_mb / rates.flops
            s = gpu.take(max(ready_in, prev_end), dur)
            compute_start[i] = s
            if t.kind == "fwd" and runs[r][1] == i:
                issue_deferred(t.unit + 2, s)  # two units ahead: a whole unit's forward of slack
            drain_a(s)
            drain_b(s)
            compute_total += dur if it == iterations - 1 else 0.0
            prev_end = s + dur
            if record and it == iterations - 1:
                events.append(("gpu", s, prev_end, f"{t.kind} u{t.unit} m{t.mb}"))
            if prefetch and runs[r][1] == i and r + 1 < len(runs):  # prefetch the next run's weights
                nu = runs[r + 1][0]
                nxt_fwd = tasks[runs[r + 1][1]].kind != "bwd"
                if nxt_fwd:
                    issue_deferred(nu, s)
                    drain_a(s, until_unit=nu)
                loads[r + 1] = load(max(s, ready_a[nu] if nxt_fwd else 0.0), nu)
            for key in _outputs(t, U):
                later = [j for j in cons.get(key, []) if j > i]
                if any(j > i + 1 for j in later):
                    stored[key] = xfer(prev_end, d2h, X, sw, X * G * placement.ckpt_ssd, "checkpoints")
                    produced[key] = i
            # gradients
            if t.kind != "fwd":
                n = sizes[t.unit]
                if schedule == "horizontal":  # fp16 partial gradients leave after every micro-batch
                    g_done = xfer(prev_end, d2h, widths.w * n / G, None, 0.0, "gradients")
                    if i == last_bwd[t.unit]:
                        opt_done.append(g_done)
                elif i == last_bwd[t.unit]:
                    g_done = xfer(prev_end, d2h, widths.g * n / G, None, 0.0, "gradients")
                    if sync_optimizer:
                        done = opt_job(g_done, (1 - a_frac) * n)
                        opt_done.append(done)
                        gpu.free = max(gpu.free, done)
                        prev_end = max(prev_end, done)
                    else:
                        queue_b.extend([(t.unit, (1 - a_frac) * n / M, g_done)] * M)
        drain_b(prev_end, everything=True)
        if schedule == "horizontal":
            grads_in = max(opt_done) if opt_done else prev_end
            opt_done = [opt_job(max(grads_in, prev_end), sizes[u]) for u in range(U)]
        end = max([prev_end, *opt_done, *ready_a.values()])
        busy = {k: r.busy - busy0[k] for k, r in zip(busy0, (gpu, h2d, d2h, sr, sw, cpu), strict=True)}
        it_bytes = {k: ssd_bytes[k] - bytes0[0][k] for k in ssd_bytes}
        it_pcie = pcie_total[0] - bytes0[1]
        iteration_s = end - start_it
        start_it = end
    return SimResult(
        iteration_s=iteration_s, tokens=G * M * tokens_mb, compute_s=compute_total, busy=busy,
        ssd_bytes=it_bytes, pcie_bytes=it_pcie, events=events,
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
