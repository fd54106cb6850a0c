"""The ``workbench`` command: lab, list, run, claims, report, data.

Every user error (bad parameter, missing file) prints ``error: <message>`` on stderr and exits 2, with no
traceback; so does a run whose memory estimate (the technique's ``sizes.py``) exceeds what is available, and
one that outlives its ``--timeout-s`` (``RunTimeout``). A fault of the run itself (a worker killed or stopped:
``WorkerFailed``; a full disk: ``WriteError``) prints its one line the same way and exits 1. Parameters of
``workbench run TECHNIQUE`` come from the technique's config class, so flags, defaults, units and ranges are the
ones the panels and notebooks use.
"""

from __future__ import annotations

import argparse
import errno
import json
import logging
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from workbench.config import Config, ParamSpec, add_config_flag
from workbench.memory import RunTimeout, deadline, progress
from workbench.registry import AREAS, catalogue, check_fits, estimate, get_technique, markdown_table, run_limit
from workbench.results import Result

REPO_ROOT = Path(__file__).resolve().parents[1]
USER_ERRORS = (ValueError, FileNotFoundError, PermissionError, IsADirectoryError)
#: what the system says about a path a user gave (too long, a file where a folder is due, read-only, ...)
PATH_ERRNOS = frozenset({
    errno.ENAMETOOLONG, errno.ENOTDIR, errno.EISDIR, errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOENT,
    errno.EEXIST, errno.ELOOP, errno.EINVAL, errno.EBUSY,
})  # fmt: skip


class Terminated(KeyboardInterrupt):
    """SIGTERM (a `timeout`, a job scheduler, `kill`): raised where the program is, so the run unwinds as after
    Ctrl-C (temporary files removed, workers reaped, nothing half-written left)."""


#: set once SIGTERM has arrived: whatever a library makes of the interrupt afterwards (asyncio's CancelledError,
#: nbclient's AssertionError) is its consequence, reported as the stop, not as a bug
_TERMINATED: list[bool] = []


def _terminate(signum: int, frame: object) -> None:
    _TERMINATED.append(True)
    raise Terminated(f"stopped by signal {signal.Signals(signum).name}")


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose refusals are one line on stderr (exit 2), not the whole usage."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {self.prog}: {message} (see `{self.prog} --help`)\n")


def _technique_parser(name: str) -> argparse.ArgumentParser:
    technique = get_technique(name)
    parser = OneLineParser(prog=f"workbench run {name}", description=technique.summary)
    aliases: dict[str, list[str]] = {}
    for old, new in technique.config.ALIASES.items():
        aliases.setdefault(new, []).append("--" + old.replace("_", "-"))
    for spec in technique.config.specs():
        add_config_flag(parser, spec, aliases.get(spec.name, []))
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    return parser


def path_error(exc: OSError, specs: Sequence[ParamSpec], params: dict) -> Exception:
    """A ValueError naming the flag whose path the system refused (too long, not a folder, in /proc, ...); other
    OSErrors (a full disk, a worker's fault) are returned as they are."""
    if getattr(exc, "one_line", False) or exc.errno not in PATH_ERRNOS or exc.filename is None:
        return exc
    where = str(exc.filename2 if exc.filename2 is not None else exc.filename)
    named = [s for s in specs if s.type is str and str(params.get(s.name, "")).strip() and str(params[s.name]) in where]
    what = f"{named[0].flag}={params[named[0].name]!r}" if named else f"path {where!r}"
    shown = where if len(where) <= 120 else where[:117] + "..."
    return ValueError(f"{what}: {exc.strerror or 'refused by the system'} ({shown})")


