"""Parameters of ``workbench run pattern-count`` (DwarvesGraph decomposition, plain enumeration, Kudu)."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.config import Config, param

ENGINES = ("decompose", "enumerate", "kudu")
MAX_MOTIF_K = 6


@dataclass(frozen=True, kw_only=True)
class DwarvesGraphConfig(Config):
    """Count one pattern, or every connected k-vertex pattern (``motifs=k``), in one graph."""

    graph: str = param(
        "karate",
        help="graph: a dataset name (karate, wiki-vote, planetoid-cora, planetoid-citeseer, "
        "planetoid-pubmed), a synthetic spec (er-1000-0.01, rmat-12-8, grid-30-30) or a "
        "file (.mtx or edge list)",
    )
    pattern: str = param(
        "triangle", help="pattern name (triangle, 4-cycle, house, 5-clique, ...) or edge list '0-1,1-2,2-0'"
    )
    induced: str = param(
        "edge",
        choices=("edge", "vertex"),
        label="induced by",
        help="edge: subgraphs isomorphic to the pattern; vertex: induced subgraphs isomorphic to it",
    )
    engine: str = param(
        "decompose",
        choices=ENGINES,
        help="decompose: DwarvesGraph (cost model picks decomposition or enumeration); enumerate: "
        "plain matching-order enumeration; kudu: distributed engine",
    )
    workers: int = param(1, lo=1, hi=64, unit="threads", help="threads per kernel (processes for kudu)")
    motifs: int = param(
        0,
        lo=0,
        hi=MAX_MOTIF_K,
        unit="vertices",
        label="motif size",
        help="0: count --pattern; k in 3..6: count every connected k-vertex pattern",
    )
    cost_model: str = param(
        "stats",
        choices=("stats", "sample"),
        help="plan choice: degree statistics only, or time the 3 best plans on a root sample",
    )
    data_dir: str = param("", help="data directory for dataset names (default: $WORKBENCH_DATA or the project's data/)")

    def check_combination(self) -> None:
        if self.motifs in (1, 2):
            raise ValueError(
                f"motifs={self.motifs} is out of range: valid values are 0 (count --pattern) or 3..{MAX_MOTIF_K}"
            )
        if not self.graph.strip():
            raise ValueError("graph='' is empty: valid values are a dataset name, a synthetic spec or a file path")
        if not self.motifs:
            from workbench.graphs.patterns import parse_pattern

            parse_pattern(self.pattern)  # ValueError naming the pattern and the valid forms
