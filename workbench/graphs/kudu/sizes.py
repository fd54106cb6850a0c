"""Size of a kudu run before it starts (issue #29): ``estimate(config) -> Estimate`` from closed forms.

``workers`` gloo processes, each holding its partition of the graph (size from the name or spec, before it is
read), its remote-vertex cache of ``cache_kb`` and chunks of ``chunk_size`` partial embeddings; the parent's
single-machine reference count; at most ``max_embeddings`` embeddings of k vertices kept.

Constants marked *measured* come from peak RSS (VmHWM after ``clear_refs``) of the smoke run on this repository's
CI machine; ``tests/test_memory.py`` checks every estimate against the measured peak within 2x.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.memory import MB, PROCESS_BYTES, Estimate

if TYPE_CHECKING:
    from workbench.graphs.kudu.config import KuduConfig

__all__ = ["estimate"]

#: the whole run is bounded by this config field (``--timeout-s``)
RUN_LIMIT = "timeout_s"
#: measured: the parent's fixed overhead at the smoke settings (imports, the launch)
BASE_BYTES = 60 * MB
#: bytes of a partial embedding in a chunk (k vertex ids and bookkeeping)
EMBEDDING_BYTES = 64


def estimate(config: KuduConfig) -> Estimate:
    """Peak bytes and seconds of ``workbench run kudu`` with ``config``."""
    from workbench.graphs.dwarvesgraph.sizes import PATTERN_VERTICES, enumeration, graph_shape
    from workbench.graphs.generators import BYTES_PER_RAW_EDGE, BYTES_PER_VERTEX

    n, m = graph_shape(config.graph)
    k = PATTERN_VERTICES.get(config.pattern, 4)
    graph = 2 * m * BYTES_PER_RAW_EDGE + n * BYTES_PER_VERTEX
    found = min(enumeration(n, m, k), config.max_embeddings)
    per_worker = PROCESS_BYTES + graph / config.workers + config.cache_kb * 1024 + config.chunk_size * k * 8 * 4
    embeddings = found * EMBEDDING_BYTES * k
    seconds = 4.0 + config.workers + 3 * enumeration(n, m, k) * 2e-6
    return Estimate(BASE_BYTES + 2 * graph + embeddings + config.workers * per_worker, seconds)
