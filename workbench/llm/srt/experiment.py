"""What both the runner and the study call: the SFT policy, the GRPO trajectories, replays of drafters over
them, real timed rollouts (batch-1 and batched verification), the check run and the paper-scale MODEL rows (the
side-by-side batched comparison is :mod:`comparison`, on these). Every memo of this technique's runs lives here (:func:`clear_caches` empties them):
the SFT policy (also on disk under ``workbench.data.cache_dir("srt")``, verified before use), the plain GRPO
trajectory per setting, replays and the MODEL rows.

A replay walks recorded rollouts with a drafter (``decode.ReplayVerifier``): with lossless verification and each
sequence's own uniforms it counts exactly the verification steps the real speculative run takes (tested), without
the model.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.stats
import torch

from workbench.atomic import atomic_write, verify_zip
from workbench.data import cache_dir
from workbench.llm.gpt import GPT, GPTConfig, build_gpt
from workbench.llm.srt.batched import BatchedVerifier
from workbench.llm.srt.config import SrtConfig
from workbench.llm.srt.decode import (
    ModelVerifier,
    ReplayVerifier,
    Request,
    RolloutStats,
    Sampling,
    rollout,
    speculative_sample_many,
    uniforms_for,
)
from workbench.llm.srt.drafters import DraftBudget, Drafter, make_drafter
from workbench.llm.srt.grpo import Trajectory, train
from workbench.llm.srt.reference import sequence_probs
from workbench.llm.srt.suffix_tree import SuffixTree
from workbench.llm.srt.task import EOS, make_prompts, policy_config, sft
from workbench.threads import one_thread

__all__ = [
    "BASELINES",
    "MAX_NEW",
    "EngineRun",
    "Replay",
    "clear_caches",
    "policy",
    "trajectory",
    "trained_policy",
    "replay",
    "replay_into",
    "history_curve",
    "sampling_of",
    "drafter_of",
    "VERIFIERS",
    "make_verifier",
    "wallclock",
    "chi_square",
    "check",
    "paper_model",
    "measured_acceptance",
]


#: the drafters compared (SRT's chain, the workbench's tree extension, and the baselines)
BASELINES = ("srt", "srt-tree", "global-suffix", "prompt-lookup")
MAX_NEW = 47  # 5 x 9 lines + eos fit; prompt 6 + 47 <= the policy's 53-token context


def sampling_of(cfg: SrtConfig, temperature: float | None = None) -> Sampling:
    """The rollout sampler of ``cfg`` (its temperature unless ``temperature`` is given; MAX_NEW tokens, eos)."""
    t = cfg.temperature if temperature is None else temperature
    return Sampling(temperature=t, top_p=cfg.top_p, top_k=cfg.top_k, max_new=MAX_NEW, eos=EOS)


def _budget(cfg: SrtConfig, budget: int | None = None) -> DraftBudget:
    return DraftBudget(max_spec=cfg.draft_budget if budget is None else budget, spec_factor=cfg.spec_factor,
                       min_prob=cfg.min_prob, tree_width=cfg.tree_width, scoring=cfg.scoring)  # fmt: skip


def drafter_of(cfg: SrtConfig, name: str, *, history: int | None = None, budget: int | None = None,
             online: bool | None = None) -> Drafter:  # fmt: skip
    """Drafter ``name`` with ``cfg``'s tree depth, history, bound, online flag and budget (overrides as given)."""
    return make_drafter(
        name, max_depth=cfg.max_depth, history=cfg.history if history is None else history,
        max_sequences=cfg.max_sequences, online=cfg.online if online is None else online,
        budget=_budget(cfg, budget),
    )  # fmt: skip


# ---------------------------------------------------------------------------------------------- policy
_POLICY_FIELDS = ("layers", "hidden", "heads", "seed", "dtype", "sft_steps")


@functools.lru_cache(maxsize=8)
def _policy(layers: int, hidden: int, heads: int, seed: int, dtype: str, sft_steps: int) -> GPT:
    path = cache_dir("srt") / f"policy-l{layers}-h{hidden}-a{heads}-s{seed}-{dtype}-sft{sft_steps}.pt"
    model = build_gpt(policy_config(layers=layers, hidden=hidden, heads=heads, seed=seed, dtype=dtype))
    if path.exists():
        try:
            verify_zip(path, what="cached SRT policy")
            model.load_state_dict(torch.load(path, weights_only=True))
            return model.eval()
        except (ValueError, RuntimeError):
            path.unlink(missing_ok=True)  # a damaged cache is rebuilt, never used
    torch.manual_seed(seed)
    with one_thread():
        sft(model, steps=sft_steps, seed=seed, batch=16)
    with atomic_write(path) as f:
        torch.save(model.state_dict(), f)
    return model.eval()


