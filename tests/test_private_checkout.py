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
    for script in (destination / "bin").iterdir():   # console scripts name their venv's python
        if script.is_symlink() or not script.is_file():
            continue
        text = script.read_bytes()
        first, _, rest = text.partition(b"\n")
        if first.startswith(b"#!") and str(source).encode() in first:
            from course.hub_install import _shebang   # pip's form, also for a path with spaces
            script.unlink()
            script.write_bytes(_shebang(Path(first[2:].decode().replace(str(source), str(destination)))) + rest)
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


def _moodle_zip(path: Path, assignment: str, notebooks: dict) -> Path:
    """A Moodle "download all submissions" zip: a folder per student, named by full name."""
    import zipfile
    people = {row[0]: row for row in [*ROSTER, NEWCOMER]}
    with zipfile.ZipFile(path, "w") as archive:
        for student_id, notebook in notebooks.items():
            _, first, last, number = people[student_id]
            archive.writestr(f"{first} {last}_{number}_assignsubmission_file/{assignment}.ipynb",
                             nbformat.writes(notebook))
    return path


def test_two_weeks_of_a_term_as_a_non_root_instructor(instructor, student, request):
    """Two weeks of a term, from a clean clone in the instructor's 0700 home (a path with a
    space), as the instructor's Unix user, with Debian's own python3.11 under the course venv:

    week 1: the roster; the release schedule; `course student-kit` writes the kit repository
    with week 1's assignment only; a student clones it, answers, and runs lesson 01 (JupyterLab
    saves the lesson with their outputs); a Moodle download is collected, graded, exported
    (Moodle's grade import, with its feedback column) and feedback written;
    week 2: a newcomer on the roster; the instructor fixes lesson 01; `course student-kit`
    updates the kit in place with week 2's assignment (one commit); the student's `make update`
    brings it in and keeps both their answers and their lesson (the course's new lesson beside
    it); the week-2 download is graded, then a late submission arrives and is graded; a
    re-upload of a graded notebook is placed only with --replace-graded and graded; a fix to
    the instructor's notebook re-grades every submission; the Moodle export has everyone."""
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

    def course(*args, check=True):
        return _as(INSTRUCTOR, [python, "-c", RUN, *args, "--root", root], cwd=root, check=check)

    def git(*args, cwd=root):
        return _as(INSTRUCTOR, ["git", "-c", "user.name=Instructor", "-c", "user.email=i@localhost", *args], cwd=cwd)

    def roster(rows) -> Path:
        path = work / "roster.csv"
        path.write_text("id,first_name,last_name,email,lms_id\n"
                        + "".join(f"{i},{f},{l},{i}@example.org,{n}\n" for i, f, l, n in rows))
        os.chown(path, user.pw_uid, user.pw_gid)
        return path

    def moodle(assignment: str, notebooks: dict, name: str) -> Path:
        path = _moodle_zip(work / name, assignment, notebooks)
        os.chown(path, user.pw_uid, user.pw_gid)
        return path

    def moodle_grades(assignment: str) -> dict:
        course("export", assignment, "--format", "moodle")
        with open(root / "var" / "reports" / assignment / "grades-moodle.csv", newline="") as handle:
            return {row["Username"]: row for row in csv.DictReader(handle)}

    # ---- week 1 ----------------------------------------------------------------------
    course("roster", "import", roster(ROSTER), "--gradebook-only")
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
    mine = clone / "assignments" / WEEK_1 / f"{WEEK_1}.ipynb"
    nbformat.write(inject.honest(root, WEEK_1), str(mine))
    lesson = clone / "lessons" / "01_tensors.ipynb"
    run_lesson = nbformat.read(str(lesson), as_version=4)
    run_lesson.cells[0].metadata["collapsed"] = True   # what JupyterLab writes back
    nbformat.write(run_lesson, str(lesson))
    subprocess.run(["chown", "-R", f"{STUDENT}:", str(clone)], check=True)
    my_answers, my_lesson = mine.read_bytes(), lesson.read_bytes()

    week1 = {"ada": inject.honest(root, WEEK_1), "bo": inject.honest(root, WEEK_1, keep=0.5),
             "cy": inject.released(root, WEEK_1)}
    collected = course("collect", WEEK_1, "--from", moodle(WEEK_1, week1, "week1.zip"))
    assert "collected 3 submission(s)" in collected.stdout, collected.stdout
    course("grade", WEEK_1, "--workers", "2")
    maximum_1 = sum(points for _, points in inject.test_points(root, WEEK_1))
    scores = _gradebook_scores(root, WEEK_1)
    assert scores["ada"] == maximum_1 and 0 < scores["bo"] < maximum_1 and scores["cy"] == 0, scores
    assert (root / "var" / "gradebook.db").stat().st_uid == user.pw_uid   # the grader ran as the instructor
    grades = moodle_grades(WEEK_1)
    assert set(grades) == {"ada", "bo", "cy"} and float(grades["ada"][WEEK_1]) == maximum_1, grades
    course("feedback", WEEK_1)
    assert sorted(p.name for p in (root / "var" / "feedback").iterdir()) == ["ada", "bo", "cy"]

    # ---- week 2 ----------------------------------------------------------------------
    course("roster", "import", roster([*ROSTER, NEWCOMER]), "--gradebook-only")
    fixed = root / "lessons" / "01_tensors.ipynb"     # the instructor fixes a typo in lesson 01
    fixed_lesson = nbformat.read(str(fixed), as_version=4)
    fixed_lesson.cells[0].source += "\n\n(Corrected in week 2.)"
    nbformat.write(fixed_lesson, str(fixed))
    git("commit", "-q", "-am", "Lesson 01: a correction")
    updated = course("student-kit", kit, "--as-of", "2026-09-15 12:00 Europe/Berlin")
    assert "updated the student kit" in updated.stdout and f"added assignments/{WEEK_2}/{WEEK_2}.ipynb" \
        in updated.stdout, updated.stdout
    log = git("log", "--format=%s", cwd=kit).stdout.splitlines()
    assert log[0] == f"Course update: {WEEK_2} released" and len(log) == 2, log
    git("push", "-q", shared / "kit.git", "main", cwd=kit)

    update = _as(STUDENT, ["make", "update"], cwd=clone)
    assert f"new assignment(s): {WEEK_2}" in update.stdout, update.stdout
    assert mine.read_bytes() == my_answers and lesson.read_bytes() == my_lesson   # theirs, untouched
    beside = list((clone / "lessons").glob("01_tensors.course-*.ipynb"))
    assert len(beside) == 1 and "(Corrected in week 2.)" in beside[0].read_text(), update.stdout
    assert f"lessons/01_tensors.ipynb: yours is kept; the course's new version is lessons/{beside[0].name}" \
        in update.stdout
    assert (clone / "assignments" / WEEK_2 / f"{WEEK_2}.ipynb").read_bytes() == \
        (kit / "assignments" / WEEK_2 / f"{WEEK_2}.ipynb").read_bytes()
    assert _as(STUDENT, ["git", "status", "--porcelain"], cwd=clone).stdout == ""
    again = _as(STUDENT, ["make", "update"], cwd=clone)
    assert "already up to date" in again.stdout, again.stdout

    week2 = {"ada": inject.honest(root, WEEK_2), "bo": inject.honest(root, WEEK_2, keep=0.5),
             "dee": inject.honest(root, WEEK_2)}
    collected = course("collect", WEEK_2, "--from", moodle(WEEK_2, week2, "week2.zip"))
    assert "collected 3 submission(s)" in collected.stdout, collected.stdout
    course("grade", WEEK_2, "--workers", "2")
    maximum_2 = sum(points for _, points in inject.test_points(root, WEEK_2))
    # late: cy's notebook arrives after the batch was graded (one waiting, two workers)
    late = {**week2, "cy": inject.honest(root, WEEK_2)}
    collected = course("collect", WEEK_2, "--from", moodle(WEEK_2, late, "week2-late.zip"))
    assert "collected 1 submission(s), 3 unchanged" in collected.stdout, collected.stdout
    course("grade", WEEK_2, "--workers", "2")
    assert _gradebook_scores(root, WEEK_2)["cy"] == maximum_2
    # a re-upload: bo finishes the assignment after being graded
    again = {**late, "bo": inject.honest(root, WEEK_2)}
    refused = course("collect", WEEK_2, "--from", moodle(WEEK_2, again, "week2-again.zip"), check=False)
    assert refused.returncode == 1 and "NOT PLACED" in refused.stdout, refused.stdout
    course("collect", WEEK_2, "--from", work / "week2-again.zip", "--replace-graded")
    course("grade", WEEK_2, "--workers", "2")
    scores = _gradebook_scores(root, WEEK_2)
    assert scores == {"ada": maximum_2, "bo": maximum_2, "cy": maximum_2, "dee": maximum_2}, scores
    # a fix to the instructor's notebook: every submission is graded again, no --force needed
    source = root / "solutions" / WEEK_2 / f"{WEEK_2}.ipynb"
    notebook = nbformat.read(str(source), as_version=4)
    notebook.cells[0].source += "\n\n(Clarified in week 2.)"
    nbformat.write(notebook, str(source))
    git("commit", "-q", "-am", f"{WEEK_2}: a clarification")
    regraded = course("grade", WEEK_2, "--workers", "2")
    assert "4 submission(s)" in regraded.stdout, regraded.stdout
    grades = moodle_grades(WEEK_2)
    assert {name: float(row[WEEK_2]) for name, row in grades.items()} == {
        "ada": maximum_2, "bo": maximum_2, "cy": maximum_2, "dee": maximum_2}, grades
    course("feedback", WEEK_2)
    validated = _as(INSTRUCTOR, [python, "-c", RUN, "validate",
                                 root / "var" / "submitted" / "ada" / WEEK_2 / f"{WEEK_2}.ipynb"], cwd=root,
                    check=False)
    assert validated.returncode == 0, validated.stdout + validated.stderr


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
