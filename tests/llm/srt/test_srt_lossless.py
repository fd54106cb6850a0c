"""Lossless verification. References: target-only decoding with a full forward per token (reference.plain_decode),
the exact sequence distribution by brute force (reference.sequence_probs, for chi-square over 1e5 samples), an
explicit per-query loop and scaled_dot_product_attention with the boolean tree mask (tree attention).

Tolerances: the policy is float64, so cached/uncached and tree/path logits agree to ~1e-12 (we allow 1e-9);
logprobs likewise. Token equality is exact: both sides draw with the same uniforms from distributions that agree
to 1e-12, and a flip would need a uniform within 1e-12 of a CDF boundary.
"""

import math

import pytest
import scipy.stats
import torch
import torch.nn.functional as F

from workbench.llm.gpt import GPTConfig, build_gpt
from workbench.llm.srt.decode import (
    ModelVerifier,
    ReplayVerifier,
    Request,
    Sampling,
    rollout,
    sample_batch,
    speculative_sample_many,
    uniforms_for,
    verify_forward,
)
from workbench.llm.srt.drafters import DRAFTERS, DraftBudget, Drafter, make_drafter
from workbench.llm.srt.reference import (
    plain_decode,
    sequence_probs,
    tree_attention_loop,
    tree_logits_by_paths,
)
from workbench.llm.srt.sampling import draw, draw_many, processed_probs
from workbench.llm.srt.suffix_tree import Draft, SuffixTree
from workbench.llm.srt.tree_attention import tree_mask, tree_positions


def _model(vocab=7, seed=1, hidden=32, seq=64):
    return build_gpt(GPTConfig(layers=2, hidden=hidden, heads=4, seq=seq, vocab=vocab, dtype="float64", seed=seed))


def _peaked(model, scale=25.0):
    """Sharpen the head so that rollouts repeat themselves (drafts then get accepted often)."""
    with torch.no_grad():
        model.head.lm.weight.mul_(scale)
    return model


SETTINGS = [  # eos 99 is outside the vocabulary: full-length rollouts; eos 6 is emitted early (stops mid-walk)
    Sampling(temperature=0.0, max_new=37, eos=99),
    Sampling(temperature=1.0, max_new=37, eos=99),
    Sampling(temperature=0.7, top_p=0.9, top_k=4, max_new=37, eos=99),
    Sampling(temperature=1.0, max_new=37, eos=6),
]


@pytest.mark.parametrize("sampling", SETTINGS, ids=["greedy", "t1", "t0.7-p0.9-k4", "t1-eos"])
@pytest.mark.parametrize("drafter", [d for d in DRAFTERS if d != "none"])
@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_speculative_rollouts_equal_target_only_decoding_token_for_token(sampling, drafter):
    model = _peaked(_model())
    prompts = [[1, 2, 3], [4, 0, 2, 2, 5]]
    reqs = [
        Request(seq=(p, g), key=p, prompt=prompts[p], uniforms=uniforms_for(3, 0, p, g, n=sampling.max_new))
        for p in range(2)
        for g in range(5)
    ]
    d = make_drafter(drafter, budget=DraftBudget(max_spec=8, min_prob=0.05))
    states, stats = rollout(reqs, d, ModelVerifier(model, sampling))
    for st in states:
        ref_tokens, ref_lps = plain_decode(
            model, st.request.prompt, st.request.uniforms, temperature=sampling.temperature, top_p=sampling.top_p,
            top_k=sampling.top_k, max_new=sampling.max_new, eos=sampling.eos,
        )  # fmt: skip
        assert st.response == ref_tokens
        assert st.logprobs == pytest.approx(ref_lps, abs=1e-9)
    if sampling.eos == 99:
        assert stats.accepted > 0, "the test should exercise accepted drafts"
    assert stats.forwards + stats.accepted == stats.tokens
    # replaying the same drafts against the responses counts the same forwards and accepted tokens
    known = [Request(seq=r.seq, key=r.key, prompt=r.prompt, known=st.response) for r, st in zip(reqs, states)]
    _, replay = rollout(known, make_drafter(drafter, budget=DraftBudget(max_spec=8, min_prob=0.05)),
                        ReplayVerifier(sampling))  # fmt: skip
    assert (replay.forwards, replay.accepted, replay.seq_forwards) == (
        stats.forwards,
        stats.accepted,
        stats.seq_forwards,
    )


def test_batched_plain_sampler_equals_per_sequence_decoding():
    model = _peaked(_model())
    s = Sampling(temperature=0.8, top_p=0.95, max_new=30, eos=6)
    prompts = torch.tensor([[1, 2, 3], [3, 2, 1], [0, 0, 5]])
    u = torch.stack([uniforms_for(9, i, n=30) for i in range(3)])
    responses, lps = sample_batch(model, prompts, u, s)
    for i in range(3):
        ref, ref_lp = plain_decode(model, prompts[i].tolist(), u[i], temperature=0.8, top_p=0.95, max_new=30, eos=6)
        assert responses[i] == ref
        assert lps[i] == pytest.approx(ref_lp, abs=1e-9)


PARENTS = [-1, 0, 0, -1, 1, 4, 2, 3]  # two branches at the root, one at node 0, depth up to 4