def policy(cfg: SrtConfig) -> GPT:
    """A fresh copy of the SFT policy of ``cfg`` (trained once, cached on disk and in memory)."""
    return copy.deepcopy(_policy(*(getattr(cfg, f) for f in _POLICY_FIELDS)))


# ---------------------------------------------------------------------------------------------- trajectories
_TRAJ_FIELDS = (*_POLICY_FIELDS, "prompts", "batch_prompts", "group", "steps", "lr", "temperature", "top_p", "top_k")
RUNAHEAD_RECORDED = 2  # run-ahead responses recorded per upcoming prompt (replays use 0..this many)


def _traj_key(cfg: SrtConfig) -> tuple:
    return tuple(getattr(cfg, f) for f in _TRAJ_FIELDS) + (max(cfg.runahead, RUNAHEAD_RECORDED),)


_TRAJECTORIES: dict[tuple, tuple[Trajectory, GPT]] = {}


def _trajectory(key: tuple, cfg: SrtConfig) -> tuple[Trajectory, GPT]:
    """Memoised on ``key`` alone (the fields that change the run), so configs differing elsewhere share it."""
    if key not in _TRAJECTORIES:
        _TRAJECTORIES[key] = _train_plain(key, cfg)
    return _TRAJECTORIES[key]


def _train_plain(key: tuple, cfg: SrtConfig) -> tuple[Trajectory, GPT]:
    model = policy(cfg)
    tasks = make_prompts(cfg.prompts, cfg.seed)
    with one_thread():
        traj = train(model, tasks, steps=cfg.steps, batch_prompts=cfg.batch_prompts, group=cfg.group,
                     sampling=sampling_of(cfg), engine="batched", runahead=key[-1], lr=cfg.lr, seed=cfg.seed)  # fmt: skip
    return traj, model


def trajectory(cfg: SrtConfig) -> Trajectory:
    """The GRPO run of ``cfg`` with plain batched rollouts (memoised); run-ahead responses recorded aside."""
    return _trajectory(_traj_key(cfg), cfg)[0]


def trained_policy(cfg: SrtConfig) -> GPT:
    """The policy after :func:`trajectory`'s training (a copy)."""
    return copy.deepcopy(_trajectory(_traj_key(cfg), cfg)[1])


@dataclass(frozen=True)
class Replay:
    """Per-step and total counts of one drafter over a trajectory."""

    forwards: list[int]
    tokens: list[int]
    accepted: list[int]
    lengths: list[int]  # every sequence, step order
    seq_forwards: list[int]
    draft_s: float

    @property
    def accepted_per_forward(self) -> float:
        return sum(self.tokens) / max(1, sum(self.forwards))

    @property
    def forwards_saved(self) -> float:
        return 1.0 - sum(self.forwards) / max(1, sum(self.tokens))


def replay_into(traj: Trajectory, drafter: Drafter, sampling: Sampling, *, runahead: int,
                until: int | None = None) -> Replay:  # fmt: skip
    """Replay steps ``[0, until)`` of ``traj`` through ``drafter`` (which keeps the resulting cache)."""
    fw, tk, ac, ln, sf, ds = [], [], [], [], [], 0.0
    for rec in traj.steps[:until]:
        drafter.begin_step(rec.epoch)
        reqs = [Request(seq=s, key=s[1], prompt=p, known=r) for s, p, r in rec.batch]
        _, st = rollout(reqs, drafter, ReplayVerifier(sampling), step=rec.epoch)
        fw.append(st.forwards)
        tk.append(st.tokens)
        ac.append(st.accepted)
        ln.extend(st.lengths)
        sf.extend(st.seq_forwards)
        ds += st.draft_s
        for seq, prompt, resp in rec.runahead:
            if seq[2] < runahead:
                drafter.start(seq, seq[1], prompt, step=rec.epoch)
                drafter.observe(seq, resp)
                drafter.finish(seq)
    return Replay(fw, tk, ac, ln, sf, ds)


@functools.lru_cache(maxsize=512)
def _replay(cfg: SrtConfig, name: str, history: int, budget: int, runahead: int, online: bool) -> Replay:
    d = drafter_of(cfg, name, history=history, budget=budget, online=online)
    return replay_into(trajectory(cfg), d, sampling_of(cfg), runahead=runahead)


