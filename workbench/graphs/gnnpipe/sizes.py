"""Size of a gnnpipe run before it starts (issue #29): ``estimate(config) -> Estimate`` from closed forms.

Check: the Planetoid graph (features n x f), the in-process full-graph training (activations n x hidden per layer,
kept for the backward, with GCNII's initial residual) and ``workers`` gloo processes holding their layers or
partitions, for ``epochs`` epochs; model: the paper-scale model's arrays.

Constants marked *measured* come from peak RSS (VmHWM after ``clear_refs``) of the smoke run on this repository's
CI machine; ``tests/test_memory.py`` checks every estimate against the measured peak within 2x.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.memory import MB, PROCESS_BYTES, Estimate

if TYPE_CHECKING:
    from workbench.graphs.gnnpipe.config import GnnpipeConfig

__all__ = ["estimate"]

#: the whole run is bounded by this config field (``--timeout-s``)
RUN_LIMIT = "timeout_s"
#: vertices, edges and feature width of the Planetoid data sets
DATASETS = {"cora": (2_708, 10_556, 1_433), "citeseer": (3_327, 9_104, 3_703), "pubmed": (19_717, 88_648, 500)}
#: measured: the parent's fixed overhead at the smoke settings (the data set's arrays, lazy imports)
BASE_BYTES = 120 * MB
#: effective rate (flop/s) of the sparse and dense kernels
FLOPS = 5e8


def estimate(config: GnnpipeConfig) -> Estimate:
    """Peak bytes and seconds of ``workbench run gnnpipe`` with ``config``."""
    if config.mode != "check":
        return Estimate(BASE_BYTES / 2, 1.0)
    n, m, f = DATASETS.get(config.dataset, DATASETS["pubmed"])
    e = 8 if config.dtype == "float64" else 4
    acts = config.layers * n * config.hidden * e * 6  # per layer: input, aggregate, output, masks and gradients
    data = n * f * e * 2 + m * 16
    run = acts + data + 4 * config.layers * config.hidden**2 * e
    flops = (
        config.epochs * config.layers * (2 * m * config.hidden + 2 * n * config.hidden**2) * 3
        + config.epochs * n * f * config.hidden * 6
    )
    runs = 3  # the full-graph reference, the layer pipeline and graph parallelism
    return Estimate(
        BASE_BYTES + 2 * run + config.workers * (PROCESS_BYTES + data / 2 + run / config.workers),
        4.0 + 2 * config.workers + runs * flops / FLOPS,
    )
