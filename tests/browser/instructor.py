"""The instructor's side of the loop: `course` commands run in the course copy, as a shell
would run them, with the same isolated environment as the JupyterLab server."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path


class Instructor:
    def __init__(self, course: Path, env: dict[str, str], log_path: Path):
        self.course = course
        self.env = env
        self.log_path = log_path

    def run(self, *argv: str, timeout: float = 180) -> str:
        """Run one command from the course root; a non-zero exit fails with its output."""
        done = subprocess.run(list(argv), cwd=self.course, env=self.env, capture_output=True,
                              text=True, timeout=timeout)
        output = done.stdout + done.stderr
        with open(self.log_path, "a") as log:
            log.write(f"$ {' '.join(argv)}  (exit {done.returncode})\n{output}\n")
        if done.returncode != 0:
            raise AssertionError(f"`{' '.join(argv)}` exited {done.returncode}:\n{output[-3000:]}")
        return output

    def course_cli(self, *args: str, timeout: float = 180) -> str:
        # `python -m course.cli` from the copy's root imports the copy's course package.
        return self.run(sys.executable, "-m", "course.cli", *args, timeout=timeout)

    def release_to_exchange(self, assignment: str) -> str:
        """Regenerate the release (registers it in the gradebook), then publish it."""
        return self.course_cli("release", assignment, "--exchange")
