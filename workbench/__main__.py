"""``python -m workbench ...`` is the ``workbench`` command."""

import signal
import sys


def _stopped_early(signum: int, frame: object) -> None:
    """SIGTERM or SIGINT before the CLI is imported (nothing has started yet): exit quietly, as the CLI would."""
    sys.exit(130 if signum == signal.SIGINT else 128 + signum)


signal.signal(signal.SIGTERM, _stopped_early)
signal.signal(signal.SIGINT, _stopped_early)

from workbench.cli import main  # noqa: E402  (after the handlers: importing torch and qiskit takes seconds)

try:
    status = main()
except KeyboardInterrupt:  # a Ctrl-C delivered only after main returned (it arrived during native code)
    status = 130
finally:
    # the run is over and cleaned up: a signal now would only break the interpreter's teardown (an atexit callback
    # prints an "Exception ignored" traceback, an uncaught KeyboardInterrupt kills the process with SIGINT), so the
    # process finishes exiting with the run's status
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
sys.exit(status)
