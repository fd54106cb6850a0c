"""Redox beside the strongest fair baseline, block shuffle (chunks in a random order, records drawn from a window
of K resident chunks: the same memory and the same prefetch engine), and beside the PyTorch DataLoader the paper
beats (RandomSampler over one file per record, in the main process and with worker processes), on the same
generated files, in one process.

The random reader over the packed files appears three times: the *emulated* one (an LRU page cache of K chunks
in 128 KiB readahead blocks: what a dataset much larger than memory sees, and what the MODEL assumes) and two real
ones (one ``pread`` per record through the OS page cache and its readahead; and with readahead off and every range
dropped after its read: no page cache).

Every round drops the page cache of every file first; bytes are the device's (``/proc/self/io`` read_bytes, or
counted where that does not move, labelled). Loaders run in alternating order (A, B, ..., then reversed);
throughput and time to first batch are medians over rounds, ratios medians of per-round ratios. Randomness
(per-batch label KL, whole epoch and last 10 %) is computed on the loaders' own orders with labels shuffled on
disk and sorted by class on disk; accuracy is the digits MLP trained with those orders (mean over seeds).
"""

from __future__ import annotations

from benchmarks.common import Section, Table, fmt_ratio, median
from workbench.llm.redox import study
from workbench.llm.redox.config import RedoxConfig
from workbench.llm.redox.experiment import ensure_dataset
from workbench.llm.redox.loaders import MEMORY, measure

FULL = {
    "records": 10_000,
    "record_kb": 16.0,
    "chunk_kb": 1024.0,
    "resident": 8,
    "batch": 64,
    "rounds": 3,
    "pairs": 8,
    "seeds": 3,
}
QUICK = {
    "records": 400,
    "record_kb": 8.0,
    "chunk_kb": 128.0,
    "resident": 2,
    "batch": 32,
    "rounds": 2,
    "pairs": 2,
    "seeds": 1,
}
PEERS = (
    "block-shuffle",
    "random-files",
    "random-files-workers",
    "random-packed",
    "random-packed-os",
    "random-packed-direct",
)
#: the claim keys this group records (``workbench.claims.recorded``), each Redox / peer unless named otherwise
CLAIM_PREFIX = "redox."


def _rounds(store, p: dict) -> dict[str, list]:
    names = ("redox", *PEERS)
    runs: dict[str, list] = {n: [] for n in names}
    for i in range(p["rounds"]):
        for name in names if i % 2 == 0 else reversed(names):
            runs[name].append(measure(store, name, resident=p["resident"], batch=p["batch"], seed=i, epoch=i)[0])
    return runs


def _pairs(store, p: dict) -> list[tuple[float, float]]:
    """Redox and block shuffle alone, ``pairs`` more cold epochs each, alternating (A B, B A, ...): the two differ
    only in their order, so their ratio is what contention on a shared machine blurs most. Returns per pair
    (records/s Redox / block shuffle, first batch block shuffle / Redox)."""
    out = []
    for i in range(p["pairs"]):
        names = ("redox", "block-shuffle") if i % 2 == 0 else ("block-shuffle", "redox")
        got = {n: measure(store, n, resident=p["resident"], batch=p["batch"], seed=100 + i, epoch=i)[0] for n in names}
        a, b = got["redox"], got["block-shuffle"]
        out.append((a.items_per_s / b.items_per_s, b.time_to_first_batch_s / a.time_to_first_batch_s))
    return out


def _loader_table(store, p: dict, runs: dict[str, list]) -> Table:
    rows = []
    for name, rs in runs.items():
        ratio = median([a.items_per_s / b.items_per_s for a, b in zip(runs["redox"], rs)])
        rows.append(
            (
                name,
                MEMORY.get(name, f"K = {p['resident']} chunks"),
                f"{median([r.bytes_read for r in rs]) / 1e6:.2f}",
                f"{median([r.read_amplification for r in rs]):.3f}",
                f"{median([r.reads for r in rs]):.0f}",
                f"{median([r.items_per_s for r in rs]):.0f}",
                f"{median([r.time_to_first_batch_s for r in rs]) * 1e3:.2f}",
                fmt_ratio(ratio),
                rs[0].bytes_source,
            )
        )
    return Table(
        headers=(
            "loader",
            "memory",
            "MB read",
            "read amplification",
            "reads",
            "records/s",
            "first batch (ms)",
            "Redox / loader (records/s)",
            "bytes from",
        ),
        rows=tuple(rows),
        caption=f"{store.n} records ({store.total_bytes / 1e6:.1f} MB, ImageNet-like sizes, mean "
        f"{store.length.mean() / 1024:.1f} KB) in {store.n_chunks} chunks of <= {p['chunk_kb']:g} KB; K = "
        f"{p['resident']} chunks; batch {p['batch']}; medians of {p['rounds']} cold rounds (page cache dropped)",
    )


def _randomness_rows(p: dict) -> list[tuple[str, ...]]:
    base = RedoxConfig(records=p["records"], record_kb=p["record_kb"], chunk_kb=p["chunk_kb"], batch=p["batch"])
    rows = []
    for layout in ("shuffled", "class-sorted"):
        view = study.order_view({**base.__dict__, "resident": p["resident"], "layout": layout})
        for name in ("redox", "block-shuffle", "random-sampler"):
            r = view.randomness[name]
            rows.append((layout, name, f"{r.label_kl:.4f}", f"{r.label_kl_tail:.4f}", f"{r.chunkmate_spread:.3f}"))
    return rows


