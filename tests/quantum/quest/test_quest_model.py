"""QuEst's model in torch: TransformerConv against a per-node loop reference, mean pooling, batching, and the
model's ability to overfit a tiny dataset."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from workbench.quantum.calibration import calibration_subset, load_calibration
from workbench.quantum.circuits import random_device_circuit
from workbench.quantum.quest.batching import NormalizedSet, Normalizer, graphs_batch
from workbench.quantum.quest.dataset import QuestDataset
from workbench.quantum.quest.encoding import encode
from workbench.quantum.quest.net import MODELS, TransformerConv, build_model, mean_pool
from workbench.quantum.quest.train import Split, TrainSettings, fit, metrics, predict_indices


def _reference_conv(conv: TransformerConv, x: torch.Tensor, edges: torch.Tensor) -> torch.Tensor:
    q, k, v, skip = conv.query(x), conv.key(x), conv.value(x), conv.skip(x)
    out = skip.clone()
    for i in range(x.shape[0]):
        incoming = [int(e) for e in range(edges.shape[1]) if int(edges[1, e]) == i]
        if not incoming:
            continue
        scores = torch.stack([q[i] @ k[int(edges[0, e])] / math.sqrt(q.shape[1]) for e in incoming])
        alpha = torch.softmax(scores, 0)
        out[i] = out[i] + sum(a * v[int(edges[0, e])] for a, e in zip(alpha, incoming))
    return out


@pytest.mark.parametrize("n,e,seed", [(1, 0, 0), (7, 13, 1), (11, 30, 2)])
def test_transformer_conv_matches_loop_reference(n, e, seed):
    torch.manual_seed(seed)
    conv = TransformerConv(29, 29).double()
    x = torch.randn(n, 29, dtype=torch.float64) * 3
    edges = torch.randint(0, n, (2, e))
    if e:
        edges[:, 0] = edges[:, 1]  # a parallel edge
    got = conv(x, edges)
    want = _reference_conv(conv, x, edges)
    assert torch.allclose(got, want, atol=1e-12)


def test_mean_pool():
    x = torch.arange(10.0).reshape(5, 2)
    batch = torch.tensor([0, 0, 2, 2, 2])
    pooled = mean_pool(x, batch, 3)
    assert torch.equal(pooled, torch.tensor([[1.0, 2.0], [0.0, 0.0], [6.0, 7.0]]))


def _tiny_rows(count: int, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    cal = calibration_subset(load_calibration("fake_lima"), (0, 1, 2))
    rows = []
    for i in range(count):
        qc = random_device_circuit(3, int(rng.integers(5, 60)), cal.coupling_map, rng)
        graph = encode(qc, cal)
        label = float(np.exp(-0.01 * graph.globals[5] - 0.002 * graph.globals[0]))  # a smooth target
        rows.append(
            {
                "graph": graph,
                "pst": label,
                "fidelity": math.nan,
                "kind": 0,
                "family": 0,
                "device": "fake_lima",
                "width": 3,
                "gates": int(graph.globals[2:6].sum()),
                "scale": 1.0,
                "group": i,
                "structure": i,
                "noise": i,
                "device_kind": 0,
                "unseen": 0,
            }
        )
    return rows


def test_dataset_batches_equal_fresh_batches():
    rows = _tiny_rows(6)
    data = QuestDataset.from_rows(rows)
    norm = Normalizer.fit(data, torch.arange(6))
    normed = NormalizedSet.build(data, norm)
    idx = torch.tensor([4, 1, 3])
    a = normed.batch(idx)
    b = graphs_batch([rows[i]["graph"] for i in idx.tolist()], norm)
    for name in ("x", "edge_index", "batch", "globals", "liu"):
        assert torch.allclose(getattr(a, name).double(), getattr(b, name).double()), name
    for name in MODELS:
        model = build_model(name).eval()
        assert torch.allclose(model(a), model(b), atol=1e-6)


@pytest.mark.slow  # generates or trains for several seconds: the slow lane (CI) runs it
def test_each_model_overfits_a_tiny_dataset():
    rows = _tiny_rows(24)
    data = QuestDataset.from_rows(rows)
    everything = torch.arange(24)
    split = Split(everything, everything, everything)
    normed = NormalizedSet.build(data, Normalizer.fit(data, everything))
    spread = float(data.pst.std())
    for name in MODELS:
        model = build_model(name)
        fit(model, normed, split, TrainSettings(epochs=400, batch_size=8, lr=3e-3, patience=400, seed=1))
        rmse = metrics(predict_indices(model, normed, everything), data.pst)["rmse"]
        assert rmse < 0.25 * spread, (name, rmse, spread)


def test_metrics_against_numpy():
    rng = np.random.default_rng(3)
    true = rng.random(50)
    pred = true + rng.normal(0, 0.05, 50)
    m = metrics(torch.tensor(pred), torch.tensor(true))
    assert m["rmse"] == pytest.approx(np.sqrt(np.mean((pred - true) ** 2)))
    assert m["r2"] == pytest.approx(1 - np.sum((pred - true) ** 2) / np.sum((true - true.mean()) ** 2))


def test_no_noise_ablation_ignores_the_noise_columns():
    from workbench.quantum.quest.net import NOISE_COLUMNS, NOISE_GLOBALS

    rows = _tiny_rows(4)
    data = QuestDataset.from_rows(rows)
    normed = NormalizedSet.build(data, Normalizer.fit(data, torch.arange(4)))
    batch = normed.batch(torch.arange(4))
    noisy = type(batch)(batch.x.clone(), batch.edge_index, batch.batch, batch.globals.clone(), batch.liu)
    noisy.x[:, list(NOISE_COLUMNS)] += torch.randn(noisy.x.shape[0], len(NOISE_COLUMNS))
    noisy.globals[:, list(NOISE_GLOBALS)] += torch.randn(noisy.globals.shape[0], len(NOISE_GLOBALS))
    ablated, full = build_model("no-noise").eval(), build_model("transformer").eval()
    full.load_state_dict(ablated.state_dict())
    assert torch.equal(ablated(batch), ablated(noisy))
    assert not torch.allclose(full(batch), full(noisy))
    # the paper's baselines see no noise: the calibration sums of the globals do not reach them
    for name in ("global", "liu"):
        baseline = build_model(name).eval()
        assert torch.equal(baseline(batch), baseline(noisy)), name


def test_model_init_is_seeded_by_training():
    """``train_checkpoint`` seeds torch before building each model: two builds after the same seed are equal."""
    torch.manual_seed(42)
    a = build_model("transformer").state_dict()
    torch.rand(3)  # whatever ran before must not matter once the seed is set again
    torch.manual_seed(42)
    b = build_model("transformer").state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    with pytest.raises(ValueError, match="valid models are transformer, global, liu, no-noise"):
        build_model("gcn")
