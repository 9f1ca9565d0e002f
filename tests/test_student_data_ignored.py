"""Student data never goes into git (issue 27, item 6): every folder and file the tools write
with students' names, LMS ids, work or grades is git-ignored, and no message the tools print
invites committing it."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from coursebase.model import Course
from coursebase.paths import OLD_STATE, REPO

# What the course's commands write that holds student data (names, LMS ids, work, grades).
STUDENT_DATA = [
    "var/collected/03_autograd/20261120-235900/download.zip",   # every LMS download, kept
    "var/collected/03_autograd/records.json",                   # LMS ids and times per student
    "var/submitted/ada/03_autograd/03_autograd.ipynb",
    "var/autograded/ada/03_autograd/grading.json",
    "var/feedback/ada/03_autograd/03_autograd.html",
    "var/exchange/reftorch-course/inbound/ada+03_autograd+x/03_autograd.ipynb",
    "var/reports/03_autograd/grades-canvas.csv",
    "var/reports/03_autograd/canvas-feedback.zip",
    "var/reports/03_autograd/grades-moodle.csv",
    "var/reports/03_autograd/moodle-feedback.zip",                # feedback --lms moodle
    "var/reports/03_autograd/moodle-grading-worksheet.csv",       # names, e-mails, grades
    "var/roster.csv",
    "var/gradebook.db",
    # where a course kept them before var/, until `course migrate-state` moves them
    *(f"course/{name}" + ("" if "." in name else "/ada/03_autograd/03_autograd.ipynb") for name in OLD_STATE),
]


@pytest.mark.parametrize("path", STUDENT_DATA)
def test_student_data_is_git_ignored(path):
    done = subprocess.run(["git", "-C", str(REPO), "check-ignore", "--no-index", "-q", path])
    assert done.returncode == 0, f"{path} is not git-ignored: add its folder to .gitignore"


def test_every_state_path_of_the_course_is_in_var(monkeypatch):
    """course/nbgrader_config.py (run by path, so it spells var/ itself) and the course's own
    paths agree: everything a term writes is in the one git-ignored folder."""
    monkeypatch.delenv("COURSE_EXCHANGE", raising=False)
    course = Course.load()
    paths = {"submitted": course.submitted_root, "autograded": course.autograded_root,
             "feedback": course.feedback_root, "exchange": course.exchange_root,
             "collected": course.collected_root, "reports": course.reports_root, "roster": course.roster_path,
             "gradebook": Path(course.db_url.removeprefix("sqlite:///"))}
    assert {name: path for name, path in paths.items() if course.state_root not in path.parents} == {}
    assert course.state_root == REPO / "var"


def test_the_deploy_samples_keep_the_term_in_var(monkeypatch):
    """The TLJH instructor's config (a copy of course/nbgrader_config.py with the hub's exchange)
    keeps nbgrader's folders and the gradebook in var/ too: in course/ every command would
    refuse the course as one from before var/."""
    from traitlets.config import PyFileConfigLoader

    monkeypatch.delenv("COURSE_DB_URL", raising=False)
    folder = REPO / "course" / "deploy" / "tljh"
    directory = PyFileConfigLoader("instructor_nbgrader_config.py", path=str(folder)).load_config().CourseDirectory
    root = Path(directory.root)
    # a folder the file leaves unset is nbgrader's default: its bare name, at the course's root
    named = {name: directory.get(f"{name}_directory", name)
             for name in ("submitted", "autograded", "feedback", "solution", "source_with_tests")}
    named["gradebook"] = directory.get("db_url", "sqlite:///gradebook.db").removeprefix("sqlite:///")
    assert {name: where for name, where in named.items() if (root / "var") not in (root / where).parents} == {}


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
