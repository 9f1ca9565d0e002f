"""Start JupyterLab the way `make lab` does, but isolated: a free loopback port, a token,
and a temporary HOME and Jupyter folders, so a test never reads or writes the user's own.
"""
from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

VENV_BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def isolated_env(course: Path, home: Path) -> dict[str, str]:
    """Environment of a person working in `course`: own HOME and Jupyter dirs, the course's
    config on JUPYTER_CONFIG_PATH (as in `make lab`), the course's packages importable."""
    home.mkdir(parents=True, exist_ok=True)
    env = {
        key: value for key, value in os.environ.items()
        if not key.startswith(("JUPYTER", "IPYTHON", "PYTEST", "COV_"))
    }
    env.update(
        HOME=str(home),
        JUPYTER_CONFIG_DIR=str(home / ".jupyter"),
        JUPYTER_DATA_DIR=str(home / ".local/share/jupyter"),
        JUPYTER_RUNTIME_DIR=str(home / ".local/share/jupyter/runtime"),
        JUPYTER_CONFIG_PATH=str(course / "course"),
        IPYTHONDIR=str(home / ".ipython"),
        MPLCONFIGDIR=str(home / ".config/matplotlib"),
        PYTHONPATH=str(course),
        PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
    )
    return env


@dataclass
class LabServer:
    course: Path
    port: int
    token: str
    process: subprocess.Popen
    log_path: Path
    env: dict[str, str] = field(repr=False)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str = "lab") -> str:
        return f"{self.base_url}/{path.lstrip('/')}?token={self.token}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_lab(course: Path, home: Path, log_path: Path,
              timeout: float = 60.0) -> LabServer:
    """Start JupyterLab on `course` and wait until its API answers with the token."""
    env = isolated_env(course, home)
    port, token = free_port(), secrets.token_hex(16)
    command = [
        str(VENV_BIN / "jupyter"), "lab",
        "--ip=127.0.0.1", f"--port={port}", "--port-retries=0",
        f"--IdentityProvider.token={token}",
        "--ServerApp.open_browser=False",
        # Lets the test ask the running app which extensions it loaded.
        "--LabApp.expose_app_in_browser=True",
    ]
    if os.geteuid() == 0:
        command.append("--allow-root")
    log_file = open(log_path, "wb")
    process = subprocess.Popen(command, cwd=course, env=env, stdout=log_file,
                               stderr=subprocess.STDOUT)
    server = LabServer(course, port, token, process, log_path, env)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"JupyterLab exited with status {process.returncode}:\n{server.log()[-4000:]}")
        try:
            with urllib.request.urlopen(server.url("api/status"), timeout=2) as reply:
                if reply.status == 200:
                    return server
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.3)
    server.stop()
    raise RuntimeError(f"JupyterLab did not answer within {timeout:.0f}s:\n{server.log()[-4000:]}")
