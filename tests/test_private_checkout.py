"""Grading and Validate from a checkout no other user can enter.

Instructors clone into their home (0700 or 0750) or a `mktemp -d` folder (0700), sometimes
under a path with spaces, with a Python installed in a private place (pyenv under /root).
The sandbox must not need anyone else to walk those folders:
- as root, it runs as `nobody`, which can enter none of them;
- as a non-root instructor, it runs as that instructor, with their own venv.

Each test copies the course (what a clone holds) and a venv (hard links: seconds, not GB)
into such a folder and runs the `course` CLI there in a fresh process, so the code under
test is the copy's own (`autograder/` and `reftorch/` are found from where they live).
"""
from __future__ import annotations

import csv
import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

from attacks import inject
from browser.course_copy import copy_course

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("private_checkout")]

ASSIGNMENT = "02_devices"   # probes of both kinds: a run with torch and one without
INSTRUCTOR = "course-instructor-test"
RUN = "import sys; from course.cli import main; sys.exit(main())"


def _copy_venv(destination: Path, python_home: str | None = None) -> Path:
    """The running venv, hard-linked into ``destination``; files that name the old checkout
    are rewritten (as new files: the originals keep their content)."""
    source = Path(sys.prefix)
    subprocess.run(["cp", "-al", str(source), str(destination)], check=True)
    old_repo = str(inject.REPO)
    new_repo = str(destination.parent)
    for finder in (destination / "lib").glob("python3*/site-packages/__editable__*finder.py"):
        text = finder.read_text()
        finder.unlink()
        finder.write_text(text.replace(old_repo, new_repo))
    from course.hub_install import TRAMPOLINE, _shebang   # pip's forms, also for a path with spaces
    for script in (destination / "bin").iterdir():   # console scripts name their venv's python
        if script.is_symlink() or not script.is_file():
            continue
        lines = script.read_bytes().split(b"\n")
        # a venv under a path with a space (CI's "course checkout") gets pip's /bin/sh
        # trampoline: the interpreter is on the second line, not in the shebang
        trampoline = lines[0] == b"#!/bin/sh" and lines[1:2] and lines[1].startswith(TRAMPOLINE.encode())
        header = lines[:3] if trampoline else lines[:1]
        named = re.search(re.escape(str(source)) + r"/bin/python[0-9.]*", b"\n".join(header).decode(errors="replace"))
        if lines[0].startswith(b"#!") and named:
            python = Path(named.group(0).replace(str(source), str(destination)))
            script.unlink()
            script.write_bytes(_shebang(python) + b"\n".join(lines[len(header):]))
            script.chmod(0o755)
    if python_home:   # another Python of the same minor version runs the same wheels
        config = destination / "pyvenv.cfg"
        lines = [f"home = {python_home}" if line.startswith("home =") else line
                 for line in config.read_text().splitlines() if not line.startswith("executable")]
        config.unlink()
        config.write_text("\n".join(lines) + "\n")
        for name in ("python", "python3", f"python3.{sys.version_info.minor}"):
            link = destination / "bin" / name
            link.unlink(missing_ok=True)
            link.symlink_to(f"{python_home}/python3.{sys.version_info.minor}")
    return destination / "bin" / "python"


def _private_course(parent: Path) -> Path:
    """A course in ``parent`` (made 0700), under a folder name with a space, with one
    honest and one blank submission of ASSIGNMENT waiting to be graded."""
    parent.mkdir(mode=0o700, exist_ok=True)
    parent.chmod(0o700)
    root = copy_course(parent / "my course")
    from course.nbgrader_course import generate_release
    generate_release([ASSIGNMENT], root)
    inject.submit(root, ASSIGNMENT, "honest", inject.honest(root, ASSIGNMENT))
    inject.submit(root, ASSIGNMENT, "blank", inject.released(root, ASSIGNMENT))
    return root


def _maximum(root: Path) -> float:
    return sum(points for _, points in inject.test_points(root, ASSIGNMENT))


