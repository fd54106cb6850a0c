"""Panel base: controls + plotly figures + a status line, live (LiveFigure) or static (for reports).

A panel subclass declares
- ``technique``: registry name; controls are built from that technique's config specs (:func:`control`),
- ``make_figures(values) -> list[go.Figure]``: the figures, built once with full data and layout,
- ``compute(values) -> result``: calls into ``workbench`` (no algorithm lives here); may raise ValueError,
- ``draw(figures, result, values)``: mutates the figures (plain ``go.Figure`` API, live or static),
- optionally ``static_slider = (name, values)``: the control a report animates with a plotly slider.

Live mode keeps one :class:`~widgets.live_figure.LiveFigure` per figure (a ``go.Figure`` whose ``view`` widget
redraws on every change) and redraws inside ``batch_update()`` when a control changes. An error (bad
combination of values) shows in the panel's status line (:func:`error_line`, HTML-escaped); the figures keep their
last good state, so nothing the user set is lost. Heavy work (a training run, a sweep, a real measurement) sits
behind an :class:`Action`: a button with a progress bar and a cancel button, whose error shows in the same
status line while the figures keep their last good state. Static mode (``static=True`` or env ``WORKBENCH_EXPORT=1``, set
by ``workbench report``) renders plain figures as HTML, with precomputed frames over ``static_slider``.
"""

from __future__ import annotations

import contextlib
import html
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as W
import plotly.graph_objects as go

from widgets import layout
from widgets.live_figure import LiveFigure, figure_bundle
from workbench.config import ParamSpec
from workbench.memory import Estimate
from workbench.registry import check_fits, entry, get_technique
from workbench.registry import estimate as estimate_run

log = logging.getLogger(__name__)

EXPORT_ENV = "WORKBENCH_EXPORT"


def export_mode() -> bool:
    """True when a report is being exported (``workbench report`` sets ``WORKBENCH_EXPORT=1``)."""
    return os.environ.get(EXPORT_ENV, "") == "1"


def error_message(exc: BaseException) -> str:
    """The one line an error shows as: its message, after its type's name unless it is a ValueError (a bad
    value, whose message says so) or marked ``one_line`` (e.g. a worker failure that names its rank)."""
    plain = isinstance(exc, ValueError) or getattr(exc, "one_line", False)
    return str(exc) if plain else f"{type(exc).__name__}: {exc}"


def error_line(message: str | BaseException) -> str:
    """The status line's error (HTML): a warning sign and the message, HTML-escaped, in red. Every panel's error
    is written by this function."""
    text = error_message(message) if isinstance(message, BaseException) else message
    return f'<span style="color:#b00020">&#9888; {html.escape(text)}</span>'


