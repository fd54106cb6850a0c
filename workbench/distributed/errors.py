"""Why a multi-process run stopped: one exception family whose message is the one line a user sees.

:class:`WorkerFailed` is raised by :func:`workbench.distributed.run_workers` when a worker process dies without
raising a Python exception (killed by a signal: the out-of-memory killer's SIGKILL, a segmentation fault, a
``kill`` from outside) and, as :class:`WorkerTimeout`, when the run outlives its ``timeout_s`` (a stopped or
deadlocked worker). The CLI prints the message as ``error: ...`` and exits 1; panels show it in their status
line. A worker's own Python exception is re-raised with its original type instead (a ``ValueError`` stays one).
"""

from __future__ import annotations

__all__ = ["WorkerFailed", "WorkerTimeout"]


class WorkerFailed(RuntimeError):
    """A worker process died or stopped responding; the message names the rank, the cause and what to change.

    Attributes: ``rank`` (the failed rank, or None when no single rank is to blame), ``world_size``,
    ``signal_name`` (``"SIGKILL"``...; None when the worker was not killed by a signal), ``seconds`` (from the
    launch to the failure). ``one_line`` marks a message that is complete for the user (the CLI and panels show
    it without a type name or traceback).
    """

    one_line = True
    exit_code = 1  # the CLI's exit status: a fault of the run

    def __init__(
        self,
        message: str,
        *,
        rank: int | None = None,
        world_size: int = 0,
        signal_name: str | None = None,
        seconds: float = 0.0,
    ) -> None:
        super().__init__(message)
        self.rank, self.world_size, self.signal_name, self.seconds = rank, world_size, signal_name, seconds


class WorkerTimeout(WorkerFailed, TimeoutError):
    """The run did not finish within its ``timeout_s``; every worker was stopped."""

    exit_code = 2  # a limit the user set ran out (exit 2), not a fault of the run (exit 1)