def _grade_and_validate(root: Path, python: Path, as_user: str | None = None) -> dict:
    prefix = [shutil.which("setpriv"), f"--reuid={as_user}", f"--regid={as_user}", "--init-groups"] \
        if as_user else []
    environment = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
                   "HOME": pwd.getpwnam(as_user).pw_dir if as_user else os.environ.get("HOME", "/root")}

    def course(*args):
        return subprocess.run([*prefix, str(python), "-c", RUN, *args], cwd=root, env=environment,
                              capture_output=True, text=True, timeout=600)

    graded = course("grade", ASSIGNMENT, "--root", str(root), "--workers", "1")
    assert graded.returncode == 0, graded.stdout + graded.stderr
    honest_notebook = root / "var" / "submitted" / "honest" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    validated = course("validate", str(honest_notebook))
    return {"scores": _gradebook_scores(root), "grade_output": graded.stdout + graded.stderr,
            "validate": validated}


def _gradebook_scores(root: Path, assignment: str = ASSIGNMENT) -> dict[str, float]:
    from nbgrader.api import Gradebook

    from coursebase.model import Course
    with Gradebook(Course.load(root).db_url) as gradebook:
        return {s.student.id: s.score for s in gradebook.find_assignment(assignment).submissions}


def _nobody_can_enter(path: Path) -> bool:
    entered = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                              "ls", str(path)], capture_output=True)
    return entered.returncode == 0


def test_root_grades_a_checkout_in_a_private_folder(tmp_path):
    # pytest's own tmp folders are 0700 already; the venv and the Python (pyenv under
    # /root, where it is installed here) are both out of nobody's reach by name
    if os.geteuid() != 0:
        pytest.skip("the root case: run as root (CI is)")
    root = _private_course(tmp_path / "private")
    python = _copy_venv(root / ".venv")
    assert not _nobody_can_enter(root) and not _nobody_can_enter(python.resolve().parent)
    result = _grade_and_validate(root, python)
    assert result["scores"] == {"blank": 0.0, "honest": _maximum(root)}, result["grade_output"]
    assert result["validate"].returncode == 0, result["validate"].stdout + result["validate"].stderr


@pytest.fixture
def instructor():
    """A non-root instructor whose home is 0700 (removed afterwards)."""
    if os.geteuid() != 0 or not shutil.which("useradd"):
        pytest.skip("creating a user needs root and useradd (CI runs as root)")
    subprocess.run(["userdel", "-r", INSTRUCTOR], capture_output=True)
    subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", INSTRUCTOR], check=True)
    home = Path(pwd.getpwnam(INSTRUCTOR).pw_dir)
    home.chmod(0o700)
    yield home
    subprocess.run(["pkill", "-KILL", "-u", INSTRUCTOR], capture_output=True)
    subprocess.run(["userdel", "-r", INSTRUCTOR], capture_output=True)


# -- two weeks of a term, as a non-root instructor, from a clean clone -----------------------

STUDENT = "course-student-test"
WEEK_1, WEEK_2 = "01_tensors", "02_devices"
SCHEDULE = {WEEK_1: "2026-09-07 09:00 Europe/Berlin", WEEK_2: "2026-09-14 09:00 Europe/Berlin"}
ROSTER = [("ada", "Ada", "Lovelace", "301"), ("bo", "Bo", "Li", "302"), ("cy", "Cy", "Young", "303")]
NEWCOMER = ("dee", "Dee", "Ray", "304")   # joins in week 2
PARTICIPANT = {"ada": "5101", "bo": "5102", "cy": "5103"}   # Moodle numbers participants per assignment
STUDENT_DATA = ["var/roster.csv", "var/collected", "var/submitted", "var/autograded",
                "var/feedback", "var/reports", "var/exchange", "var/gradebook.db"]


