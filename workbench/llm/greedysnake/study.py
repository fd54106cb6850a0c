"""What the CLI, the panel and the notebook show of GreedySnake: the real check, paper-scale MODEL points,
sweeps, the fast steady-state model the panel draws, the verdicts and the paper's claims.

Caches: every memo of this technique lives here (:func:`clear_caches` empties them).
"""

from __future__ import annotations

import functools
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from workbench.config import Config, param
from workbench.data import cache_dir
from workbench.llm.gpt import PAPER_SHAPES, GPTShape, block_param_count
from workbench.llm.greedysnake.config import MODELS, GreedySnakeConfig
from workbench.llm.greedysnake.engine import OffloadedTrainer, min_budget_bytes, unit_sizes
from workbench.llm.greedysnake.model import (
    Placement,
    Rates,
    Widths,
    activation_bytes_per_layer,
    configuration_search,
    simulate,
    unit_flops_of,
    unit_sizes_of,
)
from workbench.llm.greedysnake.reference import train_in_memory
from workbench.llm.greedysnake.schedule import SCHEDULES
from workbench.llm.greedysnake.volume import iteration_bytes, run_bytes

__all__ = ["check_run", "model_point", "rates_of", "check_fits", "steady_state", "ViewConfig", "panel_view",
           "saturated", "traffic_vs_micro_batches", "throughput_vs_batch", "clear_caches"]  # fmt: skip


def compute_device() -> str:
    """Where the resident units compute: the GPU when one is present (its memory is what the budget governs),
    else the CPU. Untested on CUDA here: no GPU was available where this was written."""
    return "cuda" if torch.cuda.is_available() else "cpu"


PAPER_WIDTHS = Widths()


