"""``workbench data ...``: list, locate, verify and fetch datasets (argparse glue; prints).

Wire it into the top-level parser::

    subparsers = parser.add_subparsers(dest="command", required=True)
    add_data_subparser(subparsers)
    args = parser.parse_args()
    return args.func(args)          # or run_data_command(args) when args.command == "data"
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from workbench.data.fetch import ChecksumError, fetch
from workbench.data.registry import (
    dataset_path,
    dataset_status,
    get_dataset,
    list_datasets,
    resolve_data_dir,
    verify,
)

__all__ = ["add_data_subparser", "run_data_command"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def add_data_subparser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``data`` with sub-commands ``list``, ``path``, ``verify``, ``fetch`` to ``subparsers``.

    Sets ``func=run_data_command`` on the parsed namespace; returns the ``data`` parser.
    """
    data: argparse.ArgumentParser = subparsers.add_parser("data", help="list, locate, verify and fetch datasets")
    data.set_defaults(func=run_data_command)
    sub = data.add_subparsers(dest="data_command", required=True, metavar="{list,path,verify,fetch}")
    dir_help = (
        "data directory (default: $WORKBENCH_DATA, else ../shared/data beside the checkout, else the per-user folder)"
    )
    p_list = sub.add_parser("list", help="table of datasets and whether they are present")
    p_path = sub.add_parser("path", help="print a dataset's folder or file")
    p_verify = sub.add_parser("verify", help="check a dataset's files against their sha256")
    p_fetch = sub.add_parser("fetch", help="download a dataset from its public origin")
    for p in (p_path, p_verify, p_fetch):
        p.add_argument("name", help="dataset name (see `workbench data list`)")
    for p in (p_list, p_path, p_verify, p_fetch):
        p.add_argument("--data-dir", default=None, help=dir_help)
    p_fetch.add_argument("--force", action="store_true", help="download again even if present and matching")
    return data


def _table(rows: Sequence[Sequence[str]], out: TextIO) -> None:
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]) - 1)]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r[:-1], widths, strict=True)) + "  " + r[-1], file=out)


def _cmd_list(args: argparse.Namespace, out: TextIO) -> int:
    root, how = resolve_data_dir(args.data_dir)
    print(f"data directory: {root} ({how})", file=out)
    rows = [("NAME", "STATUS", "LICENCE", "DESCRIPTION")]
    rows += [(d.name, dataset_status(d, root), d.licence, d.description) for d in list_datasets()]
    _table(rows, out)
    return EXIT_OK


def _cmd_path(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        print(dataset_path(args.name, args.data_dir), file=out)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=err)
        return EXIT_USAGE
    return EXIT_OK


def _cmd_verify(args: argparse.Namespace, out: TextIO) -> int:
    result = verify(args.name, args.data_dir)
    info = get_dataset(args.name)
    optional = {f.path for f in info.files if f.optional}
    for path, status in result.items():
        print(f"{status:<10}  {path}{' (optional)' if path in optional else ''}", file=out)
    bad = [p for p, s in result.items() if s == "mismatch" or (s == "missing" and p not in optional)]
    return EXIT_FAILED if bad else EXIT_OK


def _cmd_fetch(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    info = get_dataset(args.name)
    root, _ = resolve_data_dir(args.data_dir)
    started: set[str] = set()

    def progress(path: str, done: int, total: int | None) -> None:
        if path not in started:
            started.add(path)
            print(f"downloading {path}" + (f" ({total} bytes)" if total else ""), file=err)

    try:
        paths = fetch(info, root, progress=progress, force=args.force)
    except (ChecksumError, OSError) as exc:
        print(f"error: {exc}", file=err)
        return EXIT_FAILED
    print(f"{info.name}: {len(paths)} files in {root} ({len(started)} downloaded)", file=out)
    if info.notes:
        print(f"note: {info.notes}", file=out)
    return EXIT_OK


def run_data_command(args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run a parsed ``workbench data ...`` command; returns the exit status.

    0 success; 1 a fetch failed or ``verify`` found a bad file; 2 unknown dataset or missing data.
    """
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    try:
        if args.data_command == "list":
            return _cmd_list(args, out)
        if args.data_command == "path":
            return _cmd_path(args, out, err)
        if args.data_command == "verify":
            return _cmd_verify(args, out)
        if args.data_command == "fetch":
            return _cmd_fetch(args, out, err)
    except ValueError as exc:
        print(f"error: {exc}", file=err)
        return EXIT_USAGE
    print(f"error: data command={args.data_command!r} is unknown; valid: list, path, verify, fetch", file=err)
    return EXIT_USAGE
