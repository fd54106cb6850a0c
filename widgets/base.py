"""Panel base: controls + plotly figures + a status line, live (LiveFigure) or static (for reports).

A panel subclass declares
- ``technique``: registry name; controls are built from that technique's config specs (:func:`control`),
- ``make_figures(values) -> list[go.Figure]``: the figures, built once with full data and layout,
- ``compute(values) -> result``: calls into ``workbench`` (no algorithm lives here); may raise ValueError,
- ``draw(figures, result, values)``: mutates the figures (plain ``go.Figure`` API, live or static),
- optionally ``static_slider = (name, values)``: the control a report animates with a plotly slider.

Live mode keeps one :class:`~widgets.live_figure.LiveFigure` per figure (a ``go.Figure`` whose ``view`` widget
redraws on every change) and redraws inside ``batch_update()`` when a control changes. An error (bad
combination of values) shows in the panel's status line; the figures keep their last
good state, so nothing the user set is lost. Static mode (``static=True`` or env ``WORKBENCH_EXPORT=1``, set
by ``workbench report``) renders plain figures as HTML, with precomputed frames over ``static_slider``.
"""

from __future__ import annotations

import contextlib
import html
import logging
import os
import time
from collections.abc import Sequence
from typing import Any

import ipywidgets as W
import plotly.graph_objects as go

from widgets import layout
from widgets.live_figure import LiveFigure, figure_bundle
from workbench.config import ParamSpec
from workbench.registry import get_technique

log = logging.getLogger(__name__)

EXPORT_ENV = "WORKBENCH_EXPORT"


def export_mode() -> bool:
    """True when a report is being exported (``workbench report`` sets ``WORKBENCH_EXPORT=1``)."""
    return os.environ.get(EXPORT_ENV, "") == "1"


def control(spec: ParamSpec, value: Any, options: Sequence | None = None) -> W.Widget:
    """An ipywidget for ``spec``: slider for numbers (a selection slider over ``options`` when given),
    checkbox for booleans, dropdown for choices."""
    common = dict(
        description=spec.title,
        style={"description_width": "initial"},
        tooltip=spec.help,
        layout=W.Layout(width="360px"),
    )
    if options is not None:
        if value not in options:  # a value set from a notebook parameter joins the slider's stops
            options = sorted({*options, value})
        labels = [f"{o:g}" if isinstance(o, float) else str(o) for o in options]  # 1e+11, not 100000000000.0
        if labels != [str(o) for o in options]:
            options = list(zip(labels, options))
        return W.SelectionSlider(options=list(options), value=value, continuous_update=False, **common)
    if spec.choices is not None:
        return W.Dropdown(options=list(spec.choices), value=value, **common)
    if spec.type is bool:
        return W.Checkbox(value=value, indent=False, **common)
    if spec.type is int:
        return W.IntSlider(value=value, min=int(spec.lo), max=int(spec.hi), continuous_update=False, **common)
    if spec.type is float:
        return W.FloatSlider(value=value, min=spec.lo, max=spec.hi, continuous_update=False, **common)
    return W.Text(value=str(value), **common)


