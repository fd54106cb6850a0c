"""A short folder for multiprocessing's Unix sockets when ``TMPDIR`` is too long for one.

Passing a file descriptor between processes (a ``DataLoader`` worker handing a tensor to its parent) binds a
Unix socket under ``multiprocessing.util.get_temp_dir()``, which lies under ``TMPDIR``. Linux caps a socket path
at 107 bytes, so a long ``TMPDIR`` (a pytest ``tmp_path``, a deep scratch folder) makes the worker fail to send
and the parent wait forever. Python 3.13 falls back to ``/tmp`` in that case; this does the same on 3.11/3.12.
"""

from __future__ import annotations

import multiprocessing.util
import os
import tempfile

__all__ = ["ensure_socket_dir"]

#: bytes of a socket path past the folder: "/pymp-xxxxxxxx/listener-xxxxxxxx" with room to spare
_SOCKET_NAME_BYTES = 48
#: Linux's limit on a Unix socket path (``sun_path`` is 108 bytes with the terminating NUL)
_MAX_SOCKET_PATH = 107


def ensure_socket_dir() -> str:
    """multiprocessing's temporary folder, created under ``/tmp`` when ``TMPDIR`` would make socket paths too
    long; call before starting worker processes (they inherit it). Removed at exit by multiprocessing itself."""
    base = tempfile.gettempdir()
    if len(os.fsencode(base)) + _SOCKET_NAME_BYTES <= _MAX_SOCKET_PATH:
        return multiprocessing.util.get_temp_dir()
    saved = tempfile.tempdir
    tempfile.tempdir = next((d for d in ("/tmp", "/var/tmp") if os.access(d, os.W_OK)), os.getcwd())
    try:
        return multiprocessing.util.get_temp_dir()  # cached for this process and the workers it forks
    finally:
        tempfile.tempdir = saved
