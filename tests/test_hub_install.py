"""The class install's parts, without a hub (tests/test_hub_browser.py runs the whole):
what a student's home receives from the kit, and how the instructor's packages are published.
"""
from __future__ import annotations

import json
import os
import pwd
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from course import hub_install

from coursebase.paths import REPO

pytestmark = pytest.mark.root   # (`make test-fast` leaves it out)

DELIVER = REPO / "course" / "hub" / "deliver_kit.py"


def deliver(kit: Path, home: Path) -> str:
    done = subprocess.run([sys.executable, "-I", str(DELIVER), str(kit), str(home)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_kit_reaches_a_home_once_and_the_students_files_stay_theirs(tmp_path):
    kit, home = tmp_path / "kit", tmp_path / "home"
    (kit / "lessons").mkdir(parents=True)
    (kit / "lessons" / "01_tensors.ipynb").write_text("lesson 1")
    (kit / "README.md").write_text("kit readme")
    home.mkdir()
    (home / ".bashrc").write_text("mine")

    assert "2 new file(s)" in deliver(kit, home)
    assert (home / "lessons" / "01_tensors.ipynb").read_text() == "lesson 1"
    assert (home / "README.md").read_text() == "kit readme"

    # The student edits one file and deletes another; the kit changes one and gains two,
    # one of which the student already made under the same name.
    (home / "README.md").write_text("my notes")
    (home / "lessons" / "01_tensors.ipynb").unlink()
    (kit / "README.md").write_text("kit readme, new version")
    (kit / "lessons" / "09_graphs.ipynb").write_text("lesson 9")
    (kit / "notes.md").write_text("kit notes")
    (home / "notes.md").write_text("my own notes.md")

    assert "1 new file(s)" in deliver(kit, home)
    assert (home / "lessons" / "09_graphs.ipynb").read_text() == "lesson 9"
    assert (home / "README.md").read_text() == "my notes"
    assert not (home / "lessons" / "01_tensors.ipynb").exists()
    assert (home / "notes.md").read_text() == "my own notes.md"
    assert (home / ".bashrc").read_text() == "mine"
    record = json.loads((home / ".course-kit.json").read_text())
    assert record["delivered"] == ["README.md", "lessons/01_tensors.ipynb",
                                   "lessons/09_graphs.ipynb", "notes.md"]
    assert "0 new file(s)" in deliver(kit, home)


def test_packages_are_linked_when_safe_and_copied_readable_otherwise(tmp_path):
    source, target = tmp_path / "site", tmp_path / "published"
    (source / "pkg").mkdir(parents=True)
    shared = source / "pkg" / "shared.py"
    shared.write_text("x = 1\n")
    shared.chmod(0o644)
    private = source / "pkg" / "private.py"
    private.write_text("y = 2\n")
    private.chmod(0o600)
    writable = source / "pkg" / "writable.py"
    writable.write_text("z = 3\n")
    writable.chmod(0o666)
    # the course's own editable install points into the checkout: left out
    info = source / "reftorch_course-0.1.0.dist-info"
    info.mkdir()
    (info / "direct_url.json").write_text(json.dumps(
        {"url": "file:///home/ada/course", "dir_info": {"editable": True}}))
    (info / "RECORD").write_text("__editable__.reftorch_course-0.1.0.pth,,\n"
                                 "reftorch_course-0.1.0.dist-info/RECORD,,\n../../../bin/course,,\n")
    (source / "__editable__.reftorch_course-0.1.0.pth").write_text("/home/ada/course\n")

    count = hub_install._publish_tree(source, target, hub_install._editable_entries(source))

    assert count == 3
    assert sorted(p.name for p in target.iterdir()) == ["pkg"]
    assert (target / "pkg" / "shared.py").stat().st_ino == shared.stat().st_ino
    for name in ("private.py", "writable.py"):
        published = (target / "pkg" / name).stat()
        assert published.st_ino != (source / "pkg" / name).stat().st_ino, name
        assert stat.S_IMODE(published.st_mode) == 0o644, name
    assert stat.S_IMODE(os.stat(target / "pkg").st_mode) == 0o755


def test_a_class_folder_holding_other_files_is_refused(tmp_path):
    (tmp_path / "kit").mkdir()
    (tmp_path / "env-0123456789abcdef").mkdir()
    hub_install._check_class_folder(tmp_path)  # a class install: rewritten at each start
    (tmp_path / "notes.txt").write_text("not ours")
    with pytest.raises(hub_install.PublishError, match=r"holds files that are not a class install \(notes.txt\)"):
        hub_install._check_class_folder(tmp_path)


# -- terminals: `course` is there, and it is the person's own ----------------------------------

def _terminal_command(config_dir: Path, environment: dict) -> list[str]:
    """The shell a JupyterLab terminal runs with the jupyter_server_config.py in
    ``config_dir``: jupyter_server_terminals' rule, `$SHELL -l` unless the config says."""
    from traitlets.config import PyFileConfigLoader
    saved = dict(os.environ)
    os.environ.update(environment)
    try:
        config = PyFileConfigLoader("jupyter_server_config.py", path=str(config_dir)).load_config()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return config.ServerApp.get("terminado_settings", {}).get("shell_command") or [environment["SHELL"], "-l"]


WEEK_1_SCHEDULE = {"01_tensors": "2026-01-05 09:00 UTC", "02_devices": "2999-01-12 09:00 UTC"}


@pytest.fixture(scope="module")
def hub_people(tmp_path_factory):
    """A class install published from a copy of this checkout (as root), an instructor who owns
    the copy in their 0700 home and a student whose home got the kit (both removed after)."""
    import secrets
    import shutil
    import tempfile
    if os.geteuid() != 0:
        pytest.skip("publishing a class install and creating users needs root (CI runs as root)")
    from browser.course_copy import copy_course
    from course.hub import HubSettings
    suffix = secrets.token_hex(3)
    users = {"instructor": f"termi{suffix}", "student": f"terms{suffix}"}
    top = Path(tempfile.mkdtemp(prefix="course-terminal-"))
    top.chmod(0o755)
    try:
        for user in users.values():
            subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", user], check=True)
        homes = {role: Path(pwd.getpwnam(user).pw_dir) for role, user in users.items()}
        checkout = copy_course(homes["instructor"] / "course")
        config = checkout / "course" / "nbgrader_config.py"   # week 1 of a term: one assignment out
        config.write_text(config.read_text() + f"\nc.CourseSchedule.release = {WEEK_1_SCHEDULE!r}\n")
        git = ["git", "-C", str(checkout), "-c", "user.name=I", "-c", "user.email=i@localhost"]
        for step in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "course"]):
            subprocess.run(git + step, check=True, capture_output=True)
        subprocess.run(["chown", "-R", f"{users['instructor']}:", str(homes["instructor"])], check=True)
        homes["instructor"].chmod(0o700)
        install = hub_install.publish(checkout, top / "class")
        settings = HubSettings(course_root=str(checkout), instructor=users["instructor"],
                               class_dir=str(top / "class"), environment=str(install.environment),
                               kit=str(install.kit), student_config=str(install.student_config),
                               deliver_script=str(install.deliver_script), course_id="reftorch-course")
        delivered = subprocess.run(["setpriv", f"--reuid={users['student']}", f"--regid={users['student']}",
                                    "--init-groups", settings.python, "-I", settings.deliver_script,
                                    settings.kit, str(homes["student"])], capture_output=True, text=True)
        assert delivered.returncode == 0, delivered.stdout + delivered.stderr
        yield settings, users, homes
    finally:
        for user in users.values():
            subprocess.run(["pkill", "-KILL", "-u", user], capture_output=True)
            subprocess.run(["userdel", "--remove", user], capture_output=True)
        shutil.rmtree(top, ignore_errors=True)


