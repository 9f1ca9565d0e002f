"""A throwaway course hub with real Unix users: an instructor, students from a roster.

Every name carries a random suffix (users, their group). The course is a git repository (a
copy of this one, committed) in the instructor's home, made private as `mktemp -d` and
Ubuntu make folders (0700), at a path with spaces, owned by the instructor; the exchange,
the hub's state and the class install live in one temporary folder. `close()` stops the hub
and deletes the users with their homes, also when the test failed half-way. Needs root,
like the hub itself.
"""
from __future__ import annotations

import csv
import os
import pwd
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .course_copy import copy_course
from .jupyterlab import free_port


def _run(command: list[str], **options) -> subprocess.CompletedProcess:
    done = subprocess.run(command, capture_output=True, text=True, **options)
    if done.returncode != 0:
        raise AssertionError(f"`{' '.join(command)}` exited {done.returncode}:\n"
                             f"{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return done


class CourseHub:
    def __init__(self, students: list[tuple[str, str, str]], log_path: Path,
                 lab_args: tuple[str, ...] = ()):
        """students: (name prefix, first name, last name); ids get the random suffix."""
        if os.geteuid() != 0:
            raise RuntimeError("the course hub test creates Unix users: run it as root")
        suffix = secrets.token_hex(3)
        self.group = f"crs{suffix}"
        self.instructor = f"inst{suffix}"
        self.students = {f"{prefix}{suffix}": (first, last) for prefix, first, last in students}
        self.log_path = log_path
        self.lab_args = lab_args
        self.users_created: list[str] = []
        self.top = Path(tempfile.mkdtemp(prefix="course-hub-"))
        self.top.chmod(0o755)  # students reach the exchange and the class install
        self.course = Path("/home") / self.instructor / "term one" / "reftorch course"
        self.exchange = self.top / "exchange"
        self.state = self.top / "hub-state"
        self.class_dir = self.top / "class install"
        self.roster = self.top / "roster.csv"
        self.port = free_port()
        self.passwords: dict[str, str] = {}
        self.started = False

    # -- setting up ------------------------------------------------------------------
    def open(self) -> "CourseHub":
        _run(["groupadd", self.group])
        _run(["useradd", "--create-home", "--shell", "/bin/bash", self.instructor])
        self.users_created.append(self.instructor)
        self.home(self.instructor).chmod(0o700)
        self.passwords[self.instructor] = secrets.token_urlsafe(12)
        _run(["chpasswd"], input=f"{self.instructor}:{self.passwords[self.instructor]}\n")
        # A clone as the instructor has it: this repository's files, committed (the hub
        # publishes the kit of git HEAD).
        copy_course(self.course)
        git = ["git", "-C", str(self.course), "-c", "user.name=Instructor",
               "-c", "user.email=instructor@localhost"]
        _run(git[:3] + ["init", "-q"])
        _run(git + ["add", "-A"])
        _run(git + ["commit", "-q", "-m", "The course"])
        _run(["chown", "-R", f"{self.instructor}:", str(self.course.parent)])
        with open(self.roster, "w", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(["id", "first_name", "last_name", "email"])
            for student, (first, last) in self.students.items():
                writer.writerow([student, first, last, f"{student}@example.org"])
        self.users_created += list(self.students)  # removed at close even if import fails
        self.course_cli("roster", "import", str(self.roster), "--root", str(self.course),
                        "--group", self.group, "--passwords", str(self.state / "passwords.csv"))
        with open(self.state / "passwords.csv") as passwords:
            self.passwords.update({row["id"]: row["password"] for row in csv.DictReader(passwords)})
        self.start_hub()
        self.started = True
        return self

    def hub_arguments(self) -> list[str]:
        arguments = ["--root", str(self.course), "--state-dir", str(self.state),
                     "--exchange", str(self.exchange), "--class-dir", str(self.class_dir),
                     "--port", str(self.port),
                     "--instructor", self.instructor, "--group", self.group]
        for argument in self.lab_args:
            arguments.append(f"--lab-arg={argument}")
        return arguments

    def start_hub(self, check: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run(self._course_argv("hub", "start", *self.hub_arguments()),
                              capture_output=True, text=True, timeout=300, env=self._root_env())
        self._log("root", ["course", "hub", "start"], done)
        if check and done.returncode != 0:
            raise AssertionError(f"course hub start exited {done.returncode}:\n"
                                 f"{done.stdout}{done.stderr}")
        return done

    # -- commands ------------------------------------------------------------------
    def _course_argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "course.cli", *args]

    def _root_env(self) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items()
               if not key.startswith(("JUPYTER", "PYTEST", "COV_"))}
        env["PYTHONPATH"] = str(self.course)
        return env

    def _log(self, who: str, argv: list[str], done: subprocess.CompletedProcess) -> None:
        with open(self.log_path, "a") as log:
            log.write(f"[{who}] $ {' '.join(argv)}  (exit {done.returncode})\n"
                      f"{done.stdout}{done.stderr}\n")

    def course_cli(self, *args: str) -> str:
        """`course ...` as root (roster import and the hub need root)."""
        done = subprocess.run(self._course_argv(*args), capture_output=True, text=True,
                              cwd=self.course, timeout=180, env=self._root_env())
        self._log("root", ["course", *args], done)
        if done.returncode != 0:
            raise AssertionError(f"`course {' '.join(args)}` exited {done.returncode}:\n"
                                 f"{done.stdout[-3000:]}{done.stderr[-3000:]}")
        return done.stdout + done.stderr

    def as_user(self, user: str, argv: list[str], check: bool = True,
                timeout: float = 240) -> subprocess.CompletedProcess:
        """Run a command as `user`, in a login-like environment with the course's exchange."""
        from course.hub import HubSettings, server_environment
        settings = HubSettings.load(self.state / "settings.json")
        home = pwd.getpwnam(user).pw_dir
        env = {"HOME": home, "USER": user, "LOGNAME": user, "LANG": "C.UTF-8",
               **server_environment(settings, instructor=user == self.instructor, home=home)}
        if argv[0] == "python":  # the interpreter the hub gives everyone's servers
            argv = [settings.python, *argv[1:]]
        cwd = self.course if user == self.instructor else home
        done = subprocess.run(["setpriv", f"--reuid={user}", f"--regid={pwd.getpwnam(user).pw_gid}",
                               "--init-groups", "--", *argv],
                              capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout)
        self._log(user, argv, done)
        if check and done.returncode != 0:
            raise AssertionError(f"`{' '.join(argv)}` as {user} exited {done.returncode}:\n"
                                 f"{done.stdout[-3000:]}{done.stderr[-3000:]}")
        return done

    def instructor_course(self, *args: str) -> str:
        """`course ...` as the instructor's Unix user, from the course root."""
        done = self.as_user(self.instructor, ["python", "-m", "course.cli", *args])
        return done.stdout + done.stderr

    def url(self, path: str = "") -> str:
        return f"http://127.0.0.1:{self.port}/{path.lstrip('/')}"

    def home(self, user: str) -> Path:
        return Path(pwd.getpwnam(user).pw_dir)

    def uid(self, user: str) -> int:
        return pwd.getpwnam(user).pw_uid

    # -- tearing down ------------------------------------------------------------------
    def close(self) -> None:
        problems = []
        if (self.state / "settings.json").exists():
            try:
                done = subprocess.run(
                    self._course_argv("hub", "stop", "--state-dir", str(self.state)),
                    capture_output=True, text=True, timeout=90, env=self._root_env())
                self._log("root", ["course", "hub", "stop"], done)
            except subprocess.TimeoutExpired:
                problems.append("`course hub stop` did not finish in 90s")
        for user in self.users_created:
            try:
                pwd.getpwnam(user)
            except KeyError:
                continue
            subprocess.run(["pkill", "-KILL", "-u", user], capture_output=True)
            done = subprocess.run(["userdel", "--remove", user], capture_output=True, text=True)
            if done.returncode not in (0, 12):  # 12: home already gone
                problems.append(f"userdel {user}: {done.stderr.strip()}")
        subprocess.run(["groupdel", self.group], capture_output=True)
        log = self.state / "jupyterhub.log"
        if log.exists():
            shutil.copy(log, self.log_path.parent / "jupyterhub.log")
        shutil.rmtree(self.top, ignore_errors=True)
        if problems:
            raise RuntimeError("; ".join(problems))