def replay(cfg: SrtConfig, name: str = "srt", *, history: int | None = None, budget: int | None = None,
           runahead: int | None = None, online: bool | None = None) -> Replay:  # fmt: skip
    """Counts of drafter ``name`` over the trajectory of ``cfg`` (memoised)."""
    base = dataclasses.replace(cfg, history=0, draft_budget=1, runahead=0, online=True)  # passed explicitly below
    if cfg.runahead > RUNAHEAD_RECORDED:
        base = dataclasses.replace(base, runahead=cfg.runahead)  # keeps the trajectory's recorded run-ahead
    return _replay(
        base, name, cfg.history if history is None else history, cfg.draft_budget if budget is None else budget,
        cfg.runahead if runahead is None else runahead, cfg.online if online is None else online,
    )  # fmt: skip


def history_curve(cfg: SrtConfig, depths: tuple[int, ...] = (0, 1, 2, 4, 8)) -> dict[str, list[float]]:
    """Accepted tokens per verification forward vs history depth: history-only cache, SRT (online), SRT +
    run-ahead (the paper's Fig. 5 comparison), and the global suffix tree."""
    ra = max(1, cfg.runahead)
    return {
        "depth": list(depths),
        "history-only": [replay(cfg, "srt", history=h, online=False, runahead=0).accepted_per_forward for h in depths],
        "srt": [replay(cfg, "srt", history=h, online=True, runahead=0).accepted_per_forward for h in depths],
        "srt+run-ahead": [replay(cfg, "srt", history=h, online=True, runahead=ra).accepted_per_forward for h in depths],
        "global-suffix": [replay(cfg, "global-suffix", history=h, runahead=0).accepted_per_forward for h in depths],
    }


# ---------------------------------------------------------------------------------------------- real runs
@dataclass(frozen=True)
class EngineRun:
    name: str
    seconds: float
    stats: RolloutStats
    responses: list[list[int]]
    logprobs: list[list[float]]


VERIFIERS = ("single", "batched")


def make_verifier(kind: str, model: GPT, sampling: Sampling) -> ModelVerifier | BatchedVerifier:
    """``single``: one forward per sequence (batch 1); ``batched``: one forward for all active sequences."""
    if kind not in VERIFIERS:
        raise ValueError(f"verifier={kind!r} is not allowed: valid values are {', '.join(VERIFIERS)}")
    return ModelVerifier(model, sampling) if kind == "single" else BatchedVerifier(model, sampling)


def wallclock(cfg: SrtConfig, *, temperature: float | None = None, engines: tuple[str, ...] = ("none", *BASELINES),
              repeats: int = 1, verifier: Literal["single", "batched"] = "single") -> dict[str, EngineRun]:  # fmt: skip
    """Real rollouts of the step after training, per engine, on the trained policy with a KV cache.

    Every drafter first replays the whole trajectory (so its cache holds the history a real run would have);
    then the next step's requests run through the ``verifier`` (batch-1 ``ModelVerifier`` or the
    ``BatchedVerifier``) and are timed (best of ``repeats``).
    """
    sampling = sampling_of(cfg, temperature)
    traj = trajectory(cfg)
    model = trained_policy(cfg)
    tasks = make_prompts(cfg.prompts, cfg.seed)
    step = cfg.steps
    epoch = step * cfg.batch_prompts // cfg.prompts
    ids = [(step * cfg.batch_prompts + i) % cfg.prompts for i in range(cfg.batch_prompts)]
    reqs = [
        Request(
            seq=(step, p, g, 0),
            key=p,
            prompt=tasks[p].prompt,
            uniforms=uniforms_for(cfg.seed, step, p, g, 0, n=MAX_NEW),
        )
        for p in ids
        for g in range(cfg.group)
    ]
    out = {}
    with one_thread():
        for name in engines:
            best = None
            for _ in range(repeats):
                d = drafter_of(cfg, name)
                if name != "none":
                    replay_into(traj, d, sampling_of(cfg), runahead=cfg.runahead)
                d.begin_step(epoch)
                t0 = time.perf_counter()
                states, stats = rollout(reqs, d, make_verifier(verifier, model, sampling), step=epoch)
                dt = time.perf_counter() - t0
                if best is None or dt < best.seconds:
                    best = EngineRun(name, dt, stats, [s.response for s in states], [s.logprobs for s in states])
            assert best is not None, "repeats >= 1"
            out[name] = best
    return out