@pytest.mark.slow
@pytest.mark.parametrize("role", ["instructor", "student"])
def test_the_hub_terminal_runs_the_persons_own_course_command(hub_people, role):
    """In a JupyterLab terminal on the hub (the shell the server's config makes it run, as the
    person, with the environment the hub gives their server), `course` is found, and it is the
    instructor's CLI for the instructor (collect, grade ...) and the kit's for a student."""
    from course.hub import server_environment
    settings, users, homes = hub_people
    user, home = users[role], homes[role]
    environment = {"HOME": str(home), "USER": user, "LOGNAME": user, "SHELL": "/bin/bash", "LANG": "C.UTF-8",
                   **server_environment(settings, instructor=role == "instructor", home=str(home))}
    config_dir = (Path(settings.course_root) / "course" / "hub" / "instructor" if role == "instructor"
                  else Path(settings.student_config))
    shell = _terminal_command(config_dir, environment)
    typed = "command -v course\ncourse --help\nexit\n"
    done = subprocess.run(["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups", "--", *shell],
                          input=typed, capture_output=True, text=True, env=environment, cwd=home, timeout=120)
    found = done.stdout.splitlines()[0] if done.stdout.strip() else ""
    assert found == f"{settings.environment}/bin/course", (shell, done.stdout, done.stderr)
    listed = re.findall(r"^    ([a-z][\w-]*)(?:  |$)", done.stdout, re.M)   # argparse's command list
    if role == "instructor":
        assert {"release", "collect", "grade", "feedback", "export"} <= set(listed), done.stdout
    else:
        assert sorted(listed) == ["lessons", "validate"], done.stdout


