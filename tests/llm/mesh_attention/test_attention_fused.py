"""The fused block kernels (``workbench.llm.mesh_attention.fused``) against the pure-torch blockwise path.

Reference: the pure path (``fused.ENABLED = False``: ``block_attn_forward`` / ``block_attn_backward`` with
explicit masks), on the same inputs in the same process; for the distributed kernels, in the same forked
worker, every method and every case of ``attention_cases.CASES`` (P = 1..16, causal and not, S not
divisible by P). Tolerances: float64 1e-12, float32 1e-5 (fused kernels and merges round differently; the
math is the same). Also: the op conventions this module relies on (natural-log LSE with the scale
included, top-left causal), ``split_pair`` exhaustively on small pieces, the delta stand-in, and the
fallback when the probe fails.
"""

from __future__ import annotations

import itertools
import math
import warnings

import pytest
import torch
from attention_cases import CASES, ids

from workbench.distributed import run_workers
from workbench.llm.mesh_attention import fused
from workbench.llm.mesh_attention.blockwise import attend_ranges, attend_ranges_backward, blockwise_attention
from workbench.llm.mesh_attention.check import KERNELS, make_inputs, make_spec
from workbench.llm.mesh_attention.layout import shard_sequence
from workbench.llm.mesh_attention.plan import METHODS, resolve_order

TOL = {torch.float64: 1e-12, torch.float32: 1e-5}


def _randn(*shape: int, dtype: torch.dtype, seed: int) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=gen, dtype=torch.float64).to(dtype)


def _max_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    return (a - b).abs().max().item() if a.numel() else 0.0


def test_cpu_ops_pass_the_probe_on_this_torch() -> None:
    assert fused._works.get("cpu") is True, "the CPU fused ops failed their probe: every kernel runs the pure path"
    assert fused.usable(torch.zeros(1, dtype=torch.float32)) and fused.usable(torch.zeros(1, dtype=torch.float64))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_op_conventions(dtype) -> None:
    """LSE = natural log of sum exp(scale * q.k) (not log2, scale included), shape [B, H, Sq]; is_causal is
    top-left (query i sees keys 0..i, also when Sq != Sk)."""
    q, k, v = (_randn(2, 3, n, 4, dtype=dtype, seed=n) for n in (5, 7, 7))
    scale = 0.37
    s = q @ k.transpose(-2, -1) * scale
    out, lse = fused.forward(q, k, v, scale=scale, causal=False)
    assert lse.shape == (2, 3, 5) and lse.dtype == dtype
    assert _max_diff(lse, torch.logsumexp(s, -1)) <= 10 * TOL[dtype]
    assert _max_diff(out, torch.softmax(s, -1) @ v) <= 10 * TOL[dtype]
    masked = s.masked_fill(~torch.ones(5, 7, dtype=torch.bool).tril(), -math.inf)
    out, lse = fused.forward(q, k, v, scale=scale, causal=True)
    assert _max_diff(lse, torch.logsumexp(masked, -1)) <= 10 * TOL[dtype]
    assert _max_diff(out, torch.softmax(masked, -1) @ v) <= 10 * TOL[dtype]


def _visible(q_start: int, q_len: int, k_start: int, k_len: int, causal: bool) -> torch.Tensor:
    rows = torch.arange(q_start, q_start + q_len)[:, None]
    cols = torch.arange(k_start, k_start + k_len)[None, :]
    return rows >= cols if causal else torch.ones(q_len, k_len, dtype=torch.bool)


@pytest.mark.parametrize("causal", [False, True])
def test_split_pair_covers_exactly_the_visible_pairs(causal: bool) -> None:
    """Every (query, key) pair the mask shows lies in exactly one block, no hidden one in a full block, diag
    blocks are square on the diagonal, and no block has a row that sees no key (the kernels' weak spot)."""
    for q_start, q_len, k_start, k_len in itertools.product(range(6), range(5), range(6), range(5)):
        covered = torch.zeros(q_len, k_len, dtype=torch.int64)
        want = _visible(q_start, q_len, k_start, k_len, causal)
        for r0, r1, c0, c1, diag in fused.split_pair(q_start, q_len, k_start, k_len, causal):
            assert 0 <= r0 < r1 <= q_len and 0 <= c0 < c1 <= k_len
            if diag:
                assert causal and r1 - r0 == c1 - c0 and q_start + r0 == k_start + c0
                block = torch.ones(r1 - r0, c1 - c0, dtype=torch.bool).tril()
            else:
                block = torch.ones(r1 - r0, c1 - c0, dtype=torch.bool)
            assert want[r0:r1, c0:c1][block].all(), (q_start, q_len, k_start, k_len)
            assert block.any(1).all()
            covered[r0:r1, c0:c1] += block
        assert torch.equal(covered, want.long()), (q_start, q_len, k_start, k_len)


