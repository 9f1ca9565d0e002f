"""`make lab-check`: what `make lab` will load, checked.

Fails (exit 1, one line per problem) when an nbgrader lab or server extension is missing or
disabled, when the pop-up overrides are not installed, or when nbgrader does not see the
course's exchange. Run with course/ on JUPYTER_CONFIG_PATH, as the Makefile does.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from coursebase.paths import REPO as REPO_ROOT
VENV_BIN = Path(sys.executable).parent
SERVER_EXTENSIONS = (
    "nbgrader.server_extensions.assignment_list",
    "nbgrader.server_extensions.validate_assignment",
    "nbgrader.server_extensions.formgrader",
    "jupyterlab",
)
LAB_EXTENSION = "@jupyter/nbgrader"


def _listing(*args: str) -> str:
    done = subprocess.run([str(VENV_BIN / "jupyter"), *args], capture_output=True, text=True)
    return done.stdout + done.stderr


def _enabled(listing: str, name: str) -> bool:
    return any(line.split()[:2] == [name, "\x1b[32menabled\x1b[0m"] or
               line.split()[:2] == [name, "enabled"] for line in listing.splitlines()
               if line.strip())


def problems() -> list[str]:
    found = []
    servers = _listing("server", "extension", "list")
    for name in SERVER_EXTENSIONS:
        if not _enabled(servers, name):
            found.append(f"server extension {name} is not enabled")
    labs = _listing("labextension", "list")
    if not any(LAB_EXTENSION in line and "enabled" in line for line in labs.splitlines()):
        found.append(f"lab extension {LAB_EXTENSION} is not enabled")

    wanted = json.loads((REPO_ROOT / "course/lab/overrides.json").read_text())
    installed_path = Path(sys.prefix) / "share/jupyter/lab/settings/overrides.json"
    installed = json.loads(installed_path.read_text()) if installed_path.exists() else None
    if installed != wanted:
        found.append(f"{installed_path} differs from course/lab/overrides.json (run `make lab`)")

    from nbgrader.apps import NbGrader
    from jupyter_core.paths import jupyter_config_path
    app = NbGrader()
    app.config_file_paths.append(jupyter_config_path())
    app.load_config_file()
    exchange = app.config.Exchange.get("root")
    expected = str(REPO_ROOT / "var" / "exchange")
    if exchange != expected:
        found.append(f"nbgrader sees Exchange.root={exchange!r}, expected {expected!r} "
                     "(is course/ on JUPYTER_CONFIG_PATH?)")
    return found


def main() -> int:
    found = problems()
    for problem in found:
        print(f"lab-check: {problem}", file=sys.stderr)
    if not found:
        print("lab-check: nbgrader extensions enabled, pop-ups off, "
              f"exchange at {REPO_ROOT / 'course' / 'exchange'}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