@pytest.mark.parametrize("where", ["hub", "kit"])
def test_a_fetched_assignment_lands_where_the_kit_puts_it(where, tmp_path, monkeypatch):
    """One copy of each assignment: nbgrader's Fetch (the Assignment List) writes into
    assignments/<a>/ of the student's home (hub) or kit clone, where the kit puts its copy and
    the kit's README says to work, and Submit sends that folder; a copy already there is what
    the list shows as fetched (nbgrader refuses to fetch over it)."""
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange.default import ExchangeFetchAssignment, ExchangeList
    from traitlets.config import PyFileConfigLoader

    home, exchange = tmp_path / "home", tmp_path / "exchange"
    outbound = exchange / "reftorch-course" / "outbound" / "02_devices"
    outbound.mkdir(parents=True)
    (outbound / "02_devices.ipynb").write_text((REPO / "assignments" / "02_devices" / "02_devices.ipynb").read_text())
    if where == "hub":
        home.mkdir()
        folder, work = REPO / "course" / "hub" / "student", home / "assignments"
        monkeypatch.setenv("COURSE_ID", "reftorch-course")
        monkeypatch.setenv("COURSE_EXCHANGE", str(exchange))
    else:   # the kit's own settings, as `course student-kit` writes them
        (home / "course").mkdir(parents=True)
        (home / "course" / "nbgrader_config.py").write_text(
            (REPO / "course" / "kit" / "nbgrader_config.py").read_text().replace("@COURSE_ID@", "reftorch-course"))
        folder, work = home / "course", home / "assignments"
        monkeypatch.setenv("NBGRADER_EXCHANGE", str(exchange))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(home)   # Jupyter's root: where nbgrader's default would have put it
    config = PyFileConfigLoader("nbgrader_config.py", path=str(folder)).load_config()
    coursedir = CourseDirectory(config=config)
    coursedir.assignment_id = "02_devices"
    ExchangeFetchAssignment(coursedir=coursedir, authenticator=Authenticator(config=config), config=config).start()
    assert (work / "02_devices" / "02_devices.ipynb").is_file()
    assert not (home / "02_devices").exists()
    listed = ExchangeList(coursedir=coursedir, authenticator=Authenticator(config=config), config=config).start()
    assert [(item["assignment_id"], item["status"], item["path"]) for item in listed] == [
        ("02_devices", "fetched", str(work / "02_devices"))]


@pytest.mark.slow
def test_publishing_again_brings_this_weeks_assignment_and_touches_no_students_file(hub_people):
    """The weekly step on a running hub (`course hub publish`): the class kit follows the
    release schedule of the checkout's HEAD, the running servers' environment stays, and the
    student's next server start brings only what is new; their own work is untouched."""
    settings, users, homes = hub_people
    checkout, student, home = Path(settings.course_root), users["student"], homes["student"]
    assert sorted(p.name for p in (home / "assignments").iterdir()) == ["01_tensors"]   # week 1
    config = checkout / "course" / "nbgrader_config.py"
    config.write_text(config.read_text().replace("2999-01-12", "2026-01-12"))
    git = ["setpriv", f"--reuid={users['instructor']}", f"--regid={users['instructor']}", "--init-groups",
           "git", "-C", str(checkout), "-c", "user.name=I", "-c", "user.email=i@localhost"]
    subprocess.run(git + ["commit", "-q", "-am", "week 2"], check=True, capture_output=True,
                   env={"HOME": str(homes["instructor"]), "PATH": "/usr/bin:/bin"})
    mine = home / "assignments" / "01_tensors" / "01_tensors.ipynb"
    mine.write_text(mine.read_text().replace("YOUR CODE HERE", "my answer"))
    install = hub_install.publish(checkout, Path(settings.class_dir), Path(settings.environment))
    assert install.environment == Path(settings.environment) and install.environment.is_dir()
    assert sorted(p.name for p in (install.kit / "assignments").iterdir()) == ["01_tensors", "02_devices"]
    delivered = subprocess.run(["setpriv", f"--reuid={student}", f"--regid={student}", "--init-groups",
                                settings.python, "-I", settings.deliver_script, settings.kit, str(home)],
                               capture_output=True, text=True)
    assert delivered.returncode == 0 and "1 new file(s)" in delivered.stdout, delivered.stdout
    assert (home / "assignments" / "02_devices" / "02_devices.ipynb").is_file()
    assert "my answer" in mine.read_text()