# local tensors made of pieces of the global sequence: zigzag halves, padding (seq_len), unaligned pieces
RANGE_CASES = [
    ([(0, 4), (12, 4)], [(4, 4), (8, 4)], 14),  # zigzag, rank 0 vs rank 1, last half partly padding
    ([(4, 4), (8, 4)], [(0, 4), (12, 4)], 14),
    ([(0, 8)], [(0, 8)], 8),
    ([(0, 3), (7, 5)], [(2, 4), (9, 6)], 15),  # unaligned: offset diagonals, rows that see nothing
    ([(0, 16)], [(3, 5)], 16),
    ([(5, 6)], [(2, 7)], 12),  # keys before the first query, then a diagonal, then rows past the last key
]


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("q_ranges, k_ranges, seq_len", RANGE_CASES)
def test_attend_ranges_fused_equals_pure(monkeypatch, dtype, causal, q_ranges, k_ranges, seq_len) -> None:
    lq, lk = sum(n for _, n in q_ranges), sum(n for _, n in k_ranges)
    q, dout = _randn(2, 3, lq, 8, dtype=dtype, seed=1), _randn(2, 3, lq, 8, dtype=dtype, seed=2)
    k, v = _randn(2, 3, lk, 8, dtype=dtype, seed=3), _randn(2, 3, lk, 8, dtype=dtype, seed=4)
    kw = {"scale": 0.4, "causal": causal, "seq_len": seq_len}
    found = []
    for enabled in (True, False):
        monkeypatch.setattr(fused, "ENABLED", enabled)
        out, lse = attend_ranges(q, k, v, q_ranges, k_ranges, **kw)
        global_lse = lse.masked_fill(torch.isneginf(lse), 1.0) + 0.5  # any finite "global" statistics
        delta = (dout * out).sum(-1) - 0.25
        found.append((out, lse, *attend_ranges_backward(dout, q, k, v, delta, global_lse, q_ranges, k_ranges, **kw)))
    (out, lse, *grads), (ref_out, ref_lse, *ref_grads) = found
    assert torch.equal(torch.isneginf(lse), torch.isneginf(ref_lse))  # same rows saw no key ...
    assert torch.equal(out[torch.isneginf(lse)], torch.zeros_like(out[torch.isneginf(lse)]))  # ... and give 0
    finite = ~torch.isneginf(ref_lse)
    assert _max_diff(out, ref_out) <= TOL[dtype] and _max_diff(lse[finite], ref_lse[finite]) <= TOL[dtype]
    for name, g, r in zip(("dq", "dk", "dv"), grads, ref_grads):
        assert not g.isnan().any() and _max_diff(g, r) <= TOL[dtype], name


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(
    "seq_q, seq_k, block", [(37, 37, 5), (16, 16, 16), (16, 16, 100), (9, 23, 4), (23, 9, 4), (1, 1, 1)]
)
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_blockwise_attention_fused_equals_pure(monkeypatch, dtype, causal, seq_q, seq_k, block) -> None:
    q, dout = _randn(2, 3, seq_q, 8, dtype=dtype, seed=5), _randn(2, 3, seq_q, 8, dtype=dtype, seed=6)
    k, v = _randn(2, 3, seq_k, 8, dtype=dtype, seed=7), _randn(2, 3, seq_k, 8, dtype=dtype, seed=8)
    found = []
    for enabled in (True, False):
        monkeypatch.setattr(fused, "ENABLED", enabled)
        leaves = [t.clone().requires_grad_() for t in (q, k, v)]
        out = blockwise_attention(*leaves, causal=causal, block_size=block)
        found.append((out, *torch.autograd.grad(out, leaves, dout)))
    for name, a, b in zip(("out", "dq", "dk", "dv"), *found):
        assert _max_diff(a, b) <= TOL[dtype], name


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device: the CUDA path is untested here")
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("q_ranges, k_ranges, seq_len", RANGE_CASES)
def test_cuda_fused_equals_pure(monkeypatch, causal, q_ranges, k_ranges, seq_len) -> None:
    """CUDA float32 runs on the memory-efficient kernel (float64 stays on the pure path): same results as
    the pure path on the same device, to the float32 tolerance."""
    cuda = torch.device("cuda")
    assert not fused.usable(torch.zeros(1, dtype=torch.float64, device=cuda))
    assert fused.usable(torch.zeros(1, dtype=torch.float32, device=cuda)), "CUDA probe failed (see its warning)"
    lq, lk = sum(n for _, n in q_ranges), sum(n for _, n in k_ranges)
    q, dout, k, v = (
        _randn(2, 3, n, 8, dtype=torch.float32, seed=s).to(cuda) for s, n in ((1, lq), (2, lq), (3, lk), (4, lk))
    )
    kw = {"scale": 0.4, "causal": causal, "seq_len": seq_len}
    found = []
    for enabled in (True, False):
        monkeypatch.setattr(fused, "ENABLED", enabled)
        out, lse = attend_ranges(q, k, v, q_ranges, k_ranges, **kw)
        delta = (dout * out).sum(-1)
        found.append((out, *attend_ranges_backward(dout, q, k, v, delta, lse, q_ranges, k_ranges, **kw)))
    for name, a, b in zip(("out", "dq", "dk", "dv"), *found):
        assert _max_diff(a, b) <= 1e-5, name