@pytest.fixture
def student():
    """A student's Unix account (removed afterwards): they clone the kit and `make update`."""
    if os.geteuid() != 0 or not shutil.which("useradd"):
        pytest.skip("creating a user needs root and useradd (CI runs as root)")
    subprocess.run(["userdel", "-r", STUDENT], capture_output=True)
    subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", STUDENT], check=True)
    yield Path(pwd.getpwnam(STUDENT).pw_dir)
    subprocess.run(["pkill", "-KILL", "-u", STUDENT], capture_output=True)
    subprocess.run(["userdel", "-r", STUDENT], capture_output=True)


def _as(user: str, argv: list, cwd: Path, check: bool = True, **extra) -> subprocess.CompletedProcess:
    account = pwd.getpwnam(user)
    environment = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": account.pw_dir,
                   "USER": user, **extra}
    done = subprocess.run([shutil.which("setpriv"), f"--reuid={user}", f"--regid={user}", "--init-groups",
                           "--", *map(str, argv)], cwd=cwd, env=environment, capture_output=True, text=True,
                          timeout=900)
    if check and done.returncode != 0:
        raise AssertionError(f"`{' '.join(map(str, argv))}` as {user} exited {done.returncode}:\n"
                             f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    return done


def _person(student_id: str) -> tuple[str, str, str, str]:
    return {row[0]: row for row in [*ROSTER, NEWCOMER]}[student_id]


def _moodle_folder(student_id: str) -> str:
    _, first, last, _ = _person(student_id)
    return f"{first} {last}_{PARTICIPANT[student_id]}_assignsubmission_file"


def _moodle_zip(path: Path, assignment: str, notebooks: dict) -> Path:
    """Moodle's "Download all submissions": a folder per student named by full name and
    participant number, with what Moodle puts beside the files (online text, an HTML export)."""
    import zipfile
    with zipfile.ZipFile(path, "w") as archive:
        for student_id, notebook in notebooks.items():
            archive.writestr(f"{_moodle_folder(student_id)}/{assignment}.ipynb", nbformat.writes(notebook))
        first = next(iter(notebooks))
        _, name, last, _ = _person(first)
        archive.writestr(f"{name} {last}_{PARTICIPANT[first]}_assignsubmission_onlinetext_/onlinetext.html",
                         "<p>I found the strides part hard.</p>")
        archive.writestr(f"{_moodle_folder(first)}/{assignment}.html", "<html>my notebook as HTML</html>")
    return path


def _canvas_name(student_id: str, file_id: int, file_name: str) -> str:
    _, first, last, lms_id = _person(student_id)
    return f"{last.lower()}{first.lower()}_{lms_id}_{file_id}_{file_name}"


def _canvas_zip(path: Path, assignment: str, notebooks: dict) -> Path:
    """Canvas's "Download Submissions": ``<lastfirst>_<user id>_<file id>_<file>``, the latest
    upload of each student (a new upload gets a new file id)."""
    import zipfile
    with zipfile.ZipFile(path, "w") as archive:
        for student_id, (file_id, notebook) in notebooks.items():
            archive.writestr(_canvas_name(student_id, file_id, f"{assignment}.ipynb"), nbformat.writes(notebook))
    return path


def _csv_rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_two_weeks_of_a_term_as_a_non_root_instructor(instructor, student, request):
    """Two weeks of a term, from a clean clone in the instructor's 0700 home (a path with a
    space), as the instructor's Unix user, with Debian's own python3.11 under the course venv,
    every `course grade` with the default number of workers:

    week 1 (Moodle): the roster; the release schedule; `course student-kit` writes the kit
    repository with week 1's assignment only; a student clones it, answers, and runs lesson
    01 (saved with their outputs); Moodle's download (with its online-text folder and an HTML
    export beside a notebook) is collected, graded, exported (grade CSV with a feedback
    column) and sent back (`feedback --lms moodle`: the feedback-files zip in the download's
    own folder names, the grading worksheet with its Feedback comments);
    week 2 (Canvas): a smaller roster import (a newcomer) keeps everyone, a re-import without
    lms_id keeps the Canvas ids; a due date and a late penalty; the instructor fixes lesson 01;
    `course student-kit` updates the kit in place with week 2's assignment (one commit); the
    student's `make update` brings it in and keeps both their answers and their lesson;
    Canvas's download is matched by the ids kept, graded; a late notebook e-mailed after the
    due date is collected (a plain folder: the collect's time) and graded alone, its score
    penalised; a re-upload of a graded notebook is placed only with --replace-graded and
    graded; a fix to the instructor's notebook re-grades every submission (the penalty
    stays); Canvas's grade CSV has every id and the penalised score, and its feedback bundle
    is named as Canvas named each latest upload. At every step nothing about students is
    tracked by git."""
    import zipfile
    from datetime import datetime, timedelta
    from zoneinfo import ZoneInfo

    system_python = Path(f"/usr/bin/python3.{sys.version_info.minor}")
    if not system_python.exists():
        pytest.skip(f"no {system_python} for the instructor's own venv")
    user = pwd.getpwnam(INSTRUCTOR)
    work = Path(tempfile.mkdtemp(dir=instructor))   # 0700, inside a 0700 home
    root = work / "my course"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(inject.REPO), str(root)], check=True, timeout=300)
    python = _copy_venv(root / ".venv", python_home=str(system_python.parent))
    for folder, _, files in os.walk(instructor):   # the instructor's, but the venv's hard links
        if Path(folder).is_relative_to(root / ".venv"):
            continue
        os.chown(folder, user.pw_uid, user.pw_gid)
        for name in files:
            os.chown(os.path.join(folder, name), user.pw_uid, user.pw_gid, follow_symlinks=False)
    os.chown(root / ".venv", user.pw_uid, user.pw_gid)
    shared = Path(tempfile.mkdtemp(prefix="course-kit-remote-"))   # where students clone from
    request.addfinalizer(lambda: shutil.rmtree(shared, ignore_errors=True))
    shared.chmod(0o755)
    os.chown(shared, user.pw_uid, user.pw_gid)
    reports = root / "var" / "reports"

    def course(*args, check=True):
        return _as(INSTRUCTOR, [python, "-c", RUN, *args, "--root", root], cwd=root, check=check)

    def git(*args, cwd=root):
        return _as(INSTRUCTOR, ["git", "-c", "user.name=Instructor", "-c", "user.email=i@localhost", *args], cwd=cwd)

    def mine(path: Path) -> Path:
        os.chown(path, user.pw_uid, user.pw_gid)
        return path

    def roster_file(name: str, header: str, lines: list[str]) -> Path:
        path = work / name
        path.write_text(header + "\n" + "".join(line + "\n" for line in lines))
        return mine(path)

    def saved_roster() -> dict:
        return {row["id"]: row for row in _csv_rows(root / "var" / "roster.csv")}

    def grade(assignment: str) -> subprocess.CompletedProcess:
        graded = course("grade", assignment)   # the default number of workers: this machine's cores
        assert "grader error" not in graded.stdout, graded.stdout
        return graded

    def nothing_of_students_in_git():
        # every file about students exists where the tools put it, and git ignores it
        status = git("status", "--porcelain", "--ignored=no").stdout
        assert status == "", status
        present = [name for name in STUDENT_DATA if (root / name).exists()]
        ignored = git("check-ignore", *present).stdout.split()
        assert sorted(ignored) == sorted(present), (present, ignored)
        assert not git("ls-files", *STUDENT_DATA).stdout

    # ---- week 1: Moodle -----------------------------------------------------------------
    imported = course("roster", "import", roster_file("roster.csv", "id,first_name,last_name,email,lms_id",
                                                     [f"{i},{f},{l},{i}@example.org,{n}" for i, f, l, n in ROSTER]),
                      "--gradebook-only")
    assert "3 added (ada, bo, cy)" in imported.stdout, imported.stdout
    config = root / "course" / "nbgrader_config.py"
    config.write_text(config.read_text() + f"\nc.CourseSchedule.release = {SCHEDULE!r}\n")
    git("commit", "-q", "-am", "Release schedule")
    kit = work / "kit"
    made = course("student-kit", kit, "--as-of", "2026-09-08 12:00 Europe/Berlin")
    assert "1 released assignment(s) (01_tensors); next: 02_devices at 2026-09-14 09:00" in made.stdout, made.stdout
    assert sorted(p.name for p in (kit / "assignments").iterdir()) == [WEEK_1]
    assert "and one assignment released so far" in " ".join((kit / "README.md").read_text().split())
    git("init", "-q", "--bare", "--initial-branch=main", shared / "kit.git", cwd=work)
    git("push", "-q", shared / "kit.git", "main", cwd=kit)

    # a student clones the kit, answers assignment 1, and runs lesson 01 (saved with outputs)
    clone = student / "reftorch-student"
    # (the shared folder stands in for the course's git host: another user's repository, which
    # git reads for the student once they say it is safe)
    (student / ".gitconfig").write_text(f"[safe]\n\tdirectory = {shared / 'kit.git'}\n")
    os.chown(student / ".gitconfig", pwd.getpwnam(STUDENT).pw_uid, pwd.getpwnam(STUDENT).pw_gid)
    _as(STUDENT, ["git", "clone", "-q", shared / "kit.git", clone], cwd=student)
    answers = clone / "assignments" / WEEK_1 / f"{WEEK_1}.ipynb"
    nbformat.write(inject.honest(root, WEEK_1), str(answers))
    lesson = clone / "lessons" / "01_tensors.ipynb"
    run_lesson = nbformat.read(str(lesson), as_version=4)
    run_lesson.cells[0].metadata["collapsed"] = True   # what JupyterLab writes back
    nbformat.write(run_lesson, str(lesson))
    subprocess.run(["chown", "-R", f"{STUDENT}:", str(clone)], check=True)
    my_answers, my_lesson = answers.read_bytes(), lesson.read_bytes()

    week1 = {"ada": inject.honest(root, WEEK_1), "bo": inject.honest(root, WEEK_1, keep=0.5),
             "cy": inject.released(root, WEEK_1)}
    collected = course("collect", WEEK_1, "--from", mine(_moodle_zip(work / "week1.zip", WEEK_1, week1)))
    assert "collected 3 submission(s), 2 file(s) ignored (not graded)" in collected.stdout, collected.stdout
    grade(WEEK_1)
    maximum_1 = sum(points for _, points in inject.test_points(root, WEEK_1))
    scores = _gradebook_scores(root, WEEK_1)
    assert scores["ada"] == maximum_1 and 0 < scores["bo"] < maximum_1 and scores["cy"] == 0, scores
    assert (root / "var" / "gradebook.db").stat().st_uid == user.pw_uid   # the grader ran as the instructor
    course("export", WEEK_1, "--format", "moodle")
    grades = {row["Username"]: row for row in _csv_rows(reports / WEEK_1 / "grades-moodle.csv")}
    assert {name: float(row[WEEK_1]) for name, row in grades.items()} == {
        "ada": maximum_1, "bo": scores["bo"], "cy": 0.0}, grades
    assert all(row["Feedback"].startswith(f"{float(row[WEEK_1]):g} of {maximum_1:g} points")
               for row in grades.values()), grades
    assert "not answered yet" in grades["cy"]["Feedback"], grades["cy"]

    sent = course("feedback", WEEK_1, "--lms", "moodle")   # everyone came from Moodle: exit 0
    assert "3 student(s) named as Moodle's download named them" in sent.stdout, sent.stdout
    assert sorted(p.name for p in (root / "var" / "feedback").iterdir()) == ["ada", "bo", "cy"]
    with zipfile.ZipFile(reports / WEEK_1 / "moodle-feedback.zip") as archive:
        pages = {name: archive.read(name).decode() for name in archive.namelist()}
    assert sorted(pages) == sorted(f"{_moodle_folder(s)}/{WEEK_1}-feedback.html" for s in ("ada", "bo", "cy"))
    assert f"<h1>{WEEK_1}: {maximum_1:g} / {maximum_1:g} points</h1>" in pages[
        f"{_moodle_folder('ada')}/{WEEK_1}-feedback.html"]
    sheet = {row["Identifier"]: row for row in _csv_rows(reports / WEEK_1 / "moodle-grading-worksheet.csv")}
    assert sorted(sheet) == sorted(f"Participant {PARTICIPANT[s]}" for s in ("ada", "bo", "cy")), sheet
    ada_row = sheet[f"Participant {PARTICIPANT['ada']}"]
    assert (ada_row["Full name"], ada_row["Grade"], ada_row["Maximum Grade"]) == (
        "Ada Lovelace", f"{maximum_1:g}", f"{maximum_1:g}"), ada_row
    assert all(row["Feedback comments"] == grades[s]["Feedback"] for s, row in
               ((s, sheet[f"Participant {PARTICIPANT[s]}"]) for s in ("ada", "bo", "cy"))), sheet
    nothing_of_students_in_git()

    # ---- week 2: Canvas -----------------------------------------------------------------
    # the roster changes twice: the LMS's list of this week's newcomers (a smaller file), then
    # the registrar's list with new emails and no lms_id column
    smaller = course("roster", "import", roster_file("newcomers.csv", "id,first_name,last_name,email,lms_id",
                                                    ["dee,Dee,Ray,dee@example.org,304"]), "--gradebook-only")
    assert "1 added (dee)" in smaller.stdout and \
        "3 student(s) on the roster but not in this file, kept (ada, bo, cy)" in smaller.stdout, smaller.stdout
    registrar = course("roster", "import", roster_file("registrar.csv", "id,first_name,last_name,email",
                                                       [f"{i},{f},{l},{i}@uni.example" for i, f, l, _ in
                                                        [*ROSTER, NEWCOMER]]), "--gradebook-only")
    assert "4 updated" in registrar.stdout, registrar.stdout
    kept = saved_roster()
    assert {i: (row["lms_id"], row["email"]) for i, row in kept.items()} == {
        i: (n, f"{i}@uni.example") for i, _, _, n in [*ROSTER, NEWCOMER]}, kept

    # week 2's due date (passed yesterday: 30 hours ago) and its late penalty
    berlin = ZoneInfo("Europe/Berlin")
    due = (datetime.now(berlin) - timedelta(hours=30)).replace(second=0, microsecond=0)
    config.write_text(config.read_text() + f"\nc.CourseDeadlines.due = {{{WEEK_2!r}: "
                      f"'{due:%Y-%m-%d %H:%M} Europe/Berlin'}}\n"
                      f"c.PercentPerDay.percent_per_day = {{{WEEK_2!r}: 10}}\n")
    fixed = root / "lessons" / "01_tensors.ipynb"     # the instructor fixes a typo in lesson 01
    fixed_lesson = nbformat.read(str(fixed), as_version=4)
    fixed_lesson.cells[0].source += "\n\n(Corrected in week 2.)"
    nbformat.write(fixed_lesson, str(fixed))
    git("commit", "-q", "-am", "Lesson 01: a correction; 02_devices: due date and late penalty")
    updated = course("student-kit", kit, "--as-of", "2026-09-15 12:00 Europe/Berlin")
    assert "updated the student kit" in updated.stdout and f"added assignments/{WEEK_2}/{WEEK_2}.ipynb" \
        in updated.stdout, updated.stdout
    assert "uncommitted" not in updated.stdout + updated.stderr, updated.stdout   # the student data is ignored
    log = git("log", "--format=%s", cwd=kit).stdout.splitlines()
    assert log[0] == f"Course update: {WEEK_2} released" and len(log) == 2, log
    kit_files = git("ls-files", cwd=kit).stdout.splitlines()
    assert not [f for f in kit_files if f.startswith(tuple(STUDENT_DATA)) or f.startswith("solutions/")], kit_files
    git("push", "-q", shared / "kit.git", "main", cwd=kit)

    update = _as(STUDENT, ["make", "update"], cwd=clone)
    assert f"new assignment(s): {WEEK_2}" in update.stdout, update.stdout
    assert answers.read_bytes() == my_answers and lesson.read_bytes() == my_lesson   # theirs, untouched
    beside = list((clone / "lessons").glob("01_tensors.course-*.ipynb"))
    assert len(beside) == 1 and "(Corrected in week 2.)" in beside[0].read_text(), update.stdout
    assert f"lessons/01_tensors.ipynb: yours is kept; the course's new version is lessons/{beside[0].name}" \
        in update.stdout
    assert (clone / "assignments" / WEEK_2 / f"{WEEK_2}.ipynb").read_bytes() == \
        (kit / "assignments" / WEEK_2 / f"{WEEK_2}.ipynb").read_bytes()
    assert _as(STUDENT, ["git", "status", "--porcelain"], cwd=clone).stdout == ""
    again = _as(STUDENT, ["make", "update"], cwd=clone)
    assert "already up to date" in again.stdout, again.stdout

    # Canvas's download: matched by the user ids the roster kept (nobody refused)
    week2 = {"ada": (9001, inject.honest(root, WEEK_2)), "bo": (9002, inject.honest(root, WEEK_2, keep=0.5)),
             "dee": (9004, inject.honest(root, WEEK_2))}
    collected = course("collect", WEEK_2, "--from", mine(_canvas_zip(work / "week2.zip", WEEK_2, week2)))
    assert "collected 3 submission(s)" in collected.stdout and "NOT PLACED" not in collected.stdout, \
        collected.stdout
    grade(WEEK_2)
    maximum_2 = sum(points for _, points in inject.test_points(root, WEEK_2))
    scores = _gradebook_scores(root, WEEK_2)
    assert scores["ada"] == scores["dee"] == maximum_2 and 0 < scores["bo"] < maximum_2, scores

    # late: cy e-mails the notebook a day after the due date; collected as a plain folder, its
    # submission time is the collect's, and it is graded alone (one waiting, several workers)
    mail = work / "late-by-mail"
    (mail / "cy").mkdir(parents=True)
    nbformat.write(inject.honest(root, WEEK_2), str(mail / "cy" / f"{WEEK_2}.ipynb"))
    subprocess.run(["chown", "-R", f"{INSTRUCTOR}:", str(mail)], check=True)
    collected = course("collect", WEEK_2, "--from", mail)
    assert "collected 1 submission(s)" in collected.stdout, collected.stdout
    late = grade(WEEK_2)
    assert f"grading {WEEK_2}: 1 submission(s) to grade" in late.stderr and \
        f"1/1 cy: {maximum_2:g}/{maximum_2:g} ok" in late.stderr, late.stderr
    assert _gradebook_scores(root, WEEK_2)["cy"] == maximum_2
    penalised = round(maximum_2 * 0.8, 6)   # two started days late, 10% a day

    def penalty_of_cy():
        course("export", WEEK_2)
        row = {row["student"]: row for row in _csv_rows(reports / WEEK_2 / "grades.csv")}["cy"]
        assert (float(row["score"]), float(row["raw_score"])) == (penalised, maximum_2), row
        assert row["late_by"].startswith("1d 6h 0") and row["due"] == f"{due:%Y-%m-%d %H:%M %Z}", row

    penalty_of_cy()

    # a re-upload: bo finishes the assignment after being graded (Canvas: a new file id)
    again = {**week2, "bo": (9102, inject.honest(root, WEEK_2))}
    download = mine(_canvas_zip(work / "week2-again.zip", WEEK_2, again))
    refused = course("collect", WEEK_2, "--from", download, check=False)
    assert refused.returncode == 1 and "NOT PLACED" in refused.stdout, refused.stdout
    assert _gradebook_scores(root, WEEK_2)["bo"] == scores["bo"]
    replaced = course("collect", WEEK_2, "--from", download, "--replace-graded")
    assert "collected 1 submission(s), 2 unchanged" in replaced.stdout, replaced.stdout
    regraded = grade(WEEK_2)
    assert f"1/1 bo: {maximum_2:g}/{maximum_2:g} ok" in regraded.stderr, regraded.stderr
    scores = _gradebook_scores(root, WEEK_2)
    assert scores == {"ada": maximum_2, "bo": maximum_2, "cy": maximum_2, "dee": maximum_2}, scores

    # a fix to the instructor's notebook: every submission is graded again, no --force needed
    source = root / "solutions" / WEEK_2 / f"{WEEK_2}.ipynb"
    notebook = nbformat.read(str(source), as_version=4)
    notebook.cells[0].source += "\n\n(Clarified in week 2.)"
    nbformat.write(notebook, str(source))
    git("commit", "-q", "-am", f"{WEEK_2}: a clarification")
    regraded = grade(WEEK_2)
    assert f"grading {WEEK_2}: 4 submission(s) to grade" in regraded.stderr, regraded.stderr
    assert "4 submission(s): 4 ok" in regraded.stdout, regraded.stdout
    assert _gradebook_scores(root, WEEK_2) == scores
    penalty_of_cy()   # the late penalty survives the re-grade

    # grades and feedback back to Canvas
    course("export", WEEK_2, "--format", "canvas")
    canvas = {row["SIS Login ID"]: row for row in _csv_rows(reports / WEEK_2 / "grades-canvas.csv")}
    assert {s: (row["ID"], float(row[WEEK_2])) for s, row in canvas.items()} == {
        "ada": ("301", maximum_2), "bo": ("302", maximum_2), "cy": ("303", penalised), "dee": ("304", maximum_2)}, \
        canvas
    sent = course("feedback", WEEK_2, "--lms", "canvas", check=False)
    # cy's notebook came by e-mail: Canvas cannot match it, so it is named and handed back by hand
    assert sent.returncode == 1 and "3 student(s) named as Canvas's download named them" in sent.stdout \
        and sent.stderr.strip().endswith("cy; their pages are in "
                                         f"{reports / WEEK_2 / 'canvas-feedback.zip'} under <student id>/ to hand back"), \
        sent.stdout + sent.stderr
    with zipfile.ZipFile(reports / WEEK_2 / "canvas-feedback.zip") as archive:
        pages = {name: archive.read(name).decode() for name in archive.namelist()}
    assert sorted(pages) == sorted([_canvas_name("ada", 9001, f"{WEEK_2}-feedback.html"),
                                    _canvas_name("bo", 9102, f"{WEEK_2}-feedback.html"),   # the latest upload's
                                    _canvas_name("dee", 9004, f"{WEEK_2}-feedback.html"),
                                    f"cy/{WEEK_2}-feedback.html"]), sorted(pages)
    page = pages[f"cy/{WEEK_2}-feedback.html"]
    assert f"<h1>{WEEK_2}: {penalised:g} / {maximum_2:g} points (after the late penalty; {maximum_2:g} " \
           "before it)</h1>" in page, page
    assert f"Due {due:%Y-%m-%d %H:%M %Z}; submitted" in page and "UTC" not in page, page
    assert page == (root / "var" / "feedback" / "cy" / WEEK_2 / f"{WEEK_2}.html").read_text()

    nothing_of_students_in_git()


def test_unreadable_files_are_refused_with_what_to_change(tmp_path):
    # as root the sandbox runs as nobody: a venv installed with umask 077 cannot be read by it;
    # the grader says which file and what to change instead of a sandbox that fails to import
    if os.geteuid() != 0:
        pytest.skip("the root case: run as root (CI is)")
    from autograder import sandbox
    private = tmp_path / "site-packages"
    (private / "torch").mkdir(parents=True)
    (private / "torch" / "__init__.py").write_text("")
    (private / "torch" / "__init__.py").chmod(0o600)
    with pytest.raises(sandbox.SandboxError) as raised:
        sandbox._check_readable(sys.executable, "", [str(private)])
    message = str(raised.value)
    assert "torch/__init__.py (mode 600)" in message and "chmod -R o+rX" in message
