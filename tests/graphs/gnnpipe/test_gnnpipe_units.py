"""Fast checks: partitions and halos against brute force over edges, the random-halo estimate against measured
random partitions (within 2 %), stale-edge shares, the staleness schedule, closed-form bytes, the paper-scale
model's ratios, and bad input (config words, chunks above the vertex count, a corrupt dataset file, CLI exit 2)."""

from __future__ import annotations

import dataclasses
import shutil

import numpy as np
import pytest
import torch

from workbench.cli import main
from workbench.graphs.generators import erdos_renyi
from workbench.graphs.gnnpipe.config import GnnpipeConfig
from workbench.graphs.gnnpipe.data import load_data, permuted
from workbench.graphs.gnnpipe.experiment import crossover, hybrid_note
from workbench.graphs.gnnpipe.full import TrainSpec, evaluate, train_full
from workbench.graphs.gnnpipe.hybrid import check_grid, stage_param_counts
from workbench.graphs.gnnpipe.model import PAPER_GRAPHS, random_halo
from workbench.graphs.gnnpipe.models import ModelSpec, init_params, stage_layers
from workbench.graphs.gnnpipe.partition import epoch_order, halo_sets, make_cut, stale_edge_share
from workbench.graphs.gnnpipe.runner import run
from workbench.graphs.gnnpipe.study import bytes_vs_layers, gnnpipe_view, paper_scale, schedule
from workbench.graphs.gnnpipe.volume import allreduce_bytes, gnnpipe_bytes, graph_parallel_bytes, hybrid_bytes
from workbench.threads import one_thread


@pytest.mark.parametrize("parts, method", [(1, "metis"), (3, "metis"), (5, "random"), (7, "random")])
def test_halo_sets_equal_brute_force(parts, method):
    g = erdos_renyi(53, 0.09, seed=parts)
    cut = make_cut(g.indptr, g.indices, parts, method, 0)
    assert sorted(cut.order.tolist()) == list(range(g.n)) and cut.bounds[-1] == g.n
    new = np.empty(g.n, dtype=np.int64)
    new[cut.order] = np.arange(g.n)
    owner = np.repeat(np.arange(parts), np.diff(cut.bounds))
    brute = [[set() for _ in range(parts)] for _ in range(parts)]
    for u, v in g.edges():
        a, b = new[u], new[v]
        if owner[a] != owner[b]:
            brute[owner[a]][owner[b]].add(b)
            brute[owner[b]][owner[a]].add(a)
    pg = g.relabel(new)
    got = halo_sets(pg.indptr, pg.indices, cut.bounds)
    assert [[set(h.tolist()) for h in row] for row in got] == brute


def test_stale_edge_share_brute_force_and_orders():
    g = erdos_renyi(40, 0.15, seed=2)
    bounds = (0, 9, 20, 33, 40)
    owner = np.repeat(np.arange(4), np.diff(bounds))
    seq = [2, 0, 3, 1]
    pos = {c: i for i, c in enumerate(seq)}
    directed = [(u, v) for u, v in g.edges()] + [(v, u) for u, v in g.edges()]
    brute = np.mean([pos[owner[u]] > pos[owner[v]] for u, v in directed])  # v aggregates u
    assert stale_edge_share(g.indptr, g.indices, bounds, seq) == pytest.approx(brute)
    assert epoch_order(4, "fixed", 0, 3) == [0, 1, 2, 3] and epoch_order(4, "alternate", 0, 1) == [3, 2, 1, 0]
    shuffled = [tuple(epoch_order(6, "shuffled", 0, e)) for e in range(5)]
    assert all(sorted(s) == list(range(6)) for s in shuffled) and len(set(shuffled)) > 1


@pytest.mark.parametrize("name", ["cora", "citeseer", "pubmed"])
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_random_halo_estimate_matches_measured_random_partitions(name):
    data = load_data(name)
    deg = np.diff(data.indptr)
    for parts in (2, 3, 8):
        cut = make_cut(data.indptr, data.indices, parts, "random", 0)
        pd = permuted(data, cut.order)
        measured = sum(len(h) for row in halo_sets(pd.indptr, pd.indices, cut.bounds) for h in row)
        assert random_halo(deg, parts) == pytest.approx(measured, rel=0.02)


def test_stage_layers_and_schedule():
    assert stage_layers(7, 3) == [range(1, 3), range(3, 5), range(5, 8)]
    with pytest.raises(ValueError, match="workers=4 is out of range: valid range is 1..3"):
        stage_layers(3, 4)
    s = schedule(7, 2, 2)
    assert s["warmup"] == [True, True, False, False, False, False, False]
    assert s["age"] == [0, 0, 1, 1, 2, 1, 2]  # refresh after warm-up epochs and epochs divisible by 2
    assert schedule(3, 0, 1)["age"] == [None, 1, 1] and schedule(3, 0, 0)["age"] == [None, None, None]