@pytest.mark.parametrize("layout", ["strided last dim", "expanded"])
def test_odd_strides_fused_equals_pure(monkeypatch, layout: str) -> None:
    """The CPU kernels misread a strided last dimension (SDPA copies such inputs first): so must we."""
    if layout == "expanded":
        q = _randn(1, 3, 10, 8, dtype=torch.float64, seed=14).expand(2, 3, 10, 8)
        k = _randn(2, 1, 1, 8, dtype=torch.float64, seed=15).expand(2, 3, 10, 8)
    else:
        q, k = (_randn(2, 3, 8, 10, dtype=torch.float64, seed=s).transpose(-1, -2) for s in (14, 15))
    v = _randn(2, 3, 10, 8, dtype=torch.float64, seed=16)
    dout = _randn(2, 3, 8, 10, dtype=torch.float64, seed=17).transpose(-1, -2)
    found = []
    for enabled in (True, False):
        monkeypatch.setattr(fused, "ENABLED", enabled)
        leaves = [t.detach().requires_grad_() for t in (q, k, v)]
        out = blockwise_attention(*leaves, causal=True, block_size=3)
        found.append((out, *torch.autograd.grad(out, leaves, dout)))
    for name, a, b in zip(("out", "dq", "dk", "dv"), *found):
        assert _max_diff(a, b) <= 1e-12, name


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_out_for_delta_reproduces_delta(dtype) -> None:
    dout = _randn(2, 3, 6, 8, dtype=dtype, seed=9)
    dout[0, 0, 1] = 0.0  # a row without upstream gradient
    dout[0, 1, 2] *= 1e-30  # tiny and huge rows: no underflow / overflow in the stand-in
    dout[1, 2, 3] *= 1e30
    delta = (dout * _randn(2, 3, 6, 8, dtype=dtype, seed=10)).sum(-1)
    stand_in = fused.out_for_delta(dout, delta)
    assert stand_in.isfinite().all() and torch.equal(stand_in[0, 0, 1], torch.zeros_like(stand_in[0, 0, 1]))
    rel = ((dout * stand_in).sum(-1) - delta).abs() / delta.abs().clamp_min(torch.finfo(dtype).tiny)
    assert rel.max().item() <= 8 * torch.finfo(dtype).eps


