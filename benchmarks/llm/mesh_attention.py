"""Group 1: the blockwise attention kernel against torch's ``scaled_dot_product_attention`` (SDPA), one process.

Both run on the same seeded q, k, v (and dout for the backward), interleaved round by round (see
``common.interleaved``); each side's time is the median over the rounds and the ratio is the median of the
per-round ratios ours / SDPA (paired, so load that hits one round hits both sides). The max abs difference
is ours - SDPA in the working dtype: the forward output, and for fwd+bwd the largest of dq, dk, dv.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn.functional as F

from benchmarks.common import Section, Table, fmt_ms, fmt_ratio, fmt_sci, geomean, interleaved, median
from benchmarks.machine import load_average
from workbench.llm.mesh_attention.blockwise import blockwise_attention
from workbench.llm.mesh_attention.config import CHECK_DTYPES

log = logging.getLogger(__name__)

DTYPES = {name: getattr(torch, name) for name in CHECK_DTYPES}  # the check's element types
PASSES = ("fwd", "fwd+bwd")


@dataclass(frozen=True)
class Shape:
    """One benchmark shape: batch B, heads H, sequence S, head dim D, our block size, timed rounds, dtypes."""

    batch: int
    heads: int
    seq: int
    head_dim: int
    block_size: int
    rounds: int
    dtypes: tuple[str, ...] = ("float32", "float64")


# float64 stops at S = 2048: one fwd+bwd of ours at S = 4096 in float64 takes ~5-25 s on 2 cores, which alone
# would take the full run past 5 minutes; float32 (the speed dtype) goes to S = 4096.
FULL_SHAPES = (
    Shape(1, 8, 1024, 64, 256, 7),
    Shape(1, 8, 2048, 64, 256, 5, dtypes=("float64",)),
    Shape(1, 8, 4096, 64, 256, 5, dtypes=("float32",)),
)
QUICK_SHAPES = (Shape(1, 2, 256, 32, 64, 2),)


def sdpa_backend(q: torch.Tensor, causal: bool) -> str:
    """Name of the fused SDPA kernel torch picks for these inputs (private ``torch._fused_sdp_choice``)."""
    try:
        from torch.nn.attention import SDPBackend

        return SDPBackend(torch._fused_sdp_choice(q, q, q, None, 0.0, causal)).name.lower()
    except (AttributeError, RuntimeError, TypeError, ValueError):  # private API moved: say so, do not guess
        return "unknown"


def _inputs(shape: Shape, dtype: torch.dtype, seed: int) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(seed)
    size = (shape.batch, shape.heads, shape.seq, shape.head_dim)  # [B, H, S, D]
    return tuple(torch.randn(size, generator=gen, dtype=torch.float64).to(dtype) for _ in range(4))


def _case(shape: Shape, dtype_name: str, causal: bool, *, seed: int) -> list[dict]:
    """Time fwd and fwd+bwd of ours and SDPA at one (shape, dtype, causal); one dict per pass."""
    dtype = DTYPES[dtype_name]
    q, k, v, dout = _inputs(shape, dtype, seed)

    def ours(a, b, c):
        return blockwise_attention(a, b, c, causal=causal, block_size=shape.block_size)

    def sdpa(a, b, c):
        return F.scaled_dot_product_attention(a, b, c, is_causal=causal)

    impls: dict[str, Callable] = {"ours": ours, "sdpa": sdpa}
    rows = []

    # forward only: plain tensors, no autograd graph on either side
    with torch.no_grad():
        out = {name: f(q, k, v) for name, f in impls.items()}
    fwd_diff = (out["ours"] - out["sdpa"]).abs().max().item()
    times = interleaved({name: (lambda f=f: f(q, k, v)) for name, f in impls.items()}, rounds=shape.rounds)
    rows.append(_row(shape, dtype_name, causal, "fwd", times, fwd_diff, sdpa_backend(q, causal)))

    # forward + backward: fresh leaves per side, grads cleared before every call
    leaves = {name: [t.clone().requires_grad_(True) for t in (q, k, v)] for name in impls}

    def step(name: str) -> list[torch.Tensor]:
        for t in leaves[name]:
            t.grad = None
        impls[name](*leaves[name]).backward(dout)
        return [t.grad for t in leaves[name]]

    grads = {name: step(name) for name in impls}
    grad_diff = max((a - b).abs().max().item() for a, b in zip(grads["ours"], grads["sdpa"]))
    times = interleaved({name: (lambda n=name: step(n)) for name in impls}, rounds=shape.rounds)
    rows.append(_row(shape, dtype_name, causal, "fwd+bwd", times, grad_diff,
                     sdpa_backend(leaves["sdpa"][0], causal)))
    return rows


def _row(shape: Shape, dtype: str, causal: bool, pass_: str, times: dict[str, list[float]], diff: float,
         backend: str) -> dict:
    ratios = [a / b for a, b in zip(times["ours"], times["sdpa"])]
    return {"batch": shape.batch, "heads": shape.heads, "seq": shape.seq, "head_dim": shape.head_dim,
            "block_size": shape.block_size, "rounds": shape.rounds, "dtype": dtype, "causal": causal,
            "pass": pass_, "ours_s": median(times["ours"]), "sdpa_s": median(times["sdpa"]),
            "ratio": median(ratios), "max_abs_diff": diff, "sdpa_backend": backend}


def run(*, quick: bool, seed: int = 0) -> Section:
    """Run group 1 and return its section (``data["rows"]``: one dict per table row)."""
    torch.manual_seed(seed)
    load_start = load_average()
    rows: list[dict] = []
    for shape in QUICK_SHAPES if quick else FULL_SHAPES:
        for dtype_name in shape.dtypes:
            for causal in (False, True):
                log.info("attention kernel: S=%d %s causal=%s", shape.seq, dtype_name, causal)
                rows += _case(shape, dtype_name, causal, seed=seed)
    table = Table(
        headers=("B", "H", "S", "D", "dtype", "causal", "pass", "block", "rounds", "ours (ms)", "SDPA (ms)",
                 "ours / SDPA", "max abs diff", "SDPA kernel"),
        rows=tuple((str(r["batch"]), str(r["heads"]), str(r["seq"]), str(r["head_dim"]), r["dtype"],
                    "yes" if r["causal"] else "no", r["pass"], str(r["block_size"]), str(r["rounds"]),
                    fmt_ms(r["ours_s"]), fmt_ms(r["sdpa_s"]), fmt_ratio(r["ratio"]), fmt_sci(r["max_abs_diff"]),
                    r["sdpa_backend"]) for r in rows),
    )
    summary = []
    for pass_ in PASSES:
        ratios = [r["ratio"] for r in rows if r["pass"] == pass_]
        summary.append((f"blockwise / SDPA time, {pass_} (geomean over {len(ratios)} cases, range)",
                        f"{geomean(ratios):.2f} ({min(ratios):.2f} .. {max(ratios):.2f})"))
    for dtype_name in DTYPES:
        diffs = [r["max_abs_diff"] for r in rows if r["dtype"] == dtype_name]
        summary.append((f"blockwise vs SDPA max abs diff, {dtype_name}", fmt_sci(max(diffs))))
    intro = (
        "Peer: `torch.nn.functional.scaled_dot_product_attention` (SDPA) on the same q, k, v in the same "
        f"process, torch {torch.__version__} with {torch.get_num_threads()} threads; the last column is the "
        "fused kernel torch selects for it. Ours: `blockwise_attention` (blocks of `block` query and key rows, "
        "partials merged by log-sum-exp; custom backward). Each case first runs each side once untimed, then "
        "`rounds` interleaved rounds (order alternating each round); the times are medians over the rounds and "
        "`ours / SDPA` is the median of the per-round ratios: 1.00 = as fast as SDPA, 2.00 = twice SDPA's time. "
        "`max abs diff` is ours - SDPA in the working dtype (fwd: output; fwd+bwd: largest over dq, dk, dv; "
        "q, k, v, dout standard normal). float64 stops at S = 2048 to keep the full run under 5 minutes on "
        "2 cores."
    )
    note = (f"Load average (1/5/15 min) at the start of this section: {load_start}; at its end: {load_average()}. "
            "Load from other processes on these 2 cores has been seen to slow ours (many small kernels) far more "
            "than SDPA (one fused kernel), so compare ratios taken at similar load.")
    return Section(title="1. Blockwise attention vs SDPA (one process)", intro=intro, tables=(table,),
                   notes=(note,), summary=tuple(summary), data={"rows": rows})
