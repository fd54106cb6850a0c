"""Redox: one cold epoch of Redox beside the PyTorch DataLoader with random access (RandomSampler over one file
per record, and over the packed chunk files through a page cache of the same memory) and the block shuffle, on
the same generated files, in one process.

Every round drops the page cache of every file first and reads cold (``posix_fadvise(DONTNEED)``); bytes are the
device's (``/proc/self/io`` read_bytes, or counted where that does not move, labelled). Loaders run in alternating
order (``benchmarks.common.interleaved``); throughput is the median over rounds, ratios are medians of per-round
ratios Redox / peer.
"""

from __future__ import annotations

from benchmarks.common import Section, Table, fmt_ratio, median
from workbench.llm.redox.config import RedoxConfig
from workbench.llm.redox.loaders import measure
from workbench.llm.redox.runner import ensure_dataset

FULL = {"records": 20_000, "record_kb": 16.0, "chunk_kb": 1024.0, "resident": 8, "batch": 64, "rounds": 3}
QUICK = {"records": 400, "record_kb": 8.0, "chunk_kb": 128.0, "resident": 2, "batch": 32, "rounds": 2}
PEERS = ("random-files", "random-packed", "block-shuffle")


def run(*, quick: bool) -> Section:
    p = QUICK if quick else FULL
    config = RedoxConfig(
        records=p["records"], record_kb=p["record_kb"], chunk_kb=p["chunk_kb"], resident=p["resident"], batch=p["batch"]
    )
    store, _ = ensure_dataset(config)
    names = ("redox", *PEERS)
    runs: dict[str, list] = {n: [] for n in names}
    for i in range(p["rounds"]):
        for name in names if i % 2 == 0 else reversed(names):
            runs[name].append(measure(store, name, resident=p["resident"], batch=p["batch"], seed=i, epoch=i)[0])
    rows = []
    for name in names:
        rs = runs[name]
        ratio = median([a.items_per_s / b.items_per_s for a, b in zip(runs["redox"], rs)])
        rows.append(
            (
                name,
                f"{median([r.bytes_read for r in rs]) / 1e6:.2f}",
                f"{median([r.read_amplification for r in rs]):.3f}",
                f"{median([r.reads for r in rs]):.0f}",
                f"{median([r.items_per_s for r in rs]):.0f}",
                f"{median([r.time_to_first_batch_s for r in rs]) * 1e3:.2f}",
                fmt_ratio(ratio),
                rs[0].bytes_source,
            )
        )
    table = Table(
        headers=(
            "loader",
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
        f"{p['resident']} chunks; batch {p['batch']}; medians of {p['rounds']} cold rounds",
    )
    by = {row[0]: row for row in rows}
    return Section(
        title="Redox vs DataLoader random access vs block shuffle (cold reads)",
        intro="One cold epoch per loader on the same generated files: Redox (whole chunks, each read once, K "
        "resident, background prefetch), the PyTorch DataLoader with RandomSampler over one file per record and "
        "over the packed files through a page cache of K chunks (128 KiB readahead blocks), and the "
        "WebDataset-style block shuffle. Device bytes from /proc/self/io; throughput of the Python loaders on "
        "this machine's disk (a fast virtual disk: the model carries it to HDD and network storage).",
        tables=(table,),
        summary=(
            ("Redox read amplification", by["redox"][2]),
            ("Redox / RandomSampler over files (records/s)", by["random-files"][6]),
            ("Redox / random over packed files (records/s)", by["random-packed"][6]),
        ),
        data={n: [r.__dict__ for r in rs] for n, rs in runs.items()},
    )
