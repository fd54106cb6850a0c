"""SRT's views for the panel and the notebook: the replayed sweep of one setting (every drafter at every history
depth, kept in memory and on disk), the real timed rollouts of the panel's second button, and a Markdown table.

The runs behind them are :mod:`workbench.llm.srt.experiment`'s (policy, trajectory, replays, wallclock); this
module only shapes and caches what the panel draws. ``cached_view`` / ``cached_wallclock`` only read; ``view`` /
``time_engines`` compute.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable

from workbench.atomic import atomic_write
from workbench.data import cache_dir
from workbench.llm.srt import comparison, experiment
from workbench.llm.srt.config import SrtConfig, SrtViewConfig
from workbench.llm.srt.experiment import (
    BASELINES,
    EngineRun,
    history_curve,
    measured_acceptance,
    paper_model,
    replay,
    trajectory,
    wallclock,
)

__all__ = [
    "BASELINES",
    "EngineRun",
    "SrtViewConfig",
    "VIEW_RUN_FIELDS",
    "clear_caches",
    "view_config",
    "view",
    "cached_view",
    "sweep_steps",
    "time_engines",
    "cached_wallclock",
    "replay",
    "measured_acceptance",
    "paper_model",
    "batched_rows",
    "md_table",
]

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
    """Real KV-cached rollouts of the next step per engine (plain, then every drafter) at ``vc``'s setting, every
    active rollout verified in one batched forward per round (:func:`wallclock` with the batched verifier; plain =
    the same engine without drafts), one engine at a time, ``progress(done, total)`` after each; memoised."""
    cfg = view_config(vc)
    if cfg in _WALL:
        return _WALL[cfg]
    engines = ("none", *BASELINES)
    runs: dict[str, EngineRun] = {}
    for i, name in enumerate(engines):
        runs.update(wallclock(cfg, engines=(name,), verifier="batched"))
        if progress is not None:
            progress(i + 1, len(engines))
    _WALL[cfg] = runs
    return runs


def batched_rows(cfg: SrtConfig, sizes: tuple[int, ...] = (16, 64), *, repeats: int = 1) -> list[dict]:
    """The notebook's table of SRT-batched vs plain-batched rollouts (:func:`comparison.batched_comparison`, computed
    now): one row per batch size with seconds, tokens per forward, tokens per step under both scorings and the
    speed-up."""
    rows = []
    for n, p in comparison.batched_comparison(cfg, sizes, repeats=repeats).items():
        rows.append({
            "rollouts": n, "plain-batched s": min(p.plain_s), "SRT-batched s": min(p.srt_s),
            "tokens / forward plain": p.tokens / p.plain_forwards, "tokens / forward SRT": p.tokens_per_forward,
            "tokens / step (authors)": p.tokens_per_step, "tokens / step (paper)": p.tokens / p.steps_paper,
            "speed-up": p.speedup, "identical": p.identical,
        })  # fmt: skip
    return rows


def clear_caches() -> None:
    """Forget every memoised view and timed run, and the experiment's memos (the disk caches stay)."""
    experiment.clear_caches()
    _VIEWS.clear()
    _WALL.clear()


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
