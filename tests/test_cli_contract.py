"""The `course` command line's contract: every bad input gets one clear line and a non-zero exit.

One row per bad input: how to prepare the course, the command line, the exit status, and
words the one line must contain (what is wrong, and what to do). Each row runs the real
`course` entry point in this process on a scratch course (no grading runs: every row is
refused before a sandbox would start), so the table takes seconds.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from attacks import inject
from course import cli

pytestmark = pytest.mark.database   # release, grade: an nbgrader gradebook

ASSIGNMENT = "03_autograd"
OTHER = "02_devices"
KNOWN = f"known assignments: {OTHER}, {ASSIGNMENT}"
NOTHING_GRADED = f"nothing graded for {ASSIGNMENT} yet: run `course collect {ASSIGNMENT}` and `course grade"


def _course(root: Path) -> Path:
    for assignment in (ASSIGNMENT, OTHER):
        for step in ("solutions", "assignments"):
            shutil.copytree(inject.REPO / step / assignment, root / step / assignment)
    (root / "course").mkdir(parents=True)
    shutil.copy(inject.REPO / "course" / "nbgrader_config.py", root / "course" / "nbgrader_config.py")
    (root / "var").mkdir(exist_ok=True)
    (root / "var" / "roster.csv").write_text("id,first_name,last_name\nada,Ada,Lovelace\nbo,Bo,Li\n")
    return root


# -- ways to prepare the scratch course ------------------------------------------------------

def submitted(root: Path) -> None:
    folder = root / "var" / "submitted" / "ada" / ASSIGNMENT
    folder.mkdir(parents=True)
    shutil.copy(root / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", folder)


def broken_source(root: Path) -> None:
    source = root / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    source.write_text(source.read_text()[:-40])  # an editor crash: the file ends mid-way


def not_a_zip(root: Path) -> None:
    (root / "download.zip").write_text("<html>Session expired, please log in</html>")


def no_zone_in_due_date(root: Path) -> None:
    config = root / "course" / "nbgrader_config.py"
    config.write_text(config.read_text() + f'\nc.CourseDeadlines.due = {{"{ASSIGNMENT}": "2026-11-20 23:59"}}\n')
    graded = root / "var" / "autograded" / "ada" / ASSIGNMENT
    graded.mkdir(parents=True)
    (graded / "grading.json").write_text("{}")


def bad_roster(root: Path) -> None:
    (root / "var").mkdir(exist_ok=True)
    (root / "var" / "roster.csv").write_text("id,first_name\nAda Lovelace,Ada\n")


def nothing(root: Path) -> None:
    pass


# (prepare, argv with {root}, exit status, words the one line must contain)
CONTRACT = [
    (nothing, [], 2, "name a command (release, validate"),
    (nothing, ["frobnicate"], 2, "invalid choice: 'frobnicate'"),
    (nothing, ["grade", "03_autogard", "--root", "{root}"], 2,
     f"no assignment named '03_autogard' in {{root}}/solutions; {KNOWN}"),
    (nothing, ["collect", "03_autogard", "--root", "{root}"], 2, KNOWN),
    (nothing, ["export", "3", "--root", "{root}"], 2, KNOWN),
    (nothing, ["report", "03_autograd.ipynb", "--root", "{root}"], 2, KNOWN),
    (nothing, ["feedback", "Autograd", "--root", "{root}"], 2, KNOWN),
    (nothing, ["release", "03_autogard", "--root", "{root}"], 2, "No assignment named '03_autogard'"),
    (nothing, ["grade", ASSIGNMENT, "--root", "{root}"], 1,
     f"no submissions of {ASSIGNMENT} in {{root}}/var/submitted: run `course collect {ASSIGNMENT}`"),
    (submitted, ["grade", ASSIGNMENT, "--root", "{root}", "--student", "zed"], 2,
     f"no submission of {ASSIGNMENT} from 'zed' (not on the roster); submitted: ada"),
    (submitted, ["grade", ASSIGNMENT, "--root", "{root}", "--student", "bo"], 2,
     f"no submission of {ASSIGNMENT} from 'bo'; submitted: ada"),
    (nothing, ["grade", ASSIGNMENT, "--workers", "0"], 2, "--workers: expected a whole number of at least 1, got 0"),
    (nothing, ["grade", ASSIGNMENT, "--workers", "-3"], 2, "--workers: expected a whole number of at least 1"),
    (nothing, ["grade", ASSIGNMENT, "--workers", "two"], 2,
     "--workers: expected a whole number of at least 1, got 'two'"),
    (nothing, ["grade", ASSIGNMENT, "--timeout", "0"], 2, "--timeout: expected a number greater than 0"),
    (nothing, ["grade", ASSIGNMENT, "--timeout", "nan"], 2, "--timeout: expected a number greater than 0"),
    (nothing, ["grade", ASSIGNMENT, "--memory-mb", "0"], 2, "--memory-mb: expected a whole number of at least 1"),
    (nothing, ["grade", ASSIGNMENT, "--dask-local", "0"], 2, "--dask-local: expected a whole number of at least 1"),
    (submitted, ["grade", ASSIGNMENT, "--root", "{root}", "--dask", "tcp://127.0.0.1:1", "--workers", "2"], 2,
     "--workers sets threads on this machine"),
    (submitted, ["grade", ASSIGNMENT, "--root", "{root}", "--db-url", "postgresql://nobody@127.0.0.1:1/none"], 1,
     "cannot use the gradebook ("),
    (nothing, ["grade", ASSIGNMENT, "--root", "{root}/nowhere"], 2,
     "No nbgrader configuration at {root}/nowhere/course/nbgrader_config.py; give the course folder with --root"),
    (nothing, ["release", ASSIGNMENT, "--root", "{root}/nowhere"], 2, "No nbgrader configuration at {root}/nowhere"),
    (broken_source, ["release", ASSIGNMENT, "--root", "{root}"], 1,
     f"solutions/{ASSIGNMENT}/{ASSIGNMENT}.ipynb is not a valid notebook: invalid JSON at line"),
    (broken_source, ["grade", ASSIGNMENT, "--root", "{root}"], 2,
     f"{{root}}/solutions/{ASSIGNMENT}/{ASSIGNMENT}.ipynb is not a valid notebook (invalid JSON"),
    (nothing, ["release", "--check", "--exchange", ASSIGNMENT], 2, "--check writes nothing"),
    (nothing, ["release", "--all", ASSIGNMENT], 2, "give assignment names or --all, not both"),
    (nothing, ["export", ASSIGNMENT, "--root", "{root}"], 1, NOTHING_GRADED),
    (nothing, ["export", ASSIGNMENT, "--root", "{root}", "--format", "canvas"], 1, NOTHING_GRADED),
    (nothing, ["report", ASSIGNMENT, "--root", "{root}"], 1, NOTHING_GRADED),
    (nothing, ["feedback", ASSIGNMENT, "--root", "{root}"], 1, NOTHING_GRADED),
    (nothing, ["export", ASSIGNMENT, "--format", "xlsx"], 2, "--format: invalid choice: 'xlsx'"),
    (no_zone_in_due_date, ["export", ASSIGNMENT, "--root", "{root}"], 2,
     f"due date of {ASSIGNMENT}: '2026-11-20 23:59' has no time zone"),
    (nothing, ["collect", ASSIGNMENT, "--root", "{root}", "--from", "{root}/Downloads/missing.zip"], 1,
     "{root}/Downloads/missing.zip: no such folder or zip file"),
    (not_a_zip, ["collect", ASSIGNMENT, "--root", "{root}", "--from", "{root}/download.zip"], 1,
     "{root}/download.zip is not a readable zip file"),
    (nothing, ["collect", ASSIGNMENT, "--root", "{root}", "--from", "{root}", "--timezone", "Mars/Olympus"], 1,
     "unknown time zone 'Mars/Olympus'"),
    (bad_roster, ["collect", ASSIGNMENT, "--root", "{root}", "--from", "{root}/solutions"], 1,
     "the roster cannot be read: {root}/var/roster.csv: 1 problem(s): line 2: id 'Ada Lovelace' is not a valid"),
    (lambda root: (submitted(root), bad_roster(root)), ["grade", ASSIGNMENT, "--root", "{root}", "--student", "zed"],
     1, "the roster cannot be read: {root}/var/roster.csv: 1 problem(s): line 2: id 'Ada Lovelace' is not"),
    (nothing, ["new", "Softplus", "--root", "{root}"], 2, "'Softplus' is not an assignment name"),
    (nothing, ["new", ASSIGNMENT, "--root", "{root}"], 1, f"solutions/{ASSIGNMENT} exists already"),
    (nothing, ["new", "09_softplus", "--root", "{root}/nowhere"], 2, "No nbgrader configuration"),
    (nothing, ["roster", "import", "{root}/missing.csv", "--root", "{root}", "--gradebook-only"], 1,
     "cannot read the roster"),
    (nothing, ["collect", ASSIGNMENT, "--root", "{root}"], 1,
     f"no exchange inbound folder at {{root}}/var/exchange/reftorch-course/inbound: release with "
     f"`course release {ASSIGNMENT} --exchange`"),
    (nothing, ["feedback", ASSIGNMENT, "--root", "{root}", "--lms", "blackboard"], 2,
     "--lms: invalid choice: 'blackboard'"),
]


@pytest.mark.parametrize("prepare, argv, status, words", CONTRACT,
                         ids=[" ".join(row[1])[:60].replace("{root}", "R") or "(nothing)" for row in CONTRACT])
def test_bad_input_gets_one_clear_line_and_a_non_zero_exit(prepare, argv, status, words, tmp_path, capfd):
    root = _course(tmp_path / "course")
    prepare(root)
    argv = [part.replace("{root}", str(root)) for part in argv]
    try:
        code = cli.main(argv)
    except SystemExit as exit_:  # argparse refuses by exiting
        code = exit_.code
    out, err = capfd.readouterr()
    lines = [line for line in (out + err).splitlines() if line.strip()]
    assert code == status, f"exit {code}, wanted {status}: {out + err}"
    assert len(lines) == 1, f"wanted one line, got {len(lines)}:\n{out + err}"
    assert words.replace("{root}", str(root)) in lines[0], lines[0]
    assert "Traceback" not in err


def test_the_table_covers_every_grading_command():
    covered = {row[1][0] for row in CONTRACT if row[1]}
    assert {"collect", "grade", "export", "report", "feedback", "release", "new", "roster"} <= covered
    assert len(CONTRACT) >= 40
