"""Start real ``torch.distributed`` worker processes on one machine, or join a ``torchrun`` job.

``run_workers`` forks ``world_size`` processes (start method "fork": no re-import of torch, 16 workers start
in well under a second on 2 cores), rendezvous through a ``file://`` store in a fresh temporary directory (so
parallel runs never collide on a port), runs ``fn(rank, world_size, comm, *args)`` in each and returns the
return values in rank order. A worker's exception is re-raised in the parent with its type and message
(the worker's traceback is attached as a note). ``init_from_env`` is the ``torchrun`` path: the same kernels,
with the rank and rendezvous read from the environment (gloo on CPU, NCCL when CUDA is available).

Faults. A worker killed by a signal raises :class:`~workbench.distributed.errors.WorkerFailed` naming the rank,
the signal and its likely cause (SIGKILL: the out-of-memory killer; the caller's ``oom_hint`` says which
setting to make smaller); a run that outlives ``timeout_s`` (a stopped or deadlocked worker) raises
:class:`~workbench.distributed.errors.WorkerTimeout` naming ``timeout_s``. Either way every worker is killed
and reaped and the run's temporary folder is removed before the exception leaves.

Fault injection (tests only; never set in normal use). The environment variable ``WORKBENCH_FAULT`` is the one
hook: ``RANK:SIGNAL:WHEN`` sends ``SIGNAL`` (``KILL``, ``SIGSTOP``, ``9``...) to worker ``RANK`` itself, where
``WHEN`` is ``<seconds>s`` after the worker starts (``0.5s``) or a step ``N``: just before that rank's N-th
communication call (collective or point-to-point batch, counted from 0); a fault that has not fired when the
rank's work is done fires then, before its result is handed back. It is read once per :func:`run_workers` call, in the parent.
"""

from __future__ import annotations

import importlib
import logging
import multiprocessing.connection
import os
import pickle
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from workbench.distributed.comm import Comm
from workbench.distributed.errors import WorkerFailed, WorkerTimeout

log = logging.getLogger(__name__)

#: torch.multiprocessing can fork at most this many workers in one call here (a guard against typos)
MAX_WORKERS = 64
#: the fault-injection hook (tests only): ``RANK:SIGNAL:WHEN``, see the module docstring
FAULT_ENV_VAR = "WORKBENCH_FAULT"
#: the collectives and point-to-point calls a fault's step counts (the ones :class:`Comm` makes)
#: (isend/irecv stay unwrapped: P2POp checks their identity; Comm posts point-to-point as batch_isend_irecv)
_COMM_CALLS = (
    "all_reduce",
    "all_gather",
    "all_to_all_single",
    "all_to_all",
    "barrier",
    "batch_isend_irecv",
    "broadcast",
    "gather_object",
    "all_gather_object",
    "send",
    "recv",
)
#: what a signal most likely means, for the one-line message
_CAUSES = {
    "SIGKILL": "most likely the out-of-memory killer (the machine ran out of memory)",
    "SIGSEGV": "a crash in native code (segmentation fault)",
    "SIGBUS": "a crash in native code (bus error; /dev/shm or the disk may be full)",
    "SIGABRT": "an abort in native code",
    "SIGTERM": "stopped from outside (kill, or a job scheduler)",
    "SIGINT": "interrupted (Ctrl-C)",
}


def parse_fault(text: str) -> tuple[int, int, float | None, int | None]:
    """``RANK:SIGNAL:WHEN`` (see the module docstring) -> ``(rank, signal number, seconds or None, step or None)``.

    Raises ValueError naming :data:`FAULT_ENV_VAR` and the expected form.
    """
    form = f"{FAULT_ENV_VAR}={text!r} is not valid: expected RANK:SIGNAL:WHEN, e.g. 1:KILL:0.5s or 0:STOP:3"
    match = re.fullmatch(r"\s*(\d+):([A-Za-z0-9]+):(\d+(?:\.\d*)?s|\d+)\s*", text)
    if not match:
        raise ValueError(form)
    rank, name, when = int(match[1]), match[2].upper(), match[3]
    try:
        signum = int(name) if name.isdigit() else int(signal.Signals[name if name.startswith("SIG") else "SIG" + name])
    except (KeyError, ValueError):
        raise ValueError(form + f" (unknown signal {match[2]!r})") from None
    if when.endswith("s"):
        return rank, signum, float(when[:-1]), None
    return rank, signum, None, int(when)