def cmd_list(args: argparse.Namespace) -> int:
    if args.markdown is not None:
        print(markdown_table(args.markdown))
        return 0
    rows = catalogue()
    width = max(len(e.name) for e in rows)
    for e in rows:
        print(f"{e.name:<{width}}  {e.status:<7}  {AREAS[e.area]:<12}  {e.summary}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    if args.list_techniques or args.technique is None:
        print(
            "usage: workbench run TECHNIQUE [parameters] [--json]\n\nready techniques (`workbench run TECHNIQUE "
            "--help` lists each one's parameters):"
        )
        for e in catalogue():
            if e.status == "ready":
                print(f"  {e.name:<16} {e.summary}")
        return 0
    technique = get_technique(args.technique)
    ns = _technique_parser(args.technique).parse_args(args.rest)
    params = {k: v for k, v in vars(ns).items() if k != "json" and v is not None}
    try:
        result = run_sized(args.technique, technique.config.from_dict(params))
    except OSError as exc:
        raise path_error(exc, technique.config.specs(), params) from None
    print(json.dumps(result) if ns.json else technique.format_table(result))
    return 0


#: the whole-run limit waits this long past ``--timeout-s``, so that a part with a limit of its own (the workers of a
#: multi-process run, an in-process training loop), whose message names what ran out, reports first
RUN_LIMIT_GRACE_S = 5.0


def run_sized(name: str, config: Config) -> dict:
    """Run technique ``name`` with ``config``, sized before it starts: refused (ValueError: exit 2, one line with
    the estimate and the available memory) when its memory estimate cannot fit, with progress on stderr when it
    is estimated over two seconds, and stopped (RunTimeout: exit 2) when it outlives its run limit
    (``--timeout-s``), its in-process parts included. Returns the result's JSON object."""
    est = estimate(name, config)
    check_fits(name, est)  # the one line panels and reports refuse with too
    limit = run_limit(name, config)
    with (
        deadline(
            limit[0] + RUN_LIMIT_GRACE_S if limit else None,
            what=f"{limit[1]}={limit[0]:g} (+{RUN_LIMIT_GRACE_S:g} s grace)" if limit else "",
        ),
        progress(est, what=f"workbench run {name}"),
    ):
        result = get_technique(name).run(config)
    return result.to_json() if isinstance(result, Result) else result


#: options `workbench lab` passes to JupyterLab (documented in `workbench lab --help`)
LAB_OPTIONS = (
    "--LabApp.default_url=/lab/tree/index.ipynb",  # open on the index notebook
    "--ServerApp.answer_yes=True",  # Ctrl-C stops the server at once (no y/n prompt)
    "--LabApp.news_url=None",  # no "get notified about official Jupyter news?" toast
    "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    # the settings JupyterLab would otherwise ask about on first start ("get notified about official Jupyter
    # news?"): news off, no update checks (workbench/lab_settings/overrides.json)
    f"--LabApp.app_settings_dir={Path(__file__).resolve().parent / 'lab_settings'}",
)


def lab_command(extra: Sequence[str] = ()) -> list[str]:
    """The JupyterLab command line of ``workbench lab`` (as root, with ``--allow-root`` as Jupyter's docker
    stacks do)."""
    command = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={REPO_ROOT / 'notebooks'}", *LAB_OPTIONS]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    return [*command, *extra]


def register_notebook_filter(repo: Path = REPO_ROOT) -> bool:
    """Register git's clean filter for the stored notebooks in ``repo`` (see :mod:`workbench.notebook_filter`)."""
    if not (repo / ".git").exists():
        return False
    clean = f"{sys.executable} -m workbench.notebook_filter"
    done = subprocess.run(
        ["git", "-C", str(repo), "config", "filter.workbench-notebooks.clean", clean], capture_output=True
    )
    return done.returncode == 0


def cmd_lab(args: argparse.Namespace) -> int:
    env = dict(os.environ)
    shared = REPO_ROOT.parent / "shared" / "data"
    if "WORKBENCH_DATA" not in env and shared.is_dir():  # a checkout beside the shared data folder uses it
        env["WORKBENCH_DATA"] = str(shared)
    command = lab_command(args.jupyter_args)
    if "--allow-root" in command:
        print(
            "note: running as root, so JupyterLab starts with --allow-root (as Jupyter's docker stacks do)",
            file=sys.stderr,
        )
    register_notebook_filter()
    try:
        return subprocess.call(command, env=env)
    except KeyboardInterrupt:  # JupyterLab has stopped by itself (answer_yes)
        return 0


def cmd_claims(args: argparse.Namespace) -> int:
    from workbench import claims

    if args.technique:
        claims.claims_of(args.technique)  # an unknown name fails here, before any work
    if args.write and args.full:
        raise ValueError("--write writes the scoreboard at the quick grid: drop --full")
    evaluations = claims.scoreboard(args.technique, quick=not args.full)
    if args.write:
        for path in claims.write_verdicts(evaluations, technique=args.technique):
            print(f"wrote {path}")
    elif args.json:
        print(json.dumps([ev.to_json() for ev in evaluations], indent=1))
    elif args.markdown:
        print(claims.markdown(evaluations))
    else:
        for row in claims.rows(evaluations):
            print(f"{row['technique']}: {row['claim']}")
            print(f"    paper {row['paper']}; ours {row['ours']}; baseline {row['baseline']}")
            print(f"    verdict: {row['verdict']}")
        print(", ".join(f"{n} {s}" for s, n in claims.counts(evaluations).items()))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from workbench.report import export_report, parse_overrides

    if args.claims == (args.notebook is not None):
        raise ValueError("report takes a notebook path or --claims (the scoreboard notebook), not both or neither")
    notebook = REPO_ROOT / "notebooks" / "verdicts.ipynb" if args.claims else Path(args.notebook)
    out = export_report(
        notebook, Path(args.out), parse_overrides(args.param), timeout_s=args.timeout, no_input=args.no_input
    )
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="workbench", description="Research Workbench: papers as validated code.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser(
        "lab",
        help="open JupyterLab on notebooks/ (index notebook); other options go to jupyter lab",
        description="Open JupyterLab on notebooks/ at the index notebook. It is started with "
        + " ".join(LAB_OPTIONS)
        + " (and --allow-root when run as root); any other option is passed on to "
        "JupyterLab. Notebooks keep their outputs on disk, while git sees them clean: `workbench lab` registers "
        "the clean filter named in .gitattributes (python -m workbench.notebook_filter).",
    )
    p.set_defaults(func=cmd_lab)

    p = sub.add_parser("list", help="list techniques with a one-line description")
    p.add_argument(
        "--markdown",
        nargs="?",
        const="",
        default=None,
        metavar="STRIP",
        help="print the Markdown table of the README (the index notebook's: --markdown notebooks/)",
    )
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("run", help="run a technique headless", add_help=False)
    p.add_argument("-h", "--help", action="store_true", dest="list_techniques", help="list the ready techniques")
    p.add_argument("technique", nargs="?", help="technique name (see `workbench list`)")
    p.add_argument("rest", nargs=argparse.REMAINDER, help="technique parameters; `workbench run NAME --help`")
    p.set_defaults(func=cmd_run)

    _add_claims_parser(sub)
    _add_report_parser(sub)

    from workbench.data.cli import add_data_subparser

    add_data_subparser(sub)
    return parser


