"""Kudu (Chen & Qian, ASPLOS'23): distributed graph pattern mining on a partitioned graph.

Extendable embeddings with vertical and horizontal data reuse, explored BFS-DFS hybrid over P real
``torch.distributed`` processes that fetch remote adjacency lists by messages; plus DFS, BFS and a naive
no-reuse baseline, and a labelled model that carries the measured costs to paper-scale graphs.
Entry point: :func:`count_distributed`.
"""

from workbench.graphs.kudu.count import KuduResult, count_distributed
from workbench.graphs.kudu.engine import STRATEGIES, EngineOptions

__all__ = ["KuduResult", "count_distributed", "EngineOptions", "STRATEGIES"]