def _arm_fault(signum: int, seconds: float | None, step: int | None) -> Callable[[], None]:
    """In a worker: arrange for ``signum`` to hit this process at ``seconds`` or before communication call
    ``step``; returns what to call when the work is done (it fires the fault then if it has not fired yet)."""
    fired = threading.Event()

    def fire() -> None:
        if not fired.is_set():
            fired.set()
            os.kill(os.getpid(), signum)

    if seconds is not None:
        timer = threading.Timer(seconds, fire)
        timer.daemon = True
        timer.start()
        return fire
    calls = [0]

    def counted(original: Callable[..., Any]) -> Callable[..., Any]:
        def call(*a: Any, **k: Any) -> Any:
            if calls[0] == step:
                fire()
            calls[0] += 1
            return original(*a, **k)

        return call

    for name in _COMM_CALLS:  # this forked process only: the parent's torch.distributed is untouched
        if hasattr(dist, name):
            setattr(dist, name, counted(getattr(dist, name)))
    return fire


def _worker(
    rank: int,
    fn: Callable[..., Any],
    world_size: int,
    workdir: str,
    backend: str,
    timeout_s: float,
    args: tuple,
    fault: tuple[int, int, float | None, int | None] | None = None,
) -> None:
    """Body of one forked worker: init the group, run ``fn``, pickle its result or its exception."""
    torch.set_num_threads(1)
    out = Path(workdir)
    # C++ libraries (gloo's "connectFullMesh" errors when a peer dies) write to fd 2 directly: keep this rank's
    # stderr in a file; the parent replays it after a good run and attaches it to an error (one-line reports)
    log_fd = os.open(out / f"stderr_{rank}.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(log_fd, 2)
    os.close(log_fd)
    work_done = _arm_fault(*fault[1:]) if fault is not None and fault[0] == rank else (lambda: None)

    def record(exc: BaseException) -> None:
        # timestamp first: peers fail later ("connection closed") once this rank tears its group down
        rec = {"time": time.time(), "tb": traceback.format_exc(), "type": type(exc).__name__, "msg": str(exc)}
        try:
            rec["exc"] = pickle.dumps(exc)
        except Exception:  # noqa: BLE001 - an unpicklable exception travels as type name and message
            pass
        path = out / f"error_{rank}.pkl"
        if not path.exists():
            path.write_bytes(pickle.dumps(rec))

    try:
        dist.init_process_group(
            # the parent enforces timeout_s; a collective's own limit only backs it up
            backend,
            init_method=f"file://{workdir}/store",
            rank=rank,
            world_size=world_size,
            timeout=timedelta(seconds=timeout_s + 30),
        )
        try:
            result = fn(rank, world_size, Comm(), *args)
            work_done()
        except BaseException as exc:
            record(exc)
            raise
        finally:
            dist.destroy_process_group()
        (out / f"result_{rank}.pkl").write_bytes(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
    except BaseException as exc:  # noqa: BLE001 - recorded for the parent, which re-raises it
        record(exc)
        os._exit(1)  # no traceback on the terminal: the parent reports the first error once


def _first_error(workdir: Path) -> BaseException | None:
    """The earliest recorded worker exception (later ones are usually peers losing their connection)."""
    records = [pickle.loads(p.read_bytes()) for p in workdir.glob("error_*.pkl")]
    if not records:
        return None
    first = min(records, key=lambda r: r["time"])
    exc: BaseException | None = None
    if "exc" in first:
        try:
            exc = pickle.loads(first["exc"])
        except Exception:  # noqa: BLE001 - fall back to a RuntimeError carrying the message
            exc = None
    if exc is None:
        exc = RuntimeError(f"{first['type']}: {first['msg']}")
    if hasattr(exc, "add_note"):
        exc.add_note("worker traceback:\n" + first["tb"])
    return exc


def run_workers(
    fn: Callable[..., Any],
    world_size: int,
    *args: Any,
    backend: str = "gloo",
    timeout_s: float = 120.0,
    oom_hint: str = "try a smaller setting (fewer processes or a smaller problem)",
) -> list[Any]:
    """Run ``fn(rank, world_size, comm, *args)`` in ``world_size`` forked processes; return results by rank.

    Parameters:
        fn: the worker body; gets its rank, the world size, a :class:`Comm` over all ranks, then ``args``.
            It must return something picklable (tensors are fine).
        world_size: number of processes, 1..64.
        backend: "gloo" (CPU) or "nccl" (CUDA; the parent must not have initialised CUDA before forking).
        timeout_s: wall-clock limit for the whole run (seconds, > 0); name it after the caller's parameter
            (``timeout_s``, CLI ``--timeout-s``), which the timeout message cites.
        oom_hint: what to make smaller, shown when a worker is killed by SIGKILL (the out-of-memory killer).

    Returns:
        ``[fn's return value on rank 0, ..., on rank world_size-1]``.

    Raises:
        The first worker exception with its original type and message (ValueError stays ValueError);
        WorkerFailed when a worker dies without one (killed by a signal: the message names the rank, the
        signal, its likely cause and ``oom_hint``); WorkerTimeout (also a TimeoutError) when the run exceeds
        ``timeout_s``; ValueError for bad arguments or a malformed ``WORKBENCH_FAULT``. Every worker is killed
        and reaped, and the run's temporary folder removed, before any of these leaves.

    Example:
        >>> run_workers(lambda rank, world, comm: rank * 10, 3)
        [0, 10, 20]
    """
    _check_run_args(world_size, backend, timeout_s)
    fault_text = os.environ.get(FAULT_ENV_VAR, "")
    fault = parse_fault(fault_text) if fault_text else None
    # autograd imports this (and sympy) on the first backward with an explicit gradient; importing it once
    # here, before forking, saves every worker about a second
    importlib.import_module("torch.fx.experimental.symbolic_shapes")
    workdir = Path(tempfile.mkdtemp(prefix="workbench-dist-"))
    ctx = mp.get_context("fork")
    procs = [
        ctx.Process(
            target=_worker,
            args=(rank, fn, world_size, str(workdir), backend, timeout_s, args, fault),
            name=f"workbench-rank-{rank}",
        )
        for rank in range(world_size)
    ]
    start = time.monotonic()
    try:
        for proc in procs:
            proc.start()
        _wait_for_workers(procs, workdir, start, timeout_s, oom_hint)
        for rank in range(world_size):  # what the workers printed (warnings), as if they had printed it here
            sys.stderr.write(_worker_stderr(workdir, rank))
        return [pickle.loads((workdir / f"result_{rank}.pkl").read_bytes()) for rank in range(world_size)]
    finally:
        for proc in procs:  # SIGKILL also ends a stopped (SIGSTOP) worker; then reap it
            if proc.pid is not None and proc.exitcode is None:
                proc.kill()
        for proc in procs:
            if proc.pid is not None:
                proc.join()
        shutil.rmtree(workdir, ignore_errors=True)


def _check_run_args(world_size: int, backend: str, timeout_s: float) -> None:
    """ValueError naming the first of :func:`run_workers`'s arguments that is out of its range."""
    if isinstance(world_size, bool) or not isinstance(world_size, int) or not 1 <= world_size <= MAX_WORKERS:
        raise ValueError(f"world_size={world_size!r} is out of range: valid range is 1..{MAX_WORKERS}")
    if backend not in ("gloo", "nccl"):
        raise ValueError(f"backend={backend!r} is unknown: valid values are ('gloo', 'nccl')")
    if not timeout_s > 0:
        raise ValueError(f"timeout_s={timeout_s!r} must be > 0 seconds")


def _wait_for_workers(procs: list, workdir: Path, start: float, timeout_s: float, oom_hint: str) -> None:
    """Return once every worker has exited with 0; raise the first failure (as :func:`run_workers` documents)
    as soon as one exits otherwise, or WorkerTimeout ``timeout_s`` seconds after ``start`` (monotonic)."""
    world_size = len(procs)
    while True:
        codes = [proc.exitcode for proc in procs]
        if all(code == 0 for code in codes):
            return
        if any(code not in (None, 0) for code in codes):
            codes = _settle(procs, codes)
            raise _with_worker_stderr(
                _failure(codes, workdir, world_size, time.monotonic() - start, oom_hint), workdir, world_size
            )
        if time.monotonic() - start > timeout_s:
            raise _with_worker_stderr(_timeout(procs, world_size, timeout_s), workdir, world_size)
        alive = [proc.sentinel for proc in procs if proc.exitcode is None]
        multiprocessing.connection.wait(alive, timeout=min(0.5, max(0.01, start + timeout_s - time.monotonic())))


def _worker_stderr(workdir: Path, rank: int) -> str:
    """What worker ``rank`` wrote to its stderr (empty when nothing or unreadable)."""
    try:
        return (workdir / f"stderr_{rank}.log").read_text(errors="replace")
    except OSError:
        return ""


def _add_note(exc: BaseException, note: str) -> None:
    """``exc.add_note(note)``; Python 3.10 has no ``add_note``, so there the note goes to ``__notes__`` directly."""
    if sys.version_info >= (3, 11):
        exc.add_note(note)
    else:
        setattr(exc, "__notes__", [*getattr(exc, "__notes__", []), note])  # noqa: B010


def _with_worker_stderr(exc: BaseException, workdir: Path, world_size: int, tail_chars: int = 4000) -> BaseException:
    """``exc`` with a note holding the end of each worker's stderr (for ``--debug``; the CLI prints one line)."""
    for rank in range(world_size):
        text = _worker_stderr(workdir, rank).strip()
        if text:
            _add_note(exc, f"stderr rank {rank}:\n{text[-tail_chars:]}")
    return exc


#: how long a failed run waits for the other workers' exit codes before naming the cause (seconds)
SETTLE_S = 2.0


def _settle(procs: list, codes: list[int | None]) -> list[int | None]:
    """Exit codes after giving the live workers up to :data:`SETTLE_S` to exit when no worker has died of a
    signal yet: the peers of a killed rank often report a connection error first (seen under load), and the
    signal, not their error, is the cause to name."""
    deadline = time.monotonic() + SETTLE_S
    while not any(code is not None and code < 0 for code in codes) and time.monotonic() < deadline:
        alive = [proc.sentinel for proc in procs if proc.exitcode is None]
        if not alive:
            break
        multiprocessing.connection.wait(alive, timeout=max(0.01, deadline - time.monotonic()))
        codes = [proc.exitcode for proc in procs]
    return codes


def _failure(codes: list[int | None], workdir: Path, world_size: int, seconds: float, oom_hint: str) -> BaseException:
    """The exception for the first failed worker: a signal beats recorded errors (the peers of a killed rank
    fail afterwards with connection errors); otherwise the earliest recorded Python exception."""
    killed = [(rank, -code) for rank, code in enumerate(codes) if code is not None and code < 0]
    if killed:
        rank, signum = killed[0]
        name = _signal_name(signum)
        cause = _CAUSES.get(name, "killed from outside or by the system")
        hint = f"; {oom_hint}" if name == "SIGKILL" else ""
        return WorkerFailed(
            f"worker rank {rank} of {world_size} was killed by {name} after {seconds:.1f} s: {cause}{hint}",
            rank=rank,
            world_size=world_size,
            signal_name=name,
            seconds=seconds,
        )
    exc = _first_error(workdir)
    if exc is not None:
        return exc
    rank = next(r for r, code in enumerate(codes) if code not in (None, 0))
    return WorkerFailed(
        f"worker rank {rank} of {world_size} exited with status {codes[rank]} after {seconds:.1f} s "
        "without recording an error",
        rank=rank,
        world_size=world_size,
        seconds=seconds,
    )


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _timeout(procs: list, world_size: int, timeout_s: float) -> WorkerTimeout:
    """The timeout message: which ranks were stopped (state T in /proc) or still running, and the parameter."""
    stopped = [rank for rank, proc in enumerate(procs) if proc.exitcode is None and _is_stopped(proc.pid)]
    running = [rank for rank, proc in enumerate(procs) if proc.exitcode is None and rank not in stopped]
    if stopped:
        what = f"worker rank {stopped[0]} of {world_size} was stopped (SIGSTOP) and the others waited for it"
    else:
        what = f"worker rank(s) {running} of {world_size} were still running (a deadlock, or work that needs longer)"
    return WorkerTimeout(
        f"the run did not finish within timeout_s={timeout_s:g} s: {what}; every worker was stopped. The timeout is "
        "the timeout_s parameter (--timeout-s on the command line): raise it if the work needs longer",
        rank=stopped[0] if stopped else None,
        world_size=world_size,
        signal_name="SIGSTOP" if stopped else None,
        seconds=timeout_s,
    )


def _is_stopped(pid: int | None) -> bool:
    """Whether process ``pid`` is stopped by a signal (Linux /proc; False where that cannot be read)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] in ("T", "t")


def init_from_env(backend: str | None = None, *, timeout_s: float = 600.0) -> Comm:
    """Join a ``torchrun`` job: read RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT and return a world :class:`Comm`.

    ``backend`` None picks "nccl" when CUDA is available (then sets this rank's device from LOCAL_RANK),
    else "gloo". Raises ValueError naming any missing environment variable.
    """
    missing = [name for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT") if name not in os.environ]
    if missing:
        raise ValueError(
            f"environment variables {missing} are not set: start this program with torchrun "
            "(python -m torch.distributed.run --nproc-per-node N ...)"
        )
    if backend is None:
        backend = "nccl" if torch.cuda.is_available() else "gloo"
    if backend == "nccl":
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    if not dist.is_initialized():
        dist.init_process_group(backend, init_method="env://", timeout=timedelta(seconds=timeout_s))
    log.debug("joined torchrun job: rank %d of %d (%s)", dist.get_rank(), dist.get_world_size(), backend)
    return Comm()
