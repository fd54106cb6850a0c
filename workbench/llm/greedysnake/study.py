"""What the panel and the notebook show of GreedySnake: the fast steady-state model the panel draws, the traffic
and throughput curves, the DES curves and the exposed optimizer time. Views only: the real check, the MODEL
points and the saturation sweep the claims read live in :mod:`.experiment` (with every memo).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from workbench.llm.gpt import PAPER_SHAPES, GPTShape
from workbench.llm.greedysnake import experiment
from workbench.llm.greedysnake.config import GreedySnakeConfig, ViewConfig
from workbench.llm.greedysnake.experiment import (
    PAPER_WIDTHS,
    check_fits,
    horizontal_candidates,
    rates_of,
    schedule_point,
)
from workbench.llm.greedysnake.model import (
    Placement,
    Rates,
    Widths,
    configuration_search,
    unit_flops_of,
    unit_sizes_of,
)
from workbench.llm.greedysnake.schedule import SCHEDULES
from workbench.llm.greedysnake.volume import iteration_bytes

__all__ = ["steady_state", "view_rates", "panel_view", "traffic_vs_micro_batches", "throughput_vs_batch",
           "des_curve", "exposed_vs_alpha", "clear_caches", "horizontal_placement"]  # fmt: skip


# ---- the fast steady-state model (what the panel draws) ------------------------------------------------------
def steady_state(shape: GPTShape, *, schedule: str, micro_batches: int, micro_batch_size: int, gpus: int,
                 rates: Rates, placement: Placement, alpha: float = 0.0, widths: Widths = PAPER_WIDTHS,
                 optimizer: bool = True) -> dict[str, float]:  # fmt: skip
    """Seconds per iteration from resource totals (O(1)): every phase runs at its slowest resource.

    forward + backward = max(compute, PCIe, SSD read, SSD write) of the schedule's bytes (closed form of
    :mod:`.volume`); the optimizer (pipelined SSD read, CPU Adam, SSD write) runs after the backward
    (horizontal), beside it with the last unit's step exposed (vertical), or with alpha of it beside the next
    forward (vertical-overlap). Horizontal's fp32 gradient buffer moves its SSD share ``placement.grad_ssd``
    every micro-batch. A coarse bound; the discrete-event :func:`~.model.simulate` is the MODEL.
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
    q = placement.grad_ssd if schedule == "horizontal" else 0.0
    g_r, g_w = q * b[("ssd", "gradients", "read")], q * b[("ssd", "gradients", "written")]
    ssd_r = (w_read * placement.para_ssd + ck_r * G * placement.ckpt_ssd + g_r) / rates.ssd_read
    ssd_w = (ck_w * G * placement.ckpt_ssd + g_w) / rates.ssd_write
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


def view_rates(view: ViewConfig) -> Rates:
    base = rates_of(GreedySnakeConfig())
    return Rates(flops=base.flops, pcie=view.pcie_bw_gbps * 1e9, ssd_read=view.ssd_bw_gbps * 1e9,
                 ssd_write=view.ssd_bw_gbps * 1e9 * 3.5 / 6.5, adam=base.adam, gpu_memory=view.gpu_memory_gb * 1e9,
                 host_memory=view.host_memory_gb * 1e9)  # fmt: skip


@functools.lru_cache(maxsize=512)
def _lp(model: str, M: int, mbs: int, gpus: int, rates: Rates) -> Any:
    return configuration_search(PAPER_SHAPES[model], micro_batches=M, micro_batch_size=mbs, gpus=gpus, rates=rates)


@functools.lru_cache(maxsize=512)
def horizontal_placement(model: str, M: int, mbs: int, gpus: int, rates: Rates) -> tuple[str, Placement]:
    """Horizontal's own placement (as the claims price it): the fastest by :func:`steady_state` of its
    candidates (the LP solved for horizontal, gradient buffer free to spill or kept in DRAM, and the snake's
    placement where horizontal's DRAM holds it). ValueError naming host_memory_gb when none fits."""
    shape = PAPER_SHAPES[model]
    cands = horizontal_candidates(shape, M, mbs, gpus, rates, _lp(model, M, mbs, gpus, rates).placement)
    if not cands:
        raise ValueError(
            f"host_memory_gb={rates.host_memory / 1e9:g} cannot hold what horizontal must keep in DRAM at this "
            "setting: valid values are larger"
        )
    kw = dict(schedule="horizontal", micro_batches=M, micro_batch_size=mbs, gpus=gpus, rates=rates)
    return max(cands, key=lambda c: steady_state(shape, placement=c[1], **kw)["throughput"])  # type: ignore[arg-type]


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
    # one placement per schedule for the curve: the snake's LP's, horizontal's own (both at the view's M)
    lp = _lp(view.model, view.micro_batches, view.micro_batch, view.gpus, rates)
    h_place = horizontal_placement(view.model, view.micro_batches, view.micro_batch, view.gpus, rates)[1]
    for m in ms:
        for name in SCHEDULES:
            place = h_place if name == "horizontal" else lp.placement
            out[name].append(steady_state(shape, schedule=name, micro_batches=m, micro_batch_size=view.micro_batch,
                                          gpus=view.gpus, rates=rates, placement=place,
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
    h_label, h_place = horizontal_placement(view.model, view.micro_batches, view.micro_batch, view.gpus, rates)
    kw = dict(micro_batches=view.micro_batches, micro_batch_size=view.micro_batch, gpus=view.gpus, rates=rates)
    h_kw = dict(kw, schedule="horizontal", placement=h_place)
    h_exposed = steady_state(shape, **h_kw)["iteration_s"] - steady_state(shape, optimizer=False, **h_kw)["iteration_s"]
    point = {name: steady_state(shape, schedule=name, alpha=view.alpha,
                                placement=h_place if name == "horizontal" else lp.placement, **kw)
             for name in SCHEDULES}  # fmt: skip
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
        "horizontal_placement": h_place,
        "horizontal_placement_label": h_label,
        "point": point,
        "speedup": point["vertical-overlap"]["throughput"] / point["horizontal"]["throughput"],
    }


def clear_caches() -> None:
    """Empty every memo of this technique (the views' and :mod:`.experiment`'s)."""
    _lp.cache_clear()
    horizontal_placement.cache_clear()
    experiment.clear_caches()


def des_curve(model: str, gpus: int, mbs: int, ms: list[int], alpha: float = 0.25) -> dict[str, list[float]]:
    """Throughput (tokens/s, DES MODEL; each schedule at its own best placement) vs global batch of each schedule,
    the snake's LP's own prediction and the roofline at the snake's placement."""
    rates = rates_of(GreedySnakeConfig())
    shape = PAPER_SHAPES[model]
    out: dict[str, list[float]] = {"global_batch": [m * mbs * gpus for m in ms], "lp": [], "roofline": []}
    for name in SCHEDULES:
        out[name] = []
    for m in ms:
        point = schedule_point(model, gpus, m, mbs, alpha, rates, exposed=False)
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
    rows = [schedule_point(model, gpus, micro_batches, mbs, float(a), rates) for a in alphas]
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