def test_closed_forms():
    assert gnnpipe_bytes(10, 3, 4, 8) == 2 * 2 * 10 * 4 * 8
    assert allreduce_bytes(100, 1) == 0 and allreduce_bytes(100, 3) == 2 * 2 * 100
    assert graph_parallel_bytes(7, 4, 5, 4, 100, 2) == 2 * 4 * 7 * 5 * 4 + 2 * 100


@pytest.mark.parametrize("kind, stages", [("gcn", 1), ("gcnii", 3)])
def test_hybrid_closed_form_and_its_corners(kind, stages):
    spec = ModelSpec(kind, 6, 8, 20, 3)
    counts = stage_param_counts(spec, stages)
    assert sum(counts) == sum(v.numel() for v in init_params(spec, 0, torch.float64).values())
    pbytes = [c * 8 for c in counts]
    # G = 1: GNNPipe's boundary bytes only; S = 1: graph parallelism's halo + one all-reduce
    assert hybrid_bytes(50, stages, 1, 0, 6, 8, 16, 8, pbytes) == gnnpipe_bytes(50, stages, 16, 8)
    if stages == 1:
        assert hybrid_bytes(50, 1, 4, 30, 6, 8, 16, 8, pbytes) == graph_parallel_bytes(30, 6, 8, 8, pbytes[0], 4)
    with pytest.raises(ValueError, match=r"stage_param_bytes has 2 entries: it needs one per stage"):
        hybrid_bytes(50, 3, 1, 0, 6, 8, 16, 8, [1, 2])
    assert check_grid(6, stages, 6) == 6 // stages
    with pytest.raises(ValueError, match=r"stages=4 does not divide workers=6: .* valid stages are 1, 2, 3, 6"):
        check_grid(6, 4, 6)
    assert GnnpipeConfig(workers=4).hybrid_stages == 2 and GnnpipeConfig(workers=3, layers=4).hybrid_stages == 3


def test_bytes_vs_layers_has_the_hybrid_below_p():
    rows = bytes_vs_layers(GnnpipeConfig(workers=4, layers=8, hidden=8), (2, 8))  # S = 2 x G = 2: L = 2 < P runs
    assert [r["gnnpipe"] is None for r in rows] == [True, False] and all(r["hybrid"] for r in rows)


def test_bytes_ratio_grows_linearly_with_depth():
    rows = bytes_vs_layers(GnnpipeConfig(dataset="cora", workers=2, hidden=16), (2, 4, 8, 16, 32, 64))
    ratios = np.array([r["ratio"] for r in rows])
    layers = np.array([r["layers"] for r in rows])
    assert np.all(np.diff(ratios) > 0)
    slope, intercept = np.polyfit(layers, ratios, 1)
    assert np.max(np.abs(slope * layers + intercept - ratios)) < 0.05 * ratios.max()


def test_paper_scale_model_is_labelled_and_grows_with_depth():
    rows = paper_scale(GnnpipeConfig(paper_graph="ogbn-products", gpus=4, model="gcn", hidden=128))
    assert all(r["label"].startswith("MODEL") for r in rows)
    rand = [r for r in rows if r["partition"] == "random"]
    assert [r["layers"] for r in rand] == sorted(r["layers"] for r in rand)
    assert np.all(np.diff([r["volume_ratio"] for r in rand]) > 0)
    # random partition of a dense graph: nearly every vertex is in every other part's halo -> ratio ~ L
    assert rand[-1]["volume_ratio"] == pytest.approx(rand[-1]["layers"], rel=0.1)
    out = run(GnnpipeConfig(mode="model", paper_graph="ogbn-papers100m", gpus=8, layers=32)).to_json()
    assert out["label"].startswith("MODEL") and out["paper_claims"]["v2"]["volume_reduction_max"] == 22.89
    assert PAPER_GRAPHS["ogbn-papers100m"].n == 111_059_956


def test_bad_inputs_name_the_parameter():
    with pytest.raises(ValueError, match=r"^workers=5 is more than layers=4: .* valid workers are 1..4"):
        GnnpipeConfig(layers=4, workers=5)
    with pytest.raises(ValueError, match=r"chunks=3000 is more than the 2,708 nodes of cora: valid range is 1..2708"):
        gnnpipe_view(GnnpipeConfig(chunks=3000))
    with pytest.raises(ValueError, match=r"^chunk_order='random' is not allowed"):
        GnnpipeConfig.from_dict({"chunk_order": "random"})


