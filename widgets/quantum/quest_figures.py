"""Figures of the QuEst notebook and panel that read a checkpoint: predicted vs true PST on the held-out test
set, training curves, PST vs state fidelity, and prediction vs simulation speed; plus shared colours."""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.colors as pc
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from workbench.quantum.quest.checkpoint import Checkpoint
from workbench.quantum.quest.dataset import FAMILIES
from workbench.quantum.quest.net import MODELS

MODEL_LABELS = {
    "transformer": "QuEst transformer",
    "global": "global-features MLP",
    "liu": "Liu MLP",
    "no-noise": "transformer without noise features (ablation)",
}
MODEL_COLORS = {"transformer": "#1f77b4", "global": "#ff7f0e", "liu": "#2ca02c"}
MODEL_DASH = {"transformer": "solid", "global": "dash", "liu": "dot"}
FAMILY_COLORS = dict(zip(FAMILIES, ("#7f7f7f", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b")))
RMSE_TICKS = (0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0)


def _ckpt_key(ckpt: Checkpoint) -> str:
    return f"{id(ckpt)}:{len(ckpt.test.get('pst', []))}"


def label_colors(values: list[float | None], scale: str) -> list[str]:
    """Black or white text for each node, whichever reads on its fill (relative luminance of the colour)."""
    finite = [v for v in values if v is not None]
    lo, hi = (min(finite), max(finite)) if finite else (0.0, 1.0)
    out = []
    for v in values:
        if v is None:
            out.append("black")
            continue
        r, g, b = pc.unlabel_rgb(pc.sample_colorscale(scale, [(v - lo) / (hi - lo) if hi > lo else 0.5])[0])
        out.append("black" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 140 else "white")
    return out


def _metric_text(m: dict[str, Any], kind: str) -> str:
    x = m[kind]
    return f"RMSE {x['rmse']:.3f}, R² {x['r2']:.2f}" if x["n"] else "no samples"


# ---- the checkpoint's figures (panel and notebook) ------------------------------------------------------------
def heldout_scatter_figure(ckpt: Checkpoint | None = None, *, highlight: str | None = None) -> go.Figure:
    """Predicted vs true PST on ``ckpt``'s held-out test set: one subplot per model (RMSE and R^2 per kind in its
    title), one trace per circuit family, the y = x line; ``highlight``: a family drawn opaque, the rest faded."""
    fig = make_subplots(
        rows=1, cols=3, shared_yaxes=True, horizontal_spacing=0.05, subplot_titles=[MODEL_LABELS[m] for m in MODELS]
    )
    for col, _model in enumerate(MODELS, 1):
        fig.add_trace(
            go.Scatter(
                x=[0, 1],
                y=[0, 1],
                mode="lines",
                line=dict(color="#999", dash="dash"),
                name="y = x",
                legendgroup="y=x",
                showlegend=col == 1,
                hoverinfo="skip",
            ),
            row=1,
            col=col,
        )
        for fam in FAMILIES:
            label = "random circuits" if fam == "random" else f"{fam.upper()} (algorithm)"
            fig.add_trace(
                go.Scatter(
                    x=[],
                    y=[],
                    mode="markers",
                    name=label,
                    legendgroup=fam,
                    showlegend=col == 1,
                    marker=dict(color=FAMILY_COLORS[fam], size=6, opacity=0.7),
                    hovertemplate="true %{x:.3f}, predicted %{y:.3f}<br>%{customdata[0]} qubits, %{customdata[1]} "
                    "gates<extra>" + label + "</extra>",
                ),
                row=1,
                col=col,
            )
        fig.update_xaxes(title_text="true PST (aer)", range=[-0.02, 1.02], row=1, col=col)
    fig.update_yaxes(title_text="predicted PST", range=[-0.05, 1.05], row=1, col=1)
    fig.update_layout(
        title="Held-out test set: predicted vs true PST",
        height=450,
        legend=dict(orientation="h", y=-0.25),
        margin=dict(t=130),
    )
    if ckpt is not None:
        fill_heldout_scatter(fig, ckpt, highlight=highlight)
    return fig


def fill_heldout_scatter(fig: Any, ckpt: Checkpoint, *, highlight: str | None = None) -> None:
    """Put ``ckpt.test`` into a :func:`heldout_scatter_figure` (skipped when already there) and fade all
    families but ``highlight``."""
    per_col = len(FAMILIES) + 1
    if fig.layout.meta != _ckpt_key(ckpt):
        test = ckpt.test
        fam = np.asarray(test["family"])
        for col, m in enumerate(MODELS):
            pred = np.asarray(test[f"pred_{m}"])
            for j in range(len(FAMILIES)):
                idx = np.flatnonzero(fam == j)
                trace = fig.data[col * per_col + 1 + j]
                trace.x, trace.y = [test["pst"][i] for i in idx], pred[idx].tolist()
                trace.customdata = [[test["width"][i], test["gates"][i]] for i in idx]
            fig.layout.annotations[col].text = (  # short lines: three subplots share the width
                f"<b>{MODEL_LABELS[m]}</b><br>all: {_metric_text(ckpt.metrics[m], 'all')}<br>"
                f"random: {_metric_text(ckpt.metrics[m], 'random')}<br>"
                f"algorithm: {_metric_text(ckpt.metrics[m], 'algorithm')}"
            )
            fig.layout.annotations[col].font.size = 11
        fig.layout.title.text = f"Held-out test set ({len(test['pst'])} samples): predicted vs true PST" + (
            "; the current family is highlighted" if highlight else ""
        )
        fig.layout.meta = _ckpt_key(ckpt)
    for col in range(len(MODELS)):
        for j, fam in enumerate(FAMILIES):
            fig.data[col * per_col + 1 + j].marker.opacity = (
                0.7 if highlight is None else (0.95 if fam == highlight else 0.35)
            )


def training_curves_figure(ckpt: Checkpoint | None = None) -> go.Figure:
    """Training and validation RMSE per epoch of each model, the best (kept) epoch starred."""
    fig = go.Figure(
        layout=dict(
            title="Training curves: RMSE per epoch (solid: validation, dotted: training; star: best epoch, kept)",
            xaxis=dict(title="epoch"),
            height=420,
            yaxis=dict(
                title="RMSE of PST (log)", type="log", tickvals=RMSE_TICKS, ticktext=[f"{t:g}" for t in RMSE_TICKS]
            ),
            legend=dict(orientation="h", y=-0.25),
        )
    )
    for m in MODELS:
        for part, dash in (("validation", "solid"), ("training", "dot")):
            fig.add_trace(
                go.Scatter(
                    x=[],
                    y=[],
                    mode="lines",
                    name=f"{MODEL_LABELS[m]}: {part}",
                    legendgroup=m,
                    line=dict(color=MODEL_COLORS[m], dash=dash),
                )
            )
        fig.add_trace(
            go.Scatter(
                x=[],
                y=[],
                mode="markers",
                name=f"{MODEL_LABELS[m]}: best epoch",
                legendgroup=m,
                showlegend=False,
                marker=dict(symbol="star", size=14, color=MODEL_COLORS[m], line=dict(color="black", width=1)),
            )
        )
    if ckpt is not None:
        fill_training_curves(fig, ckpt)
    return fig


def fill_training_curves(fig: Any, ckpt: Checkpoint) -> None:
    """Put ``ckpt.history`` into a :func:`training_curves_figure` (skipped when already there)."""
    if fig.layout.meta == _ckpt_key(ckpt):
        return
    for i, m in enumerate(MODELS):
        h = ckpt.history[m]
        fig.data[3 * i].x, fig.data[3 * i].y = list(range(1, len(h["val_rmse"]) + 1)), list(h["val_rmse"])
        fig.data[3 * i + 1].x, fig.data[3 * i + 1].y = list(range(1, len(h["train_rmse"]) + 1)), list(h["train_rmse"])
        best = int(h["best_epoch"])
        fig.data[3 * i + 2].x, fig.data[3 * i + 2].y = ([best], [h["val_rmse"][best - 1]]) if best else ([], [])
    fig.layout.meta = _ckpt_key(ckpt)


def pst_fidelity_figure(pst: list[float], fidelity: list[float], text: list[str], title: str) -> go.Figure:
    """PST against the density-matrix state fidelity of the same circuits (the rank check)."""
    fig = go.Figure(
        layout=dict(
            title=title,
            xaxis=dict(title="state fidelity <psi|rho|psi> (no readout)", range=[0, 1.02]),
            yaxis=dict(title="PST (readout included)", range=[0, 1.02]),
            height=420,
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[0, 1],
            y=[0, 1],
            mode="lines",
            name="PST = fidelity",
            hoverinfo="skip",
            line=dict(color="#999", dash="dash"),
        )
    )
    fig.add_trace(
        go.Scatter(
            x=fidelity,
            y=pst,
            mode="markers",
            text=text,
            name="circuits",
            marker=dict(size=8, color="#1f77b4"),
            hovertemplate="%{text}<br>fidelity %{x:.3f}, PST %{y:.3f}<extra></extra>",
        )
    )
    return fig


def speed_figure(speed: dict[str, Any]) -> go.Figure:
    """Seconds per circuit of every aer path and both prediction paths (``speed.speed_comparison``'s result),
    log scale; like-for-like pairs side by side."""
    labels = {
        "aer_batched": f"aer batched ({speed['aer_method']}, shared model, one run)",
        "predict_batched": "QuEst batched (encode + one forward pass)",
        "aer_single": "aer one circuit per run (shared model)",
        "predict_single": "QuEst one circuit at a time",
        "labelling_single": "aer labelling (noise model per circuit, one run each)",
    }
    per = speed["seconds_per_circuit"]
    return go.Figure(
        go.Bar(
            x=[per[k] * 1e3 for k in labels],
            y=list(labels.values()),
            orientation="h",
            marker_color=["#7f7f7f", "#1f77b4", "#bcbcbc", "#9ecae1", "#dddddd"],
            text=[f"{per[k] * 1e3:.3g} ms" for k in labels],
            textposition="auto",
        ),
        layout=dict(
            title=f"Time per circuit on {speed['circuits']} fresh circuits ({speed['device']})",
            xaxis=dict(title="milliseconds per circuit (log)", type="log", dtick=1),
            height=340,
            yaxis=dict(autorange="reversed"),
            margin=dict(l=330),
        ),
    )
