"""FIITED: lookup throughput of the chunked VHPI table against ``torch.nn.EmbeddingBag`` on the same ids (the
accuracy comparisons at equal memory are in ``fiited_sweep.py``).

Peer, in the same process on the same data: ``nn.EmbeddingBag(mode="sum")`` over a dense ``rows x d`` table
(one id per bag, as DLRM looks up a categorical feature). Ours: ``ChunkedEmbedding.bag`` (hash probe of the
64-bit keys, then one ``embedding_bag`` per chunk position over the chunk pool) and the same without the hash
probe (slots known: the physically-indexed gather alone). Ids follow Criteo's fitted Zipf skew. Times are
medians over interleaved rounds; ratios are medians of per-round ratios ours / peer (above 1 = slower).
"""

from __future__ import annotations

import logging

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from benchmarks.common import Section, Table, fmt_ms, fmt_ratio, interleaved, median
from benchmarks.machine import load_average
from workbench.recsys.fiited.chunked import ChunkedEmbedding
from workbench.recsys.zipf import zipf_sampler

log = logging.getLogger(__name__)

FULL = {"rows": (100_000, 1_000_000), "lookups": 106_496, "dims": ((64, 16), (64, 4)), "rounds": 15}
QUICK = {"rows": (20_000,), "lookups": 8_192, "dims": ((64, 16),), "rounds": 3}


def _ratio(times: dict[str, list[float]], ours: str, peer: str) -> float:
    return median([a / b for a, b in zip(times[ours], times[peer])])


def _case(rows: int, dim: int, chunk: int, ids: np.ndarray, rounds: int) -> tuple[str, ...]:
    keys_all = np.arange(rows, dtype=np.int64) * 2654435761 + 12345
    init = torch.randn(rows, dim, generator=torch.Generator().manual_seed(0))
    ce = ChunkedEmbedding(keys_all, dim=dim, chunk=chunk, init=init, by_feature=False)
    bag = nn.EmbeddingBag(rows, dim, mode="sum")
    bag.weight.data.copy_(init)
    keys = keys_all[ids]
    tid = torch.from_numpy(ids)
    offsets = torch.arange(ids.size)
    rows_phys = ce.table.physical(ce.table.lookup(keys))
    weight = ce.table.weight.detach()

    def gather_only() -> torch.Tensor:
        return torch.cat(
            [
                F.embedding_bag(rows_phys[:, j].contiguous(), weight, offsets, mode="sum")
                for j in range(rows_phys.shape[1])
            ],
            dim=1,
        )

    with torch.no_grad():
        same = torch.equal(ce.bag(keys, offsets), bag(tid, offsets))
        t = interleaved(
            {"peer": lambda: bag(tid, offsets), "ours": lambda: ce.bag(keys, offsets), "gather": gather_only},
            rounds=rounds,
        )
    n = ids.size
    return (
        f"{rows:,}",
        str(dim),
        str(chunk),
        f"{n:,}",
        fmt_ms(median(t["peer"])),
        fmt_ms(median(t["ours"])),
        fmt_ms(median(t["gather"])),
        f"{n / median(t['ours']) / 1e6:.2f}",
        fmt_ratio(_ratio(t, "ours", "peer")),
        fmt_ratio(_ratio(t, "gather", "peer")),
        "yes" if same else "NO",
    )


def lookup_throughput(plan: dict) -> Section:
    rows_out = []
    for rows in plan["rows"]:
        rng = np.random.default_rng(0)
        ids = rng.permutation(rows)[zipf_sampler(rows, 1.0)(rng, plan["lookups"])]
        for dim, chunk in plan["dims"]:
            rows_out.append(_case(rows, dim, chunk, ids, plan["rounds"]))
    table = Table(
        headers=(
            "ids",
            "d",
            "chunk",
            "lookups",
            "EmbeddingBag (ms)",
            "VHPI (ms)",
            "VHPI gather only (ms)",
            "VHPI M lookups/s",
            "VHPI / peer",
            "gather / peer",
            "bit-equal",
        ),
        rows=tuple(rows_out),
    )
    ratios = [float(r[8]) for r in rows_out]
    intro = (
        "Ours: the chunked VHPI table's bag lookup (splitmix64 hash and linear probe of 64-bit keys in "
        "numpy, then one `embedding_bag` per chunk position over the chunk pool), and its gather alone with "
        "the slots known. Peer: `nn.EmbeddingBag(mode='sum')` over the same dense table, one id per bag, "
        "Zipf(1.0) ids. Nothing is pruned, so the outputs must be bit-equal (last column)."
    )
    return Section(
        title="FIITED: chunked VHPI lookup vs nn.EmbeddingBag",
        intro=intro,
        tables=(table,),
        notes=(f"Load average at the end of this section: {load_average()}.",),
        summary=(("FIITED VHPI lookup / nn.EmbeddingBag, range", f"{min(ratios):.2f} .. {max(ratios):.2f}"),),
        data={"rows": rows_out, "claims": {"fiited.lookup_speedup": 1.0 / median(ratios)}},
    )


def run(*, quick: bool) -> list[Section]:
    """The FIITED lookup section (quick: one small table, few rounds); the accuracy sweeps are in
    ``fiited_sweep.py``."""
    plan = QUICK if quick else FULL
    log.info("fiited benchmarks (%s)", "quick" if quick else "full")
    return [lookup_throughput(plan)]


if __name__ == "__main__":
    import sys

    for section in run(quick="--quick" in sys.argv):
        print(section.markdown(), end="\n\n")