def chi_square(*, n: int = 100_000, temperature: float = 1.0, top_p: float = 1.0, top_k: int = 0, width: int = 0,
               seed: int = 0) -> tuple[float, int]:  # fmt: skip
    """SRT's verification on a tiny policy (vocab 4, 4 tokens: 256 sequences) against the exact sequence
    distribution: ``n`` speculative samples, drafts from a tree of past rollouts. Returns (p-value, forwards)."""
    with one_thread():
        model = build_gpt(GPTConfig(layers=2, hidden=16, heads=4, seq=16, vocab=4, dtype="float64", seed=5 + seed))
        with torch.no_grad():
            model.head.lm.weight.mul_(30.0)  # peaked: drafts are accepted often, not always
        prompt = [1, 2]
        tree = SuffixTree(8)
        g = torch.Generator().manual_seed(seed + 1)
        for i in range(6):
            tree.extend(i, torch.randint(0, 4, (6,), generator=g).tolist() if i % 2 else [1, 2, 3, 3, 0, 1])
        sampling = Sampling(temperature=temperature, top_p=top_p, top_k=top_k, max_new=4, eos=99)

        def propose(ctx, limit):
            return tree.speculate(ctx, max_spec=limit, spec_factor=4.0, min_prob=0.0, tree_width=width)

        seqs, forwards = speculative_sample_many(model, prompt, n, 4, propose, sampling,
                                                 torch.Generator().manual_seed(seed + 2))  # fmt: skip
        exact = sequence_probs(model, prompt, 4, temperature=temperature, top_p=top_p, top_k=top_k)
    counts: dict = {}
    for s in seqs:
        counts[s] = counts.get(s, 0) + 1
    if any(exact.get(s, 0.0) == 0.0 for s in counts):
        return 0.0, forwards
    big = [s for s, p in exact.items() if p * n >= 10]
    obs = [counts.get(s, 0) for s in big]
    exp = [exact[s] * n for s in big]
    if n - sum(exp) >= 10:
        obs.append(n - sum(obs))
        exp.append(n - sum(exp))
    scale = sum(obs) / sum(exp)
    return float(scipy.stats.chisquare(obs, [e * scale for e in exp]).pvalue), forwards


def check(cfg: SrtConfig, progress: Callable[[float], None] | None = None) -> dict:
    """Everything ``workbench run srt --mode check`` reports (see the runner's result for the keys)."""
    tick = progress or (lambda _f: None)
    traj = trajectory(cfg)
    tick(0.25)
    # the same GRPO run with real SRT rollouts: identical batches, rewards and losses
    tasks = make_prompts(cfg.prompts, cfg.seed)
    with one_thread():
        srt_traj = train(policy(cfg), tasks, steps=cfg.steps, batch_prompts=cfg.batch_prompts, group=cfg.group,
                         sampling=sampling_of(cfg), engine="srt", drafter=drafter_of(cfg, "srt"),
                         runahead=cfg.runahead, lr=cfg.lr, seed=cfg.seed)  # fmt: skip
    tick(0.5)
    same_batches = all(a.batch == b.batch for a, b in zip(traj.steps, srt_traj.steps, strict=True))
    srt_counts = [s.stats.forwards for s in srt_traj.steps]
    rep = replay(cfg, "srt")
    runs = wallclock(cfg)
    tick(0.75)
    greedy = wallclock(cfg, temperature=0.0, engines=("none", "srt", "srt-tree"))
    batched = {t: wallclock(cfg, temperature=t, engines=("srt", "srt-tree"), verifier="batched") for t in (None, 0.0)}
    p_chain, _ = chi_square(temperature=max(cfg.temperature, 0.05), top_p=cfg.top_p, top_k=cfg.top_k, seed=cfg.seed)
    p_tree, _ = chi_square(temperature=max(cfg.temperature, 0.05), top_p=cfg.top_p, top_k=cfg.top_k, width=2,
                           seed=cfg.seed)  # fmt: skip
    tick(1.0)
    plain = runs["none"]
    lp_diff = max(
        (abs(a - b) for name in BASELINES for ra, rb in zip(runs[name].logprobs, plain.logprobs, strict=True)
         for a, b in zip(ra, rb, strict=True)),
        default=0.0,
    )  # fmt: skip
    lengths = np.array(rep.lengths)
    sf = np.array(rep.seq_forwards)
    long = lengths >= np.quantile(lengths, 0.75)
    baselines = {}
    for name in BASELINES:
        r = replay(cfg, name)
        run = runs[name]
        baselines[name] = {
            "accepted_per_forward": r.accepted_per_forward,
            "forwards_saved": r.forwards_saved,
            "speedup_wallclock": plain.seconds / run.seconds,
            "tokens_identical": run.responses == plain.responses,
            "draft_seconds": run.stats.draft_s,
            "verify_seconds": run.stats.verify_s,
        }
    return {
        "greedy_identical": all(greedy[n].responses == greedy["none"].responses for n in greedy),
        "batched_identical": all(
            b[n].responses == (plain if t is None else greedy["none"]).responses for t, b in batched.items() for n in b
        ),  # fmt: skip
        "sampling_identical": all(runs[n].responses == plain.responses for n in BASELINES) and same_batches,
        "sampling_chi2_pvalue": p_chain,
        "chi2_pvalues": {"chain": p_chain, "tree": p_tree},
        "logprob_max_abs_diff": lp_diff,
        "accepted_per_forward": rep.accepted_per_forward,
        "forwards_saved": rep.forwards_saved,
        "forwards_saved_long_tail": float(1 - sf[long].sum() / lengths[long].sum()),
        "forwards_saved_short": float(1 - sf[~long].sum() / max(1, lengths[~long].sum())),
        "replay_equals_real": srt_counts == rep.forwards,
        "speedup_wallclock": plain.seconds / runs["srt"].seconds,
        "plain_tokens_per_s": plain.stats.tokens / plain.seconds,
        "srt_tokens_per_s": runs["srt"].stats.tokens / runs["srt"].seconds,
        "baselines": baselines,
        "history_curve": history_curve(cfg),
        "rewards": {"plain": traj.rewards, "srt": srt_traj.rewards},
        "losses": {"plain": traj.losses, "srt": srt_traj.losses},
    }