# ---- check mode: the real thing --------------------------------------------------------------------------
def _by_class(counts: dict[tuple[str, str, str], int]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for (tier, cls, d), v in counts.items():
        out.setdefault(f"{tier}.{cls}", {"read": 0, "written": 0})[d] += int(v)
    return out


def check_run(config: GreedySnakeConfig) -> dict[str, Any]:
    """Train ``config``'s small GPT with every schedule from files, compare with in-memory training.

    Returns a dict (the runner's JSON pieces). Raises ValueError naming memory_budget_mb when the budget is
    below one unit and one micro-batch.
    """
    cfg = config.gpt()
    budget = int(config.memory_budget_mb * 1e6)
    need = min_budget_bytes(cfg, config.micro_batch_size)
    if budget < need:
        raise ValueError(
            f"memory_budget_mb={config.memory_budget_mb:g} is below one unit and one micro-batch: valid range is "
            f">= {need / 1e6:.6g} MB for this model and micro-batch size"
        )
    ref = train_in_memory(cfg, micro_batches=config.micro_batches, micro_batch_size=config.micro_batch_size,
                          steps=config.steps, lr=config.lr, data_seed=config.seed)  # fmt: skip
    ref_flat = np.concatenate([t.numpy() for t in ref])
    temp = not config.workdir
    root = Path(tempfile.mkdtemp(prefix="run-", dir=_cache())) if temp else Path(config.workdir)
    e = cfg.torch_dtype.itemsize
    inter = config.micro_batch_size * cfg.seq * cfg.hidden * e
    schedules, rates_all = [], []
    try:
        for name in SCHEDULES:
            t = OffloadedTrainer(cfg, root / name, schedule=name, micro_batches=config.micro_batches,
                                 micro_batch_size=config.micro_batch_size, alpha=config.alpha,
                                 checkpoints=config.checkpoints, memory_budget=budget, lr=config.lr,
                                 data_seed=config.seed, sync=config.sync, device=compute_device())  # fmt: skip
            try:
                t.train(config.steps)
                got = np.concatenate([p.numpy() for p in t.parameters()])
                counted = {k: v - t.init_counts[k] for k, v in t.counter.snapshot().items()}
                model = run_bytes(unit_sizes(cfg), steps=config.steps, micro_batches=config.micro_batches,
                                  schedule=name, inter_bytes=inter, w=e, g=e, o=3 * e, deferred=t.split,
                                  checkpoints=config.checkpoints)  # fmt: skip
                model = {k: model.get(k, 0) for k in counted}
                rates = _measured_rates(t, cfg, name, config)
                rates_all.append(rates)
                diff = np.abs(got - ref_flat)
                schedules.append({
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
                    "modelled_seconds": 0.0,  # filled below from the other schedules' rates
                    "device_peak_bytes": t.memory.peak,
                })  # fmt: skip
            finally:
                t.close()
    finally:
        if temp:
            shutil.rmtree(root, ignore_errors=True)
    # each schedule's time predicted by the simulator at the rates measured on the *other* schedules' runs
    # (harmonic mean: a rate is bytes or FLOPs per second), so the prediction is not its own measurement
    for i, s in enumerate(schedules):
        others = [r for j, r in enumerate(rates_all) if j != i] or rates_all
        rates = Rates(**{k: len(others) / sum(1.0 / getattr(r, k) for r in others)
                         for k in ("flops", "pcie", "ssd_read", "ssd_write", "adam")})  # fmt: skip
        sim = simulate(
            cfg.shape, schedule=s["name"], micro_batches=config.micro_batches,
            micro_batch_size=config.micro_batch_size, gpus=1, rates=rates,
            placement=Placement(ckpt_ssd=1.0 if config.checkpoints == "ssd" else 0.0),
            widths=Widths(w=e, g=e, o=3 * e, x=e), alpha=config.alpha if s["name"] == "vertical-overlap" else 0.0,
            prefetch=False, sync_optimizer=s["name"] == "vertical", iterations=2,
        )  # fmt: skip
        s["modelled_seconds"] = sim.iteration_s * config.steps
    mean = {k: float(np.mean([r.__dict__[k] for r in rates_all])) for k in ("flops", "ssd_read", "ssd_write", "adam")}
    return {"schedules": schedules, "budget_bytes": budget, "min_budget_bytes": need, "rates": mean,
            "reference": "in-memory GPT, gradient accumulation over micro-batches 0..M-1, torch.optim.Adam"}  # fmt: skip


def _cache() -> Path:
    d = cache_dir("greedysnake")
    d.mkdir(parents=True, exist_ok=True)
    return d


def _measured_rates(t: OffloadedTrainer, cfg: Any, schedule: str, config: GreedySnakeConfig) -> Rates:
    """This machine's rates from one real run: compute FLOP/s, SSD read/write B/s, Adam elements/s."""
    from workbench.llm.greedysnake.schedule import tasks_for

    uflops = unit_flops_of(cfg.shape)
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


# ---- model mode: paper scale ----------------------------------------------------------------------------
def rates_of(config: GreedySnakeConfig) -> Rates:
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


@functools.lru_cache(maxsize=256)
def _model_point(model: str, gpus: int, micro_batches: int, mbs: int, alpha: float, rates: Rates) -> dict[str, Any]:
    shape = PAPER_SHAPES[model]
    check_fits(shape, mbs, rates)
    lp = configuration_search(shape, micro_batches=micro_batches, micro_batch_size=mbs, gpus=gpus, rates=rates)
    placement = lp.placement
    out = []
    for name in SCHEDULES:
        a = alpha if name == "vertical-overlap" else 0.0
        kw = dict(schedule=name, micro_batches=micro_batches, micro_batch_size=mbs, gpus=gpus, rates=rates,
                  placement=placement, alpha=a, iterations=2)  # fmt: skip
        full, free = simulate(shape, **kw), simulate(shape, optimizer=False, **kw)
        out.append({"name": name, "throughput": full.throughput, "iteration_seconds": full.iteration_s,
                    "exposed_optimizer_seconds": max(full.iteration_s - free.iteration_s, 0.0),
                    "ssd_bytes_per_iteration": float(sum(full.ssd_bytes.values()))})  # fmt: skip
    base = out[0]["throughput"]
    for s in out:
        s["speedup_vs_horizontal"] = s["throughput"] / base
    lp_d = {"micro_batches": micro_batches, "alpha": lp.alpha, "ckpt_ssd": placement.ckpt_ssd,
            "para_ssd": placement.para_ssd, "opt_ssd": placement.opt_ssd, "unit_fwd_s": lp.unit_fwd_s,
            "unit_bwd_s": lp.unit_bwd_s, "lp_throughput": lp.throughput, "feasible": lp.feasible}  # fmt: skip
    return {"schedules": out, "lp": lp_d}


def model_point(config: GreedySnakeConfig) -> dict[str, Any]:
    """The MODEL at ``config``'s paper-scale setting (memoised): three schedules, the LP's choice."""
    M = config.global_batch // (config.gpus * config.model_micro_batch)
    got = _model_point(config.model, config.gpus, M, config.model_micro_batch, config.alpha, rates_of(config))
    lp = dict(got["lp"], model=config.model, gpus=config.gpus, global_batch=config.global_batch)
    return {"schedules": [dict(s) for s in got["schedules"]], "lp": lp}


# ---- the fast steady-state model (what the panel draws) ------------------------------------------------------
def steady_state(shape: GPTShape, *, schedule: str, micro_batches: int, micro_batch_size: int, gpus: int,
                 rates: Rates, placement: Placement, alpha: float = 0.0, widths: Widths = PAPER_WIDTHS,
                 optimizer: bool = True) -> dict[str, float]:  # fmt: skip
    """Seconds per iteration from resource totals (O(1)): every phase runs at its slowest resource.

    forward + backward = max(compute, PCIe, SSD read, SSD write) of the schedule's bytes (closed form of
    :mod:`.volume`); the optimizer (pipelined SSD read, CPU Adam, SSD write) runs after the backward
    (horizontal), beside it with the last unit's step exposed (vertical), or with alpha of it beside the next
    forward (vertical-overlap). A coarse bound; the discrete-event :func:`~.model.simulate` is the MODEL.
    """
    sizes, uflops = unit_sizes_of(shape), unit_flops_of(shape)
    U, M, G = len(sizes), micro_batches, gpus
    tokens = micro_batch_size * shape.seq
    X = tokens * shape.hidden * widths.x
    a = alpha if schedule == "vertical-overlap" else 0.0
    b = iteration_bytes(sizes, micro_batches=M, schedule=schedule, inter_bytes=X, w=widths.w, g=widths.g,
                        o=widths.o, deferred=[int(a * n) for n in sizes], checkpoints="ssd",
                        pending_in=a > 0)  # fmt: skip
    compute = (sum(uflops[:-1]) * 4 + uflops[-1] * 3) * tokens * M / rates.flops
    w_read = b[("ssd", "weights", "read")]
    ck_r, ck_w = b[("ssd", "checkpoints", "read")], b[("ssd", "checkpoints", "written")]
    pcie = (w_read / G + ck_r + ck_w) / rates.pcie
    ssd_r = (w_read * placement.para_ssd + ck_r * G * placement.ckpt_ssd) / rates.ssd_read
    ssd_w = ck_w * G * placement.ckpt_ssd / rates.ssd_write
    psi = sum(sizes)
    opt = 0.0
    if optimizer:
        opt = max(widths.o * psi * placement.opt_ssd / rates.ssd_read, psi / rates.adam,
                  (widths.o * psi * placement.opt_ssd + widths.w * psi * placement.para_ssd) / rates.ssd_write)  # fmt: skip
    main = max(compute, pcie, ssd_r, ssd_w)
    if schedule == "horizontal":
        total = main + opt
    else:
        fwd_share = 1 / 4  # forward is a quarter of the compute with recomputation (2 of 8)
        fwd = max(main * fwd_share, a * opt)
        bwd = max(main * (1 - fwd_share), (1 - a) * opt * (1 - 1 / U))
        total = fwd + bwd + (1 - a) * opt / U
    return {"iteration_s": total, "throughput": G * M * tokens / total, "compute_s": compute, "optimizer_s": opt}


@dataclass(frozen=True, kw_only=True)
class ViewConfig(Config):
    """The panel's controls (paper scale, MODEL)."""

    model: str = param("gpt-65b", choices=MODELS, label="model size", help="paper-scale GPT")
    gpus: int = param(1, lo=1, hi=8, unit="GPUs", label="GPUs", help="data-parallel GPUs of one node")
    micro_batches: int = param(16, lo=1, hi=256, label="micro-batches per GPU", help="micro-batches M per iteration")
    micro_batch: int = param(4, lo=1, hi=32, unit="samples", label="micro-batch size", help="samples per micro-batch")
    host_memory_gb: float = param(512.0, lo=64.0, hi=4096.0, unit="GB", label="host memory budget",
                                  help="DRAM for parameters, optimizer states and checkpoints")  # fmt: skip
    ssd_bw_gbps: float = param(6.5, lo=0.5, hi=64.0, unit="GB/s", label="SSD read bandwidth",
                               help="SSD read bandwidth (write = 54 % of it, as Gen4 NVMe)")  # fmt: skip
    gpu_memory_gb: float = param(80.0, lo=1.0, hi=192.0, unit="GB", label="device memory budget",
                                 help="GPU memory: must hold one layer (twice) and one micro-batch")  # fmt: skip
    pcie_bw_gbps: float = param(
        25.0, lo=4.0, hi=128.0, unit="GB/s", label="PCIe bandwidth", help="per GPU per direction"
    )
    alpha: float = param(0.25, lo=0.0, hi=0.9, label="deferred fraction alpha", help="deferred optimizer share")


def view_rates(view: ViewConfig) -> Rates:
    base = rates_of(GreedySnakeConfig())
    return Rates(flops=base.flops, pcie=view.pcie_bw_gbps * 1e9, ssd_read=view.ssd_bw_gbps * 1e9,
                 ssd_write=view.ssd_bw_gbps * 1e9 * 3.5 / 6.5, adam=base.adam, gpu_memory=view.gpu_memory_gb * 1e9,
                 host_memory=view.host_memory_gb * 1e9)  # fmt: skip


@functools.lru_cache(maxsize=512)
def _lp(model: str, M: int, mbs: int, gpus: int, rates: Rates) -> Any:
    return configuration_search(PAPER_SHAPES[model], micro_batches=M, micro_batch_size=mbs, gpus=gpus, rates=rates)


def traffic_vs_micro_batches(shape: GPTShape, micro_batch: int, ms: list[int]) -> dict[str, dict[str, list[float]]]:
    """Bytes per iteration by class vs M for the horizontal and vertical schedules (closed form, paper widths)."""
    sizes, w = unit_sizes_of(shape), PAPER_WIDTHS
    X = micro_batch * shape.seq * shape.hidden * w.x
    out: dict[str, dict[str, list[float]]] = {}
    for name in ("horizontal", "vertical"):
        rows = [iteration_bytes(sizes, micro_batches=m, schedule=name, inter_bytes=X, w=w.w, g=w.g, o=w.o,
                                checkpoints="ssd") for m in ms]  # fmt: skip
        out[name] = {cls: [float(r[("ssd", cls, "read")] + r[("ssd", cls, "written")]) for r in rows]
                     for cls in ("weights", "gradients", "optimizer", "checkpoints")}  # fmt: skip
    return out


def throughput_vs_batch(view: ViewConfig, ms: list[int]) -> dict[str, list[float]]:
    """Tokens/s vs global batch for the three schedules (fast steady-state model) and the roofline."""
    shape, rates = PAPER_SHAPES[view.model], view_rates(view)
    out: dict[str, list[float]] = {"global_batch": [m * view.micro_batch * view.gpus for m in ms]}
    for name in SCHEDULES:
        out[name] = []
    out["roofline"] = []
    lp = _lp(view.model, view.micro_batches, view.micro_batch, view.gpus, rates)  # one placement for the curve
    for m in ms:
        for name in SCHEDULES:
            out[name].append(steady_state(shape, schedule=name, micro_batches=m, micro_batch_size=view.micro_batch,
                                          gpus=view.gpus, rates=rates, placement=lp.placement,
                                          alpha=view.alpha)["throughput"])  # fmt: skip
        out["roofline"].append(_roofline(shape, view, rates, m, lp.placement))
    return out


def _roofline(shape: GPTShape, view: ViewConfig, rates: Rates, m: int, placement: Placement) -> float:
    """min(compute roof, tokens / unavoidable I/O time): weights twice and the optimizer once per iteration."""
    tokens = m * view.micro_batch * shape.seq * view.gpus
    psi = sum(unit_sizes_of(shape))
    w = PAPER_WIDTHS
    compute = (sum(unit_flops_of(shape)[:-1]) * 4 + unit_flops_of(shape)[-1] * 3) * tokens / view.gpus / rates.flops
    io = max((2 * w.w * psi * placement.para_ssd + w.o * psi * placement.opt_ssd) / rates.ssd_read,
             (w.o * psi * placement.opt_ssd + w.w * psi * placement.para_ssd) / rates.ssd_write)  # fmt: skip
    return tokens / max(compute, io)


def panel_view(view: ViewConfig) -> dict[str, Any]:
    """Everything the panel draws for ``view`` (fast: closed forms, the steady-state model, a memoised LP)."""
    shape, rates = PAPER_SHAPES[view.model], view_rates(view)
    device = check_fits(shape, view.micro_batch, rates, memory_name="gpu_memory_gb", batch_name="micro_batch")
    ms = [1, 2, 4, 8, 16, 32, 64, 128]
    lp = _lp(view.model, view.micro_batches, view.micro_batch, view.gpus, rates)
    if not lp.feasible:
        raise ValueError(
            f"host_memory_gb={view.host_memory_gb:g} cannot hold what must stay in DRAM for this setting: "
            "valid values are larger"
        )
    alphas = [round(x, 2) for x in np.arange(0.0, 0.91, 0.05)]
    exposed = []
    for a in alphas:
        kw = dict(schedule="vertical-overlap", micro_batches=view.micro_batches, micro_batch_size=view.micro_batch,
                  gpus=view.gpus, rates=rates, placement=lp.placement, alpha=a)  # fmt: skip
        exposed.append(
            steady_state(shape, **kw)["iteration_s"] - steady_state(shape, optimizer=False, **kw)["iteration_s"]
        )
    kw = dict(micro_batches=view.micro_batches, micro_batch_size=view.micro_batch, gpus=view.gpus, rates=rates,
              placement=lp.placement)  # fmt: skip
    h_exposed = steady_state(shape, schedule="horizontal", **kw)["iteration_s"] - steady_state(
        shape, schedule="horizontal", optimizer=False, **kw)["iteration_s"]  # fmt: skip
    point = {name: steady_state(shape, schedule=name, alpha=view.alpha, **kw) for name in SCHEDULES}
    return {
        "label": "MODEL",
        "device_fraction": device / rates.gpu_memory,
        "traffic": traffic_vs_micro_batches(shape, view.micro_batch, ms),
        "ms": ms,
        "throughput": throughput_vs_batch(view, ms),
        "alphas": alphas,
        "exposed": exposed,
        "horizontal_exposed": h_exposed,
        "lp": lp,
        "point": point,
        "speedup": point["vertical-overlap"]["throughput"] / point["horizontal"]["throughput"],
    }


# ---- saturated throughput (what the claims read) ------------------------------------------------------
@functools.lru_cache(maxsize=16)
def saturated(model: str, gpus: int, mbs: int = 4, alpha: float = 0.25, max_m: int = 32) -> dict[str, Any]:
    """Saturated throughput (max over M = 1, 2, 4, ..., max_m micro-batches per GPU) of each schedule (DES)."""
    rates = rates_of(GreedySnakeConfig())
    best = {name: (0.0, 0) for name in SCHEDULES}
    m = 1
    while m <= max_m:
        point = _model_point(model, gpus, m, mbs, alpha, rates)
        for s in point["schedules"]:
            if s["throughput"] > best[s["name"]][0]:
                best[s["name"]] = (s["throughput"], m)
        m *= 2
    return {name: {"throughput": t, "micro_batches": mm} for name, (t, mm) in best.items()}


def clear_caches() -> None:
    """Empty every memo of this technique."""
    _model_point.cache_clear()
    _lp.cache_clear()
    saturated.cache_clear()


def des_curve(model: str, gpus: int, mbs: int, ms: list[int], alpha: float = 0.25) -> dict[str, list[float]]:
    """Throughput (tokens/s, DES MODEL) vs global batch of each schedule, the LP's own prediction and the roofline."""
    rates = rates_of(GreedySnakeConfig())
    shape = PAPER_SHAPES[model]
    out: dict[str, list[float]] = {"global_batch": [m * mbs * gpus for m in ms], "lp": [], "roofline": []}
    for name in SCHEDULES:
        out[name] = []
    for m in ms:
        point = _model_point(model, gpus, m, mbs, alpha, rates)
        for s in point["schedules"]:
            out[s["name"]].append(s["throughput"])
        out["lp"].append(point["lp"]["lp_throughput"])
        lp = point["lp"]
        view = ViewConfig(model=model, gpus=gpus, micro_batches=m, micro_batch=mbs)
        out["roofline"].append(
            _roofline(shape, view, rates, m, Placement(lp["ckpt_ssd"], lp["para_ssd"], lp["opt_ssd"]))
        )
    return out


def exposed_vs_alpha(model: str, gpus: int, micro_batches: int, mbs: int, alphas: list[float]) -> dict[str, Any]:
    """Exposed optimizer seconds per iteration (DES MODEL) of vertical-overlap vs alpha, beside horizontal and
    vertical (alpha = 0) at the same placement."""
    rates = rates_of(GreedySnakeConfig())
    rows = [_model_point(model, gpus, micro_batches, mbs, float(a), rates) for a in alphas]
    by = {s["name"]: s for s in rows[0]["schedules"]}
    return {
        "alphas": list(alphas),
        "vertical-overlap": [
            next(s for s in r["schedules"] if s["name"] == "vertical-overlap")["exposed_optimizer_seconds"]
            for r in rows
        ],
        "horizontal": by["horizontal"]["exposed_optimizer_seconds"],
        "vertical": by["vertical"]["exposed_optimizer_seconds"],
        "iteration_seconds": [
            next(s for s in r["schedules"] if s["name"] == "vertical-overlap")["iteration_seconds"] for r in rows
        ],
    }
