"""The shared small GPT: shapes, closed-form parameter count, determinism, causality, bad input."""

import pytest
import torch

from workbench.llm.gpt import GPTConfig, build_gpt, flops_per_token, lm_loss, param_count, random_tokens


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_shapes_dtype_and_param_count(dtype):
    cfg = GPTConfig(layers=3, hidden=24, heads=3, seq=7, vocab=11, dtype=dtype)
    model = build_gpt(cfg)
    tokens, targets = random_tokens(cfg, 5, seed=1)
    logits = model(tokens)
    assert logits.shape == (5, 7, 11) and logits.dtype == cfg.torch_dtype
    assert sum(p.numel() for p in model.parameters()) == param_count(cfg.shape)
    assert torch.isfinite(lm_loss(logits, targets))


def test_same_seed_same_weights_other_seed_other_weights():
    cfg = GPTConfig(layers=2, hidden=16, heads=2, seq=5, vocab=9, dtype="float64")
    a, b = build_gpt(cfg), build_gpt(cfg)
    c = build_gpt(cfg.replace(seed=1))
    for pa, pb in zip(a.parameters(), b.parameters(), strict=True):
        assert torch.equal(pa, pb)
    assert any(not torch.equal(pa, pc) for pa, pc in zip(a.parameters(), c.parameters(), strict=True))


def test_causal_a_later_token_does_not_change_earlier_logits():
    cfg = GPTConfig(layers=2, hidden=16, heads=4, seq=9, vocab=13, dtype="float64")
    model = build_gpt(cfg)
    tokens, _ = random_tokens(cfg, 2, seed=3)
    changed = tokens.clone()
    changed[:, 6] = (changed[:, 6] + 1) % cfg.vocab
    a, b = model(tokens), model(changed)
    assert torch.equal(a[:, :6], b[:, :6])
    assert not torch.allclose(a[:, 6:], b[:, 6:])


def test_flops_rule_is_about_six_n_per_token():
    cfg = GPTConfig(layers=4, hidden=256, heads=4, seq=16, vocab=64)
    n = param_count(cfg.shape)
    assert 5.0 * n < flops_per_token(cfg.shape) < 7.0 * n


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="heads=5 must divide hidden=16"):
        GPTConfig(hidden=16, heads=5)
    with pytest.raises(ValueError, match="layers=0"):
        GPTConfig(layers=0)
    cfg = GPTConfig(seq=4)
    with pytest.raises(ValueError, match="seq <= 4"):
        build_gpt(cfg)(torch.zeros(1, 5, dtype=torch.long))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("pieces", [(13,), (5, 1, 1, 6), (1,) * 13, (7, 3, 3)])
def test_forward_cached_in_pieces_equals_the_plain_forward(dtype, pieces):
    # reference: GPT.forward on the whole sequence; fp64 agrees to ~1e-12, fp32 to ~1e-5 (different matmul shapes)
    from workbench.llm.gpt import GPTConfig, build_gpt

    config = GPTConfig(layers=2, hidden=32, heads=4, seq=16, vocab=11, dtype=dtype, seed=3)
    model = build_gpt(config)
    tokens = torch.randint(0, 11, (2, 13), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        full = model(tokens)
        past, outs, at = None, [], 0
        for n in pieces:
            logits, past = model.forward_cached(tokens[:, at : at + n], past)
            outs.append(logits)
            at += n
    tol = 1e-10 if dtype == "float64" else 1e-4
    torch.testing.assert_close(torch.cat(outs, dim=1), full, atol=tol, rtol=tol)
    assert past[0][0].shape == (2, 4, 13, 8)


def test_forward_cached_refuses_positions_past_the_context():
    from workbench.llm.gpt import GPTConfig, build_gpt

    model = build_gpt(GPTConfig(layers=1, hidden=8, heads=2, seq=4, vocab=5))
    with pytest.raises(ValueError, match="position 4 is past the context of 4 tokens"):
        model.forward_cached(torch.zeros(1, 5, dtype=torch.long))