def _learning_rows(p: dict) -> tuple[list[tuple[str, ...]], dict[tuple[str, str, int], float]]:
    k = max(1, p["resident"] // 2)  # the digits set has 22 chunks of 64 records: K chunks of it, not of the files
    runs = (("full-shuffle", 1), ("redox", 1), ("block-shuffle", 1), ("redox", k), ("block-shuffle", k))
    rows, acc = [], {}
    for layout in ("shipped", "class-sorted"):
        for r in study.learning_summary(study.learning_curves(layout, seeds=p["seeds"], epochs=8, runs=runs)):
            acc[(layout, r["order"], r["resident"])] = r["final_mean"]
            rows.append((layout, r["order"], str(r["resident"]), f"{r['final_mean']:.3f}", f"{r['final_std']:.3f}"))
    return rows, acc


def run(*, quick: bool) -> Section:
    p = QUICK if quick else FULL
    config = RedoxConfig(
        records=p["records"], record_kb=p["record_kb"], chunk_kb=p["chunk_kb"], resident=p["resident"], batch=p["batch"]
    )
    store, _ = ensure_dataset(config)
    runs = _rounds(store, p)
    pairs = _pairs(store, p)
    loaders = _loader_table(store, p, runs)
    pair_ratios = [r for r, _ in pairs] + [
        a.items_per_s / b.items_per_s for a, b in zip(runs["redox"], runs["block-shuffle"])
    ]
    pair_first = [f for _, f in pairs] + [
        b.time_to_first_batch_s / a.time_to_first_batch_s for a, b in zip(runs["redox"], runs["block-shuffle"])
    ]
    paired = Table(
        headers=(
            "pairs",
            "Redox / block shuffle, records/s: median",
            "min",
            "max",
            "first batch, block shuffle / Redox: median",
        ),
        rows=(
            (
                str(len(pair_ratios)),
                f"{median(pair_ratios):.3f}",
                f"{min(pair_ratios):.3f}",
                f"{max(pair_ratios):.3f}",
                f"{median(pair_first):.3f}",
            ),
        ),
        caption="Redox against block shuffle alone: the rounds above plus alternating cold pairs of the two",
    )
    randomness = Table(
        headers=("labels on disk", "order", "per-batch label KL (nats)", "KL, last 10 %", "chunk-mate spread"),
        rows=tuple(_randomness_rows(p)),
        caption=f"The loaders' own orders at K = {p['resident']} chunks, batch {p['batch']}, 10 classes "
        "(RandomSampler's KL is what a random batch has; a full shuffle's chunk-mate spread is 0.289)",
    )
    learn_rows, acc = _learning_rows(p)
    learning = Table(
        headers=("labels on disk", "order", "K (chunks of 64 records)", "test accuracy (mean)", "std over seeds"),
        rows=tuple(learn_rows),
        caption=f"Digits MLP, 8 epochs, {p['seeds']} seeds, trained with each loader's order",
    )
    by = {row[0]: row for row in loaders.rows}

    def ratio(peer: str, key: str = "items_per_s") -> float:
        return median([getattr(a, key) / getattr(b, key) for a, b in zip(runs["redox"], runs[peer])])

    claims = {f"{CLAIM_PREFIX}items_per_s_over_{n.replace('-', '_')}": ratio(n) for n in PEERS}
    claims[f"{CLAIM_PREFIX}items_per_s_over_block_shuffle"] = median(pair_ratios)
    claims[f"{CLAIM_PREFIX}items_per_s_over_block_shuffle_min"] = min(pair_ratios)
    claims[f"{CLAIM_PREFIX}items_per_s_over_block_shuffle_max"] = max(pair_ratios)
    claims[f"{CLAIM_PREFIX}first_batch_block_shuffle_over_redox"] = median(pair_first)
    claims[f"{CLAIM_PREFIX}amplification_block_shuffle_over_redox"] = 1 / ratio("block-shuffle", "read_amplification")
    k = max(1, p["resident"] // 2)
    for layout in ("shipped", "class-sorted"):
        key = layout.replace("-", "_")
        claims[f"{CLAIM_PREFIX}accuracy_redox_minus_block_shuffle_{key}"] = (
            acc[(layout, "redox", k)] - acc[(layout, "block-shuffle", k)]
        )
    return Section(
        title="Redox vs block shuffle vs the PyTorch DataLoader (cold reads, equal memory)",
        intro="One cold epoch per loader on the same generated files: Redox (whole chunks, each read once, K "
        "resident, background prefetch); block shuffle, the strongest fair baseline (chunks in a random order, "
        "records drawn from the K resident chunks, the same prefetch engine); the PyTorch DataLoader with "
        "RandomSampler over one file per record (the paper's baseline; also with 2 worker processes); and random "
        "reads over the packed files: emulated (an LRU page cache of K chunks in 128 KiB readahead blocks, as the "
        "MODEL assumes) and real (through the OS page cache, and with no page cache). A user whose dataset fits in "
        "the page cache sees the real page-cached figure; one whose dataset is much larger than memory sees "
        "something between the no-cache figure and the emulated one. Device bytes from /proc/self/io; "
        "throughput of the Python loaders on this machine's disk (a fast virtual disk).",
        tables=(loaders, paired, randomness, learning),
        summary=(
            ("Redox read amplification", by["redox"][3]),
            ("Redox / block shuffle (records/s, median of pairs)", f"{median(pair_ratios):.2f}"),
            ("Redox / RandomSampler over files (records/s)", by["random-files"][7]),
            ("Redox / random over packed files, emulated LRU (records/s)", by["random-packed"][7]),
            ("Redox / random over packed files, real, page cache (records/s)", by["random-packed-os"][7]),
        ),
        data={"runs": {n: [r.__dict__ for r in rs] for n, rs in runs.items()}, "claims": claims},
    )
