"""Where a browser test keeps its screenshots and logs: beside its other temporary files, or,
when ``COURSE_ARTIFACTS`` names a folder (a CI job that uploads them), in ``<that>/<name>/``.
Never in the checkout: a test leaves `git status --ignored` as it found it (Makefile)."""
from __future__ import annotations

import os
import shutil
from pathlib import Path


def artifacts_folder(name: str, tmp_path: Path) -> Path:
    """A fresh, empty folder for one test's artifacts."""
    kept = os.environ.get("COURSE_ARTIFACTS")
    folder = Path(kept) / name if kept else tmp_path / "artifacts" / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder
