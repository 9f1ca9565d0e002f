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
    honest_notebook = root / "course" / "submitted" / "honest" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    validated = course("validate", str(honest_notebook))
    return {"scores": _gradebook_scores(root), "grade_output": graded.stdout + graded.stderr,
            "validate": validated}


def _gradebook_scores(root: Path) -> dict[str, float]:
    from nbgrader.api import Gradebook

    from course.model import Course
    with Gradebook(Course.load(root).db_url) as gradebook:
        return {s.student.id: s.score for s in gradebook.find_assignment(ASSIGNMENT).submissions}


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


def test_a_non_root_instructor_grades_in_their_private_home(instructor):
    system_python = Path(f"/usr/bin/python3.{sys.version_info.minor}")
    if not system_python.exists():
        pytest.skip(f"no {system_python} for the instructor's own venv")
    work = Path(tempfile.mkdtemp(dir=instructor))   # 0700, inside a 0700 home
    root = _private_course(work)
    python = _copy_venv(root / ".venv", python_home=str(system_python.parent))
    user = pwd.getpwnam(INSTRUCTOR)
    # everything the instructor will write is theirs; the venv's hard-linked files stay root's
    # (readable, as any system-wide package would be)
    for folder, _, files in os.walk(instructor):
        if Path(folder).is_relative_to(root / ".venv"):
            continue
        os.chown(folder, user.pw_uid, user.pw_gid)
        for name in files:
            os.chown(os.path.join(folder, name), user.pw_uid, user.pw_gid, follow_symlinks=False)
    os.chown(root / ".venv", user.pw_uid, user.pw_gid)
    result = _grade_and_validate(root, python, as_user=INSTRUCTOR)
    assert result["scores"] == {"blank": 0.0, "honest": _maximum(root)}, result["grade_output"]
    assert result["validate"].returncode == 0, result["validate"].stdout + result["validate"].stderr
    # the grader ran as the instructor: what it wrote is theirs
    gradebook_owner = (root / "course" / "gradebook.db").stat().st_uid
    assert gradebook_owner == user.pw_uid


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
