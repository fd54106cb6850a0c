"""Batched speculative verification (workbench/llm/srt/batched.py). References: plain batched decoding
(decode.sample_batch: one forward per round, no drafts), target-only decoding with a full forward per token
(reference.plain_decode), the batch-1 verification forward of each row (decode.verify_forward) and the per-row
tree mask (tree_attention.tree_mask).

Tolerances: the policy is float64, so batched, padded and per-row logits agree to ~1e-13 (we allow 1e-9); token
equality is exact (a flip needs a uniform within ~1e-13 of a CDF boundary).
"""

import pytest
import torch

from workbench.llm.gpt import GPTConfig, build_gpt
from workbench.llm.srt.batched import BatchedVerifier, batch_inputs
from workbench.llm.srt.decode import (
    ModelVerifier,
    ReplayVerifier,
    Request,
    Sampling,
    rollout,
    sample_batch,
    uniforms_for,
    verify_forward,
)
from workbench.llm.srt.drafters import DraftBudget, make_drafter
from workbench.llm.srt.reference import plain_decode
from workbench.llm.srt.suffix_tree import Draft
from workbench.llm.srt.tree_attention import tree_mask, tree_positions


def _model(vocab=7, seed=1):
    model = build_gpt(GPTConfig(layers=2, hidden=32, heads=4, seq=64, vocab=vocab, dtype="float64", seed=seed))
    with torch.no_grad():
        model.head.lm.weight.mul_(25.0)  # peaked: rollouts repeat themselves, so drafts get accepted
    return model


SETTINGS = [  # eos 6 is emitted early and at different steps: uneven response lengths
    pytest.param(Sampling(temperature=0.0, max_new=33, eos=99), id="greedy"),
    pytest.param(Sampling(temperature=1.0, max_new=33, eos=6), id="t1"),
    pytest.param(Sampling(temperature=0.7, top_p=0.9, max_new=33, eos=6), id="top-p", marks=pytest.mark.slow),
    pytest.param(Sampling(temperature=1.0, top_k=3, max_new=33, eos=6), id="top-k", marks=pytest.mark.slow),
]


def _requests(prompts, group, sampling, seed=3):
    return [
        Request(seq=(p, g), key=p, prompt=prompts[p], uniforms=uniforms_for(seed, 0, p, g, n=sampling.max_new))
        for p in range(len(prompts))
        for g in range(group)
    ]


@pytest.mark.parametrize("sampling", SETTINGS)
@pytest.mark.parametrize(("drafter", "n_prompts", "group"), [("srt", 3, 5), ("srt-tree", 1, 7)])
def test_batched_srt_equals_batched_plain(sampling, drafter, n_prompts, group):
    """Odd rollout counts (15, 7), equal prompt lengths (what sample_batch takes), uneven response lengths."""
    model = _model()
    prompts = [[1, 2, 3], [4, 0, 2], [3, 3, 5]][:n_prompts]
    reqs = _requests(prompts, group, sampling)
    v = BatchedVerifier(model, sampling)
    states, stats = rollout(reqs, make_drafter(drafter, budget=DraftBudget(max_spec=8, min_prob=0.05)), v)
    plain, plain_lp = sample_batch(model, torch.tensor([r.prompt for r in reqs]),
                                   torch.stack([r.uniforms for r in reqs]), sampling)  # fmt: skip
    assert [st.response for st in states] == plain
    for st, lp in zip(states, plain_lp, strict=True):
        assert st.logprobs == pytest.approx(lp, abs=1e-9)
    assert stats.accepted > 0, "the test should exercise accepted drafts"
    assert v.forwards == stats.rounds <= max(len(r) for r in plain)  # no more batched forwards than plain's rounds
    if sampling.eos == 99:  # full-length rollouts: accepted drafts save whole rounds
        assert stats.rounds < sampling.max_new
    # finished rollouts leave the batch: the batch never grows, and it shrinks when lengths differ
    assert v.rows_per_forward == sorted(v.rows_per_forward, reverse=True) and v.rows_per_forward[0] == len(reqs)
    if len({len(r) for r in plain}) > 1:
        assert v.rows_per_forward[-1] < len(reqs)


