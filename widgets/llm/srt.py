"""SRT panel: accepted tokens per verification forward vs history depth, forwards per sequence vs its length,
the drafters side by side, the GRPO reward curve, and real batched rollouts timed on this CPU (every active rollout
verified in one forward per round; plain = the same batch without drafts).

Everything drawn comes from ``workbench.llm.srt.study``: redraws only read its caches (``cached_view``,
``cached_wallclock``), so they are instant; a setting (group, temperature, draft budget) not swept yet is drawn
as "not run yet" until *Run this setting* (``study.view``: the GRPO run and every replay, with a progress bar);
*Time real rollouts* runs ``study.time_engines``. The start setting is swept when the panel is built (from the
study's memory or disk cache when it was computed before). This module only builds and updates figures.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

import ipywidgets as W
import plotly.graph_objects as go

from widgets.base import Action, Panel, Progress
from workbench.llm.srt import study

CURVES = {"history-only": "#999999", "srt": "#1f77b4", "srt+run-ahead": "#2ca02c", "global-suffix": "#d62728"}
DRAFTERS = ("none", *study.BASELINES)
RUN = "Run this setting"
TIME = "Time real rollouts"


@dataclass(frozen=True)
class SrtPanelView:
    """What the panel draws at one setting, from the study's caches only: the sweep (``cached_view``; None: not run
    yet, press *Run this setting*) and the timed rollouts (``cached_wallclock``; None: not timed yet)."""

    sweep: dict[str, Any] | None
    wallclock: dict[str, study.EngineRun] | None


class SrtPanel(Panel):
    """Move the history depth, group size, temperature and draft budget; see SRT's acceptance and savings."""

    technique = "srt"
    title = "SRT: speculative rollouts from a per-prompt tree cache (replayed GRPO rollouts of a small policy)"
    config = study.SrtViewConfig
    options = {"temperature": (0.0, 0.5, 0.7, 1.0, 1.3), "draft_budget": (2, 4, 8, 16, 24, 32, 48)}
    static_slider = ("history", (0, 1, 2, 4, 8))
    hidden = study.VIEW_RUN_FIELDS

    def __init__(self, *, static: bool | None = None, **values: Any) -> None:
        self.run_action = Action(self, RUN, self._run_setting, label="progress",
                                 tooltip="train the GRPO run of this group/temperature and replay every drafter")  # fmt: skip
        self.time_action = Action(self, TIME, self._run_wallclock, share=self.run_action,
                                  tooltip="plain vs SRT and the baselines, batched, with a KV cache on this CPU")  # fmt: skip
        self.run_button, self.time_button = self.run_action.button, self.time_action.button
        self.progress = self.run_action.progress
        super().__init__(static=static, **values)
        if self.error is None and study.cached_view(self._vc()) is None:
            self.run_action.try_run()  # the start setting: swept once (memory / disk cache afterwards)

    def _vc(self) -> study.SrtViewConfig:
        return study.SrtViewConfig.from_dict(self.values())

    def widget(self) -> W.Widget:
        box = super().widget()
        k = len(self.figures)
        row = W.HBox([self.run_button, *self.time_action.widget().children])
        return W.VBox([*box.children[:-k], row, *box.children[-k:]])

    # ---- figures --------------------------------------------------------------------------------------------
    def make_figures(self, values: dict[str, Any]) -> list[go.Figure]:
        curve = go.Figure(layout=dict(title="Accepted tokens per verification forward vs history depth", height=360,
                                      xaxis=dict(title="history depth (epochs of past rollouts kept)"),
                                      yaxis=dict(title="tokens per forward")))  # fmt: skip
        for name, color in CURVES.items():
            curve.add_trace(go.Scatter(x=[], y=[], mode="lines+markers", name=name, line=dict(color=color)))
        curve.add_trace(go.Scatter(x=[], y=[], mode="markers", name="current", marker=dict(size=14, symbol="circle-open",
                                                                                              color="black")))  # fmt: skip
        per_seq = go.Figure(layout=dict(title="Forwards per response: plain vs SRT (long responses save most)",
                                        height=360, xaxis=dict(title="response length (tokens)"),
                                        yaxis=dict(title="target forwards")))  # fmt: skip
        per_seq.add_trace(go.Scatter(x=[], y=[], mode="lines", name="plain (1 per token)", line=dict(color="#999")))
        per_seq.add_trace(go.Scatter(x=[], y=[], mode="markers", name="SRT", marker=dict(color="#1f77b4", opacity=0.6)))
        bars = go.Figure(layout=dict(title="Drafters on the same rollouts", height=340,
                                     yaxis=dict(title="tokens per forward")))  # fmt: skip
        bars.add_trace(
            go.Bar(x=list(DRAFTERS), y=[0] * len(DRAFTERS), name="tokens per forward", text=[""] * len(DRAFTERS))
        )
        reward = go.Figure(layout=dict(title="GRPO reward per step (SRT rollouts give the same tokens)", height=320,
                                       xaxis=dict(title="step"), yaxis=dict(title="mean reward")))  # fmt: skip
        reward.add_trace(go.Scatter(x=[], y=[], mode="lines+markers", name="plain = SRT"))
        wall = go.Figure(layout=dict(title=f"Real batched rollouts on this CPU (press '{TIME}')", height=320,
                                     yaxis=dict(title="tokens / s")))  # fmt: skip
        wall.add_trace(go.Bar(x=list(DRAFTERS), y=[0] * len(DRAFTERS), name="tokens/s", text=[""] * len(DRAFTERS)))
        return [curve, per_seq, bars, reward, wall]

    def compute(self, values: dict[str, Any]) -> SrtPanelView:
        vc = study.SrtViewConfig.from_dict(values)
        return SrtPanelView(study.cached_view(vc), study.cached_wallclock(vc))

    @staticmethod
    def _setting(values: dict[str, Any]) -> str:
        return f"G={values['group']}, T={values['temperature']:g}, budget {values['draft_budget']}"

    def draw(self, figures: list[Any], result: SrtPanelView, values: dict[str, Any]) -> None:
        curve, per_seq, bars, reward, wall = figures
        view, runs = result.sweep, result.wallclock
        setting = self._setting(values)
        h = values["history"]
        if view is None:
            missing = f"not run yet at {setting} (press '{RUN}')"
            for trace in curve.data[: len(CURVES)]:
                trace.x, trace.y = [], []
            curve.data[len(CURVES)].x, curve.data[len(CURVES)].y = [h], []
            per_seq.data[0].x = per_seq.data[0].y = per_seq.data[1].x = per_seq.data[1].y = []
            bars.data[0].y, bars.data[0].text = [0] * len(DRAFTERS), [""] * len(DRAFTERS)
            reward.data[0].x = reward.data[0].y = []
            curve.layout.title.text = f"Accepted tokens per forward: {missing}"
            per_seq.layout.title.text = f"Forwards per response: {missing}"
            bars.layout.title.text = f"Drafters: {missing}"
            reward.layout.title.text = f"GRPO reward per step: {missing}"
        else:
            c = view["curve"]
            for i, name in enumerate(CURVES):
                curve.data[i].x, curve.data[i].y = c["depth"], c[name]
            curve.data[len(CURVES)].x, curve.data[len(CURVES)].y = [h], [view["drafters"]["srt"][0]]
            curve.layout.title.text = f"Accepted tokens per verification forward vs history depth ({setting})"
            lengths = view["lengths"]
            per_seq.data[0].x = per_seq.data[0].y = [0, max(lengths, default=1)]
            per_seq.data[1].x, per_seq.data[1].y = lengths, view["seq_forwards"]
            per_seq.layout.title.text = f"Forwards per response: plain vs SRT (history {h}, {setting})"
            apf = [1.0] + [view["drafters"][n][0] for n in study.BASELINES]
            saved = [0.0] + [view["drafters"][n][1] for n in study.BASELINES]
            bars.data[0].y = apf
            bars.data[0].text = [f"{a:.2f} ({s:.0%} saved)" for a, s in zip(apf, saved, strict=True)]
            bars.layout.title.text = f"Drafters on the same rollouts (history {h}, {setting})"
            rw = view["rewards"]
            reward.data[0].x, reward.data[0].y = list(range(len(rw))), rw
            reward.layout.title.text = f"GRPO reward per step, {setting} (SRT rollouts give the same tokens)"
        if runs is None:
            wall.data[0].y, wall.data[0].text = [0] * len(DRAFTERS), [""] * len(DRAFTERS)
            wall.layout.title.text = (
                f"Real batched rollouts on this CPU: not timed yet at {setting}, history {h} (press '{TIME}')"
            )
        else:
            tps = [runs[n].stats.tokens / runs[n].seconds for n in DRAFTERS]
            wall.data[0].y = tps
            wall.data[0].text = [f"{t / tps[0]:.2f}x" for t in tps]
            wall.layout.title.text = (
                f"Real batched rollouts on this CPU ({setting}, history {h}): tokens/s, speed-up vs plain batched"
            )

    def notes(self, result: SrtPanelView, values: dict[str, Any]) -> str:
        view = result.sweep
        if view is None:
            return f"{html.escape(self._setting(values))} is not run yet: press <b>{RUN}</b> (GRPO run + replays)"
        a, s = view["drafters"]["srt"]
        return (f"SRT: {a:.2f} tokens per forward, {s:.0%} of target forwards saved (history {values['history']}, "
                f"G={values['group']}, T={values['temperature']}, budget {values['draft_budget']}).")  # fmt: skip

    # ---- buttons --------------------------------------------------------------------------------------------
    def run_setting(self) -> None:
        """Sweep the current setting (study.view: GRPO run, every drafter at every history depth), then redraw."""
        self.run_action.run()

    def _run_setting(self, progress: Progress) -> None:
        vc = self._vc()
        progress(0, study.sweep_steps(vc))
        study.view(vc, progress=progress)

    def run_wallclock(self) -> None:
        """Time real KV-cached rollouts of the next step per engine (study.time_engines), then redraw."""
        self.time_action.run()

    def _run_wallclock(self, progress: Progress) -> None:
        vc = self._vc()
        progress(0, len(DRAFTERS))
        study.time_engines(vc, progress=progress)
