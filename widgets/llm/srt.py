"""SRT panel: accepted tokens per verification forward vs history depth, forwards per sequence vs its length,
the drafters side by side, the GRPO reward curve, and (behind a button) real rollouts timed on this CPU.

Everything drawn comes from ``workbench.llm.srt.study`` (``view`` memoised there; ``wallclock`` for the button);
this module only builds and updates figures.
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as W
import plotly.graph_objects as go

from widgets.base import Panel
from workbench.llm.srt import study

CURVES = {"history-only": "#999999", "srt": "#1f77b4", "srt+run-ahead": "#2ca02c", "global-suffix": "#d62728"}
DRAFTERS = ("none", *study.BASELINES)


class SrtPanel(Panel):
    """Move the history depth, group size, temperature and draft budget; see SRT's acceptance and savings."""

    technique = "srt"
    title = "SRT: speculative rollouts from a per-prompt tree cache (replayed GRPO rollouts of a small policy)"
    config = study.SrtViewConfig
    options = {"temperature": (0.0, 0.5, 0.7, 1.0, 1.3), "draft_budget": (2, 4, 8, 16, 24, 32, 48)}
    static_slider = ("history", (0, 1, 2, 4, 8))
    hidden = study.VIEW_RUN_FIELDS

    def __init__(self, *, static: bool | None = None, **values: Any) -> None:
        super().__init__(static=static, **values)
        self.run_button = W.Button(description="Time real rollouts", layout=W.Layout(width="auto"),
                                   tooltip="plain vs SRT and the baselines with a KV cache on this CPU")  # fmt: skip
        self.progress = W.IntProgress(value=0, min=0, max=len(DRAFTERS), description="engines")
        self.run_button.on_click(lambda _: self.run_wallclock())

    def widget(self) -> W.Widget:
        box = super().widget()
        return W.VBox([*box.children[:-len(self.figures)], W.HBox([self.run_button, self.progress]),
                       *box.children[-len(self.figures):]])  # fmt: skip

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
        wall = go.Figure(layout=dict(title="Real rollouts on this CPU (press 'Time real rollouts')", height=320,
                                     yaxis=dict(title="tokens / s")))  # fmt: skip
        wall.add_trace(go.Bar(x=list(DRAFTERS), y=[0] * len(DRAFTERS), name="tokens/s", text=[""] * len(DRAFTERS)))
        return [curve, per_seq, bars, reward, wall]

    def compute(self, values: dict[str, Any]) -> dict:
        return study.view(study.SrtViewConfig.from_dict(values))

    def draw(self, figures: list[Any], result: dict, values: dict[str, Any]) -> None:
        curve, per_seq, bars, reward, _ = figures
        c = result["curve"]
        for i, name in enumerate(CURVES):
            curve.data[i].x, curve.data[i].y = c["depth"], c[name]
        h = values["history"]
        srt_at = result["drafters"]["srt"][0]
        curve.data[len(CURVES)].x, curve.data[len(CURVES)].y = [h], [srt_at]
        lengths = result["lengths"]
        per_seq.data[0].x = per_seq.data[0].y = [0, max(lengths, default=1)]
        per_seq.data[1].x, per_seq.data[1].y = lengths, result["seq_forwards"]
        apf = [1.0] + [result["drafters"][n][0] for n in study.BASELINES]
        saved = [0.0] + [result["drafters"][n][1] for n in study.BASELINES]
        bars.data[0].y = apf
        bars.data[0].text = [f"{a:.2f} ({s:.0%} saved)" for a, s in zip(apf, saved, strict=True)]
        rw = result["rewards"]
        reward.data[0].x, reward.data[0].y = list(range(len(rw))), rw

    def notes(self, result: dict, values: dict[str, Any]) -> str:
        a, s = result["drafters"]["srt"]
        return (f"SRT: {a:.2f} tokens per forward, {s:.0%} of target forwards saved (history {values['history']}, "
                f"G={values['group']}, T={values['temperature']}, budget {values['draft_budget']}).")  # fmt: skip

    def run_wallclock(self) -> None:
        """Time real KV-cached rollouts of the next step per engine (study.wallclock) and draw tokens/s."""
        try:
            cfg = study.view_config(study.SrtViewConfig.from_dict(self.values()))
            runs = {}
            for i, name in enumerate(DRAFTERS):
                runs.update(study.wallclock(cfg, engines=(name,)))
                self.progress.value = i + 1
        except ValueError as exc:
            self.status.value = f'<span style="color:#b00020">&#9888; {html.escape(str(exc))}</span>'
            return
        wall = self.figures[4]
        tps = [runs[n].stats.tokens / runs[n].seconds for n in DRAFTERS]
        with wall.batch_update():
            wall.data[0].y = tps
            wall.data[0].text = [f"{t / tps[0]:.2f}x" for t in tps]
