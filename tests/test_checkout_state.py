"""`make test`'s check that the suite leaves the checkout as it found it (tests/checkout_state.py)."""
from __future__ import annotations

import subprocess
import sys

from coursebase.paths import REPO


def _git(root, *args):
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def test_what_a_suite_writes_into_a_checkout_is_named_and_caches_are_not(tmp_path):
    root = tmp_path / "checkout"
    root.mkdir()
    _git(root, "init", "-q")
    (root / ".gitignore").write_text("/var/\n__pycache__/\nartifacts/\n.venv/\n")
    (root / "tracked.txt").write_text("as committed\n")
    (root / ".venv").mkdir()
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    (root / "stray-from-before.txt").write_text("the instructor's own file, there before the suite")

    record = root / ".venv" / "before"
    run = [sys.executable, "-m", "tests.checkout_state"]
    env_path = {"cwd": root, "capture_output": True, "text": True,
                "env": {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}}
    assert subprocess.run([*run, "save", str(record)], **env_path).returncode == 0
    (root / "pkg" / "__pycache__").mkdir(parents=True)              # caches: allowed
    (root / "pkg" / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"")
    clean = subprocess.run([*run, "check", str(record)], **env_path)
    assert clean.returncode == 0, clean.stderr

    (root / "var").mkdir()                                           # what a test must not leave
    (root / "var" / "gradebook.db").write_bytes(b"")
    (root / "artifacts" / "browser").mkdir(parents=True)
    (root / "artifacts" / "browser" / "shot.png").write_bytes(b"")
    (root / "tracked.txt").write_text("rewritten by a test\n")
    dirty = subprocess.run([*run, "check", str(record)], **env_path)
    assert dirty.returncode == 1
    assert dirty.stderr.splitlines()[1:] == ["   M tracked.txt", "  !! artifacts/", "  !! var/"], dirty.stderr
