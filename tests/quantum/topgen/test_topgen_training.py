"""Training with growth, the task run and its disk cache (slow: trains for seconds). References: the logits
just before a block is grown (a new block starts as the identity), the closed-form CNOT model and the config's
snapshots (devices with the same coupling map)."""

from __future__ import annotations

import pytest
import torch

from workbench.quantum.calibration import load_calibration
from workbench.quantum.device import get_device
from workbench.quantum.topgen.config import TopgenConfig
from workbench.quantum.topgen.digits import load_task
from workbench.quantum.topgen.generate import growth_block
from workbench.quantum.topgen.qnn import QNN, accuracy, initial_weights, one_thread, train
from workbench.quantum.topgen.study import cached_task, generated
from workbench.quantum.topgen.topology import undirected_edges

pytestmark = pytest.mark.slow

SMALL = dict(
    qubits=4, device="fake_lima", epochs=3, max_train=40, max_test=16, candidates=2, score_pairs=100, search_epochs=1
)


def test_growth_starts_near_identity_and_keeps_weights_consistent():
    gen = generated(get_device("fake_jakarta"), 5, 3, 1, 2, 100, 75, 0)
    data = load_task("digits-2", seed=0, max_train=48, max_test=24)
    model = QNN(gen.ansatz, initial_weights(gen.ansatz, 0), 2)
    with one_thread():
        log = train(model, data, epochs=8, patience=1, max_blocks=3, grow=lambda _a: growth_block(gen.tiling))
    assert log.grown_at, "patience 1 over 8 epochs must trigger growth"
    assert max(log.growth_check) < 0.5  # angles ~ N(0, 0.01^2): logits (scale 5) move by far less than 0.5
    assert model.weights.shape[0] == model.ansatz.num_parameters
    assert model.ansatz.num_blocks == 1 + len(log.grown_at) - len(log.removed_at)
    with torch.no_grad():
        assert 0.0 <= accuracy(model.logits(data.x_test), data.y_test) <= 1.0


def test_task_run_is_swap_free_counted_equals_model_and_cached(tmp_path):
    config = TopgenConfig(**SMALL)
    out = cached_task(config, cache=str(tmp_path))
    assert out.topgen.swaps == 0 and out.topgen.cx_count == out.cx_model
    assert len(out.snapshots) == 3
    edges = {undirected_edges(load_calibration(d).coupling_map) for d in out.snapshots}
    assert len(edges) == 1
    assert set(out.baselines) == {"hea", "quantumnas"}
    for m in (out.topgen, *out.baselines.values()):
        assert set(m.accuracy_by_device) == set(out.snapshots) and 0 <= m.accuracy <= 1 and m.gradient_variance > 0
    assert cached_task(config, compute=False, cache=str(tmp_path)) == out
