"""Size of a dwarvesgraph run before it starts (issue #29): ``estimate(config) -> Estimate`` from closed forms.

The graph (vertices n and edges m from its name, spec or file size, before it is read:
:data:`workbench.graphs.generators.BYTES_PER_RAW_EDGE` per edge), the decomposition's partial counts, and the
enumeration: about n (2m/n)^(k-1) / (k-1)! candidate extensions for a k-vertex pattern (k = ``motifs``, or the
pattern's vertices), times the patterns counted for motifs.

Constants marked *measured* come from peak RSS (VmHWM after ``clear_refs``) of the smoke run on this repository's
CI machine; ``tests/test_memory.py`` checks every estimate against the measured peak within 2x.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.memory import MB, PROCESS_BYTES, Estimate

if TYPE_CHECKING:
    from workbench.graphs.dwarvesgraph.config import DwarvesGraphConfig

__all__ = ["estimate", "graph_shape", "enumeration"]


#: vertices and edges of the registry graphs (their published sizes)
REGISTRY = {
    "karate": (34, 78),
    "wiki-vote": (7_115, 103_689),
    "planetoid-cora": (2_708, 5_278),
    "planetoid-citeseer": (3_327, 4_552),
    "planetoid-pubmed": (19_717, 44_324),
}
#: vertices of the named patterns (others: 4)
PATTERN_VERTICES = {"edge": 2, "wedge": 3, "triangle": 3, "square": 4, "4-cycle": 4, "diamond": 4, "4-clique": 4,
                    "house": 5, "5-clique": 5, "tailed-triangle": 4, "4-path": 4, "4-star": 4}  # fmt: skip
#: measured: the run's fixed overhead at the smoke settings (imports of the miner, the graph's arrays)
BASE_BYTES = 60 * MB
#: measured: seconds per candidate extension (pure Python and numpy set operations); connected k-vertex patterns
EXTENSION_S = 2e-6
#: measured: seconds to compile one pattern's plan, at 4 vertices (karate, motifs=4: 0.88 s for 6 patterns; motifs=5:
#: 28 s for 21), growing about 9x per vertex
COMPILE_S, COMPILE_GROWTH = 0.15, 9.0
MOTIFS = {3: 2, 4: 6, 5: 21, 6: 112, 7: 853, 8: 11_117}


def graph_shape(spec: str) -> tuple[float, float]:
    """(vertices, edges) of a graph name, synthetic spec or file, estimated without reading it."""
    spec = spec.strip()
    if spec in REGISTRY:
        return REGISTRY[spec]
    parts = spec.split("-")
    try:
        if parts[0] == "er" and len(parts) >= 3:
            n = float(parts[1])
            return n, float(parts[2]) * n * (n - 1) / 2
        if parts[0] == "rmat" and len(parts) >= 3:
            n = 2.0 ** min(float(parts[1]), 60)
            return n, float(parts[2]) * n
        if parts[0] == "grid" and len(parts) == 3:
            return float(parts[1]) * float(parts[2]), 2 * float(parts[1]) * float(parts[2])
    except ValueError:
        pass
    try:
        size = Path(spec).expanduser().stat().st_size if re.search(r"[/.]", spec) else 0
    except (OSError, ValueError):
        size = 0
    m = max(size / 12, 1.0)  # an edge list line "1234 5678\n"
    return max(m / 4, 1.0), m


def enumeration(n: float, m: float, k: int) -> float:
    """Candidate extensions of a k-vertex enumeration: n (2m/n)^(k-1) / (k-1)! (at least n)."""
    degree = 2 * m / max(n, 1.0)
    return max(n * degree ** (k - 1) / math.factorial(k - 1), n)


def estimate(config: DwarvesGraphConfig) -> Estimate:
    """Peak bytes and seconds of ``workbench run dwarvesgraph`` with ``config``."""
    from workbench.graphs.generators import BYTES_PER_RAW_EDGE, BYTES_PER_VERTEX

    n, m = graph_shape(config.graph)
    k = config.motifs or PATTERN_VERTICES.get(config.pattern, 4)
    patterns = MOTIFS.get(k, 1) if config.motifs else 1
    graph = 2 * m * BYTES_PER_RAW_EDGE + n * BYTES_PER_VERTEX
    work = enumeration(n, m, k) * patterns
    workers = config.workers * PROCESS_BYTES if config.engine == "kudu" else 0
    compile_s = patterns * COMPILE_S * COMPILE_GROWTH ** (k - 4)
    return Estimate(BASE_BYTES + graph + workers, 1.0 + compile_s + work * EXTENSION_S)