class Panel:
    """Base class of every panel in ``widgets/`` (see module docstring)."""

    technique: str = ""
    title: str = ""
    #: the config class whose fields become controls (default: the technique's CLI config)
    config: type | None = None
    #: name -> list of options for controls that should be selection sliders (e.g. powers of two)
    options: dict[str, Sequence] = {}
    #: parameters that the panel does not expose as controls (fixed from the config default or kwargs)
    hidden: tuple[str, ...] = ()
    #: (control name, values) animated by a plotly slider in static mode
    static_slider: tuple[str, Sequence] | None = None

    def __init__(self, *, static: bool | None = None, **values: Any) -> None:
        self.static = export_mode() if static is None else static
        config_cls = self.config or get_technique(self.technique).config
        self.specs = {s.name: s for s in config_cls.specs()}
        values = {config_cls.ALIASES.get(k, k): v for k, v in values.items()}  # old names keep working
        unknown = set(values) - set(self.specs)
        if unknown:
            raise ValueError(f"unknown panel parameter(s) {sorted(unknown)}: valid parameters are {sorted(self.specs)}")
        initial = {name: self.panel_defaults().get(name, s.default) for name, s in self.specs.items()}
        initial.update({k: self.specs[k].check(v) for k, v in values.items()})
        self.fixed = {k: initial[k] for k in self.hidden}
        self.controls: dict[str, W.Widget] = {
            name: control(self.specs[name], initial[name], self.options.get(name))
            for name in self.specs
            if name not in self.hidden
        }
        self.prepare_controls(initial)
        self.status = W.HTML()
        base = [layout.style(f) for f in self.make_figures(initial)]
        self.figures: list[Any] = base if self.static else [LiveFigure(f) for f in base]
        self.redraw()
        for widget in self.controls.values():
            widget.observe(self._on_change, names="value")

    # ---- subclass hooks -------------------------------------------------------------------------
    def panel_defaults(self) -> dict[str, Any]:
        """Start values that differ from the config defaults (e.g. smaller sizes for a teaching panel)."""
        return {}

    def prepare_controls(self, initial: dict[str, Any]) -> None:
        """Called once after the controls are built, before the first redraw (e.g. options that depend on
        another control's start value)."""

    def make_figures(self, values: dict[str, Any]) -> list[go.Figure]:
        raise NotImplementedError

    def compute(self, values: dict[str, Any]) -> Any:
        raise NotImplementedError

    def draw(self, figures: list[Any], result: Any, values: dict[str, Any]) -> None:
        raise NotImplementedError

    def adjust_controls(self, changed: str) -> None:
        """Called (with redraws held) after control ``changed`` moved, e.g. to update another control's options."""

    def notes(self, result: Any, values: dict[str, Any]) -> str:
        """Short HTML shown in the status line after a good redraw (e.g. a headline ratio)."""
        return ""

    # ---- behaviour --------------------------------------------------------------------------------
    def values(self) -> dict[str, Any]:
        return {**self.fixed, **{name: w.value for name, w in self.controls.items()}}

    def set(self, **values: Any) -> None:
        """Set several controls at once and redraw once."""
        for name in values:
            if name not in self.controls:
                raise ValueError(f"unknown control {name!r}: valid controls are {sorted(self.controls)}")
        with self._hold():
            for name, value in values.items():
                self.controls[name].value = value
                self.adjust_controls(name)
        self.redraw()

    @contextlib.contextmanager
    def _hold(self):
        self._holding = True
        try:
            yield
        finally:
            self._holding = False

    def _on_change(self, change: dict) -> None:
        if getattr(self, "_holding", False):
            return
        name = next((k for k, w in self.controls.items() if w is change["owner"]), "")
        with self._hold():
            self.adjust_controls(name)
        self.redraw()

    def redraw(self) -> bool:
        """Recompute and redraw; on error show the message in the status line and keep the figures."""
        values = self.values()
        try:
            result = self.compute(values)
            with contextlib.ExitStack() as stack:
                for fig in self.figures:
                    stack.enter_context(fig.batch_update())
                self.draw(self.figures, result, values)
                for fig in self.figures:
                    layout.fit(fig)  # titles drawn may be longer, legends may change
        except Exception as exc:  # shown to the user in the panel, and logged with its traceback
            log.debug("panel %s redraw failed", type(self).__name__, exc_info=True)
            kind = "" if isinstance(exc, ValueError) or getattr(exc, "one_line", False) else f"{type(exc).__name__}: "
            self.status.value = f'<span style="color:#b00020">&#9888; {html.escape(kind + str(exc))}</span>'
            self.error = str(exc)
            return False
        self.error = None
        self.status.value = self.notes(result, values)
        return True

    def timed_change(self, name: str, value: Any) -> float:
        """Seconds from setting control ``name`` to the figures being updated (for the latency benchmark)."""
        start = time.perf_counter()
        self.controls[name].value = value
        return time.perf_counter() - start

    # ---- display ----------------------------------------------------------------------------------
    @property
    def views(self) -> list[W.Widget]:
        """The widgets that show the figures (live mode; none in static mode), in the order of ``figures``."""
        return [] if self.static else [f.view for f in self.figures]

    def widget(self) -> W.Widget:
        header = W.HTML(f"<b>{html.escape(self.title)}</b>")
        groups: dict[str, list[W.Widget]] = {}
        for name, w in self.controls.items():
            groups.setdefault(self.specs[name].group, []).append(w)
        rows = []
        for group, widgets in groups.items():  # a config group (the cluster, ...) gets its own heading
            box = W.Box(widgets, layout=W.Layout(flex_flow="row wrap"))
            rows.append(W.VBox([W.HTML(f"<i>{html.escape(group)}</i>"), box]) if group else box)
        return W.VBox([header, *rows, self.status, *self.views])

    def static_figures(self) -> list[go.Figure]:
        """Plain figures at the current values, with plotly slider frames over ``static_slider``."""
        values = self.values()
        figures = [go.Figure(f) for f in self.figures]
        if self.static_slider is None:
            return figures
        name, options = self.static_slider
        frames: list[list[go.Frame]] = [[] for _ in figures]
        for option in options:
            point = {**values, name: option}
            try:
                result = self.compute(point)
            except ValueError:
                continue
            copies = [go.Figure(f) for f in figures]
            self.draw(copies, result, point)
            for i, fig in enumerate(copies):
                layout.fit(fig)
                frame_layout = fig.layout.to_plotly_json()
                frame_layout.pop("template", None)
                frames[i].append(go.Frame(name=str(option), data=list(fig.data), layout=frame_layout))
        label = self.specs[name].title
        for fig, fig_frames in zip(figures, frames):
            steps = [
                dict(
                    method="animate",
                    label=fr.name,
                    args=[
                        [fr.name],
                        {"mode": "immediate", "frame": {"duration": 0, "redraw": True}, "transition": {"duration": 0}},
                    ],
                )
                for fr in fig_frames
            ]
            current = (
                [fr.name for fr in fig_frames].index(str(values[name]))
                if str(values[name]) in [fr.name for fr in fig_frames]
                else 0
            )
            fig.frames = fig_frames
            fig.update_layout(
                sliders=[dict(active=current, steps=steps, currentvalue={"prefix": f"{label}: "}, pad={"t": 50})]
            )
        return figures

    def static_html(self) -> str:
        """HTML of the static figures (plotly.js not included: the report inlines it once)."""
        parts = [f"<h4>{html.escape(self.title)}</h4>"]
        params = ", ".join(f"{k}={v}" for k, v in self.values().items())
        parts.append(f"<p><small>parameters: {html.escape(params)}</small></p>")
        if self.status.value:
            parts.append(f"<p>{self.status.value}</p>")
        for fig in self.static_figures():
            parts.append(fig.to_html(full_html=False, include_plotlyjs=False, auto_play=False))
        return "\n".join(parts)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict:
        if self.static:
            return {"text/html": self.static_html(), "text/plain": f"<{type(self).__name__} (static)>"}
        return self.widget()._repr_mimebundle_(**kwargs)


class OneOffFigure:
    """A figure that never changes, shown by plotly's own mime type (``application/vnd.plotly.v1+json``, drawn by
    JupyterLab's plotly renderer with zoom and hover): no widget model, as a panel's figure without its
    ``Output`` (:mod:`widgets.live_figure`)."""

    def __init__(self, fig: go.Figure) -> None:
        self.figure = fig

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict:
        return {**figure_bundle(self.figure), "text/plain": f"<figure: {self.figure.layout.title.text or 'untitled'}>"}


def show(fig: go.Figure, *, static: bool | None = None) -> Any:
    """Display a one-off figure in a notebook: plotly's mime bundle live (:class:`OneOffFigure`), inline HTML in
    a report."""
    layout.style(fig)
    if export_mode() if static is None else static:
        from IPython.display import HTML

        return HTML(fig.to_html(full_html=False, include_plotlyjs=False))
    return OneOffFigure(fig)
