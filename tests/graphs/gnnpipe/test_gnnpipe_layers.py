"""Layers and data against PyTorch Geometric (the reference library): DeepGCNLayer(GCNConv) / GCN2Conv on the whole Cora graph
in float64, and the Planetoid counts, features, labels and split as ``torch_geometric.datasets.Planetoid`` builds
them from the same files. Tolerance: 1e-12 absolute on O(1) values (float64; only the order of sums differs)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from workbench.graphs.gnnpipe.data import adj_rows, load_data
from workbench.graphs.gnnpipe.models import ModelSpec, init_params, layer_forward

pyg = pytest.importorskip("torch_geometric")

# PyG's published counts (its Planetoid docs): nodes, directed edges, features, classes
COUNTS = {"cora": (2708, 10556, 1433, 7), "citeseer": (3327, 9104, 3703, 6), "pubmed": (19717, 88648, 500, 3)}


@pytest.fixture(scope="module")
def cora():
    return load_data("cora")


def _edge_index(data) -> torch.Tensor:
    rows = np.repeat(np.arange(data.n), np.diff(data.indptr))
    return torch.from_numpy(np.stack([rows, data.indices.astype(np.int64)]))


@pytest.mark.parametrize("name", sorted(COUNTS))
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_counts_match_pyg_published_counts(name):
    data = load_data(name)
    n, e, f, c = COUNTS[name]
    assert (data.n, data.directed_edges, data.features, data.classes) == (n, e, f, c)
    assert (len(data.train), len(data.val), len(data.test)) == (
        {"cora": 140, "citeseer": 120, "pubmed": 60}[name],
        500,
        1000,
    )


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_pubmed_missing_features_are_stated_and_replaced():
    data = load_data("pubmed", seed=3)
    assert "ind.pubmed.allx is missing" in data.feature_note and "N(0, 1)" in data.feature_note
    assert not data.sparse_features and data.x.shape == (19717, 500)
    assert abs(float(data.x.mean())) < 0.01 and abs(float(data.x.std()) - 1) < 0.01
    assert torch.equal(load_data("pubmed", seed=3).x, data.x) and not torch.equal(load_data("pubmed", seed=4).x, data.x)


@pytest.mark.parametrize("name", ["cora", "citeseer"])
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_planetoid_matches_pyg_planetoid_from_the_same_files(tmp_path, name):
    from torch_geometric.datasets import Planetoid

    raw = tmp_path / name.capitalize().replace("Citeseer", "CiteSeer") / "raw"
    raw.mkdir(parents=True)
    from workbench.data import ensure_dataset

    for f in ensure_dataset(f"planetoid-{name}").glob(f"ind.{name}.*"):
        (raw / f.name).symlink_to(f)
    ref = Planetoid(str(tmp_path), "CiteSeer" if name == "citeseer" else "Cora")[0]
    ours = load_data(name)
    assert ref.num_nodes == ours.n and ref.edge_index.shape[1] == ours.directed_edges
    ours_edges = set(map(tuple, _edge_index(ours).T.tolist()))
    assert ours_edges == set(map(tuple, ref.edge_index.T.tolist()))
    assert torch.equal(ref.x.double(), ours.x)
    labelled = ours.y >= 0
    assert torch.equal(ref.y[labelled], ours.y[labelled])
    for mask, idx in ((ref.train_mask, ours.train), (ref.val_mask, ours.val), (ref.test_mask, ours.test)):
        assert torch.equal(mask.nonzero().ravel(), idx)


@pytest.mark.parametrize("layer", [1, 7])
def test_gcn_layer_equals_pyg_deepgcn_res_block(cora, layer):
    """The residual GCN layer against PyG's DeepGCNLayer(block="res") around a GCNConv with a LayerNorm without
    affine parameters and relu: ``h + relu(LN(GCNConv(h)))``."""
    from torch_geometric.nn import DeepGCNLayer, GCNConv

    spec = ModelSpec("gcn", 8, 32, cora.features, cora.classes)
    params = init_params(spec, 5, torch.float64)
    params[f"l{layer}.b"] = torch.linspace(-0.5, 0.5, 32, dtype=torch.float64)
    h = torch.randn(cora.n, 32, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    adj = adj_rows(cora.adj, slice(0, cora.n), torch.float64)
    ours = layer_forward(spec, params, layer, adj @ h, h, None)
    conv = GCNConv(32, 32).double()
    with torch.no_grad():
        conv.lin.weight.copy_(params[f"l{layer}.W"].T)
        conv.bias.copy_(params[f"l{layer}.b"])
    norm = torch.nn.LayerNorm(32, elementwise_affine=False).double()
    block = DeepGCNLayer(conv, norm, torch.nn.ReLU(), block="res", dropout=0.0).eval()
    ref = block(h, _edge_index(cora))
    assert torch.allclose(ours, ref, rtol=0, atol=1e-12)
    plain = torch.relu(conv(h, _edge_index(cora)))  # the skip and the norm are really there (the check can fail)
    assert float((ours - plain).abs().max()) > 0.1


@pytest.mark.parametrize("layer", [1, 16])
def test_gcnii_layer_equals_pyg_gcn2conv(cora, layer):
    from torch_geometric.nn import GCN2Conv

    spec = ModelSpec("gcnii", 16, 24, cora.features, cora.classes, alpha=0.1, lam=0.5)
    params = init_params(spec, 2, torch.float64)
    gen = torch.Generator().manual_seed(4)
    h = torch.randn(cora.n, 24, generator=gen, dtype=torch.float64)
    h0 = torch.randn(cora.n, 24, generator=gen, dtype=torch.float64)
    adj = adj_rows(cora.adj, slice(0, cora.n), torch.float64)
    ours = layer_forward(spec, params, layer, adj @ h, h, h0)
    conv = GCN2Conv(24, alpha=0.1, theta=0.5, layer=layer, shared_weights=True).double()
    with torch.no_grad():
        conv.weight1.copy_(params[f"l{layer}.W"])
    ref = torch.relu(conv(h, h0, _edge_index(cora)))
    assert torch.allclose(ours, ref, rtol=0, atol=1e-12)
