"""`course roster import` and the roster's guard in `course collect`, with real Unix users.

Bad rosters are refused whole (nothing created); accounts the course did not create are never
touched; imported students get a private home, a password PAM accepts, and their names in
nbgrader's gradebook; a submission from someone not on the roster is refused by collect and
kept aside, not lost. The hub itself is exercised by tests/test_hub_browser.py.
"""
from __future__ import annotations

import os
import pwd
import secrets
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from coursebase.paths import REPO

pytestmark = [pytest.mark.root, pytest.mark.database]   # (`make test-fast` leaves it out)

ASSIGNMENT = "02_devices"

@pytest.fixture()
def root_user():
    """Unix users are real here: a clear failure, not a skip, when we cannot create them."""
    if os.geteuid() != 0:
        pytest.fail("this test creates Unix users and needs root (CI runs as root)")


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture()
def course_cli(capsys):
    """`course ...` in this process (the CLI's own main; no interpreter start per call)."""
    from course.cli import main

    def run(*args: str) -> Result:
        capsys.readouterr()
        code = main(list(args))
        out, err = capsys.readouterr()
        return Result(code, out, err)
    return run


@pytest.fixture()
def course_root(tmp_path):
    """A minimal course: one assignment and the course's nbgrader config."""
    root = tmp_path / "course"
    for step in ("solutions", "assignments"):
        shutil.copytree(REPO / step / ASSIGNMENT, root / step / ASSIGNMENT)
    (root / "course").mkdir(parents=True)
    shutil.copy(REPO / "course" / "nbgrader_config.py", root / "course" / "nbgrader_config.py")
    return root


@pytest.fixture()
def unique():
    """A random suffix for user and group names, and their removal afterwards."""
    suffix = secrets.token_hex(3)
    yield suffix
    for entry in pwd.getpwall():
        if entry.pw_name.endswith(suffix):
            subprocess.run(["pkill", "-KILL", "-u", entry.pw_name], capture_output=True)
            subprocess.run(["userdel", "--remove", entry.pw_name], capture_output=True)
    subprocess.run(["groupdel", f"crs{suffix}"], capture_output=True)


def write_roster(path: Path, rows: list[str]) -> Path:
    path.write_text("id,first_name,last_name,email\n" + "\n".join(rows) + "\n")
    return path


def user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def test_bad_roster_is_refused_whole_and_creates_nothing(course_cli, course_root, tmp_path,
                                                         unique):
    good = f"ada{unique}"
    roster = write_roster(tmp_path / "roster.csv", [
        f"{good},Ada,Lovelace,ada@example.org",
        f"Bob{unique},Bob,Upper,",            # not a Unix-safe lowercase login
        f"{good},Ada,Again,",                 # duplicate id
        "x;rm -rf /,Mallory,,",               # not a login at all
    ])
    passwords = tmp_path / "passwords.csv"
    result = course_cli("roster", "import", str(roster), "--root", str(course_root),
                        "--group", f"crs{unique}", "--passwords", str(passwords))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "nothing was imported, 3 problem(s)" in result.stderr
    assert f"line 3: id 'Bob{unique}' is not a valid Unix login" in result.stderr
    assert f"line 4: id '{good}' is a duplicate of line 2" in result.stderr
    assert "line 5: id 'x;rm -rf /' is not a valid Unix login" in result.stderr
    assert not user_exists(good), "a user was created from a roster that was refused"
    assert not passwords.exists()
    assert not (course_root / "var" / "gradebook.db").exists()
    assert not (course_root / "var" / "roster.csv").exists()


def test_roster_never_takes_over_an_existing_account(root_user, course_cli, course_root,
                                                     tmp_path, unique):
    roster = write_roster(tmp_path / "roster.csv", ["root,Super,User,", f"ada{unique},Ada,L,"])
    result = course_cli("roster", "import", str(roster), "--root", str(course_root),
                        "--group", f"crs{unique}", "--passwords", str(tmp_path / "pw.csv"))
    assert result.returncode == 1
    assert ("existing accounts that are not in the course's students group "
            f"'crs{unique}': root") in result.stderr
    assert not user_exists(f"ada{unique}")


def test_import_creates_private_students_with_passwords_and_names(root_user, course_cli,
                                                                 course_root, tmp_path, unique):
    import pamela
    from nbgrader.api import Gradebook

    ada, bob = f"ada{unique}", f"bob{unique}"
    roster = write_roster(tmp_path / "roster.csv", [f"{ada},Ada,Lovelace,ada@example.org",
                                                    f"{bob},Bob,,"])
    passwords = tmp_path / "state" / "passwords.csv"
    args = ("roster", "import", str(roster), "--root", str(course_root),
            "--group", f"crs{unique}", "--passwords", str(passwords))
    result = course_cli(*args)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "created 2 Unix user(s)" in result.stdout

    assert passwords.stat().st_mode & 0o777 == 0o600
    issued = dict(line.split(",") for line in passwords.read_text().split()[1:])
    for student in (ada, bob):
        home = Path(pwd.getpwnam(student).pw_dir)
        assert home.stat().st_mode & 0o777 == 0o700, f"{home} is readable by classmates"
        pamela.authenticate(student, issued[student], service="login")  # raises if refused
    with pytest.raises(pamela.PAMError):
        pamela.authenticate(ada, issued[bob], service="login")

    with Gradebook(f"sqlite:///{course_root}/var/gradebook.db") as gradebook:
        names = {s.id: (s.first_name, s.last_name, s.email) for s in gradebook.students}
    assert names == {ada: ("Ada", "Lovelace", "ada@example.org"), bob: ("Bob", None, None)}

    # Importing again changes nobody's password and creates nobody.
    again = course_cli(*args)
    assert again.returncode == 0 and "created 0 Unix user(s)" in again.stdout, again.stderr
    pamela.authenticate(ada, issued[ada], service="login")

    removed = course_cli("roster", "remove", str(roster), "--group", f"crs{unique}")
    assert removed.returncode == 0, removed.stderr
    assert not user_exists(ada) and not user_exists(bob)


def test_collect_refuses_a_student_not_on_the_roster(course_cli, course_root, tmp_path):
    roster = write_roster(tmp_path / "roster.csv", ["ada,Ada,Lovelace,"])
    imported = course_cli("roster", "import", str(roster), "--root", str(course_root),
                          "--gradebook-only")
    assert imported.returncode == 0, imported.stderr
    download = tmp_path / "download"
    download.mkdir()
    notebook = nbformat.writes(nbformat.v4.new_notebook())
    (download / f"ada_{ASSIGNMENT}.ipynb").write_text(notebook)
    (download / f"eve_{ASSIGNMENT}.ipynb").write_text(notebook)

    result = course_cli("collect", ASSIGNMENT, "--root", str(course_root), "--from", str(download))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "collected 1 submission(s); 1 file(s) NOT PLACED" in result.stdout
    refused = next(line for line in result.stdout.splitlines() if f"eve_{ASSIGNMENT}.ipynb" in line)
    assert "NOT PLACED" in refused and "no roster id" in refused, refused
    submitted = course_root / "var" / "submitted"
    assert sorted(p.name for p in submitted.iterdir()) == ["ada"]
    kept = list((course_root / "var" / "collected" / ASSIGNMENT).glob(f"*/eve_{ASSIGNMENT}.ipynb"))
    assert kept, "the refused submission was lost"
