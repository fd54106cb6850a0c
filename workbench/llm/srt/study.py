"""SRT studies: the trained policy, GRPO trajectories, replayed drafter sweeps, the check run, and the panel's view.

Caches (memoised in this module, cleared by :func:`clear_caches`): the SFT policy (also on disk under
``workbench.data.cache_dir("srt")``, verified before use), the plain GRPO trajectory per setting, replays, the
panel's views (one sweep per setting over every history depth, also on disk: ``cached_view`` only reads, ``view``
computes) and the real timed rollouts of the panel's second button (``time_engines`` / ``cached_wallclock``).
A replay walks recorded rollouts with a drafter (``decode.ReplayVerifier``): with lossless verification and each
sequence's own uniforms it counts exactly the forwards the real speculative run takes (tested), without the model.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.stats
import torch

from workbench.atomic import atomic_write, verify_zip
from workbench.config import Config, param
from workbench.data import cache_dir
from workbench.llm.gpt import GPT, GPTConfig, build_gpt
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
    "SrtViewConfig",
    "clear_caches",
    "policy",
    "trajectory",
    "replay",
    "history_curve",
    "wallclock",
    "chi_square",
    "check",
    "view",
    "cached_view",
    "time_engines",
    "cached_wallclock",
]

#: the drafters compared (SRT's chain, the workbench's tree extension, and the baselines)
BASELINES = ("srt", "srt-tree", "global-suffix", "prompt-lookup")
MAX_NEW = 47  # 5 x 9 lines + eos fit; prompt 6 + 47 <= the policy's 53-token context


def _sampling(cfg: SrtConfig, temperature: float | None = None) -> Sampling:
    t = cfg.temperature if temperature is None else temperature
    return Sampling(temperature=t, top_p=cfg.top_p, top_k=cfg.top_k, max_new=MAX_NEW, eos=EOS)


def _budget(cfg: SrtConfig, budget: int | None = None) -> DraftBudget:
    return DraftBudget(max_spec=cfg.draft_budget if budget is None else budget, spec_factor=cfg.spec_factor,
                       min_prob=cfg.min_prob, tree_width=cfg.tree_width)  # fmt: skip


def _drafter(cfg: SrtConfig, name: str, *, history: int | None = None, budget: int | None = None,
             online: bool | None = None) -> Drafter:  # fmt: skip
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
                     sampling=_sampling(cfg), engine="batched", runahead=key[-1], lr=cfg.lr, seed=cfg.seed)  # fmt: skip
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
    d = _drafter(cfg, name, history=history, budget=budget, online=online)
    return replay_into(trajectory(cfg), d, _sampling(cfg), runahead=runahead)


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


def wallclock(cfg: SrtConfig, *, temperature: float | None = None, engines: tuple[str, ...] = ("none", *BASELINES),
              repeats: int = 1) -> dict[str, EngineRun]:  # fmt: skip
    """Real rollouts of the step after training, per engine, on the trained policy with a KV cache.

    Every drafter first replays the whole trajectory (so its cache holds the history a real run would have);
    then the next step's requests run through ``ModelVerifier`` and are timed (best of ``repeats``).
    """
    sampling = _sampling(cfg, temperature)
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
                d = _drafter(cfg, name)
                if name != "none":
                    replay_into(traj, d, _sampling(cfg), runahead=cfg.runahead)
                d.begin_step(epoch)
                t0 = time.perf_counter()
                states, stats = rollout(reqs, d, ModelVerifier(model, sampling), step=epoch)
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
                         sampling=_sampling(cfg), engine="srt", drafter=_drafter(cfg, "srt"),
                         runahead=cfg.runahead, lr=cfg.lr, seed=cfg.seed)  # fmt: skip
    tick(0.5)
    same_batches = all(a.batch == b.batch for a, b in zip(traj.steps, srt_traj.steps, strict=True))
    srt_counts = [s.stats.forwards for s in srt_traj.steps]
    rep = replay(cfg, "srt")
    runs = wallclock(cfg)
    tick(0.75)
    greedy = wallclock(cfg, temperature=0.0, engines=("none", "srt", "srt-tree"))
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


# ---------------------------------------------------------------------------------------------- panel view
@dataclass(frozen=True, kw_only=True)
class SrtViewConfig(Config):
    """What the panel moves (the issue's four controls); the rest is the runner's defaults, made small."""

    history: int = param(4, lo=0, hi=8, unit="epochs", label="history depth", help="past epochs of rollouts kept")
    group: int = param(4, choices=(1, 2, 4, 8), label="group size G", help="responses per prompt")
    temperature: float = param(1.0, lo=0.0, hi=2.0, label="temperature", help="rollout temperature (0 = greedy)")
    draft_budget: int = param(16, lo=1, hi=48, unit="tokens", label="draft budget", help="max draft tokens per forward")
    # the run behind the view (fixed in the panel, set by a notebook: SrtPanel(sft_steps=20, ...))
    prompts: int = param(4, lo=1, hi=64, unit="prompts", help="prompts in the training set")
    batch_prompts: int = param(2, lo=1, hi=64, unit="prompts", help="prompts per GRPO step")
    steps: int = param(6, lo=1, hi=100, unit="steps", help="GRPO steps")
    sft_steps: int = param(80, lo=0, hi=10_000, unit="steps", help="policy warm-up steps")
    layers: int = param(2, lo=1, hi=12, help="policy blocks")
    hidden: int = param(64, lo=8, hi=1024, help="policy width")

    def check_combination(self) -> None:
        if self.batch_prompts > self.prompts:
            raise ValueError(
                f"batch_prompts={self.batch_prompts} is out of range: valid range is 1..prompts={self.prompts}"
            )


#: the fields of SrtViewConfig that describe the run behind the view (hidden in the panel)
VIEW_RUN_FIELDS = ("prompts", "batch_prompts", "steps", "sft_steps", "layers", "hidden")


def view_config(vc: SrtViewConfig) -> SrtConfig:
    """The runner config the panel's view stands for (temperature rounded to 0.1 so replays are shared)."""
    return SrtConfig(history=vc.history, group=vc.group, temperature=round(vc.temperature, 1),
                     draft_budget=vc.draft_budget, **{f: getattr(vc, f) for f in VIEW_RUN_FIELDS})  # fmt: skip


#: the history depths a setting's sweep covers (every value the panel's history slider can take)
VIEW_HISTORIES = tuple(range(0, 9))
VIEW_CACHE_VERSION = 1  # bump when a change to the task, GRPO or the drafters changes the replayed counts

# setting (the view config at history 0, temperature rounded) -> history -> the panel's data
_VIEWS: dict[SrtViewConfig, dict[int, dict]] = {}


def _setting(vc: SrtViewConfig) -> SrtViewConfig:
    return dataclasses.replace(vc, history=0, temperature=round(vc.temperature, 1))


def _view_path(setting: SrtViewConfig):
    key = json.dumps({"v": VIEW_CACHE_VERSION, **setting.to_flat_dict()}, sort_keys=True)
    return cache_dir("srt") / f"view-{hashlib.sha256(key.encode()).hexdigest()[:16]}.json"


def _with_config(vc: SrtViewConfig, data: dict) -> dict:
    return {"config": view_config(vc), **data}


def cached_view(vc: SrtViewConfig) -> dict | None:
    """The panel's data for ``vc`` if its setting was swept before (memory or disk), else None. Never computes."""
    setting = _setting(vc)
    if setting not in _VIEWS:
        path = _view_path(setting)
        if not path.exists():
            return None
        try:
            data = json.loads(path.read_text())
            views = {int(h): v for h, v in data["views"].items()}
            if sorted(views) != list(VIEW_HISTORIES):
                return None
        except (ValueError, TypeError, KeyError):
            return None  # a damaged cache is ignored (and rewritten by the next sweep)
        _VIEWS[setting] = views
    return _with_config(vc, _VIEWS[setting][vc.history])


def sweep_steps(vc: SrtViewConfig) -> int:
    """Progress ticks of :func:`view` for a setting not yet swept (the GRPO run, then one per replay)."""
    return 1 + len(_sweep_plan(view_config(_setting(vc))))


def _sweep_plan(cfg: SrtConfig) -> list[tuple[str, int, bool, int]]:
    """Every replay (drafter, history, online, run-ahead) a setting's views need, without repeats."""
    ra = max(1, cfg.runahead)
    plan = []
    for h in VIEW_HISTORIES:
        plan += [("srt", h, False, 0), ("srt", h, True, 0), ("srt", h, True, ra), ("global-suffix", h, True, 0)]
        plan += [(name, h, True, 0) for name in BASELINES if name not in ("srt", "global-suffix")]
    return list(dict.fromkeys(plan))


def view(vc: SrtViewConfig, progress: Callable[[int, int], None] | None = None) -> dict:
    """The panel's data: acceptance vs history depth, per-sequence forwards vs length, drafters side by side.

    The first call for a setting (group, temperature, budget and the run fields) trains its GRPO run and replays
    every drafter at every history depth of ``VIEW_HISTORIES`` (``progress(done, total)`` after each piece); the
    views are kept in memory and on disk, so moving the history depth, or coming back to a setting, only reads.
    """
    hit = cached_view(vc)
    if hit is not None:
        return hit
    tick = progress or (lambda _d, _t: None)
    setting = _setting(vc)
    base = view_config(setting)
    plan = _sweep_plan(base)
    total = 1 + len(plan)
    traj = trajectory(base)
    tick(1, total)
    for i, (name, h, online, ra) in enumerate(plan):
        replay(base, name, history=h, online=online, runahead=ra)
        tick(2 + i, total)
    curve = history_curve(base)
    views = {}
    for h in VIEW_HISTORIES:
        cfg = dataclasses.replace(base, history=h)
        srt = replay(cfg, "srt")
        views[h] = {
            "curve": curve,
            "lengths": srt.lengths,
            "seq_forwards": srt.seq_forwards,
            "drafters": {n: [replay(cfg, n).accepted_per_forward, replay(cfg, n).forwards_saved] for n in BASELINES},
            "rewards": list(traj.rewards),
        }
    _VIEWS[setting] = views
    with atomic_write(_view_path(setting), "w", encoding="utf-8") as f:
        json.dump({"v": VIEW_CACHE_VERSION, "views": views}, f)
    return _with_config(vc, views[vc.history])


# (runner config, temperature rounded) -> engine -> the real timed run of the step after training
_WALL: dict[SrtConfig, dict[str, EngineRun]] = {}


def cached_wallclock(vc: SrtViewConfig) -> dict[str, EngineRun] | None:
    """The real rollouts timed by :func:`time_engines` at ``vc``'s setting, if they were (never computes)."""
    return _WALL.get(view_config(vc))


def time_engines(vc: SrtViewConfig, progress: Callable[[int, int], None] | None = None) -> dict[str, EngineRun]:
    """Real KV-cached rollouts of the next step per engine (plain, then every drafter) at ``vc``'s setting
    (:func:`wallclock`, one engine at a time, ``progress(done, total)`` after each); memoised."""
    cfg = view_config(vc)
    if cfg in _WALL:
        return _WALL[cfg]
    engines = ("none", *BASELINES)
    runs: dict[str, EngineRun] = {}
    for i, name in enumerate(engines):
        runs.update(wallclock(cfg, engines=(name,)))
        if progress is not None:
            progress(i + 1, len(engines))
    _WALL[cfg] = runs
    return runs


def clear_caches() -> None:
    """Forget every memoised policy, trajectory, replay, view and timed run (the disk caches stay)."""
    for f in (_policy, _replay, paper_model):
        f.cache_clear()
    _TRAJECTORIES.clear()
    _VIEWS.clear()
    _WALL.clear()


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
    paper = {name: {w: t["baseline"][w] / t[name][w] for w in m.WORKLOADS} for name in ("srt", "suffix", "ngram")}
    a_srt = m.calibrate_acceptance(paper["srt"]["grpo"], m.WORKLOADS["grpo"], k, eff)
    a_suf = m.calibrate_acceptance(paper["suffix"]["grpo"], m.WORKLOADS["grpo"], k, eff)
    rows = []
    for name, w in m.WORKLOADS.items():
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
        }
        if acceptance_measured is not None:
            row["model_srt_at_measured"] = m.speedup(w, m.Drafting(k, acceptance_measured), eff=eff)["speedup"]
        rows.append(row)
    return {"label": m.LABEL, "k": k, "overhead_ms": eff.overhead_ms, "acceptance_srt": a_srt,
            "acceptance_suffix": a_suf, "rows": rows}  # fmt: skip


def measured_acceptance(cfg: SrtConfig, name: str = "srt") -> float:
    """Per-token acceptance measured here: accepted draft tokens / drafted tokens over the trajectory's replay."""
    traj = trajectory(cfg)
    d = _drafter(cfg, name)
    drafted = accepted = 0
    for rec in traj.steps:
        d.begin_step(rec.epoch)
        reqs = [Request(seq=s, key=s[1], prompt=p, known=r) for s, p, r in rec.batch]
        _, st = rollout(reqs, d, ReplayVerifier(_sampling(cfg)), step=rec.epoch)
        drafted += st.drafted
        accepted += st.accepted
    return accepted / max(1, drafted)


def md_table(headers: list[str], rows: list[tuple]) -> str:
    """A Markdown table (floats to 3 significant digits, None as '-'): what the notebook displays."""

    def cell(x) -> str:
        if x is None:
            return "-"
        if isinstance(x, float):
            return f"{x:.3g}"
        return str(x).replace("|", "\\|")

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(x) for x in row) + " |" for row in rows]
    return "\n".join(lines)
