"""Real multi-process runs (gloo) against single-process references, float64:

- GNNPipe with K = 1 against full-graph training: the same parameters (bit-identical here; required <= 1e-12);
- GNNPipe with K > 1 against the one-process masked simulation of the schedule (:mod:`.reference`), for every
  chunk order, staleness bound, warm-up and stale-gradient switch: <= 1e-12 (only sum orders differ);
- graph parallelism (METIS and random parts, P = 2 and an odd P = 3) against full-graph training: <= 1e-12;
- the hybrid (S = 2 stages x G = 2 METIS parts, P = 4) against full-graph training: <= 1e-12;
- every epoch's counted bytes (all ranks, sent) equal the closed form;
- ``Comm.all_reduce`` (a ring of counted point-to-point steps) against the plain sum of every rank's tensor (float64,
  <= 1e-12: only the order of the sums differs) and its counted bytes per rank against the closed form.
"""

from __future__ import annotations

import pytest
import torch

from workbench.distributed.comm import ring_all_reduce_bytes
from workbench.distributed.launch import run_workers
from workbench.graphs.gnnpipe.data import load_data, permuted
from workbench.graphs.gnnpipe.full import TrainSpec, train_full
from workbench.graphs.gnnpipe.graph_parallel import graph_parallel_worker
from workbench.graphs.gnnpipe.hybrid import hybrid_worker, stage_param_counts
from workbench.graphs.gnnpipe.models import ModelSpec
from workbench.graphs.gnnpipe.partition import halo_pairs, make_cut
from workbench.graphs.gnnpipe.pipeline import PipeSpec, pipeline_worker
from workbench.graphs.gnnpipe.reference import reference_gnnpipe
from workbench.graphs.gnnpipe.volume import allreduce_bytes, gnnpipe_bytes, graph_parallel_bytes, hybrid_bytes

pytestmark = pytest.mark.slow
TRAIN = TrainSpec(epochs=3, eval_every=3)


@pytest.fixture(scope="module")
def cora():
    return load_data("cora")


def _spec(cora, kind: str, layers: int = 5) -> ModelSpec:
    return ModelSpec(kind, layers, 8, cora.features, cora.classes, dropout=0.5)


def _diff(a, b) -> float:
    return max(float((a[k] - b[k]).abs().max()) for k in a)


def _merged(results) -> dict[str, torch.Tensor]:
    out = {}
    for r in results:
        out.update(r.params)
    return out


def _ring_worker(rank, world, comm, shape):
    t = torch.randn(*shape, generator=torch.Generator().manual_seed(rank), dtype=torch.float64)
    view = t.t() if len(shape) == 2 else t  # a non-contiguous tensor is summed in place too
    view.mul_(1.0)
    before = comm.bytes_sent
    comm.all_reduce(view)
    return view.clone(), comm.bytes_sent - before, comm.counter.messages_sent


@pytest.mark.parametrize("world, shape", [(2, (7,)), (3, (5, 4)), (4, (3,)), (5, (1001,))])
def test_all_reduce_is_counted_on_the_wire(world, shape):
    results = run_workers(_ring_worker, world, shape, timeout_s=60)
    want = sum(
        torch.randn(*shape, generator=torch.Generator().manual_seed(r), dtype=torch.float64) for r in range(world)
    )
    want = want.t() if len(shape) == 2 else want
    numel = want.numel()
    for out, _, _ in results:
        assert torch.allclose(out, want, rtol=0, atol=1e-12)
        assert torch.equal(out, results[0][0])  # every rank holds the same values
    sent = tuple(r[1] for r in results)
    assert sent == ring_all_reduce_bytes(numel, world, 8)
    assert sum(sent) == 2 * (world - 1) * numel * 8  # the closed form of volume.allreduce_bytes
    assert sum(sent) == allreduce_bytes(numel * 8, world)
    assert all(r[2] <= 2 * (world - 1) for r in results)  # one message per step at most (empty chunks are skipped)


