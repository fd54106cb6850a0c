"""A throwaway JupyterLab server for the browser tests (JupyterLab 4.6, jupyter_server 2.x).

Reference: ``shared/notes/browser-testing.md`` (flags, ``--allow-root``, readiness polling) and
jupyterlab's own ``galata.configure_jupyter_server`` (``expose_app_in_browser``, temporary workspaces).
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class LabServer:
    """A running JupyterLab: ``base_url`` (``http://127.0.0.1:PORT/``), its ``token``, its ``root_dir``."""

    base_url: str
    token: str
    root: Path
    log: Path
    process: subprocess.Popen

    def url(self, path: str = "") -> str:
        """``base_url + path`` with the token as query parameter."""
        return f"{self.base_url}{path.lstrip('/')}?token={self.token}"

    def api(self, path: str, method: str = "GET", timeout_s: float = 10.0) -> Any:
        request = urllib.request.Request(
            self.base_url + path.lstrip("/"), method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            body = response.read()
        return json.loads(body) if body else None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def lab_command(root: Path, port: int, token: str, state_dir: Path) -> list[str]:
    """``python -m jupyterlab`` with the flags of JupyterLab 4.6 / jupyter_server 2.x for a headless test."""
    return [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--allow-root",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",  # ServerApp.token is deprecated since jupyter_server 2
        f"--ServerApp.root_dir={root}",
        # no news fetched by the server and no update check (the toast itself: see start_jupyter_lab)
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.expose_app_in_browser=True",  # window.jupyterapp, to run commands
        # fresh workspace and settings: nothing restored from a previous session or the user's profile
        f"--LabApp.workspaces_dir={state_dir / 'workspaces'}",
        f"--LabApp.user_settings_dir={state_dir / 'settings'}",
    ]


def start_jupyter_lab(root: Path, state_dir: Path, *, timeout_s: float = 60.0) -> LabServer:
    """Start JupyterLab on ``root`` in its own process group and wait until ``/api/status`` answers."""
    port, token = free_port(), secrets.token_hex(16)
    state_dir.mkdir(parents=True, exist_ok=True)
    # The news toast ("Would you like to get notified about official Jupyter news?") is asked while the
    # notification setting fetchNews is "none", whatever LabApp.news_url says: answer it in the settings.
    notification = state_dir / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notification.parent.mkdir(parents=True, exist_ok=True)
    notification.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    # every output rendered (no windowing): the tests measure every figure, not only those in view
    tracker = state_dir / "settings" / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True, exist_ok=True)
    tracker.write_text(json.dumps({"windowingMode": "none"}))
    env = dict(os.environ)
    env.pop("WORKBENCH_EXPORT", None)  # live panels in the lab, never static ones
    env["JUPYTER_CONFIG_DIR"] = str(state_dir / "config")  # ignore ~/.jupyter
    env["JUPYTER_RUNTIME_DIR"] = str(state_dir / "runtime")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    # kernels import this checkout's workbench and widgets, whatever checkout the venv's editable install names
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    log = state_dir / "jupyter.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            lab_command(root, port, token, state_dir),
            cwd=root,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    server = LabServer(f"http://127.0.0.1:{port}/", token, root, log, process)
    deadline = time.monotonic() + timeout_s
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"jupyter lab exited with {process.returncode}:\n{log_tail(log)}")
        try:
            server.api("api/status", timeout_s=2.0)
            return server
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            pass
        if time.monotonic() > deadline:
            stop_jupyter_lab(server)
            raise TimeoutError(f"jupyter lab not ready after {timeout_s:.0f} s:\n{log_tail(log)}")
        time.sleep(0.25)


def stop_jupyter_lab(server: LabServer, *, timeout_s: float = 20.0) -> None:
    """Shut its kernels down through the REST API (kernels live in their own sessions), then SIGTERM the
    server's process group, and SIGKILL it if it is still there after ``timeout_s``."""
    if server.process.poll() is None:
        try:
            for kernel in server.api("api/kernels"):
                server.api(f"api/kernels/{kernel['id']}", method="DELETE", timeout_s=timeout_s)
        except (urllib.error.URLError, OSError, ValueError):
            pass  # the server is going away anyway; SIGTERM below also shuts kernels down
    for sig, wait_s in ((signal.SIGTERM, timeout_s), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(server.process.pid, sig)
        except ProcessLookupError:
            break
        try:
            server.process.wait(wait_s)
            break
        except subprocess.TimeoutExpired:
            continue


def log_tail(path: Path, chars: int = 4000) -> str:
    try:
        return path.read_text(errors="replace")[-chars:]
    except OSError:
        return "(no log)"
