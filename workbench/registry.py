"""The technique registry: one place where a technique declares its name, parameters, runner and panel.

The CLI (``workbench list`` / ``workbench run``), the panels in ``widgets/`` and the notebooks all look a
technique up here, so they share one config class (one validation) and one runner (one set of numbers).

A technique module exposes a module-level ``TECHNIQUE = Technique(...)``; the catalogue below maps each of
the workbench's eighteen techniques to that module, or to ``None`` while it is planned. Modules are imported
only when asked for, so ``workbench list`` stays fast.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Literal

from workbench.config import Config

__all__ = ["Technique", "CatalogueEntry", "catalogue", "get_technique", "technique_names"]

Status = Literal["ready", "planned"]


@dataclass(frozen=True, kw_only=True)
class Technique:
    """A runnable technique.

    name: CLI name (``mesh-attention``); summary: one line; config: the :class:`Config` subclass whose fields
    are the parameters; run: ``run(config) -> dict`` (the JSON ``workbench run --json`` prints);
    format_table: result dict -> text table; panel: ``"module:Class"`` of its panel in ``widgets/``;
    notebook: path of its notebook relative to the repository root.
    """

    name: str
    summary: str
    config: type[Config]
    run: Callable[[Config], dict[str, Any]]
    format_table: Callable[[dict[str, Any]], str]
    panel: str
    notebook: str

    def run_dict(self, params: dict[str, Any]) -> dict[str, Any]:
        """Validate ``params`` through the config class, then run."""
        return self.run(self.config.from_dict(params))

    def panel_class(self) -> type:
        module, _, cls = self.panel.partition(":")
        return getattr(importlib.import_module(module), cls)


@dataclass(frozen=True)
class CatalogueEntry:
    name: str
    area: str
    summary: str
    module: str | None  # module defining TECHNIQUE, None while planned

    @property
    def status(self) -> Status:
        return "ready" if self.module else "planned"


_CATALOGUE = (
    CatalogueEntry("mesh-attention", "LLM systems",
                   "2-D tile distributed attention vs Ring, Ulysses and USP: real gloo/NCCL kernels + cluster model",
                   "workbench.attention.runner"),
    CatalogueEntry("greedysnake", "LLM systems", "SSD-offloaded training with vertical scheduling", None),
    CatalogueEntry("srt", "LLM systems", "speculative RL rollouts from a per-prompt tree cache", None),
    CatalogueEntry("redox", "LLM systems", "data loading by file redirection", None),
    CatalogueEntry("cfp", "LLM systems", "intra-operator parallel-plan search", None),
    CatalogueEntry("dawnpiper", "LLM systems", "memory-aware pipeline partitioning", None),
    CatalogueEntry("devices", "Quantum",
                   "real device noise snapshots and a differentiable torch simulator, checked against qiskit-aer",
                   "workbench.quantum.runner"),
    CatalogueEntry("quest", "Quantum",
                   "graph transformer predicts circuit reliability (PST) on real device noise, vs two baselines",
                   "workbench.quantum.quest.runner"),
    CatalogueEntry("napa", "Quantum", "native-pulse variational ansatz", None),
    CatalogueEntry("robuststate", "Quantum", "noise-aware state preparation", None),
    CatalogueEntry("qgas", "Quantum", "LLM-proposed ansatz search", None),
    CatalogueEntry("pulse-zne", "Quantum", "reversed-pulse fidelity estimation and pulse ZNE", None),
    CatalogueEntry("hybrid-qaoa", "Quantum", "hybrid gate-pulse QAOA", None),
    CatalogueEntry("topgen", "Quantum", "topology-aware ansatz generation", None),
    CatalogueEntry("gnnpipe", "Graphs, recommenders, solvers", "layer-pipelined GNN training", None),
    CatalogueEntry("dwarvesgraph", "Graphs, recommenders, solvers",
                   "pattern-decomposition graph mining (runs as pattern-count)", "workbench.graphs.runner"),
    CatalogueEntry("pattern-count", "Graphs, recommenders, solvers",
                   "count a pattern or all k-motifs: decomposition, enumeration or Kudu engine",
                   "workbench.graphs.runner"),
    CatalogueEntry("kudu", "Graphs, recommenders, solvers",
                   "distributed pattern mining on a partitioned graph: real gloo processes, BFS-DFS hybrid, reuse",
                   "workbench.graphs.kudu.runner"),
    CatalogueEntry("fiited", "Graphs, recommenders, solvers", "embedding dimension pruning", None),
    CatalogueEntry("refloat", "Graphs, recommenders, solvers",
                   "block floating point for CG/BiCGSTAB on real SuiteSparse matrices + ReRAM time model",
                   "workbench.solvers.runner"),
)

_BY_NAME = MappingProxyType({e.name: e for e in _CATALOGUE})


def catalogue() -> tuple[CatalogueEntry, ...]:
    """Every technique of the workbench, ready or planned, in display order."""
    return _CATALOGUE


def technique_names(*, ready_only: bool = False) -> list[str]:
    return [e.name for e in _CATALOGUE if e.module or not ready_only]


def get_technique(name: str) -> Technique:
    """The :class:`Technique` called ``name``; ValueError for unknown or planned names."""
    entry = _BY_NAME.get(name)
    if entry is None:
        raise ValueError(f"technique={name!r} is unknown: valid techniques are {', '.join(technique_names(ready_only=True))}")
    if entry.module is None:
        raise ValueError(
            f"technique={name!r} is planned but not implemented yet: ready techniques are "
            f"{', '.join(technique_names(ready_only=True))}"
        )
    return importlib.import_module(entry.module).TECHNIQUE
