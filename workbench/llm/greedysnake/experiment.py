"""What both the runner and the study call: the real check (offloaded training against in-memory training), the
paper-scale MODEL points and the saturation sweep the claims read. Every memo of this technique lives here
(:func:`clear_caches` empties them).

Guards of the check: a ``workdir`` that is not a usable folder, and a configuration whose estimated host memory
exceeds what this machine has available, are refused before anything runs (one line naming the parameter);
SIGTERM during a run removes the run's temporary folder as Ctrl-C does.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import torch

from workbench.claims import SATURATION_RTOL
from workbench.data import cache_dir
from workbench.llm.gpt import PAPER_SHAPES, GPTConfig, GPTShape, block_param_count
from workbench.llm.greedysnake.config import GreedySnakeConfig
from workbench.llm.greedysnake.engine import OffloadedTrainer, compute_dtype_of, min_budget_bytes, unit_sizes
from workbench.llm.greedysnake.model import (
    Placement,
    Rates,
    Widths,
    activation_bytes_per_layer,
    configuration_search,
    horizontal_search,
    simulate,
    unit_flops_for,
    unit_sizes_of,
)
from workbench.llm.greedysnake.reference import train_in_memory
from workbench.llm.greedysnake.schedule import SCHEDULES, resident_entries, tasks_for
from workbench.llm.greedysnake.volume import run_bytes

__all__ = ["check_run", "host_memory_estimate", "available_host_memory", "check_workdir", "compute_device",
           "PAPER_WIDTHS", "rates_of", "check_fits", "schedule_point", "model_point", "horizontal_host_bytes",
           "saturated", "has_saturated", "SATURATION_GAIN", "CHECK_OVERHEAD_BYTES", "clear_caches",
           "horizontal_candidates"]  # fmt: skip

PAPER_WIDTHS = Widths()
#: the paper's system is FlexTrain's form: embedding and head resident on the GPU, the last block fused with the
#: head and loss, fp16 compute copies over fp32 masters (:data:`PAPER_WIDTHS`); ``offloaded`` stays a panel option
PAPER_LAYOUT = "flextrain"

#: the sweep over M stops once doubling M raises horizontal's throughput by no more than this (the claim
#: layer's saturation tolerance: the claim layer then checks that raising the sweep's cap changes nothing)
SATURATION_GAIN = SATURATION_RTOL


def compute_device() -> str:
    """Where the resident units compute: the GPU when one is present (its memory is what the budget governs),
    else the CPU. Untested on CUDA here: no GPU was available where this was written."""
    return "cuda" if torch.cuda.is_available() else "cpu"


# ---- guards of the check --------------------------------------------------------------------------------------
def check_workdir(workdir: str) -> Path:
    """The run folder ``workdir`` (created when absent); ValueError naming workdir when it is a file, or cannot
    be created or written."""
    root = Path(workdir)
    if root.exists() and not root.is_dir():
        raise ValueError(f"workdir={workdir!r} is not a folder: valid values are a folder (or empty for a fresh one)")
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(
            f"workdir={workdir!r} cannot be created ({exc.strerror or exc}): valid values are a writable folder"
        ) from None
    if not os.access(root, os.W_OK | os.X_OK):
        raise ValueError(f"workdir={workdir!r} is not writable: valid values are a writable folder")
    return root


#: bytes the interpreter adds on a check's first run (lazily imported modules, allocator pools; measured ~97 MB
#: for a 1-layer, 64-wide GPT on torch 2 / CPU)
CHECK_OVERHEAD_BYTES = 100_000_000


def host_memory_estimate(cfg: GPTConfig, *, micro_batches: int, micro_batch_size: int,
                         compute_dtype: str = "same", layout: str = "offloaded") -> int:  # fmt: skip
    """Bytes of host memory the check adds at its peak (a model of this module's own allocations; tested within
    2x of the measured peak RSS).

    For P parameters of e bytes: the in-memory reference holds weights, gradients and Adam's two states (4 P e);
    its result and flat copy stay for the comparison (2 P e); each offloaded run builds the model once more to
    write its initial state, and the comparison makes two temporaries (2 P e): 8 P e, plus a few copies of the
    largest unit (weights, gradient, master, m, v, their flat forms), one micro-batch's activations through the
    whole model, the inter-layer tensors kept in host memory (U M x) and :data:`CHECK_OVERHEAD_BYTES`. Mixed
    precision adds the reference's compute copy, its gradient and their master-dtype cast (3 P e at most). The
    ``flextrain`` layout adds the resident embedding's and head's compute copy and gradient (2 e each).
    """
    e = cfg.torch_dtype.itemsize
    mixed = 3 * sum(unit_sizes(cfg)) * e if compute_dtype != "same" else 0
    sizes = unit_sizes(cfg)
    acts = cfg.layers * activation_bytes_per_layer(cfg.shape, micro_batch_size, width=e)
    acts += 4 * micro_batch_size * cfg.seq * cfg.vocab * e  # logits, softmax and their gradients
    inter = micro_batch_size * cfg.seq * cfg.hidden * e
    resident = 2 * sum(sizes[i] for i in resident_entries(cfg.layers, layout)) * e
    return int(8 * sum(sizes) * e + 8 * max(sizes) * e + acts + len(sizes) * micro_batches * inter + mixed
               + resident + CHECK_OVERHEAD_BYTES)  # fmt: skip


def available_host_memory() -> int:
    """Bytes of host memory available to a new allocation now (``MemAvailable``)."""
    import psutil

    return int(psutil.virtual_memory().available)


def _check_host_memory(config: GreedySnakeConfig) -> None:
    need = host_memory_estimate(config.gpt(), micro_batches=config.micro_batches,
                                micro_batch_size=config.micro_batch_size,
                                compute_dtype=config.compute_dtype, layout=config.layout)  # fmt: skip
    have = available_host_memory()
    if need > have:
        raise ValueError(
            f"layers={config.layers}, hidden={config.hidden}, micro_batches={config.micro_batches}: the check needs "
            f"about {need / 1e9:.3g} GB of host memory, more than the {have / 1e9:.3g} GB available: valid settings "
            "are smaller (fewer layers, a smaller hidden size or fewer micro-batches)"
        )


# ---- check mode: the real thing --------------------------------------------------------------------------------
def _by_class(counts: dict[tuple[str, str, str], int]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for (tier, cls, d), v in counts.items():
        out.setdefault(f"{tier}.{cls}", {"read": 0, "written": 0})[d] += int(v)
    return out


def _cache() -> Path:
    d = cache_dir("greedysnake")
    d.mkdir(parents=True, exist_ok=True)
    return d


def _check_budget(config: GreedySnakeConfig) -> tuple[int, int]:
    budget = int(config.memory_budget_mb * 1e6)
    need = min_budget_bytes(config.gpt(), config.micro_batch_size, layout=config.layout,
                            compute_dtype=config.compute_dtype)  # fmt: skip
    if budget < need:
        raise ValueError(
            f"memory_budget_mb={config.memory_budget_mb:g} is below one unit and one micro-batch: valid range is "
            f">= {need / 1e6:.6g} MB for this model and micro-batch size"
        )
    return budget, need


def _one_schedule(config: GreedySnakeConfig, name: str, root: Path, budget: int,
                  ref_flat: np.ndarray) -> tuple[dict[str, Any], Rates]:  # fmt: skip
    """Train with schedule ``name`` from files under ``root``; its row of the check and its measured rates."""
    cfg = config.gpt()
    e = cfg.torch_dtype.itemsize
    t = OffloadedTrainer(cfg, root / name, schedule=name, micro_batches=config.micro_batches,
                         micro_batch_size=config.micro_batch_size, alpha=config.alpha,
                         checkpoints=config.checkpoints, memory_budget=budget, lr=config.lr,
                         data_seed=config.seed, sync=config.sync, device=compute_device(), layout=config.layout,
                         compute_dtype=config.compute_dtype, loss_scale=config.loss_scale)  # fmt: skip
    try:
        t.train(config.steps)
        got = np.concatenate([p.numpy() for p in t.parameters()])
        counted = {k: v - t.init_counts[k] for k, v in t.counter.snapshot().items()}
        model = run_bytes(unit_sizes(cfg), steps=config.steps, micro_batches=config.micro_batches, schedule=name,
                          inter_bytes=t.inter_bytes, w=t.wi, g=e, o=3 * e, deferred=t.split,
                          checkpoints=config.checkpoints, layout=config.layout)  # fmt: skip
        model = {k: model.get(k, 0) for k in counted}
        diff = np.abs(got - ref_flat)
        row = {
            "name": name,
            "max_abs_param_diff": float(diff.max()),
            "max_rel_param_diff": float(diff.max() / np.abs(ref_flat).max()),
            "bit_identical": bool(np.array_equal(got, ref_flat)),
            "bytes_read": sum(v for (_, _, d), v in counted.items() if d == "read"),
            "bytes_written": sum(v for (_, _, d), v in counted.items() if d == "written"),
            "model_bytes_read": sum(v for (_, _, d), v in model.items() if d == "read"),
            "model_bytes_written": sum(v for (_, _, d), v in model.items() if d == "written"),
            "by_class": _by_class(counted),
            "model_by_class": _by_class(model),
            "seconds": t.stats.wall_s,
            "modelled_seconds": 0.0,  # filled by _predict_times from the other schedules' rates
            "device_peak_bytes": t.memory.peak,
        }
        return row, _measured_rates(t, cfg, name, config)
    finally:
        t.close()


def _predict_times(config: GreedySnakeConfig, schedules: list[dict[str, Any]], rates_all: list[Rates]) -> None:
    """Each schedule's time predicted by the simulator at the rates measured on the *other* schedules' runs
    (harmonic mean: a rate is bytes or FLOPs per second), so the prediction is not its own measurement."""
    cfg = config.gpt()
    e, w = cfg.torch_dtype.itemsize, compute_dtype_of(cfg, config.compute_dtype).itemsize
    for i, s in enumerate(schedules):
        others = [r for j, r in enumerate(rates_all) if j != i] or rates_all
        rates = Rates(**{k: len(others) / sum(1.0 / getattr(r, k) for r in others)
                         for k in ("flops", "pcie", "ssd_read", "ssd_write", "adam")})  # fmt: skip
        sim = simulate(
            cfg.shape, schedule=s["name"], micro_batches=config.micro_batches,
            micro_batch_size=config.micro_batch_size, gpus=1, rates=rates,
            placement=Placement(ckpt_ssd=1.0 if config.checkpoints == "ssd" else 0.0),
            widths=Widths(w=w, g=e, o=3 * e, x=w), alpha=config.alpha if s["name"] == "vertical-overlap" else 0.0,
            prefetch=False, sync_optimizer=s["name"] == "vertical", iterations=2, layout=config.layout, park_ssd=True,
        )  # fmt: skip
        s["modelled_seconds"] = sim.iteration_s * config.steps


def check_run(config: GreedySnakeConfig) -> dict[str, Any]:
    """Train ``config``'s small GPT with every schedule from files, compare with in-memory training.

    Returns a dict (the runner's JSON pieces). Raises ValueError naming the parameter when the budget is below
    one unit and one micro-batch (memory_budget_mb), when workdir is not a usable folder, or when the estimated
    host memory exceeds what is available.
    """
    root = check_workdir(config.workdir) if config.workdir else None
    _check_host_memory(config)
    budget, need = _check_budget(config)
    cfg = config.gpt()
    schedules, rates_all = [], []
    cd = compute_dtype_of(cfg, config.compute_dtype)
    ref = train_in_memory(cfg, micro_batches=config.micro_batches, micro_batch_size=config.micro_batch_size,
                          steps=config.steps, lr=config.lr, data_seed=config.seed, compute_dtype=cd,
                          loss_scale=config.loss_scale if cd == torch.float16 else 1.0)  # fmt: skip
    ref_flat = np.concatenate([t.numpy() for t in ref])
    del ref
    temp = root is None
    root = Path(tempfile.mkdtemp(prefix="run-", dir=_cache())) if temp else root
    try:
        for name in SCHEDULES:
            row, rates = _one_schedule(config, name, root, budget, ref_flat)
            schedules.append(row)
            rates_all.append(rates)
    finally:
        if temp:
            shutil.rmtree(root, ignore_errors=True)
    _predict_times(config, schedules, rates_all)
    mean = {k: float(np.mean([r.__dict__[k] for r in rates_all])) for k in ("flops", "ssd_read", "ssd_write", "adam")}
    reference = "in-memory GPT, gradient accumulation over micro-batches 0..M-1, torch.optim.Adam"
    if cd != cfg.torch_dtype:
        reference += f" on {cfg.dtype} masters, computing on a {config.compute_dtype} copy (the engine's casts)"
    return {"schedules": schedules, "budget_bytes": budget, "min_budget_bytes": need, "rates": mean,
            "reference": reference}  # fmt: skip


def _measured_rates(t: OffloadedTrainer, cfg: Any, schedule: str, config: GreedySnakeConfig) -> Rates:
    """This machine's rates from one real run: compute FLOP/s, SSD read/write B/s, Adam elements/s."""
    uflops = unit_flops_for(cfg.shape, config.layout)
    tokens = config.micro_batch_size * cfg.seq
    flops = sum(uflops[k.unit] * tokens * (1 if k.kind == "fwd" else 3) for k in tasks_for(schedule, t.U, t.M))
    flops *= t.stats.iterations
    counts = t.counter.snapshot()
    rd = sum(v - t.init_counts[k] for k, v in counts.items() if k[0] == "ssd" and k[2] == "read")
    wr = sum(v - t.init_counts[k] for k, v in counts.items() if k[0] == "ssd" and k[2] == "written")
    elems = sum(t.sizes) * config.steps
    return Rates(
        flops=max(flops, 1.0) / max(t.stats.compute_s, 1e-9),
        pcie=1e18,  # no PCIe on a CPU run
        ssd_read=max(rd, 1) / max(t.counter.seconds["read"], 1e-9),
        ssd_write=max(wr, 1) / max(t.counter.seconds["written"], 1e-9),
        adam=elems / max(t.stats.optimizer_s, 1e-9),
    )


# ---- model mode: paper scale ------------------------------------------------------------------------------------
def rates_of(config: GreedySnakeConfig) -> Rates:
    """The MODEL's rates from ``config``'s cluster and CPU-Adam rate."""
    c = config.cluster
    return Rates(flops=c.gpu_tflops * 1e12, pcie=c.pcie_bw_gbps * 1e9, ssd_read=c.ssd_read_bw_gbps * 1e9,
                 ssd_write=c.ssd_write_bw_gbps * 1e9, adam=config.adam_gelems * 1e9,
                 gpu_memory=c.gpu_memory_gb * 1e9, host_memory=c.host_memory_gb * 1e9)  # fmt: skip


def check_fits(
    shape: GPTShape,
    micro_batch: int,
    rates: Rates,
    widths: Widths = PAPER_WIDTHS,
    *,
    memory_name: str = "cluster.gpu_memory_gb",
    batch_name: str = "model_micro_batch",
) -> float:
    """Raise ValueError naming the parameter when one layer (double-buffered weights + gradient) or one
    micro-batch's activations through it do not fit the GPU; returns the device bytes one layer and one
    micro-batch need."""
    n = block_param_count(shape)
    layer = 2 * widths.w * n + widths.g * n
    if layer > rates.gpu_memory:
        raise ValueError(
            f"{memory_name}={rates.gpu_memory / 1e9:g} is smaller than one layer (weights twice and its "
            f"gradient: {layer / 1e9:.3g} GB): valid range is >= {layer / 1e9:.3g} GB"
        )
    act = activation_bytes_per_layer(shape, micro_batch) + 3 * micro_batch * shape.seq * shape.hidden * widths.x
    if layer + act > rates.gpu_memory:
        raise ValueError(
            f"{batch_name}={micro_batch} does not fit the GPU next to one layer ({(layer + act) / 1e9:.3g} GB "
            f"of {rates.gpu_memory / 1e9:g} GB): valid range is a smaller micro-batch"
        )
    return layer + act


def horizontal_host_bytes(shape: GPTShape, placement: Placement, *, micro_batches: int, micro_batch_size: int,
                          gpus: int, widths: Widths = PAPER_WIDTHS) -> float:  # fmt: skip
    """Host DRAM horizontal needs at ``placement``: the DRAM shares of the fp16 parameters, the optimizer states,
    every layer's checkpoint of every micro-batch, and the fp32 gradient it accumulates over the backward."""
    psi = sum(unit_sizes_of(shape))
    X = micro_batch_size * shape.seq * shape.hidden * widths.x
    return ((1 - placement.para_ssd) * psi * widths.w + (1 - placement.opt_ssd) * psi * widths.o
            + (1 - placement.ckpt_ssd) * shape.layers * gpus * micro_batches * X
            + (1 - placement.grad_ssd) * psi * widths.g)  # fmt: skip


def horizontal_candidates(shape: GPTShape, M: int, mbs: int, gpus: int, rates: Rates, snake: Placement,
                          layout: str = PAPER_LAYOUT) -> list[tuple[str, Placement]]:  # fmt: skip
    """Placements horizontal may run at: its own LP (gradient buffer free to spill to SSD, and kept in DRAM as
    DeepSpeed does), and the snake's placement when horizontal's DRAM holds it."""
    out = []
    for label, on_ssd in (("horizontal LP", True), ("horizontal LP, gradients in DRAM", False)):
        lp = horizontal_search(shape, micro_batches=M, micro_batch_size=mbs, gpus=gpus, rates=rates,
                               gradients_on_ssd=on_ssd, layout=layout)  # fmt: skip
        if lp.feasible:
            out.append((label, lp.placement))
    need = horizontal_host_bytes(shape, snake, micro_batches=M, micro_batch_size=mbs, gpus=gpus)
    if need <= 0.95 * rates.host_memory:
        out.append(("snake's LP", snake))
    return list({p: (label, p) for label, p in reversed(out)}.values())


@functools.lru_cache(maxsize=1024)
def _simulated(model: str, schedule: str, gpus: int, M: int, mbs: int, alpha: float, rates: Rates,
               placement: Placement, optimizer: bool, layout: str = PAPER_LAYOUT) -> tuple[float, float, float]:  # fmt: skip
    """(throughput tokens/s, iteration seconds, SSD bytes per iteration) of one DES point (memoised)."""
    sim = simulate(PAPER_SHAPES[model], schedule=schedule, micro_batches=M, micro_batch_size=mbs, gpus=gpus,
                   rates=rates, placement=placement, alpha=alpha, optimizer=optimizer, iterations=2,
                   layout=layout)  # fmt: skip
    return sim.throughput, sim.iteration_s, float(sum(sim.ssd_bytes.values()))


@functools.lru_cache(maxsize=512)
def _placements(model: str, gpus: int, M: int, mbs: int, rates: Rates,
                layout: str = PAPER_LAYOUT) -> tuple[Any, tuple, tuple[str, Placement]]:  # fmt: skip
    """The snake's LP, horizontal's candidate placements, and horizontal's best of them by the DES."""
    shape = PAPER_SHAPES[model]
    check_fits(shape, mbs, rates)
    lp = configuration_search(shape, micro_batches=M, micro_batch_size=mbs, gpus=gpus, rates=rates)
    cands = tuple(horizontal_candidates(shape, M, mbs, gpus, rates, lp.placement, layout))
    best = max(cands, key=lambda c: _simulated(model, "horizontal", gpus, M, mbs, 0.0, rates, c[1], True, layout)[0])
    return lp, cands, best


def schedule_point(model: str, gpus: int, M: int, mbs: int, alpha: float, rates: Rates, *,
                   exposed: bool = True, layout: str = PAPER_LAYOUT) -> dict[str, Any]:  # fmt: skip
    """The MODEL at one setting: each schedule's throughput at its own best placement (the snake at the
    authors' LP's, horizontal at the best by the DES of its candidates), with the exposed optimizer seconds
    (``exposed``: one more DES run per schedule with a free optimizer) and both placements."""
    lp, _, (h_label, h_place) = _placements(model, gpus, M, mbs, rates, layout)
    out = []
    for name in SCHEDULES:
        a = alpha if name == "vertical-overlap" else 0.0
        place = h_place if name == "horizontal" else lp.placement
        thr, it_s, ssd = _simulated(model, name, gpus, M, mbs, a, rates, place, True, layout)
        row = {"name": name, "throughput": thr, "iteration_seconds": it_s, "ssd_bytes_per_iteration": ssd}
        if exposed:
            free = _simulated(model, name, gpus, M, mbs, a, rates, place, False, layout)[1]
            row["exposed_optimizer_seconds"] = max(it_s - free, 0.0)
        out.append(row)
    for s in out:
        s["speedup_vs_horizontal"] = s["throughput"] / out[0]["throughput"]
    lp_d = {"micro_batches": M, "alpha": lp.alpha, "ckpt_ssd": lp.placement.ckpt_ssd,
            "para_ssd": lp.placement.para_ssd, "opt_ssd": lp.placement.opt_ssd, "unit_fwd_s": lp.unit_fwd_s,
            "unit_bwd_s": lp.unit_bwd_s, "lp_throughput": lp.throughput, "feasible": lp.feasible,
            "horizontal_placement": h_label, "horizontal_ckpt_ssd": h_place.ckpt_ssd,
            "horizontal_para_ssd": h_place.para_ssd, "horizontal_opt_ssd": h_place.opt_ssd,
            "horizontal_grad_ssd": h_place.grad_ssd}  # fmt: skip
    return {"schedules": out, "lp": lp_d}


def model_point(config: GreedySnakeConfig) -> dict[str, Any]:
    """The MODEL at ``config``'s paper-scale setting (memoised): three schedules, the LP's choice."""
    M = config.global_batch // (config.gpus * config.model_micro_batch)
    got = schedule_point(config.model, config.gpus, M, config.model_micro_batch, config.alpha, rates_of(config),
                         layout=config.layout)  # fmt: skip
    lp = dict(got["lp"], model=config.model, gpus=config.gpus, global_batch=config.global_batch)
    return {"schedules": [dict(s) for s in got["schedules"]], "lp": lp}


# ---- saturated throughput (what the claims read) ----------------------------------------------------------------
def has_saturated(throughputs: list[float]) -> bool:
    """Whether the last doubling of M raised the throughput (tokens/s, one per M = 1, 2, 4, ...) by no more than
    :data:`SATURATION_GAIN` (a fall counts as saturated)."""
    return len(throughputs) >= 2 and throughputs[-1] <= throughputs[-2] * (1 + SATURATION_GAIN)


@functools.lru_cache(maxsize=32)
def saturated(model: str, gpus: int, mbs: int = 4, alpha: float = 0.25, m_max: int = 4096,
              layout: str = PAPER_LAYOUT) -> dict[str, Any]:  # fmt: skip
    """Saturated throughput of each schedule (DES MODEL, each at its own best placement): M = 1, 2, 4, ...
    micro-batches per GPU until horizontal's throughput gains less than :data:`SATURATION_GAIN` from one doubling
    of M (``stop = "saturated"``), its placement no longer fits host memory (``"host memory"``), or M would pass
    ``m_max`` (``"m_max"``). Returns per schedule the best throughput and its M, and ``sweep``: M, the stop
    reason and horizontal's curve."""
    rates = rates_of(GreedySnakeConfig())
    best = {name: (0.0, 0) for name in SCHEDULES}
    curve: list[tuple[int, float]] = []
    stop, m = "m_max", 1
    while m <= m_max:
        lp, cands, _ = _placements(model, gpus, m, mbs, rates, layout)
        if not lp.feasible or not cands:
            stop = "host memory"
            break
        point = schedule_point(model, gpus, m, mbs, alpha, rates, exposed=False, layout=layout)
        for s in point["schedules"]:
            if s["throughput"] > best[s["name"]][0]:
                best[s["name"]] = (s["throughput"], m)
        curve.append((m, point["schedules"][0]["throughput"]))
        if has_saturated([t for _, t in curve]):
            stop = "saturated"
            break
        m *= 2
    out: dict[str, Any] = {name: {"throughput": t, "micro_batches": mm} for name, (t, mm) in best.items()}
    out["sweep"] = {"last_m": curve[-1][0] if curve else 0, "stop": stop, "horizontal": curve}
    return out


def clear_caches() -> None:
    """Empty every memo of this technique."""
    _simulated.cache_clear()
    _placements.cache_clear()
    saturated.cache_clear()
