"""Parameters of GNNPipe (``workbench run gnnpipe --mode check|model ...``): data, model, parallelism, training."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.config import Config, param

MODES = ("check", "model")
DATASETS = ("cora", "citeseer", "pubmed")
MODELS = ("gcn", "gcnii")
CHUNK_ORDERS = ("fixed", "shuffled", "alternate")
STALE_GRADIENTS = ("drop", "deferred")
PARTITIONS = ("metis", "random")
DTYPES = ("float64", "float32")
PAPER_GRAPHS = ("ogbn-products", "ogbn-papers100m")


@dataclass(frozen=True, kw_only=True)
class GnnpipeConfig(Config):
    """Full-graph training of a deep GCN / GCNII: single process, graph parallel and GNNPipe on P processes."""

    mode: str = param(
        "check",
        choices=MODES,
        help="check: train full-graph, graph-parallel and GNNPipe for real on P processes; "
        "model: the analytic byte and time model at the paper's graph sizes (MODEL)",
    )
    dataset: str = param(
        "cora",
        choices=DATASETS,
        help="Planetoid dataset (pubmed: the shared copy lacks ind.pubmed.allx, so every node "
        "gets seeded random features; its accuracy is no claim)",
    )
    model: str = param(
        "gcnii",
        choices=MODELS,
        help="gcn: residual deep GCN (h + relu(LN(A h W + b)), DeepGCNs' res block); gcnii: GCNII (Chen et al. 2020)",
    )
    layers: int = param(16, lo=1, hi=128, unit="layers", help="graph convolution layers L (deep GNNs: 16-64)")
    hidden: int = param(64, lo=1, hi=1024, unit="channels", help="hidden width d")
    workers: int = param(
        4,
        lo=1,
        hi=16,
        unit="processes",
        help="P real processes (gloo): pipeline stages of GNNPipe, partitions of graph parallelism",
    )
    stages: int = param(
        0,
        lo=0,
        hi=16,
        unit="stages",
        help="hybrid: S pipeline stages x G = workers / S graph-parallel ranks per stage (S must divide "
        "workers and be at most layers); 0: the smallest divisor of workers above 1 (P = 4: 2 x 2; a prime P "
        "gives P x 1, i.e. GNNPipe with K = 1, which the result says)",
    )
    chunks: int = param(4, lo=1, hi=4096, unit="chunks", help="K graph chunks pipelined through the stages")
    chunk_order: str = param(
        "shuffled",
        choices=CHUNK_ORDERS,
        help="order of the chunks each epoch: fixed, shuffled (seeded per epoch), or alternate "
        "(reversed every other epoch)",
    )
    staleness: int = param(
        1,
        lo=0,
        hi=16,
        unit="epochs",
        help="bound on the age of historical embeddings (refreshed every `staleness` epochs); "
        "0: no history, edges to chunks not yet computed are dropped",
    )
    warmup: int = param(
        0,
        lo=0,
        hi=10_000,
        unit="epochs",
        help="first epochs trained without staleness (one chunk: exact), which also fill the history",
    )
    stale_gradients: str = param(
        "drop", choices=STALE_GRADIENTS, help="gradients across stale edges: drop them, or defer them to the next epoch"
    )
    partition: str = param(
        "metis",
        choices=PARTITIONS,
        help="graph parallelism's partition (and GNNPipe's chunking): METIS (pymetis) or random",
    )
    epochs: int = param(100, lo=1, hi=10_000, unit="epochs", help="training epochs (full-graph Adam steps)")
    lr: float = param(0.01, lo=1e-6, hi=10.0, help="Adam learning rate")
    weight_decay: float = param(5e-4, lo=0.0, hi=1.0, help="Adam weight decay (L2)")
    dropout: float = param(0.5, lo=0.0, hi=0.95, help="dropout before every layer (masks seeded per epoch and layer)")
    alpha: float = param(0.1, lo=0.0, hi=1.0, help="GCNII initial-residual weight alpha")
    lam: float = param(0.5, lo=0.0, hi=10.0, help="GCNII identity-mapping strength lambda (beta_l = ln(lambda/l + 1))")
    seed: int = param(0, lo=0, hi=2**31 - 1, help="seed of initial weights, dropout masks, chunk orders, partitions")
    eval_every: int = param(5, lo=1, hi=10_000, unit="epochs", help="epochs between accuracy points of the curves")
    dtype: str = param("float64", choices=DTYPES, help="training precision (float64: the exactness checks)")
    timeout_s: float = param(
        600.0,
        lo=1.0,
        hi=86_400.0,
        unit="s",
        help="wall-clock limit of each training run: the in-process full-graph one and each multi-process one",
    )
    data_dir: str = param("", help="data directory (empty: WORKBENCH_DATA or the shared data folder)")
    paper_graph: str = param("ogbn-products", choices=PAPER_GRAPHS, help="model mode: the paper-scale graph")
    gpus: int = param(4, lo=2, hi=1024, unit="GPUs (model)", help="model mode: GPUs P at paper scale")

    @property
    def hybrid_stages(self) -> int:
        """S of the hybrid: ``stages``, or (0) the smallest divisor of ``workers`` above 1 (1 for one worker)."""
        if self.stages:
            return self.stages
        return next((s for s in range(2, self.workers + 1) if self.workers % s == 0), 1)

    def check_combination(self) -> None:
        if self.mode == "check" and self.workers > self.layers:
            raise ValueError(
                f"workers={self.workers} is more than layers={self.layers}: a GNNPipe stage needs at "
                f"least one layer, so valid workers are 1..{self.layers}"
            )
        if self.mode == "check" and self.stages > self.layers:
            raise ValueError(
                f"stages={self.stages} is more than layers={self.layers}: a hybrid stage needs at least "
                f"one layer, so valid stages are 1..{self.layers} (or 0: automatic)"
            )
        if self.mode == "check" and self.stages and self.workers % self.stages:
            divisors = [s for s in range(1, self.workers + 1) if self.workers % s == 0]
            raise ValueError(
                f"stages={self.stages} does not divide workers={self.workers}: the hybrid runs stages x G "
                f"graph-parallel ranks = workers, so valid stages are {', '.join(map(str, divisors))} "
                f"(or 0: automatic)"
            )
        if self.mode == "model" and self.gpus > self.layers:
            raise ValueError(
                f"gpus={self.gpus} is more than layers={self.layers}: a GNNPipe stage needs at least "
                f"one layer, so valid gpus are 2..{self.layers}"
            )


# ----------------------------------------------------------------------------------------------- view configs
@dataclass(frozen=True, kw_only=True)
class StudySettings:
    """The notebook's sweeps (:func:`workbench.graphs.gnnpipe.study.studies`): accuracy over ``seeds`` (GNNPipe
    with and without ``warmup`` epochs), full-graph accuracy of both models at ``depths`` (layers), and GNNPipe's
    accuracy per chunk count in ``chunks`` and order in ``orders`` over ``sweep_seeds``. Defaults: the notebook's."""

    seeds: tuple[int, ...] = (0, 1, 2)
    warmup: int = 10
    depths: tuple[int, ...] = (2, 8, 16, 32)
    chunks: tuple[int, ...] = (2, 4, 8)
    orders: tuple[str, ...] = ("fixed", "shuffled")
    sweep_seeds: tuple[int, ...] = (0, 1)

    def __post_init__(self) -> None:
        for name, low in (("seeds", 0), ("depths", 1), ("chunks", 1), ("sweep_seeds", 0)):
            values = getattr(self, name)
            if not values or any(isinstance(v, bool) or not isinstance(v, int) or v < low for v in values):
                raise ValueError(
                    f"{name}={values!r} is not allowed: valid values are non-empty tuples of integers >= {low}"
                )
        bad = [o for o in self.orders if o not in CHUNK_ORDERS]
        if not self.orders or bad:
            raise ValueError(f"orders={self.orders!r} is not allowed: valid values are tuples of {CHUNK_ORDERS}")
        if isinstance(self.warmup, bool) or not isinstance(self.warmup, int) or self.warmup < 0:
            raise ValueError(f"warmup={self.warmup!r} is not allowed: valid values are integers >= 0 (epochs)")


#: the setting the notebook trains at its defaults (its parameters cell), whose sweeps ship recorded
NOTEBOOK_SETTING = dict(dataset="cora", model="gcnii", layers=16, hidden=32, workers=4, chunks=4, epochs=60, warmup=0,
                        eval_every=5)  # fmt: skip
#: the quick form of the recording command (``python -m workbench.graphs.gnnpipe.study --quick OUT``)
QUICK_SETTING = dict(dataset="cora", model="gcnii", layers=4, hidden=8, workers=2, chunks=2, epochs=3, warmup=0,
                     eval_every=3)  # fmt: skip
QUICK_STUDY = StudySettings(seeds=(0, 1), warmup=1, depths=(2, 4), chunks=(1, 2), sweep_seeds=(0,))
