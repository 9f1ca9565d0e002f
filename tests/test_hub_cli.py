"""`course hub start` refuses what cannot work, with a clear message and no side effects:
among others a checkout students could read (the hub serves them by allow-list only).

(A hub that really starts, and a second start refused while the first keeps serving, are
in tests/test_hub_browser.py.)
"""
from __future__ import annotations

import os
import pwd
import shutil
import socket
import tempfile
from pathlib import Path

import pytest

from course.cli import main
from course.hub_install import folder_shutting_out

pytestmark = pytest.mark.root   # (`make test-fast` leaves it out)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(capsys, tmp_path, *extra: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["hub", "start", "--state-dir", str(tmp_path / "state"),
                 "--exchange", str(tmp_path / "exchange"), "--port", str(free_port()),
                 "--proxy", "/bin/true", *extra])
    return code, capsys.readouterr().err


def test_root_cannot_be_the_instructor(capsys, tmp_path):
    if os.geteuid() != 0:
        pytest.fail("`course hub start` runs as root; so does this test (CI runs as root)")
    code, err = start(capsys, tmp_path, "--instructor", "root")
    assert code == 1
    assert "the instructor must be an ordinary Unix user, not root" in err
    assert not (tmp_path / "state").exists() and not (tmp_path / "exchange").exists()


def test_an_unknown_instructor_is_named(capsys, tmp_path):
    if os.geteuid() != 0:
        pytest.fail("`course hub start` runs as root; so does this test (CI runs as root)")
    code, err = start(capsys, tmp_path, "--instructor", "nobody-of-this-course")
    assert code == 1
    assert "the instructor 'nobody-of-this-course' is not a Unix user" in err
    assert not (tmp_path / "state").exists()


def test_a_busy_port_is_refused(capsys, tmp_path):
    if os.geteuid() != 0:
        pytest.fail("`course hub start` runs as root; so does this test (CI runs as root)")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        capsys.readouterr()
        code = main(["hub", "start", "--state-dir", str(tmp_path / "state"),
                     "--exchange", str(tmp_path / "exchange"), "--port", str(port),
                     "--instructor", "root"])
        err = capsys.readouterr().err
    assert code == 1
    assert f"port {port} on 127.0.0.1 is already in use by another program" in err
    assert not (tmp_path / "state").exists()


@pytest.fixture()
def open_course(tmp_path):
    """A course checkout whose every parent folder lets other users through (tmp_path's do
    not: pytest makes them private), its course/ owned by an ordinary user, `nobody`."""
    top = Path(tempfile.mkdtemp(prefix="course hub "))
    try:
        top.chmod(0o755)
        root = top / "the course"
        (root / "course").mkdir(parents=True)
        os.chown(root / "course", pwd.getpwnam("nobody").pw_uid, -1)
        root.chmod(0o755)
        yield root
    finally:
        shutil.rmtree(top)


def test_a_checkout_students_could_read_is_refused_and_nothing_is_published(capsys, open_course):
    if os.geteuid() != 0:
        pytest.fail("`course hub start` runs as root; so does this test (CI runs as root)")
    top = open_course.parent
    options = ("--root", str(open_course), "--instructor", "nobody",
               "--class-dir", str(top / "class"))
    code, err = start(capsys, top, *options)
    assert code == 1
    assert f"students could read the course checkout {open_course} (mode 755" in err, err
    assert f"chmod 700 '{open_course}'" in err, err
    assert sorted(p.name for p in top.iterdir()) == ["the course"]

    # Private: the hub goes on, and builds what students get from git HEAD only.
    open_course.chmod(0o700)
    code, err = start(capsys, top, *options)
    assert code == 1
    assert f"{open_course} is not a git repository: the kit is built from its last commit" in err, err
    assert sorted(p.name for p in top.iterdir()) == ["the course"]

    # A class folder or exchange students cannot reach is named.
    (top / "private").mkdir(mode=0o700)
    code, err = start(capsys, top, "--root", str(open_course), "--instructor", "nobody",
                      "--class-dir", str(top / "private" / "class"))
    assert code == 1
    assert f"--class-dir {top}/private/class: students cannot enter {top}/private (mode 700)" in err, err


