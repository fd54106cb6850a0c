"""Groups 2 and 3: bytes per rank in real multi-process runs, and the closed-form model against them.

Each (P, causal) point is one ``workbench.llm.mesh_attention.check.run_check`` call: P real processes (gloo, forked),
Ring, Ulysses, USP (default degree) and Mesh (default tile) forward + backward, every byte counted by
``workbench.distributed.Comm``. Where P has a Ulysses degree 1 < u < P that divides the heads (at most
sqrt(P)), a second call runs USP at that degree too, so USP appears as a true Ulysses x Ring hybrid and not
only as its Ulysses (u = P) or Ring (u = 1) end. Group 2 reports the max over ranks; group 3 compares every
rank's counted bytes with ``workbench.llm.mesh_attention.volume.predict_bytes_per_rank`` called here, independently
of the prediction ``run_check`` attaches.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

from benchmarks.common import Section, Table, fmt_ratio
from workbench.llm.mesh_attention.check import run_check
from workbench.llm.mesh_attention.config import DTYPE_BYTES
from workbench.llm.mesh_attention.plan import divisors
from workbench.llm.mesh_attention.volume import predict_bytes_per_rank

log = logging.getLogger(__name__)

METHODS = ("ring", "ulysses", "usp", "mesh")


@dataclass(frozen=True)
class CommSetup:
    """The runs of groups 2 and 3: process counts P, tokens S, heads H, head dim D, dtype."""

    gpus: tuple[int, ...]
    seq: int
    heads: int
    head_dim: int
    dtype: str


FULL = CommSetup(gpus=(4, 9, 16), seq=1024, heads=16, head_dim=16, dtype="float32")
QUICK = CommSetup(gpus=(4,), seq=128, heads=4, head_dim=8, dtype="float32")


def hybrid_degree(gpus: int, heads: int) -> int | None:
    """Largest Ulysses degree u with 1 < u <= sqrt(P), u | P and u | heads (None if there is none)."""
    good = [d for d in divisors(gpus) if 1 < d < gpus and d * d <= gpus and heads % d == 0]
    return max(good) if good else None


def _label(r: dict[str, Any]) -> str:
    if r["method"] == "usp" and r.get("ulysses_degree") is not None:
        return f"usp (u={r['ulysses_degree']})"
    return r["method"]


def _layout(r: dict[str, Any]) -> str:
    if r.get("tile"):
        return "x".join(map(str, r["tile"]))
    return f"u={r['ulysses_degree']}" if r.get("ulysses_degree") is not None else "-"


def measure(setup: CommSetup) -> list[dict[str, Any]]:
    """One record per (P, causal, method run): the ``run_check`` result plus P, causal and the model diff."""
    records = []
    dtype_bytes = DTYPE_BYTES[setup.dtype]
    for gpus in setup.gpus:
        for causal in (False, True):
            log.info("bytes: P=%d causal=%s", gpus, causal)
            common = dict(
                gpus=gpus, seq=setup.seq, heads=setup.heads, head_dim=setup.head_dim, causal=causal, dtype=setup.dtype
            )
            results = run_check(**common, methods=METHODS)
            u = hybrid_degree(gpus, setup.heads)
            default_u = next((r.get("ulysses_degree") for r in results if r["method"] == "usp"), None)
            if u is not None and u != default_u:
                results += run_check(**common, methods=("usp",), ulysses_degree=u)
            results.sort(key=lambda r: (METHODS.index(r["method"]), r.get("ulysses_degree") or 0))
            for r in results:
                rec = {"gpus": gpus, "causal": causal, **r}
                if "error" not in r:
                    model = predict_bytes_per_rank(
                        r["method"],
                        gpus=gpus,
                        seq=setup.seq,
                        heads=setup.heads,
                        head_dim=setup.head_dim,
                        causal=causal,
                        dtype_bytes=dtype_bytes,
                        tile=r["tile"],
                        ulysses_degree=r["ulysses_degree"],
                    )
                    rec["model_total"] = [int(x) for x in model["total"]]
                    rec["diff_total"] = max(abs(int(m) - int(c)) for m, c in zip(model["total"], r["bytes_per_rank"]))
                    rec["diff_fwd_sent"] = max(
                        abs(int(m) - int(c)) for m, c in zip(model["forward_sent"], r["forward_bytes_sent_per_rank"])
                    )
                    rec["diff_attached"] = max(
                        abs(int(m) - int(c)) for m, c in zip(r["model_bytes_per_rank"], r["bytes_per_rank"])
                    )
                records.append(rec)
    return records


def _mb(n: float) -> str:
    return f"{n / 1e6:.3f}"


def run(*, quick: bool) -> tuple[Section, Section]:
    """Run the real byte counts once and return (group 2 section, group 3 section)."""
    setup = QUICK if quick else FULL
    records = measure(setup)
    shape = (
        f"S = {setup.seq} tokens, H = {setup.heads} heads, D = {setup.head_dim}, B = 1, {setup.dtype}, "
        "forward + backward"
    )

    # ---- group 2: bytes per rank (max over ranks), Ring / Mesh --------------------------------------
    rows2, errors, headline = [], [], []
    for gpus in setup.gpus:
        for causal in (False, True):
            recs = [r for r in records if r["gpus"] == gpus and r["causal"] == causal]
            ok = {_label(r): r for r in recs if "error" not in r}
            errors += [
                f"P = {gpus}, causal = {causal}: {r['method']} not run: {r['error']}" for r in recs if "error" in r
            ]
            ring, mesh = max(ok["ring"]["bytes_per_rank"]), max(ok["mesh"]["bytes_per_rank"])
            ratio = ring / mesh
            usp_labels = sorted(k for k in ok if k.startswith("usp"))
            usp = "; ".join(f"{_mb(max(ok[k]['bytes_per_rank']))} ({_layout(ok[k])})" for k in usp_labels) or "-"
            ulysses = _mb(max(ok["ulysses"]["bytes_per_rank"])) if "ulysses" in ok else "not run"
            rows2.append(
                (
                    str(gpus),
                    "yes" if causal else "no",
                    _layout(ok["mesh"]),
                    _mb(ring),
                    _mb(mesh),
                    ulysses,
                    usp,
                    fmt_ratio(ratio),
                    fmt_ratio((math.sqrt(gpus) + 1) / 2),
                    fmt_ratio(6 / 11 * (math.sqrt(gpus) + 1)),
                )
            )
            if not causal:
                headline.append(
                    (
                        f"Ring / Mesh bytes per rank, P = {gpus} (paper (sqrt(P)+1)/2)",
                        f"{ratio:.2f} ({(math.sqrt(gpus) + 1) / 2:.2f})",
                    )
                )
    table2 = Table(
        headers=(
            "P",
            "causal",
            "Mesh tile",
            "Ring (MB)",
            "Mesh (MB)",
            "Ulysses (MB)",
            "USP (MB, degree)",
            "Ring / Mesh",
            "(sqrt(P)+1)/2",
            "(6/11)(sqrt(P)+1)",
        ),
        rows=tuple(rows2),
    )
    intro2 = (
        f"Real runs: P processes on this machine (gloo over loopback), {shape}; bytes per rank = bytes sent + "
        "received by that rank as counted by `Comm`, max over ranks, in MB (10^6 bytes). Peer: Ring-Attention "
        "(Mesh with a 1 x P tile) in the same `run_check` call on the same inputs. `Ring / Mesh` is Ring's "
        "bytes over Mesh's: 2.00 = Mesh moves half of Ring's bytes. `(sqrt(P)+1)/2` is the paper's asymptotic "
        "ratio (its count treats Q, O and KV alike); `(6/11)(sqrt(P)+1)` is the asymptote of our kernels' exact "
        "count (Ring 6(P-1)N vs Mesh ~11(sqrt(P)-1)N elements per rank, N = one Q chunk; see `volume.py`). "
        "Causal runs use the zigzag layout; bytes do not depend on the mask beyond padding. Ulysses and USP are "
        "listed where the head count allows their degree."
    )
    section2 = Section(
        title="2. Per-rank bytes: Mesh vs Ring (real multi-process runs)",
        intro=intro2,
        tables=(table2,),
        notes=tuple(errors),
        summary=tuple(headline),
        data={"records": records},
    )

    # ---- group 3: model vs counted, every method and P -----------------------------------------------
    rows3, worst = [], 0
    for r in records:
        if "error" in r:
            continue
        worst = max(worst, r["diff_total"], r["diff_fwd_sent"], r["diff_attached"])
        rows3.append(
            (
                str(r["gpus"]),
                "yes" if r["causal"] else "no",
                r["method"],
                _layout(r),
                f"{max(r['bytes_per_rank']):,}",
                f"{max(r['model_total']):,}",
                str(r["diff_total"]),
                str(r["diff_fwd_sent"]),
            )
        )
    table3 = Table(
        headers=(
            "P",
            "causal",
            "method",
            "layout",
            "counted max bytes/rank",
            "model max bytes/rank",
            "max abs(model - counted), total",
            "max abs(model - counted), fwd sent",
        ),
        rows=tuple(rows3),
    )
    attached = max((r["diff_attached"] for r in records if "error" not in r), default=0)
    intro3 = (
        "Same runs as section 2. Peer: the bytes `Comm` counted on every rank (sent + received, and the forward "
        "pass's sent bytes alone). Model: `predict_bytes_per_rank` (closed form, `volume.py`) with the tile or "
        "degree the run used. The difference columns are the max over ranks of abs(model - counted) in bytes; "
        "0 means the model is exact to the byte on every rank. (The prediction `run_check` attaches itself was "
        f"compared too: max difference {attached} bytes.)"
    )
    section3 = Section(
        title="3. Model vs counted bytes",
        intro=intro3,
        tables=(table3,),
        summary=((f"max abs(model - counted) bytes over {len(rows3)} runs x ranks", str(worst)),),
        data={"records": records, "max_diff": worst},
    )
    return section2, section3