def _add_claims_parser(sub) -> None:
    """``workbench claims``: the scoreboard (options of :func:`cmd_claims`)."""
    p = sub.add_parser(
        "claims",
        help="the scoreboard: every paper claim, our figure, the baseline and the computed verdict",
        description="Every claim of every technique (workbench/<area>/<technique>/claims.py) evaluated at the "
        "paper's settings and over each inferred assumption's range; the verdict is computed by one rule "
        "(workbench/claims.py).",
    )
    p.add_argument("--technique", metavar="NAME", help="only this technique's claims")
    p.add_argument("--json", action="store_true", help="one JSON object per claim, with the sensitivity sweeps")
    p.add_argument("--markdown", action="store_true", help="the Markdown table (VERDICTS.md's)")
    p.add_argument("--full", action="store_true", help="the full sensitivity grid (7 points) instead of the quick one")
    p.add_argument(
        "--write",
        action="store_true",
        help="write VERDICTS.md and VERDICTS.json (the committed scoreboard); with --technique, replace only its records",
    )
    p.set_defaults(func=cmd_claims)


def _add_report_parser(sub) -> None:
    """``workbench report``: a notebook executed into an HTML/PDF report (options of :func:`cmd_report`)."""
    p = sub.add_parser("report", help="execute a notebook with parameters and write a self-contained HTML report")
    p.add_argument("notebook", nargs="?", help="path of the notebook, e.g. notebooks/llm/mesh_attention.ipynb")
    p.add_argument(
        "--claims", action="store_true",
        help="report the scoreboard (notebooks/verdicts.ipynb): every claim, its sensitivity and verdict",
    )  # fmt: skip
    p.add_argument(
        "--out",
        required=True,
        help="output file: .html (offline page) or .pdf (the same page printed by headless Chromium)",
    )
    p.add_argument(
        "-p",
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a parameter of the notebook's parameters cell (repeatable)",
    )
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds allowed per cell (default 1800)")
    p.add_argument(
        "--no-input",
        action="store_true",
        help="leave out the code cells' source (as nbconvert's --no-input): the story and the figures only",
    )
    p.set_defaults(func=cmd_report)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command != "lab":
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.jupyter_args = extra
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(message)s")
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if main_thread else None
    if main_thread:  # Ctrl-C raises KeyboardInterrupt again (python -m workbench exits quietly before this point)
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return args.func(args)
    except USER_ERRORS as exc:
        message = exc.args[0] if isinstance(exc, ValueError) and exc.args else str(exc)
        print(f"error: {message}", file=sys.stderr)
        return 2
    except RunTimeout as exc:  # a limit the user set ran out: the run unwound as after SIGTERM
        print(f"error: {exc.args[0]}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        if _TERMINATED:
            print("error: stopped by SIGTERM; the run was cleaned up", file=sys.stderr)
            return 128 + signal.SIGTERM
        return 130
    except BrokenPipeError:  # e.g. `workbench list | head`
        sys.stderr.close()
        return 0
    except (RuntimeError, OSError) as exc:
        if _TERMINATED:
            print("error: stopped by SIGTERM; the run was cleaned up", file=sys.stderr)
            return 128 + signal.SIGTERM
        if not getattr(exc, "one_line", False):  # WorkerFailed, WriteError: faults of the run, not of the input
            raise
        print(f"error: {exc.strerror if isinstance(exc, OSError) and exc.strerror else exc.args[0]}", file=sys.stderr)
        return int(getattr(exc, "exit_code", 1))  # 2 for a time limit that ran out
    except BaseException:
        if not _TERMINATED:
            raise
        print("error: stopped by SIGTERM; the run was cleaned up", file=sys.stderr)
        return 128 + signal.SIGTERM
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        _TERMINATED.clear()


if __name__ == "__main__":
    sys.exit(main())