# ---------------------------------------------------------------------------------------------- paper scale
@functools.lru_cache(maxsize=8)
def paper_model(k: int = 24, acceptance_measured: float | None = None) -> dict:
    """MODEL rows beside Table 1: the per-iteration overhead calibrated on the GRPO baseline, SRT's and SuffixDecoding's
    acceptance each calibrated on the GRPO column (draft length ``k``, the authors' default 24), then predicted for
    PPO, DAPO and ReTool; the acceptance each method would need in every column; optionally the speed-up at an
    acceptance measured here."""
    from workbench.llm.srt import model as m

    eff = m.calibrate_overhead()
    t = m.TABLE1_GEN_S
    workloads = m.calibrated_workloads(eff)  # each response-length median calibrated on its baseline time
    paper = {name: {w: t["baseline"][w] / t[name][w] for w in m.WORKLOADS} for name in ("srt", "suffix", "ngram")}
    a_srt = m.calibrate_acceptance(paper["srt"]["grpo"], workloads["grpo"], k, eff)
    a_suf = m.calibrate_acceptance(paper["suffix"]["grpo"], workloads["grpo"], k, eff)
    rows = []
    for name, w in workloads.items():
        srt = m.speedup(w, m.Drafting(k, a_srt), eff=eff)
        suf = m.speedup(w, m.Drafting(k, a_suf), eff=eff)
        row = {
            "workload": name,
            "paper_srt": paper["srt"][name],
            "model_srt": srt["speedup"],
            "model_srt_iterations_ratio": srt["iterations_ratio"],
            "model_srt_cost_ratio": srt["cost_ratio"],
            "paper_suffix": paper["suffix"][name],
            "model_suffix": suf["speedup"],
            "acceptance_needed_srt": m.calibrate_acceptance(paper["srt"][name], w, k, eff),
            "acceptance_needed_suffix": m.calibrate_acceptance(paper["suffix"][name], w, k, eff),
            "model_baseline_s": srt["baseline_s"],
            "paper_baseline_s": t["baseline"][name],
            "median_response_tokens": w.median_frac * w.max_out,
        }
        if acceptance_measured is not None:
            row["model_srt_at_measured"] = m.speedup(w, m.Drafting(k, acceptance_measured), eff=eff)["speedup"]
        rows.append(row)
    return {"label": m.LABEL, "k": k, "overhead_ms": eff.overhead_ms, "acceptance_srt": a_srt,
            "acceptance_suffix": a_suf, "rows": rows}  # fmt: skip


def measured_acceptance(cfg: SrtConfig, name: str = "srt") -> float:
    """Per-token acceptance measured here: accepted draft tokens / drafted tokens over the trajectory's replay."""
    traj = trajectory(cfg)
    d = drafter_of(cfg, name)
    drafted = accepted = 0
    for rec in traj.steps:
        d.begin_step(rec.epoch)
        reqs = [Request(seq=s, key=s[1], prompt=p, known=r) for s, p, r in rec.batch]
        _, st = rollout(reqs, d, ReplayVerifier(sampling_of(cfg)), step=rec.epoch)
        drafted += st.drafted
        accepted += st.accepted
    return accepted / max(1, drafted)


def clear_caches() -> None:
    """Forget every memoised policy, trajectory, replay and MODEL row (the disk caches stay)."""
    for f in (_policy, _replay, paper_model):
        f.cache_clear()
    _TRAJECTORIES.clear()