@pytest.mark.parametrize("kind, workers", [("gcnii", 1), ("gcn", 2), ("gcnii", 3)])
def test_k1_equals_full_graph_training(cora, kind, workers):
    spec = _spec(cora, kind)
    full = train_full(cora, spec, TRAIN)
    results = run_workers(pipeline_worker, workers, cora, spec, TRAIN, PipeSpec((0, cora.n)), timeout_s=120)
    params = _merged(results)
    assert set(params) == set(full.params)
    assert _diff(params, full.params) <= 1e-12
    expected = gnnpipe_bytes(cora.n, workers, spec.message_width, 8)
    assert [sum(r.sent[e] for r in results) for e in range(TRAIN.epochs)] == [expected] * TRAIN.epochs


@pytest.mark.parametrize(
    "kind, workers, chunks, order, staleness, warmup, grads",
    [
        ("gcnii", 2, 3, "shuffled", 1, 0, "drop"),
        ("gcn", 3, 3, "fixed", 2, 1, "deferred"),
        ("gcn", 2, 4, "alternate", 0, 0, "drop"),
    ],
)
def test_pipeline_equals_the_schedule_reference(cora, kind, workers, chunks, order, staleness, warmup, grads):
    spec = _spec(cora, kind, layers=4)
    cut = make_cut(cora.indptr, cora.indices, chunks, "metis", 0)
    data = permuted(cora, cut.order)
    pipe = PipeSpec(cut.bounds, order, staleness, warmup, grads)
    ref = reference_gnnpipe(data, spec, TRAIN, pipe)
    results = run_workers(pipeline_worker, workers, data, spec, TRAIN, pipe, timeout_s=120)
    params = _merged(results)
    assert _diff(params, ref) <= 1e-12
    full = train_full(cora, spec, TRAIN).params  # staleness really changes the result (the check can fail)
    assert _diff(params, full) > 1e-6
    expected = gnnpipe_bytes(cora.n, workers, spec.message_width, 8)
    assert all(sum(r.sent[e] for r in results) == expected for e in range(TRAIN.epochs))


@pytest.mark.parametrize("kind, workers, method", [("gcnii", 2, "metis"), ("gcn", 3, "random")])
def test_graph_parallel_equals_full_graph_training(cora, kind, workers, method):
    spec = _spec(cora, kind)
    full = train_full(cora, spec, TRAIN)
    cut = make_cut(cora.indptr, cora.indices, workers, method, 1)
    data = permuted(cora, cut.order)
    results = run_workers(graph_parallel_worker, workers, data, spec, TRAIN, cut.bounds, timeout_s=120)
    assert _diff(results[0].params, full.params) <= 1e-12
    for r in results[1:]:
        assert _diff(r.params, results[0].params) == 0.0
    halo = halo_pairs(data.indptr, data.indices, cut.bounds)
    pbytes = sum(v.numel() for v in full.params.values()) * 8
    expected = graph_parallel_bytes(halo, spec.layers, spec.hidden, 8, pbytes, workers)
    assert [sum(r.sent[e] for r in results) for e in range(TRAIN.epochs)] == [expected] * TRAIN.epochs


@pytest.mark.parametrize("kind, stages, parts", [("gcnii", 2, 2)])
def test_hybrid_equals_full_graph_training_and_bytes_equal_the_model(cora, kind, stages, parts):
    # reference: single-process full-graph training; the stage all-reduces reorder sums, so <= 1e-12 (fp64)
    spec = _spec(cora, kind, layers=4)
    full = train_full(cora, spec, TRAIN)
    cut = make_cut(cora.indptr, cora.indices, parts, "metis", 1)
    data = permuted(cora, cut.order)
    results = run_workers(hybrid_worker, stages * parts, data, spec, TRAIN, cut.bounds, stages, timeout_s=120)
    params = _merged(results)
    assert set(params) == set(full.params)
    assert _diff(params, full.params) <= 1e-12
    for s in range(stages):  # the G ranks of a stage hold the same parameters after the same all-reduced step
        for g in range(1, parts):
            assert _diff(results[s * parts + g].params, results[s * parts].params) == 0.0
    halo = halo_pairs(data.indptr, data.indices, cut.bounds)
    pbytes = [c * 8 for c in stage_param_counts(spec, stages)]
    expected = hybrid_bytes(cora.n, stages, parts, halo, spec.layers, spec.hidden, spec.message_width, 8, pbytes)
    assert [sum(r.sent[e] for r in results) for e in range(TRAIN.epochs)] == [expected] * TRAIN.epochs
