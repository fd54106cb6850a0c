"""Chunked VHPI embeddings vs ``torch.nn.Embedding`` / ``torch.nn.EmbeddingBag`` (the references): with nothing
pruned, outputs and gradients are bit-identical; pruned chunks read zeros; the pool's Adagrad tracks
``torch.optim.Adagrad``."""

import numpy as np
import pytest
import torch
from torch import nn

from workbench.recsys.fiited.chunked import ChunkedEmbedding, adagrad_step, feature_keys

CASES = [(37, 12, 4), (53, 10, 5), (11, 7, 1), (29, 9, 9), (64, 64, 16)]  # (keys, dim, chunk): odd, c=1, c=d


def _pair(n, d, c, seed=0):
    g = torch.Generator().manual_seed(seed)
    keys = np.random.default_rng(seed).choice(2**40, size=n, replace=False).astype(np.int64)
    init = torch.randn(n, d, generator=g)
    ce = ChunkedEmbedding(keys, dim=d, chunk=c, init=init, by_feature=False, load_factor=0.7)
    return keys, init, ce


def _pool_grad_as_rows(ce, keys):
    grad = ce.table.weight.grad
    grad = grad.to_dense() if grad.is_sparse else grad
    return grad[ce.table.physical(ce.table.lookup(keys))].reshape(len(keys), ce.dim)


@pytest.mark.parametrize("n,d,c", CASES)
def test_lookup_and_gradient_equal_nn_embedding_exactly(n, d, c):
    keys, init, ce = _pair(n, d, c)
    ref = nn.Embedding(n, d, sparse=True)
    ref.weight.data.copy_(init)
    idx = torch.randint(0, n, (33, 5), generator=torch.Generator().manual_seed(1))  # repeats included
    out, want = ce(keys[idx.numpy()]), ref(idx)
    assert torch.equal(out, want)
    g = torch.randn(want.shape, generator=torch.Generator().manual_seed(2))
    (out * g).sum().backward()
    (want * g).sum().backward()
    assert torch.equal(_pool_grad_as_rows(ce, keys), ref.weight.grad.to_dense())


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("n,d,c", CASES)
def test_bag_and_gradient_equal_nn_embedding_bag_exactly(n, d, c, mode):
    keys, init, ce = _pair(n, d, c)
    ref = nn.EmbeddingBag(n, d, mode=mode, sparse=mode != "max")  # max mode has no sparse gradient
    ref.weight.data.copy_(init)
    idx = torch.randint(0, n, (47,), generator=torch.Generator().manual_seed(3))
    offsets = torch.tensor([0, 5, 5, 18, 31, 46])  # an empty bag and a bag of one
    out, want = ce.bag(keys[idx.numpy()], offsets, mode), ref(idx, offsets)
    assert torch.equal(out, want)
    g = torch.randn(want.shape, generator=torch.Generator().manual_seed(4))
    (out * g).sum().backward()
    (want * g).sum().backward()
    theirs = ref.weight.grad.to_dense() if ref.weight.grad.is_sparse else ref.weight.grad
    assert torch.equal(_pool_grad_as_rows(ce, keys), theirs)


def test_pruned_chunks_read_zero_and_take_no_update():
    keys, init, ce = _pair(20, 12, 4)
    slots = ce.table.lookup(keys[:5])
    ce.table.free_chunks(np.repeat(slots, 2), np.tile([1, 2], 5))
    out = ce(keys[:5])
    assert torch.equal(out[:, 4:12], torch.zeros(5, 8))
    assert torch.equal(out[:, :4], init[:5, :4])
    out.sum().backward()
    adagrad_step(ce.table, lr=0.1)
    assert torch.equal(ce.table.weight.detach()[ce.table.capacity], torch.zeros(4))  # the zero row stays zero
    ce.table.check_invariants()


def test_pool_adagrad_tracks_torch_adagrad():
    n, d, c = 37, 12, 4
    keys, init, ce = _pair(n, d, c)
    ref = nn.Embedding(n, d, sparse=True)
    ref.weight.data.copy_(init)
    opt = torch.optim.Adagrad(ref.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(5)
    for _ in range(6):
        idx = torch.randint(0, n, (23, 3), generator=gen)
        g = torch.randn(23, 3, d, generator=gen)
        (ce(keys[idx.numpy()]) * g).sum().backward()
        (ref(idx) * g).sum().backward()
        opt.step()
        opt.zero_grad()
        adagrad_step(ce.table, lr=0.1)
    # Not bit-equal: coalescing a sparse gradient sums an id's repeated rows in an order that differs between the
    # d-wide rows and the c-wide chunks, so the state differs in the last bits (float32 eps 1.2e-7); 6 steps of
    # that stay below 1e-5 relative.
    torch.testing.assert_close(ce.table.vectors(keys), ref.weight.data, rtol=1e-5, atol=1e-6)


def test_feature_keys_are_distinct_across_features():
    ids = np.array([[0, 0, 0], [5, 5, 5]])
    keys = feature_keys(ids)
    assert np.unique(keys).size == 6


def test_an_id_with_no_chunk_reads_its_features_default_vector_and_trains_it():
    """Reference: the default vector itself (row f of ``defaults``) for a key with no chunk, the stored vector
    for the others; the default's gradient is the sum of the output gradients of the rows that read it."""
    ids = np.array([[0, 1], [2, 1], [0, 0]])  # [B=3, F=2]
    all_ids = np.stack([np.arange(3), np.arange(3)], axis=1)
    keys = np.unique(feature_keys(all_ids))
    ce = ChunkedEmbedding(keys, dim=4, chunk=2, n_defaults=2, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        ce.defaults.copy_(torch.tensor([[1.0, 2, 3, 4], [5, 6, 7, 8]]))
    slot = ce.table.lookup(feature_keys(np.array([[0, 1]])))[0]  # feature 0 id 0, feature 1 id 1
    ce.table.free_chunks(np.repeat(slot, 2), np.tile(np.arange(2), 2))
    assert ce.refresh_empty() == 2
    out = ce(ids)
    assert torch.equal(out[0, 0], ce.defaults[0].detach()) and torch.equal(out[0, 1], ce.defaults[1].detach())
    assert torch.equal(out[2, 0], ce.defaults[0].detach())
    assert torch.equal(out[1, 0], ce.table.vectors(feature_keys(np.array([[2, 1]])))[0, 0])
    g = torch.randn(out.shape, generator=torch.Generator().manual_seed(1))
    (out * g).sum().backward()
    assert torch.allclose(ce.defaults.grad[0], g[0, 0] + g[2, 0]) and torch.allclose(
        ce.defaults.grad[1], g[0, 1] + g[1, 1]
    )