def test_failed_probe_warns_once_and_falls_back(monkeypatch) -> None:
    """A missing op or a changed convention (here: LSE in log2) fails the probe with one warning line; a
    device whose probe failed runs the pure path (bit-for-bit the ENABLED = False result)."""

    def missing(*args, **kwargs):
        raise AttributeError("'_OpNamespace' 'aten' object has no attribute '_scaled_dot_product_flash_...'")

    real_forward = fused.forward

    def log2_lse(*args, **kwargs):
        out, lse = real_forward(*args, **kwargs)
        return out, lse / math.log(2.0)

    for broken in (missing, log2_lse):
        monkeypatch.setattr(fused, "forward", broken)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert fused.probe("cpu") is False
        assert len(caught) == 1 and caught[0].category is RuntimeWarning
        message = str(caught[0].message)
        assert "\n" not in message and "using the pure-torch blockwise path" in message
    monkeypatch.undo()

    q, k, v = (_randn(1, 2, 10, 4, dtype=torch.float64, seed=s) for s in (11, 12, 13))
    monkeypatch.setattr(fused, "ENABLED", False)
    pure = blockwise_attention(q, k, v, causal=True, block_size=3)
    monkeypatch.setattr(fused, "ENABLED", True)
    monkeypatch.setitem(fused._works, "cpu", False)
    assert not fused.usable(q)
    assert torch.equal(blockwise_attention(q, k, v, causal=True, block_size=3), pure)


def test_switch_off_means_pure(monkeypatch) -> None:
    monkeypatch.setattr(fused, "ENABLED", False)
    assert not fused.usable(torch.zeros(1, dtype=torch.float64))
    assert not fused.usable(torch.zeros(1, dtype=torch.float16))


def _both_paths(rank: int, world: int, comm, spec, inputs) -> dict:
    """Every planned method on this rank's shard with the fused and the pure path: outputs, grads, bytes."""
    order = resolve_order(None, spec.causal)
    q, k, v, dout = (shard_sequence(t, rank=rank, world_size=world, order=order) for t in inputs)
    found: dict = {}
    for plan in spec.plans:
        if plan.error is not None:
            continue
        for enabled in (True, False):
            fused.ENABLED = enabled  # this forked worker only
            local = [t.clone().requires_grad_() for t in (q, k, v)]
            comm.reset_counters()
            out = KERNELS[plan.method](*local, comm, causal=spec.causal, seq_len=spec.seq, **plan.kwargs)
            out.backward(dout)
            found[(plan.method, enabled)] = (
                [out.detach(), *(t.grad for t in local)],
                comm.bytes_sent,
                comm.bytes_recv,
                comm.counter.messages_sent,
            )
    fused.ENABLED = True
    return found


@pytest.mark.slow  # starts worker processes
@pytest.mark.parametrize("case", CASES, ids=ids(CASES))
def test_distributed_kernels_fused_equal_pure(case) -> None:
    """Ring, Ulysses, USP, Mesh: fused blocks give the pure path's outputs and gradients (float64 1e-12,
    float32 1e-5) and move exactly the same bytes and messages."""
    gpus, seq, heads, head_dim, causal, dtype, extra = case
    spec = make_spec(
        gpus=gpus,
        seq=seq,
        heads=heads,
        head_dim=head_dim,
        causal=causal,
        dtype=dtype,
        methods=METHODS,
        tile=extra.get("tile"),
        ulysses_degree=extra.get("ulysses_degree"),
        gpus_per_node=extra.get("gpus_per_node"),
        batch=1,
    )
    torch_dtype = getattr(torch, dtype)
    inputs = make_inputs(batch=1, heads=heads, seq=seq, head_dim=head_dim, dtype=torch_dtype, seed=gpus + seq)
    ran = [p.method for p in spec.plans if p.error is None]
    assert ran, spec.plans
    for rank, found in enumerate(run_workers(_both_paths, gpus, spec, inputs)):
        for method in ran:
            tensors, *traffic = found[(method, True)]
            ref_tensors, *ref_traffic = found[(method, False)]
            assert traffic == ref_traffic, (method, rank)
            for name, a, b in zip(("out", "dq", "dk", "dv"), tensors, ref_tensors):
                assert _max_diff(a, b) <= TOL[torch_dtype], (method, rank, name)
