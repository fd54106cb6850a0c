"""Mesh-Attention's claims (Chen et al., arXiv 2512.20968): communication volume and speed-ups over Ring-Attention
(v1 abstract), and speed-ups over Ring-Attention, USP (Ulysses degree 8) and StarTrail (v2 abstract, as the brief
quotes it: the v2 text could not be found, so its numbers are unverified here).

Our figures are the cluster MODEL (:mod:`~workbench.llm.mesh_attention.model`: the real kernels' exact byte
counts over a two-level network, compute at an effective FLOP rate), for the paper's Mesh-Attention (the flat
per-rank tiling; the node-level form is the workbench's extension, not the paper's method). Every setting is
P = 256 GPUs (sourced: "on 256 GPUs", "up to 256 GPUs"), bf16, and the family :data:`FAMILY` of sequence lengths
(up to 1M tokens, sourced by v2; the lower ones are ours): an "average" claim is the mean over the family, an
"up to" claim its maximum (where, in the note). The paper's cluster, model width and mask are not readable, so
the network and NVLink bandwidths, the effective FLOP rate, the node size, heads and the mask are inferred and
varied over plausible ranges.
"""

from __future__ import annotations

import statistics

from workbench.claims import Assumption, Baseline, Claim, Figure
from workbench.cluster import ClusterSpec
from workbench.llm.mesh_attention.config import MeshAttentionConfig
from workbench.llm.mesh_attention.study import DEFAULT_CLUSTER, model_point, verdict_sweep

__all__ = ["CLAIMS", "PAPER_CLAIMS", "FAMILY", "GPUS"]

V1 = "arXiv 2512.20968 v1, abstract"
V2 = "arXiv 2512.20968 v2, abstract (as quoted in the brief; v2 not found, unverified here)"
#: what the paper reports; per baseline (average, largest) speed-up of Mesh over it; volume: v1's byte reduction
PAPER_CLAIMS = {
    "v1": {"speedup_ring": (2.9, 3.4), "volume_reduction": (0.790, 0.854)},
    "v2": {"speedup": {"ring": (17.00, 32.27), "usp": (2.62, 4.36), "startrail": (2.94, 4.59)}},
    "usp_ulysses_degree": 8,
    "max_gpus": 256,
}
GPUS = 256
#: the sequence lengths an average is taken over and an "up to" maximised over (1M: v2's largest; the rest ours)
FAMILY = (131_072, 262_144, 524_288, 1_048_576)
_EVIDENCE = (
    "tests/llm/mesh_attention/test_mesh_attention_claims.py::test_speedups_are_the_sweeps",
    "tests/llm/mesh_attention/test_attention_model.py::test_bytes_equal_volume",
    "tests/llm/mesh_attention/test_attention_model.py::test_paper_scale_256_gpus_1m_tokens",
    "tests/llm/mesh_attention/test_attention_volume.py::test_counted_bytes_equal_prediction",
    "benchmarks/llm/mesh_attention.py",
)

_RING = Baseline(
    name="Ring-Attention",
    why="the paper's baseline (every KV chunk visits every rank)",
    strongest=False,
    stronger="USP (Ulysses x Ring), what practitioners run at 256 GPUs",
)
_USP = Baseline(
    name="USP (Ulysses degree 8 x Ring)",
    why="the paper's baseline at its stated degree; Ulysses inside a node times Ring across nodes is what "
    "practitioners run for long context (yunchang, Megatron-LM hierarchical context parallelism)",
)
_STARTRAIL = Baseline(
    name="StarTrail (MODEL, our reading of its C x C x r layout, fastest team size)",
    why="the paper's baseline (WallFacer renamed, no public code read here)",
    strongest=False,
    stronger="USP (u = 8), faster in this model at 12 of 16 sweep settings",
)


def _assumptions(*, with_time: bool) -> tuple[Assumption, ...]:
    out = [
        Assumption(name="heads", value=32, choices=(32, 64), sourced=False,
                   why="model width not readable: 32 x 128 (7B-class) or 64 x 128 (70B-class) heads"),
        Assumption(name="causal", value=True, choices=(True, False), sourced=False,
                   why="mask not readable: causal LM training (zigzag balanced) or full attention"),
        Assumption(name="gpus_per_node", value=8, choices=(8, 4), sourced=False,
                   why="node size not readable: 8-GPU HGX nodes, or 4-GPU nodes"),
    ]  # fmt: skip
    if with_time:
        out += [
            Assumption(name="inter_bw", value=25.0, lo=12.5, hi=50.0, log=True, sourced=False, unit="GB/s per GPU",
                       why="network not readable: one 200 Gb/s HDR NIC per GPU (25); 100 Gb/s to 400 Gb/s NDR"),
            Assumption(name="intra_bw", value=200.0, lo=150.0, hi=450.0, sourced=False, unit="GB/s",
                       why="NVLink per direction not readable: H800 200, A100 150, H100 450"),
            Assumption(name="tflops", value=400.0, lo=200.0, hi=600.0, log=True, sourced=False, unit="TFLOP/s",
                       why="effective attention rate not readable: FlashAttention-2 on Hopper ~400, -3 ~600, "
                       "A100 ~200"),
        ]  # fmt: skip
    return tuple(out)


