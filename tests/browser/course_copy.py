"""A throwaway copy of the course repository for tests that run the course for real.

The browser test releases, submits, collects and grades; doing that in the working tree
would mix test submissions into an instructor's real exchange and gradebook. The copy holds
what a fresh clone holds (tracked files plus new, not-ignored ones), never runtime state.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from coursebase.paths import REPO as REPO_ROOT


def course_files(repo: Path = REPO_ROOT) -> list[str]:
    """Paths git would put in a clone, plus files not yet committed (but not ignored ones)."""
    listing = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=repo, check=True, capture_output=True,
    ).stdout.decode()
    return [path for path in listing.split("\0") if path and (repo / path).is_file()]


def copy_course(destination: Path, repo: Path = REPO_ROOT) -> Path:
    """Copy the course into `destination` (created) and return it."""
    destination.mkdir(parents=True, exist_ok=True)
    for relative in course_files(repo):
        target = destination / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / relative, target)
    return destination