@pytest.mark.parametrize(
    "args, message",
    [
        (["--layers", "2", "--workers", "3"], "workers=3 is more than layers=2"),
        (["--chunks", "4000", "--epochs", "1"], "chunks=4000 is more than the 2,708 nodes of cora"),
        (["--dataset", "reddit"], "dataset='reddit' is not allowed"),
        (["--mode", "model", "--gpus", "32", "--layers", "16"], "gpus=32 is more than layers=16"),
        (["--workers", "3", "--stages", "2"], "stages=2 does not divide workers=3"),
        (["--layers", "4", "--workers", "4", "--stages", "8"], "stages=8 is more than layers=4"),
    ],
)
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_cli_errors_exit_2(capsys, args, message):
    assert main(["run", "gnnpipe", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_corrupt_dataset_file_is_refused_naming_it(tmp_path, capsys, monkeypatch):
    from workbench.data import ensure_dataset

    src = ensure_dataset("planetoid-cora")
    root = tmp_path / "planetoid"
    shutil.copytree(src, root, symlinks=False, ignore=shutil.ignore_patterns("*pubmed*", "*citeseer*"))
    (root / "ind.cora.graph").write_bytes(b"\x80\x02corrupt")
    monkeypatch.setenv("WORKBENCH_DATA_AUTOFETCH", "0")
    with pytest.raises(ValueError, match="ind.cora.graph"):
        load_data("cora", data_dir=str(tmp_path))
    assert main(["run", "gnnpipe", "--data-dir", str(tmp_path), "--epochs", "1"]) == 2
    assert "ind.cora.graph" in capsys.readouterr().err


def test_adam_equals_torch_optim_adam():
    import torch

    from workbench.graphs.gnnpipe.full import Adam

    gen = torch.Generator().manual_seed(0)
    ours = [torch.randn(5, 3, generator=gen, dtype=torch.float64).requires_grad_() for _ in range(2)]
    ref = [p.detach().clone().requires_grad_() for p in ours]
    a = Adam(ours, lr=0.01, weight_decay=5e-4)
    b = torch.optim.Adam(ref, lr=0.01, weight_decay=5e-4, foreach=False)
    for _ in range(30):
        for p, q in zip(ours, ref):
            g = torch.randn(5, 3, generator=gen, dtype=torch.float64)
            p.grad, q.grad = g.clone(), g.clone()
        a.step()
        b.step()
    assert max(float((p - q).abs().max()) for p, q in zip(ours, ref)) <= 1e-12  # float64, sum order only


@pytest.mark.parametrize("dataset, model", [("cora", "gcnii"), ("citeseer", "gcn")])
def test_crossover_is_where_the_ratio_passes_one(dataset, model):
    """The crossover depth against the closed forms of :func:`bytes_vs_layers` (themselves equal to the counted
    bytes, tested in test_gnnpipe_distributed): the ratio is above 1 at the crossover and not one layer below."""
    cfg = GnnpipeConfig(dataset=dataset, model=model, hidden=32)
    rows = crossover(cfg, (2, 4, 5), (16, 32))
    for row in rows:
        c = dataclasses.replace(cfg, workers=row.workers, layers=16)
        cross = row.crossover_layers
        assert cross is not None and cross >= row.workers
        at = bytes_vs_layers(c, tuple(L for L in (cross - 1, cross) if L >= row.workers))
        assert at[-1]["ratio"] > 1.0 and (len(at) == 1 or at[0]["ratio"] <= 1.0)
        assert row.ratios == pytest.approx([r["ratio"] for r in bytes_vs_layers(c, (16, 32))], rel=1e-12)
    if (dataset, model) == ("cora", "gcnii"):  # the figure: 16 layers / 4 processes, d = 32: 0.83
        assert rows[1].ratios[0] == pytest.approx(0.829, abs=0.005) and rows[1].crossover_layers > 16


def test_hybrid_note_says_what_a_prime_count_degenerates_to():
    note = hybrid_note(GnnpipeConfig(workers=5, layers=16))
    assert note.startswith("workers=5 is prime: the automatic hybrid (stages=0) is 5 stages x 1")
    assert "GNNPipe with one chunk (K = 1)" in note
    assert hybrid_note(GnnpipeConfig(workers=4, layers=16)) is None  # 2 x 2: both parallelisms
    assert "graph parallelism, no pipeline" in hybrid_note(GnnpipeConfig(workers=4, stages=1, layers=16))


@pytest.mark.slow  # trains in this process until the limit runs out (about 1 s)
def test_timeout_covers_the_full_graph_run(capsys):
    args = ["run", "gnnpipe", "--epochs", "10000", "--timeout-s", "1", "--layers", "4", "--hidden", "8"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "timeout_s=1 ran out in the full-graph training" in err and "of 10000 epochs" in err
    assert "Traceback" not in err


@pytest.mark.slow  # trains a 16-layer model on Cora (about 10 s)
def test_residual_gcn_learns_at_depth_16():
    """The residual GCN keeps learning at 16 layers (the plain deep GCN it replaces collapsed to 0.104 on Cora)."""
    data = load_data("cora")
    spec = ModelSpec("gcn", 16, 16, data.features, data.classes, dropout=0.5)
    with one_thread():  # torch's intra-op threads only contend on these small tensors
        run = train_full(data, spec, TrainSpec(epochs=60, eval_every=60))
    assert evaluate(data, spec, run.params)["test"] > 0.6