def _cluster(gpus_per_node: int, inter_bw: float = 25.0, intra_bw: float = 200.0, tflops: float = 400.0
             ) -> ClusterSpec:  # fmt: skip
    return DEFAULT_CLUSTER.replace(gpus_per_node=gpus_per_node, inter_node_bw_gbps=inter_bw,
                                   intra_node_bw_gbps=intra_bw, gpu_tflops=tflops)  # fmt: skip


def _speedups(baseline: str, *, heads: int, causal: bool, gpus_per_node: int, inter_bw: float, intra_bw: float,
              tflops: float) -> list[tuple[float, int]]:  # fmt: skip
    """(speed-up of flat Mesh over ``baseline``, S) over the family, USP at the paper's degree."""
    points = verdict_sweep(
        GPUS, heads, 128, causal, FAMILY, (inter_bw,), (tflops,), _cluster(gpus_per_node, intra_bw=intra_bw),
        PAPER_CLAIMS["usp_ulysses_degree"],
    )  # fmt: skip
    return [(p.speedup_mesh[baseline], p.seq) for p in points]


def _speedup(baseline: str, up_to: bool):
    def measure(**settings) -> Figure:
        vals = _speedups(baseline, **settings)
        if up_to:
            best, seq = max(vals)
            return Figure(best, note=f"P = {GPUS}, S = {seq:,}")
        return Figure(
            statistics.fmean(v for v, _ in vals), note=f"mean over S = {', '.join(f'{s:,}' for _, s in vals)}"
        )

    return measure


def _reductions(*, heads: int, causal: bool, gpus_per_node: int) -> list[tuple[float, int]]:
    """(1 - Mesh / Ring max bytes per rank, S) over the family (exact counts of the kernels, forward + backward)."""
    out = []
    for seq in FAMILY:
        config = MeshAttentionConfig(mode="model", gpus=GPUS, seq=seq, heads=heads, head_dim=128, causal=causal,
                                     dtype="bfloat16", cluster=_cluster(gpus_per_node))  # fmt: skip
        ring, mesh = model_point("ring", GPUS, config), model_point("mesh", GPUS, config)
        out.append((1.0 - float(mesh.bytes_per_rank.max()) / float(ring.bytes_per_rank.max()), seq))
    return out


def _volume(up_to: bool):
    def measure(**settings) -> Figure:
        vals = _reductions(**settings)
        if up_to:
            best, seq = max(vals)
            return Figure(best, note=f"P = {GPUS}, S = {seq:,} (bytes per rank, max over ranks)")
        return Figure(statistics.fmean(v for v, _ in vals), note="mean over the family (bytes per rank)")

    return measure


def _claim(key: str, text: str, kind: str, paper: float, source: str, baseline: Baseline, measure, *,
           up_to: bool, with_time: bool = True) -> Claim:  # fmt: skip
    return Claim(
        technique="mesh-attention", key=key, text=text, kind=kind, paper=paper, paper_source=source,
        unit="x" if kind == "speedup" else "", baseline=baseline, assumptions=_assumptions(with_time=with_time),
        evidence=_EVIDENCE, measure=measure, scale="model", up_to=up_to,
    )  # fmt: skip


_NAMES = {"ring": ("Ring-Attention", _RING), "usp": ("USP (u = 8)", _USP), "startrail": ("StarTrail", _STARTRAIL)}
_v1 = PAPER_CLAIMS["v1"]

CLAIMS: tuple[Claim, ...] = (
    _claim("volume_avg_v1", "communication volume cut vs Ring-Attention, average on 256 GPUs", "gain",
           _v1["volume_reduction"][0], V1, _RING, _volume(False), up_to=False, with_time=False),
    _claim("volume_max_v1", "communication volume cut vs Ring-Attention on 256 GPUs (up to)", "gain",
           _v1["volume_reduction"][1], V1, _RING, _volume(True), up_to=True, with_time=False),
    _claim("speedup_ring_avg_v1", "speed-up over Ring-Attention, average on 256 GPUs", "speedup",
           _v1["speedup_ring"][0], V1, _RING, _speedup("ring", False), up_to=False),
    _claim("speedup_ring_max_v1", "speed-up over Ring-Attention on 256 GPUs (up to)", "speedup",
           _v1["speedup_ring"][1], V1, _RING, _speedup("ring", True), up_to=True),
    *(
        c
        for b, (avg, top) in PAPER_CLAIMS["v2"]["speedup"].items()
        for c in (
            _claim(f"speedup_{b}_avg_v2", f"speed-up over {_NAMES[b][0]}, average (up to 256 GPUs, 1M tokens)",
                   "speedup", avg, V2, _NAMES[b][1], _speedup(b, False), up_to=False),
            _claim(f"speedup_{b}_max_v2", f"speed-up over {_NAMES[b][0]} (up to; 256 GPUs, 1M tokens)",
                   "speedup", top, V2, _NAMES[b][1], _speedup(b, True), up_to=True),
        )
    ),
)  # fmt: skip