def test_a_folder_shuts_students_out_only_when_they_can_neither_list_nor_enter_it():
    top = Path(tempfile.mkdtemp(prefix="course hub "))
    try:
        top.chmod(0o755)
        folder = top / "checkout"
        folder.mkdir()
        students = {folder.stat().st_gid}  # as if a student were in the folder's group
        for mode, gids, shut in ((0o700, set(), True), (0o750, set(), True),
                                 (0o750, students, False), (0o740, students, False),
                                 (0o701, set(), False), (0o704, set(), False),
                                 (0o755, set(), False)):
            folder.chmod(mode)
            assert (folder_shutting_out(folder, gids) == folder) is shut, oct(mode)
        assert folder_shutting_out(folder, set()) is None  # 0755 down from /
    finally:
        shutil.rmtree(top)


def test_the_pid_file_counts_only_a_live_jupyterhub(tmp_path):
    """`course hub status|stop` trust the pid file only while it names a running JupyterHub:
    not a process that ended, not one that ended and is not reaped yet, not another program
    that got the pid later."""
    import subprocess
    import sys
    import time

    from course.hub import PID_FILE, HubSettings, running_pid

    settings = HubSettings(course_root=str(tmp_path), instructor="nobody", state_dir=str(tmp_path))
    sleep = "import time; time.sleep(60)"
    hub = subprocess.Popen([sys.executable, "-c", sleep, "jupyterhub"])
    other = subprocess.Popen([sys.executable, "-c", sleep, "something-else"])
    ended = subprocess.Popen([sys.executable, "-c", "pass", "jupyterhub"])
    try:
        (tmp_path / PID_FILE).write_text(f"{hub.pid}\n")
        assert running_pid(settings) == hub.pid
        (tmp_path / PID_FILE).write_text(f"{other.pid}\n")
        assert running_pid(settings) is None
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not Path(f"/proc/{ended.pid}/stat").read_text().split(") ")[1].startswith("Z"):
            time.sleep(0.05)
        (tmp_path / PID_FILE).write_text(f"{ended.pid}\n")
        assert running_pid(settings) is None   # a zombie: exited, not reaped yet
        ended.wait()
        assert running_pid(settings) is None   # gone
        (tmp_path / PID_FILE).write_text("not a pid\n")
        assert running_pid(settings) is None
    finally:
        for process in (hub, other):
            process.kill()
            process.wait()


def test_sudo_make_hub_makes_the_venv_as_the_checkouts_owner():
    """`sudo make hub` makes .venv as the instructor who owns the checkout, with the system's
    python3 (root's venv would be of root's Python, e.g. pyenv under /root: `.venv/bin/course:
    bad interpreter: Permission denied` for the instructor), and refuses a .venv root made."""
    import subprocess
    if os.geteuid() != 0 or not shutil.which("useradd") or not shutil.which("runuser"):
        pytest.skip("needs root, useradd and runuser (CI runs as root)")
    from coursebase.paths import REPO as repo
    owner = "course-hub-owner-test"
    subprocess.run(["userdel", "-r", owner], capture_output=True)
    subprocess.run(["useradd", "--create-home", owner], check=True)
    try:
        checkout = Path(pwd.getpwnam(owner).pw_dir) / "course"
        (checkout / "course").mkdir(parents=True)
        shutil.copy(repo / "Makefile", checkout / "Makefile")
        shutil.copytree(repo / "locks", checkout / "locks")
        (checkout / "pyproject.toml").write_text("")
        subprocess.run(["chown", "-R", f"{owner}:", str(checkout.parent)], check=True)
        system = subprocess.run(["/usr/bin/python3", "-c", "import platform; print(platform.python_version())"],
                                capture_output=True, text=True).stdout.strip()
        planned = subprocess.run(["make", "-n", "hub-venv"], cwd=checkout, capture_output=True, text=True)
        assert planned.returncode == 0, planned.stderr
        # the recursive make ran as the owner: their python3 (PATH reset), their lock
        assert f'test -n "{system}"' in planned.stdout, planned.stdout
        assert f"-r locks/python{system.rsplit('.', 1)[0]}.lock" in planned.stdout, planned.stdout
        (checkout / ".venv").mkdir()   # made by root (sudo make test, say)
        refused = subprocess.run(["make", "hub-venv"], cwd=checkout, capture_output=True, text=True)
        assert refused.returncode != 0 and f".venv belongs to root, not to {owner}" in refused.stderr, refused.stderr
    finally:
        subprocess.run(["userdel", "-r", owner], capture_output=True)
