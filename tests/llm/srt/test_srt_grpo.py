"""GRPO with and without SRT, run-ahead isolation, replay vs the real run, the task's reward. References: the same
GRPO loop with plain batched rollouts (reward and loss curves must be identical: same uniforms, float64 policy),
a hand-checked reward, and the replayed forward counts (must equal the real SRT run's)."""

import copy

import pytest
import torch

from workbench.llm.gpt import build_gpt
from workbench.llm.srt.decode import Sampling
from workbench.llm.srt.drafters import make_drafter
from workbench.llm.srt.experiment import replay_into
from workbench.llm.srt.grpo import train
from workbench.llm.srt.task import EOS, Task, answer, make_prompts, policy_config, reward, sft


def test_reward_scores_right_lines_and_penalises_extra_ones():
    t = Task((4, 5, 6, 7), 3)
    right = answer(t)
    assert right == [5, 6, 7, 4, 2, 6, 7, 4, 5, 2, 7, 4, 5, 6, EOS]
    assert reward(t, right) == 1.0
    assert reward(t, right[:5] + [9, 9, 9, 9, EOS]) == pytest.approx(1 / 3)
    assert reward(t, right[:-1] + [2, 4, 5, 6, 7, EOS]) == pytest.approx(3 / 4)
    assert reward(t, [EOS]) == 0.0
    assert [p.count for p in make_prompts(6, 0)] == [p.count for p in make_prompts(6, 0)]


@pytest.fixture(scope="module")
def policy():
    torch.manual_seed(0)
    model = build_gpt(policy_config(layers=1, hidden=32, heads=4, seed=0, dtype="float64"))
    sft(model, steps=15, seed=0, batch=16)
    return model


@pytest.mark.slow
def test_grpo_with_srt_rollouts_equals_grpo_with_plain_rollouts_and_run_ahead_never_enters_the_batch(policy):
    tasks = make_prompts(4, 1)
    s = Sampling(temperature=1.0, max_new=47, eos=EOS)
    kw = dict(steps=3, batch_prompts=2, group=3, sampling=s, lr=3e-3, seed=4)
    plain = train(copy.deepcopy(policy), tasks, engine="batched", **kw)
    d = make_drafter("srt")
    srt = train(copy.deepcopy(policy), tasks, engine="srt", drafter=d, runahead=2, **kw)
    assert [a.batch for a in plain.steps] == [b.batch for b in srt.steps]
    assert plain.rewards == srt.rewards
    assert plain.losses == pytest.approx(srt.losses, abs=1e-12)
    batch_ids = {seq for st in srt.steps for seq, _, _ in st.batch}
    ahead_ids = {seq for st in srt.steps for seq, _, _ in st.runahead}
    assert ahead_ids and not (batch_ids & ahead_ids), "run-ahead responses must never be training samples"
    assert all(seq[3] == 1 for seq in ahead_ids)
    # replaying the plain trajectory (with its run-ahead on) through a fresh SRT drafter counts the real forwards
    plain_ra = train(copy.deepcopy(policy), tasks, engine="batched", runahead=2, **kw)
    rep = replay_into(plain_ra, make_drafter("srt"), s, runahead=2)
    assert rep.forwards == [st.stats.forwards for st in srt.steps]
    assert sum(rep.tokens) == sum(len(r) for st in srt.steps for _, _, r in st.batch)


def test_bad_engine_and_batch_are_refused():
    policy = build_gpt(policy_config(layers=1, hidden=8, heads=2, seed=0, dtype="float32"))
    s = Sampling(max_new=47, eos=EOS)
    with pytest.raises(ValueError, match="engine='nope' is not allowed"):
        train(policy, make_prompts(2, 0), steps=1, batch_prompts=1, group=1, sampling=s, engine="nope")
    with pytest.raises(ValueError, match="batch_prompts=3 is out of range"):
        train(policy, make_prompts(2, 0), steps=1, batch_prompts=3, group=1, sampling=s)
    with pytest.raises(ValueError, match="temperature=-0.5 is out of range"):
        Sampling(temperature=-0.5)
    with pytest.raises(ValueError, match="top_p=0.0 is out of range"):
        Sampling(top_p=0.0)