@pytest.mark.parametrize("cached", [0, 5])
def test_tree_mask_attention_equals_the_explicit_loop_and_sdpa(cached):
    g = torch.Generator().manual_seed(0)
    n = len(PARENTS) + 1
    q = torch.randn(2, 3, n, 8, generator=g, dtype=torch.float64)
    k = torch.randn(2, 3, cached + n, 8, generator=g, dtype=torch.float64)
    v = torch.randn(2, 3, cached + n, 8, generator=g, dtype=torch.float64)
    mask = tree_mask(PARENTS, cached)
    loop = tree_attention_loop(q, k, v, PARENTS, cached)
    sdpa = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(sdpa, loop, atol=1e-12, rtol=1e-12)
    # a chain's tree mask is the causal mask, its positions consecutive
    chain = list(range(-1, 5))
    assert torch.equal(tree_mask(chain, cached), torch.ones(7, cached + 7, dtype=torch.bool).tril(cached))
    assert tree_positions(chain, cached).tolist() == list(range(cached, cached + 7))
    assert tree_positions(PARENTS, cached).tolist() == [cached + d for d in (0, 1, 2, 2, 1, 3, 4, 3, 2)]


def test_tree_verification_forward_equals_a_plain_forward_per_branch():
    model = _model(vocab=11)
    prefix = [3, 1, 4, 1, 5, 9]
    tokens = (2, 6, 5, 3, 5, 8, 9, 7)
    draft = Draft(tokens, tuple(PARENTS))
    with torch.no_grad():
        past = model.forward_cached(torch.tensor([prefix[:-1]]))[1]
        logits, _, _ = verify_forward(model, past, prefix[-1], draft)
    torch.testing.assert_close(logits, tree_logits_by_paths(model, prefix, tokens, PARENTS), atol=1e-9, rtol=1e-9)


def test_vectorised_draw_equals_draw():
    """The chi-square sampler draws all rows at once with draw_many; the engine draws one token with draw."""
    g = torch.Generator().manual_seed(3)
    logits = torch.randn(5, 9, generator=g, dtype=torch.float64)
    u = torch.cat([torch.rand(200, generator=g, dtype=torch.float64), torch.tensor([0.0, 1.0 - 2**-53])])
    for probs in (processed_probs(logits, 0.7, top_p=0.8, top_k=5), processed_probs(logits, 1.0)):
        for row in probs:
            assert draw_many(row, u).tolist() == [draw(row, float(x)) for x in u]


class _TreeDrafter(Drafter):
    """Drafts from a fixed suffix tree (no online update): the engine's view of the chi-square test's proposer."""

    def __init__(self, propose) -> None:
        self._propose = propose

    def propose(self, seq, context, limit):
        return self._propose(list(context), limit)


def _chi2_setup(width):
    model = _model(vocab=4, seed=5, hidden=16)
    with torch.no_grad():
        model.head.lm.weight.mul_(30.0)  # peaked, so that drafts are often (not always) accepted
    tree = SuffixTree(8)
    rng = torch.Generator().manual_seed(1)
    for i in range(6):  # drafts from a few (biased) past rollouts
        tree.extend(i, torch.randint(0, 4, (6,), generator=rng).tolist() if i % 2 else [1, 2, 3, 3, 0, 1])

    def propose(ctx, limit):
        return tree.speculate(ctx, max_spec=limit, spec_factor=4.0, min_prob=0.0, tree_width=width)

    return model, propose


CHI2 = [
    ("chain", 0, Sampling(temperature=1.0, max_new=4, eos=99)),
    ("tree", 2, Sampling(temperature=0.7, top_p=0.85, top_k=3, max_new=4, eos=99)),
]


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "width", "sampling"), CHI2, ids=[c[0] for c in CHI2])
def test_chi_square_speculative_sequences_follow_the_policy_distribution(kind, width, sampling):
    # vocab 4, 4 tokens: 256 sequences; 1e5 speculative samples against the exact probabilities
    model, propose = _chi2_setup(width)
    prompt = [1, 2]
    n = 100_000
    seqs, forwards = speculative_sample_many(model, prompt, n, 4, propose, sampling, torch.Generator().manual_seed(2))
    exact = sequence_probs(
        model, prompt, 4, temperature=sampling.temperature, top_p=sampling.top_p, top_k=sampling.top_k
    )
    counts: dict = {}
    for s in seqs:
        counts[s] = counts.get(s, 0) + 1
    assert set(counts) <= {s for s, p in exact.items() if p > 0}, "a sequence outside the policy's support"
    # cells with expected count >= 5, the rest pooled into one cell
    big = [s for s, p in exact.items() if p * n >= 5]
    obs = [counts.get(s, 0) for s in big]
    exp = [exact[s] * n for s in big]
    rest_obs, rest_exp = n - sum(obs), n - sum(exp)
    if rest_exp >= 5:
        obs.append(rest_obs)
        exp.append(rest_exp)
    scale = sum(obs) / sum(exp)
    p = scipy.stats.chisquare(obs, [e * scale for e in exp]).pvalue
    assert p > 1e-3, f"chi-square p = {p}"
    assert forwards < 4 * 21, "shared contexts must share verification forwards"
    assert math.isclose(sum(exact.values()), 1.0, rel_tol=1e-9)


@pytest.mark.parametrize(("kind", "width", "sampling"), CHI2, ids=[c[0] for c in CHI2])
def test_chi_square_sampler_rows_are_engine_rollouts(kind, width, sampling):
    """Row r of the chi-square sampler is the engine's rollout of a request owning the row's uniforms: the
    statistical test samples what the engine emits."""
    model, propose = _chi2_setup(width)
    prompt, n = [1, 2], 64
    seqs, _ = speculative_sample_many(model, prompt, n, 4, propose, sampling, torch.Generator().manual_seed(2))
    uniforms = torch.rand(n, 4, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    reqs = [Request(seq=r, key=0, prompt=prompt, uniforms=uniforms[r]) for r in range(n)]
    states, stats = rollout(reqs, _TreeDrafter(propose), ModelVerifier(model, sampling))
    assert stats.accepted > 0, "the test should exercise accepted drafts"
    assert [tuple(st.response) for st in states] == seqs
