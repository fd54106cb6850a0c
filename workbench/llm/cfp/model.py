"""Paper scale (MODEL): plans for GPT, LLaMA and an MoE layer stack priced by the cost model on a ClusterSpec.

Nothing here is measured. Compute is ``3 x forward FLOPs / split / effective FLOP/s``; collectives are ring
alpha-beta on the mesh axis's link (NVLink inside a node, the network across); memory is weights + gradients +
Adam state (16 B per parameter) and every operator's saved output. CFP's v1 setting (GPUs, meshes, batch) is
not readable, so :data:`PAPER_SETTING` is ours: 16 GPUs as two 8-GPU nodes, a 2 x 8 mesh (axis 0 across nodes),
16 sequences of 2048 tokens.

"Alpa" is the ILP with Alpa's objective (no compute term; heavy operators never replicated), priced here with
compute included; "ILP" is the same ILP with our full objective (the per-operator optimum: never worse than
CFP's block DP by construction). Both see ``ilp_layers`` layers and their plan is repeated over the depth.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.cluster import PRESETS, ClusterSpec
from workbench.llm.cfp.config import CfpConfig
from workbench.llm.cfp.search import SearchOutcome, search

__all__ = ["MODEL_LABEL", "PAPER_SETTING", "PaperRow", "paper_row"]

MODEL_LABEL = "MODEL (cost model, not measured)"
#: our paper-scale setting (CFP v1's is not readable): two 8-GPU nodes, mesh 2 x 8, 16 sequences per step
PAPER_SETTING = {"gpus": 16, "mesh": "2x8", "batch": 16, "ilp_layers": 1}


@dataclass(frozen=True)
class PaperRow:
    """One model at paper scale: seconds per step of each plan (None when impossible), whether it fits, and
    CFP's speed-ups."""

    model: str
    layers: int
    operators: int
    cfp: float
    ilp: float | None
    alpa: float | None
    megatron: float | None
    data_parallel: float | None
    fits: dict
    cfp_search_seconds: float
    ilp_search_seconds: float | None
    combinations_before_log10: float
    combinations_after_log10: float

    @property
    def speedup_vs_alpa(self) -> float | None:
        return None if self.alpa is None else self.alpa / self.cfp


def paper_row(model: str, *, cluster: ClusterSpec | None = None, **setting) -> tuple[PaperRow, SearchOutcome]:
    """Search ``model`` (a :data:`~workbench.llm.cfp.graph.PAPER_MODELS` name) at its own depth."""
    s = {**PAPER_SETTING, **setting}
    config = CfpConfig(
        mode="search", model=model, layers=0, gpus=s["gpus"], mesh=s["mesh"], batch=s["batch"],
        ilp_layers=s["ilp_layers"], brute_force_limit=0, cluster=cluster or PRESETS["h800-sxm-nvlink-ib"],
    )  # fmt: skip
    out = search(config)

    def sec(p):
        return None if p is None else p.seconds

    fits = {p.name: p.fits for p in (out.plan_cost, out.ilp, out.alpa, out.megatron, out.data_parallel) if p}
    row = PaperRow(
        model, out.graph.layers, len(out.graph.ops), out.plan_cost.seconds, sec(out.ilp), sec(out.alpa),
        sec(out.megatron), sec(out.data_parallel), fits, out.cfp_seconds,
        out.ilp.search_seconds if out.ilp else None, out.problem.combinations_log10, out.blocks.combinations_log10,
    )  # fmt: skip
    return row, out
