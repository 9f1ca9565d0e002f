"""Debian's Chromium, headless, driven by Playwright: never a downloaded browser."""
from __future__ import annotations

import shutil
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_path() -> str:
    """The system Chromium; a clear failure (not a skip) when it is missing."""
    path = CHROMIUM if CHROMIUM.exists() else shutil.which("chromium")
    if not path:
        raise RuntimeError("chromium is not installed: run `bash .ci/sysdeps` "
                           "(apt-get install chromium)")
    return str(path)


def launch(playwright, profile_dir: Path):
    """A persistent context in a fresh profile folder (Chromium's --user-data-dir)."""
    return playwright.chromium.launch_persistent_context(
        str(profile_dir),
        executable_path=chromium_path(),
        headless=True,
        args=CHROMIUM_ARGS,
        viewport={"width": 1400, "height": 900},
    )