def control(spec: ParamSpec, value: Any, options: Sequence | None = None) -> W.Widget:
    """An ipywidget for ``spec``: slider for numbers (a selection slider over ``options`` when given),
    checkbox for booleans, dropdown for choices."""
    common = dict(
        description=spec.title,
        style={"description_width": "initial"},
        tooltip=spec.help,
        # a left margin: a slider's label (ipywidgets gives sliders none) would start at the panel's edge, where
        # JupyterLab's output area cuts its first letter's overhang
        layout=W.Layout(width="360px", margin="2px 2px 2px 6px"),
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
        self.error: str | None = None
        self._draw_lock = threading.RLock()  # an Action's redraw (a thread) and a control's do not interleave
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

    def run_config(self, values: dict[str, Any]) -> Any:
        """The technique config a heavy :class:`Action` of this panel runs at ``values``, for sizing it before it
        starts (:meth:`run_estimate`); None when the panel cannot say. Default: the technique's CLI config built
        from the panel's values, when the panel's controls are that config's fields (``config`` unset or the
        same class); a panel whose action runs something else overrides this (or passes ``estimate=`` to its
        Action)."""
        technique = get_technique(self.technique)
        if self.config not in (None, technique.config):
            return None
        try:
            return technique.config.from_dict(values)
        except (ValueError, TypeError):  # a combination the CLI config rejects: the job says so itself
            return None

    def run_estimate(self, values: dict[str, Any]) -> Estimate | None:
        """What the run :meth:`run_config` names will take (:func:`workbench.registry.estimate`), or None when
        the panel cannot say or the technique has no size estimate."""
        if not self.technique or entry(self.technique).sizes is None:
            return None
        config = self.run_config(values)
        return None if config is None else estimate_run(self.technique, config)

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
        for fig in self.figures:
            if isinstance(fig, LiveFigure):
                fig.redraw_in_place()
        self.redraw()

    def redraw(self) -> bool:
        """Recompute and redraw; on error show the message in the status line and keep the figures."""
        with self._draw_lock:
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
                self.show_error(exc)
                return False
            self.error = None
            self.status.value = self.notes(result, values)
            return True

    def show_error(self, exc: BaseException | str) -> None:
        """Show ``exc`` in the status line (:func:`error_line`) and keep it in ``error``; the figures stay."""
        self.status.value = error_line(exc)
        self.error = str(exc)

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


class Cancelled(Exception):
    """Raised inside an :class:`Action`'s job at its next progress report after *Cancel* was pressed."""

    one_line = True


def _in_kernel() -> bool:
    """True inside a running IPython kernel (a notebook), where a button's job can run in a thread."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipywidgets
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


class Progress:
    """What an :class:`Action`'s job reports through. ``progress(done, total=None, label=None)`` moves the bar to
    ``done`` (``total``: its end, when known only now; ``label``: the stage, shown beside it), and
    ``progress.advance()`` moves it one step. Every report is a cancellation point: after *Cancel* it raises
    :class:`Cancelled`."""

    def __init__(self, action: Action) -> None:
        self._action = action

    def __call__(self, done: float, total: float | None = None, label: str | None = None) -> None:
        action = self._action
        if action.cancel_requested.is_set():
            raise Cancelled(f"{action.button.description}: cancelled")
        bar = action.progress
        if total is not None:
            bar.max = total if total > 0 else 1
        bar.value = min(max(done, 0), bar.max)
        if label is not None:
            action.stage.value = f"<small>{html.escape(label)}</small>"

    def advance(self, steps: float = 1) -> None:
        self(self._action.progress.value + steps)


class Action:
    """A panel's heavy work behind a button, with a progress bar and a *Cancel* button.

    ``job(progress, *args, **kwargs) -> result`` does the work (through ``workbench``, as ``compute`` does) and
    reports through ``progress`` (:class:`Progress`); ``done(result)`` draws it (default: the panel's
    :meth:`Panel.redraw`). Only a finished job is drawn: after an error or a cancel the figures keep their last
    good state, and the status line says what happened (:func:`error_line`, HTML-escaped).

    - :meth:`run` runs now and returns the result; an error is shown and raised again (a notebook cell sees it).
    - :meth:`click` is the button: the same, the error shown only. In a kernel it runs in a thread, so that
      *Cancel* can be pressed (the job stops at its next progress report) and the controls stay live; else
      (tests, scripts) it runs before returning.
    - :meth:`widget` is the row to place in the panel: button, cancel, progress bar, stage label.

    Sized before it starts (#29): ``estimate`` (default :meth:`Panel.run_estimate`) says what the run will take.
    An estimate over the available memory is refused in place with the CLI's one line (the estimate and the
    limit; :func:`workbench.registry.check_fits`) and nothing runs; one over :data:`PROGRESS_AFTER_S` seconds
    shows the progress bar with the estimate beside it.

    ``share=other`` makes a second button that reports on ``other``'s cancel button, bar and label (one row:
    ``W.HBox([other.button, this.button, *other.widget().children[1:]])``).
    """

    #: run the button's job in a thread (None: when inside a kernel)
    background: bool | None = None
    #: a run estimated over this many seconds shows the progress bar (as the CLI's progress on stderr)
    PROGRESS_AFTER_S = 2.0

    def __init__(
        self,
        panel: Panel,
        description: str,
        job: Callable[..., Any],
        *,
        done: Callable[[Any], Any] | None = None,
        tooltip: str = "",
        total: float = 1,
        label: str = "",
        button_style: str = "",
        share: Action | None = None,
        estimate: Callable[..., Estimate | None] | None = None,
    ) -> None:
        self.panel, self.job, self.total = panel, job, total
        #: ``estimate(*args, **kwargs) -> Estimate | None``: the run's size (default: the panel's
        #: :meth:`Panel.run_estimate` at its current values)
        self.estimate = estimate if estimate is not None else (lambda *a, **k: panel.run_estimate(panel.values()))
        self.done = done if done is not None else (lambda result: panel.redraw())
        self.button = W.Button(
            description=description, tooltip=tooltip, button_style=button_style, layout=W.Layout(width="auto")
        )
        if share is not None:  # a second button on the same row: one cancel button, progress bar and stage label
            self.cancel_button, self.progress, self.stage = share.cancel_button, share.progress, share.stage
        else:
            self.cancel_button = W.Button(
                description="Cancel", icon="stop", tooltip="stop at the next progress step", disabled=True
            )
            self.cancel_button.layout.width = "auto"
            self.progress = W.FloatProgress(
                value=0, min=0, max=total, description=label, layout=W.Layout(width="300px")
            )
            self.stage = W.HTML()
        self.cancel_requested = threading.Event()
        self.thread: threading.Thread | None = None
        self._lock = share._lock if share is not None else threading.Lock()  # one job at a time on a row
        self.button.on_click(lambda _: self.click())
        self.cancel_button.on_click(lambda _: self.cancel())

    @property
    def running(self) -> bool:
        return self._lock.locked()

    def widget(self) -> W.HBox:
        return W.HBox([self.button, self.cancel_button, self.progress, self.stage])

    def cancel(self) -> None:
        """Stop the running job at its next progress report (its figures keep their last good state)."""
        if self.running:
            self.cancel_requested.set()

    def run(self, *args: Any, **kwargs: Any) -> Any:
        """Run the job now with a fresh progress bar, then draw its result; return the result. An error (or a
        cancel) is shown in the status line and raised again."""
        if not self._lock.acquire(blocking=False):
            raise RuntimeError(f"{self.button.description!r} is already running")
        self.cancel_requested.clear()
        self.button.disabled, self.cancel_button.disabled = True, False
        self.progress.max, self.progress.value, self.stage.value = self.total, 0, ""
        try:
            self.size(*args, **kwargs)
            result = self.job(Progress(self), *args, **kwargs)
            self.progress.value = self.progress.max
            self.done(result)
            return result
        except (Cancelled, KeyboardInterrupt):
            self.panel.status.value = f"<i>{html.escape(self.button.description)}: cancelled</i>"
            raise
        except Exception as exc:
            expected = isinstance(exc, (ValueError, OSError)) or getattr(exc, "one_line", False)
            log.log(logging.DEBUG if expected else logging.WARNING, "%s failed", self.button.description,
                    exc_info=True)  # fmt: skip
            self.panel.show_error(exc)
            raise
        finally:
            self.button.disabled, self.cancel_button.disabled = False, True
            self._lock.release()

    def size(self, *args: Any, **kwargs: Any) -> Estimate | None:
        """Size the run before it starts: raise ValueError (the CLI's one line) when its estimate exceeds the
        available memory; show the progress bar and the estimated time when it is over :data:`PROGRESS_AFTER_S`."""
        est = self.estimate(*args, **kwargs)
        if est is None:
            return None
        name = self.panel.technique  # the CLI's line (workbench.cli.run_sized)
        check_fits(name, est, what=None if name else repr(self.button.description))
        if est.seconds > self.PROGRESS_AFTER_S:
            self.progress.layout.visibility = "visible"
            self.stage.value = f"<small>estimated ~{est.seconds:.3g} s</small>"
        return est

    def try_run(self, *args: Any, **kwargs: Any) -> Any:
        """:meth:`run`, with the error (or cancel) shown only: the result, or None."""
        with contextlib.suppress(Exception, KeyboardInterrupt):
            return self.run(*args, **kwargs)
        return None

    def click(self) -> None:
        """The button: :meth:`try_run`, in a thread inside a kernel (see :attr:`background`)."""
        if self.running:
            return
        if _in_kernel() if self.background is None else self.background:
            self.thread = threading.Thread(target=self.try_run, name=f"action {self.button.description}", daemon=True)
            self.thread.start()
        else:
            self.try_run()


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
