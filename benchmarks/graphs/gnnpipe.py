"""GNNPipe: our GCN / GCNII layers against PyTorch Geometric's GCNConv / GCN2Conv on Cora (forward + backward, one
process), and GNNPipe against graph parallelism per epoch on P real processes (seconds and counted bytes).

Peers measured in the same run: PyG's convolutions (same weights, same graph, float32; PyG is the test extra, the
layer rows are skipped without it) and graph parallelism (the baseline the paper compares with). Ratios are
medians of per-round ratios ours / peer (``benchmarks.common.interleaved``).
"""

from __future__ import annotations

import numpy as np
import torch

from benchmarks.common import Section, Table, fmt_ms, fmt_ratio, interleaved, median
from benchmarks.machine import load_average
from workbench.graphs.gnnpipe.config import GnnpipeConfig
from workbench.graphs.gnnpipe.data import adj_rows, load_data
from workbench.graphs.gnnpipe.experiment import run_method
from workbench.graphs.gnnpipe.models import ModelSpec, init_params, layer_forward

FULL = {"rounds": 20, "hidden": 64, "epochs": 10, "layers": 16, "workers": 4}
QUICK = {"rounds": 3, "hidden": 16, "epochs": 3, "layers": 4, "workers": 2}


def _layers(plan: dict) -> list[tuple[str, ...]]:
    try:
        from torch_geometric.nn import GCN2Conv, GCNConv
    except ImportError:
        return []
    data = load_data("cora", dtype="float32")
    d = plan["hidden"]
    adj = adj_rows(data.adj, slice(0, data.n), torch.float32)
    rows_ = np.repeat(np.arange(data.n), np.diff(data.indptr))
    edge_index = torch.from_numpy(np.stack([rows_, data.indices.astype(np.int64)]))
    h = torch.randn(data.n, d, generator=torch.Generator().manual_seed(0)).requires_grad_()
    h0 = torch.randn(data.n, d, generator=torch.Generator().manual_seed(1))
    out = []
    for kind in ("gcn", "gcnii"):
        spec = ModelSpec(kind, 4, d, data.features, data.classes)
        params = {k: v.requires_grad_() for k, v in init_params(spec, 0, torch.float32).items()}
        conv = GCNConv(d, d) if kind == "gcn" else GCN2Conv(d, alpha=0.1, theta=0.5, layer=2, shared_weights=True)

        def ours(spec=spec, params=params):
            layer_forward(spec, params, 2, adj @ h, h, h0).sum().backward()

        def peer(conv=conv, kind=kind):
            (conv(h, edge_index) if kind == "gcn" else conv(h, h0, edge_index)).relu().sum().backward()

        t = interleaved({"ours": ours, "pyg": peer}, rounds=plan["rounds"])
        ratio = median([a / b for a, b in zip(t["ours"], t["pyg"])])
        out.append(
            (
                f"{kind} layer fwd+bwd (Cora, d = {d})",
                fmt_ms(median(t["ours"])),
                fmt_ms(median(t["pyg"])),
                fmt_ratio(ratio),
                "PyG " + type(conv).__name__,
            )
        )
    return out


def run(*, quick: bool) -> Section:
    plan = QUICK if quick else FULL
    rows = _layers(plan)
    cfg = GnnpipeConfig(
        layers=plan["layers"],
        hidden=plan["hidden"],
        workers=plan["workers"],
        chunks=4,
        epochs=plan["epochs"],
        eval_every=plan["epochs"],
    )
    pipe, gp = run_method(cfg, "gnnpipe"), run_method(cfg, "graph-parallel")
    rows.append(
        (
            f"epoch, P = {cfg.workers} processes (gcnii L = {cfg.layers}, K = 4)",
            fmt_ms(pipe.seconds_per_epoch),
            fmt_ms(gp.seconds_per_epoch),
            fmt_ratio(pipe.seconds_per_epoch / gp.seconds_per_epoch),
            "peer: graph parallelism (METIS)",
        )
    )
    rows.append(
        (
            f"bytes per epoch (counted = closed form: {pipe.bytes_match_model and gp.bytes_match_model})",
            f"{pipe.bytes_per_epoch:,} B",
            f"{gp.bytes_per_epoch:,} B",
            fmt_ratio(pipe.bytes_per_epoch / gp.bytes_per_epoch),
            "GNNPipe / graph parallelism",
        )
    )
    table = Table(headers=("what", "ours", "peer", "ours / peer", "peer is"), rows=tuple(rows))
    return Section(
        title="GNNPipe: GCN/GCNII layers vs PyG, pipeline vs graph parallelism",
        intro=(
            "Ours: `layer_forward` on a torch sparse CSR A_hat; peers: PyG `GCNConv` / `GCN2Conv` on the "
            "same graph and weights (float32), and graph parallelism on the same P processes. "
            "Epoch times are on this machine's CPU cores through gloo: no GPU claim."
        ),
        tables=(table,),
        notes=(f"Load average at the end of this section: {load_average()}.",),
        summary=(("GNNPipe / graph-parallel bytes per epoch", fmt_ratio(pipe.bytes_per_epoch / gp.bytes_per_epoch)),),
        data={
            "rows": rows,
            "claims": {
                "gnnpipe.epoch_speedup": gp.seconds_per_epoch / pipe.seconds_per_epoch,
                "gnnpipe.accuracy_gap": pipe.test_accuracy - gp.test_accuracy,
            },
        },
    )
