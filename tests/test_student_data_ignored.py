"""Student data never goes into git (issue 27, item 6): every folder and file the tools write
with students' names, LMS ids, work or grades is git-ignored, and no message the tools print
invites committing it."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# What the course's commands write that holds student data (names, LMS ids, work, grades).
STUDENT_DATA = [
    "course/collected/03_autograd/20261120-235900/download.zip",   # every LMS download, kept
    "course/collected/03_autograd/records.json",                   # LMS ids and times per student
    "course/submitted/ada/03_autograd/03_autograd.ipynb",
    "course/autograded/ada/03_autograd/grading.json",
    "course/feedback/ada/03_autograd/03_autograd.html",
    "course/exchange/reftorch-course/inbound/ada+03_autograd+x/03_autograd.ipynb",
    "course/reports/03_autograd/grades-canvas.csv",
    "course/reports/03_autograd/canvas-feedback.zip",
    "course/refused/eve/03_autograd/03_autograd.ipynb",
    "course/roster.csv",
    "course/gradebook.db",
]


@pytest.mark.parametrize("path", STUDENT_DATA)
def test_student_data_is_git_ignored(path):
    done = subprocess.run(["git", "-C", str(REPO), "check-ignore", "--no-index", "-q", path])
    assert done.returncode == 0, f"{path} is not git-ignored: add its folder to .gitignore"


INVITES = re.compile(r"commit (them|it|these|those)\b", re.I)


def test_no_message_invites_committing_files_without_naming_student_data():
    """Any printed advice to commit files says which: course material, never student data."""
    offenders = []
    for path in sorted([*REPO.glob("course/**/*.py"), *REPO.glob("autograder/**/*.py")]):
        text = path.read_text(encoding="utf-8")
        for match in INVITES.finditer(text):
            around = text[max(0, match.start() - 300): match.end() + 300]
            if "student data" not in around.lower():
                offenders.append(f"{path.relative_to(REPO)}: ...{text[max(0, match.start() - 60): match.end()]}")
    assert not offenders, "\n".join(offenders)