@pytest.mark.parametrize("sampling", SETTINGS)
def test_batched_srt_with_uneven_prompts_equals_target_only_decoding_and_batch_one(sampling):
    model = _model()
    prompts = [[1, 2, 3], [4, 0, 2, 2, 5], [3], [5, 5]]  # uneven prompts, one of a single token (no prefill)
    reqs = _requests(prompts, 3, sampling)
    budget = DraftBudget(max_spec=6, min_prob=0.05)
    states, stats = rollout(reqs, make_drafter("srt", budget=budget), BatchedVerifier(model, sampling))
    single, single_stats = rollout(reqs, make_drafter("srt", budget=budget), ModelVerifier(model, sampling))
    for st, one in zip(states, single, strict=True):
        ref, ref_lp = plain_decode(model, st.request.prompt, st.request.uniforms, temperature=sampling.temperature,
                                   top_p=sampling.top_p, top_k=sampling.top_k, max_new=sampling.max_new,
                                   eos=sampling.eos)  # fmt: skip
        assert st.response == ref == one.response
        assert st.logprobs == pytest.approx(ref_lp, abs=1e-9)
    # rounds see the same drafter state in both engines: the same verification steps, and replay counts them
    assert stats.seq_forwards == single_stats.seq_forwards
    known = [Request(seq=r.seq, key=r.key, prompt=r.prompt, known=st.response) for r, st in zip(reqs, states)]
    _, rep = rollout(known, make_drafter("srt", budget=budget), ReplayVerifier(sampling))
    assert (rep.forwards, rep.accepted, rep.rounds) == (stats.forwards, stats.accepted, stats.rounds)


def test_batched_forward_rows_equal_the_batch_one_verification_forward():
    model = _model(vocab=11)
    prefixes = [[3, 1, 4, 1, 5, 9], [2, 7], [6, 6, 6, 1]]
    drafts = [Draft((2, 6, 5, 3), (-1, 0, 0, 2)), Draft(), Draft((8, 9, 1), (-1, 0, 1))]  # a tree, none, a chain
    lengths = torch.tensor([len(p) - 1 for p in prefixes])
    width = int(lengths.max())
    tokens = torch.zeros(3, width, dtype=torch.long)
    for i, p in enumerate(prefixes):
        tokens[i, : len(p) - 1] = torch.tensor(p[:-1])
    with torch.no_grad():
        col = torch.arange(width)
        mask = (torch.ones(width, width, dtype=torch.bool).tril()[None] & (col < lengths[:, None, None])) | torch.eye(
            width, dtype=torch.bool
        )
        _, past = model.forward_cached(tokens, positions=col.repeat(3, 1), mask=mask[:, None])
        inputs = batch_inputs([p[-1] for p in prefixes], drafts, lengths, width, model.shape.seq)
        logits, _ = model.forward_cached(inputs[0], past, positions=inputs[1], mask=inputs[2])
        for i, (p, d) in enumerate(zip(prefixes, drafts, strict=True)):
            one_past = model.forward_cached(torch.tensor([p[:-1]]))[1]
            ref, _, _ = verify_forward(model, one_past, p[-1], d)  # (len(d) + 1, vocab)
            torch.testing.assert_close(logits[i, : len(d) + 1], ref, atol=1e-9, rtol=1e-9)


def test_batch_inputs_mask_is_each_rows_tree_mask_over_its_own_cache():
    drafts = [Draft((1, 2, 3), (-1, -1, 1)), Draft((4,), (-1,)), Draft()]
    lengths = torch.tensor([2, 5, 0])
    tokens, positions, mask, depth = batch_inputs([7, 8, 9], drafts, lengths, 5, 64)
    s = 4
    assert tokens.tolist() == [[7, 1, 2, 3], [8, 4, 0, 0], [9, 0, 0, 0]]
    for i, d in enumerate(drafts):
        c, n = int(lengths[i]), len(d) + 1
        want = tree_mask(d.parents, c)  # (n, c + n)
        assert torch.equal(mask[i, 0, :n, :c], want[:, :c])  # the row's own cached positions only
        assert not mask[i, 0, :, c:5].any()  # never another row's padding
        assert torch.equal(mask[i, 0, :n, 5 : 5 + n], want[:, c:])
        assert not mask[i, 0, :n, 5 + n :].any()  # real queries never see padded inputs
        assert mask[i, 0, torch.arange(s), 5 + torch.arange(s)].all()  # every query sees itself (no empty row)
        assert positions[i, :n].tolist() == tree_positions(d.parents, c).tolist()
    assert depth[0].tolist() == [0, 1, 1, 2]
