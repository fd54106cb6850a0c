"""The technique registry: one place where a technique declares its name, parameters, runner and panel.

The CLI (``workbench list`` / ``workbench run``), the panels in ``widgets/`` and the notebooks all look a
technique up here, so they share one config class (one validation) and one runner (one set of numbers).

A technique module exposes a module-level ``TECHNIQUE = Technique(...)``; the catalogue below maps each of
the workbench's eighteen techniques to that module, or to ``None`` while it is planned. Modules are imported
only when asked for, so ``workbench list`` stays fast.

Every ready technique also has a ``sizes.py`` beside its runner (:attr:`CatalogueEntry.sizes`) declaring
``estimate(config) -> workbench.memory.Estimate`` from closed forms: what a run will take before it starts
(:func:`estimate`; ``workbench run`` refuses what cannot fit and shows progress for long runs).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from workbench.config import Config
from workbench.memory import Estimate, check_estimate
from workbench.results import Result

__all__ = [
    "AREAS",
    "Technique",
    "CatalogueEntry",
    "catalogue",
    "entry",
    "estimate",
    "check_fits",
    "get_technique",
    "run_limit",
    "import_area",
    "technique_names",
]

Status = Literal["ready", "planned"]


@dataclass(frozen=True, kw_only=True)
class Technique:
    """A runnable technique.

    name: CLI name (``mesh-attention``); config: the :class:`Config` subclass whose fields are the parameters; run: ``run(config) -> Result`` (a typed result whose ``to_json()`` is what
    ``workbench run --json`` prints); format_table: JSON dict -> text table; panel: ``"module:Class"`` of its
    panel in ``widgets/``; notebook: path of its notebook relative to the repository root; smoke: parameters
    of a run that takes seconds (the contract test runs it); processes: True when ``run`` starts worker
    processes (the fault tests then apply).
    """

    name: str
    config: type[Config]
    run: Callable[[Config], Result]
    format_table: Callable[[dict[str, Any]], str]
    panel: str
    notebook: str
    smoke: Mapping[str, Any] = field(default_factory=dict)
    processes: bool = False

    @property
    def summary(self) -> str:
        """The one-line summary: the catalogue's (declared once, there)."""
        return entry(self.name).summary

    def run_dict(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """Validate ``params`` through the config class, run, and return the JSON object."""
        result = self.run(self.config.from_dict(params))
        return result.to_json() if isinstance(result, Result) else result

    def panel_class(self) -> type:
        module, _, cls = self.panel.partition(":")
        return getattr(importlib.import_module(module), cls)


#: area folder name -> heading shown in lists (the same folder names on every floor)
AREAS = MappingProxyType(
    {
        "llm": "LLM systems",
        "quantum": "Quantum",
        "graphs": "Graphs",
        "recsys": "Recommenders",
        "solvers": "Solvers",
    }
)


@dataclass(frozen=True)
class CatalogueEntry:
    """One technique of the workbench: ``name`` (CLI name), ``area`` (a key of :data:`AREAS`), one-line
    ``summary``, the ``module`` defining ``TECHNIQUE`` (None while planned) and older CLI names (``aliases``)."""

    name: str
    area: str
    summary: str
    module: str | None = None
    aliases: tuple[str, ...] = ()

    @property
    def status(self) -> Status:
        return "ready" if self.module else "planned"

    @property
    def package(self) -> str:
        """The technique's package name, e.g. ``mesh_attention`` (also its widget and notebook file name)."""
        return self.name.replace("-", "_")

    @property
    def sizes(self) -> str | None:
        """The module declaring ``estimate(config) -> Estimate`` (``sizes.py`` beside the runner); None while
        planned."""
        return self.module.rpartition(".")[0] + ".sizes" if self.module else None


_CATALOGUE = (
    CatalogueEntry(
        "mesh-attention",
        "llm",
        "2-D tile distributed attention vs Ring, Ulysses and USP: real gloo/NCCL kernels + cluster model",
        "workbench.llm.mesh_attention.runner",
    ),
    CatalogueEntry(
        "greedysnake",
        "llm",
        "SSD-offloaded training: horizontal vs vertical (snake) schedules, deferred optimizer, byte-exact",
        "workbench.llm.greedysnake.runner",
    ),
    CatalogueEntry(
        "srt",
        "llm",
        "speculative RL rollouts from a per-prompt tree cache: lossless checks, GRPO, paper-scale model",
        "workbench.llm.srt.runner",
    ),
    CatalogueEntry(
        "redox",
        "llm",
        "data loading by file redirection: chunks read once, every record once, vs PyTorch and block shuffle",
        "workbench.llm.redox.runner",
    ),
    CatalogueEntry(
        "cfp",
        "llm",
        "intra-operator parallel-plan search (ParallelBlocks, segments, DP) vs brute force and the Alpa ILP; "
        "plans run on gloo",
        "workbench.llm.cfp.runner",
    ),
    CatalogueEntry(
        "dawnpiper",
        "llm",
        "memory-aware pipeline partitioning: fx node graph, swap/recompute per tensor, real gloo pipeline",
        "workbench.llm.dawnpiper.runner",
    ),
    CatalogueEntry(
        "devices",
        "quantum",
        "real device noise snapshots and a differentiable torch simulator, checked against qiskit-aer",
        "workbench.quantum.devices.runner",
    ),
    CatalogueEntry(
        "quest",
        "quantum",
        "graph transformer predicts circuit reliability (PST) on real device noise, vs two baselines and qiskit-aer",
        "workbench.quantum.quest.runner",
    ),
    CatalogueEntry(
        "pulse-sim",
        "quantum",
        "transmon pulse simulator in torch on real device Hamiltonians: calibrated X/SX/ECR, checked against qutip",
        "workbench.quantum.pulse_sim.runner",
    ),
    CatalogueEntry(
        "napa",
        "quantum",
        "native-pulse variational ansatz: VQE on a device's transmons vs gate ansaetze compiled to the same pulses",
        "workbench.quantum.napa.runner",
    ),
    CatalogueEntry(
        "robuststate",
        "quantum",
        "noise-aware state preparation: machine forward, simulator backward, on device snapshots",
        "workbench.quantum.robuststate.runner",
    ),
    CatalogueEntry(
        "qgas",
        "quantum",
        "LLM-proposed ansatz search: pluggable proposer, OpenQASM 3 validation, VQE/QAOA training",
        "workbench.quantum.qgas.runner",
    ),
    CatalogueEntry(
        "pulse-zne",
        "quantum",
        "reversed-pulse fidelity estimation and pulse ZNE (folding, stretching) on a NAPA H2 ansatz",
        "workbench.quantum.pulse_zne.runner",
    ),
    CatalogueEntry(
        "hybrid-qaoa",
        "quantum",
        "hybrid gate-pulse QAOA: gate cost layer, trainable pulse mixer, vs gate QAOA on a device's transmons",
        "workbench.quantum.hybrid_qaoa.runner",
    ),
    CatalogueEntry(
        "topgen",
        "quantum",
        "topology-aware ansatz generation vs HEA and QuantumNAS-style circuits under device noise",
        "workbench.quantum.topgen.runner",
        aliases=("expressibility",),
    ),
    CatalogueEntry(
        "gnnpipe",
        "graphs",
        "layer-pipelined GNN training vs graph parallelism on real gloo processes: counted bytes, paper-scale model",
        "workbench.graphs.gnnpipe.runner",
    ),
    CatalogueEntry(
        "dwarvesgraph",
        "graphs",
        "pattern-decomposition graph mining: count a pattern or all k-motifs (decomposition, enumeration "
        "or the Kudu engine)",
        "workbench.graphs.dwarvesgraph.runner",
        aliases=("pattern-count",),
    ),
    CatalogueEntry(
        "kudu",
        "graphs",
        "distributed pattern mining on a partitioned graph: real gloo processes, BFS-DFS hybrid, reuse",
        "workbench.graphs.kudu.runner",
    ),
    CatalogueEntry(
        "fiited",
        "recsys",
        "per-vector embedding dimension pruning during DLRM training on a VHPI chunk table, vs five "
        "baselines at equal memory",
        "workbench.recsys.fiited.runner",
    ),
    CatalogueEntry(
        "refloat",
        "solvers",
        "block floating point for CG/BiCGSTAB on real SuiteSparse matrices + ReRAM time model",
        "workbench.solvers.refloat.runner",
    ),
)

_BY_NAME = MappingProxyType({n: e for e in _CATALOGUE for n in (e.name, *e.aliases)})


def catalogue() -> tuple[CatalogueEntry, ...]:
    """Every technique of the workbench, ready or planned, in display order."""
    return _CATALOGUE


def technique_names(*, ready_only: bool = False) -> list[str]:
    return [e.name for e in _CATALOGUE if e.module or not ready_only]


def entry(name: str) -> CatalogueEntry:
    """The catalogue entry called ``name`` (or one of its aliases); ValueError for unknown names."""
    found = _BY_NAME.get(name)
    if found is None:
        raise ValueError(
            f"technique={name!r} is unknown: valid techniques are {', '.join(technique_names(ready_only=True))}"
        )
    return found


def get_technique(name: str) -> Technique:
    """The :class:`Technique` called ``name`` (or an alias); ValueError for unknown or planned names."""
    found = entry(name)
    if found.module is None:
        raise ValueError(
            f"technique={name!r} is planned but not implemented yet: ready techniques are "
            f"{', '.join(technique_names(ready_only=True))}"
        )
    return importlib.import_module(found.module).TECHNIQUE


def estimate(name: str, config: Config) -> Estimate:
    """What a run of technique ``name`` with ``config`` will take (peak bytes, seconds), from its ``sizes.py``."""
    sizes = entry(name).sizes
    if sizes is None:
        raise ValueError(f"technique={name!r} is planned but not implemented yet: it has no size estimate")
    found = importlib.import_module(sizes).estimate(config)
    if not isinstance(found, Estimate):
        raise TypeError(f"{sizes}.estimate returned {type(found).__name__}, not an Estimate")
    return found


def check_fits(name: str, found: Estimate, *, what: str | None = None) -> None:
    """Refuse a run of technique ``name`` estimated at ``found`` (ValueError: ``workbench run``'s one line, the
    estimate and the available memory) when it cannot fit; ``what`` names the run (default: as the CLI does).
    Panels (``widgets.base.Action``) and ``workbench report`` refuse through this, with the CLI's words."""
    sizes = entry(name).sizes if name else None
    check_estimate(
        found,
        what=what or f"workbench run {name} with these settings",
        hint=f"choose smaller sizes (estimated by {sizes}.estimate)" if sizes else "choose smaller sizes",
    )


def run_limit(name: str, config: Config) -> tuple[float, str] | None:
    """The wall-clock limit of a whole run of ``name`` (seconds, and the flag that sets it), or None.

    A technique's ``sizes.py`` names the config field that bounds its whole run in ``RUN_LIMIT`` (``"timeout_s"``);
    a technique whose ``timeout_s`` bounds something else (QGAS: each request to the proposer) declares none.
    """
    sizes = entry(name).sizes
    field_name = getattr(importlib.import_module(sizes), "RUN_LIMIT", None) if sizes else None
    if field_name is None:
        return None
    return float(getattr(config, field_name)), "--" + field_name.replace("_", "-")


def import_area(area: str) -> None:
    """Import every ready technique of ``area``, so that techniques which plug into an area engine (such as
    Kudu's ``--engine kudu``) have registered themselves."""
    if area not in AREAS:
        raise ValueError(f"area={area!r} is unknown: valid areas are {', '.join(AREAS)}")
    for e in _CATALOGUE:
        if e.area == area and e.module:
            importlib.import_module(e.module)


def markdown_table(link_prefix: str = "") -> str:
    """The technique table of the README (``link_prefix=""``) and of ``notebooks/index.ipynb`` (pass
    ``"notebooks/"``: its links are relative to that folder). Ready techniques link their notebook. Generated
    by ``workbench list --markdown``; tests check the README and the index hold it unchanged."""
    rows = ["| area | technique | status | notebook |", "|---|---|---|---|"]
    for e in _CATALOGUE:
        name = f"**{e.name}**" + (f" (also `{'`, `'.join(e.aliases)}`)" if e.aliases else "")
        if e.module:
            path = f"notebooks/{e.area}/{e.package}.ipynb"
            shown = path.removeprefix(link_prefix)
            link = f"[`{shown}`]({shown})"
        else:
            link = ""
        rows.append(f"| {AREAS[e.area]} | {name}: {e.summary} | {e.status} | {link} |")
    return "\n".join(rows)
