"""`course roster import roster.csv`: the class list becomes Unix users and gradebook rows.

The roster's format, its merge rule and where it is kept are the base's (coursebase/roster.py).
Import checks the whole file first and changes nothing when any row is wrong, then:

1. creates each student as a Unix user (``useradd``) in the course's students group, with a
   private home (0700: no student can read another's work) and a generated password that
   JupyterHub's PAM login checks; the passwords go to a file only root can read, for the
   instructor to hand out;
2. adds each student to nbgrader's gradebook with their names (formgrader shows them);
3. keeps the imported roster as ``var/roster.csv`` (git-ignored): ``course collect``
   refuses submissions from anyone not on it.

Importing again merges, and says who was added, updated, kept and removed (students not in
the file stay on the roster unless ``--remove-missing`` is given). Existing students keep
their password and home. An existing account that the course did not create (not in the
students group) is refused.
"""
from __future__ import annotations

import csv
import grp
import os
import pwd
import secrets
import subprocess
import sys
from pathlib import Path

from coursebase.model import Course, CourseError
from coursebase.roster import (RosterError, Student, add_to_gradebook, merge_roster, read_roster,
                               read_roster_columns, save_roster)

STUDENTS_GROUP = "course-students"


def _user_exists(name: str) -> pwd.struct_passwd | None:
    try:
        return pwd.getpwnam(name)
    except KeyError:
        return None


def _group_members(group: str) -> set[str] | None:
    try:
        entry = grp.getgrnam(group)
    except KeyError:
        return None
    members = set(entry.gr_mem)
    members |= {user.pw_name for user in pwd.getpwall() if user.pw_gid == entry.gr_gid}
    return members


def check_accounts(students: list[Student], group: str) -> None:
    """Refuse ids that name an account the course did not create (root, daemon, a staff
    member): importing must never take over or hand a password to an existing account."""
    members = _group_members(group) or set()
    taken = [s.id for s in students if _user_exists(s.id) and s.id not in members]
    if taken:
        raise RosterError(
            "nothing was imported: these ids are existing accounts that are not in the "
            f"course's students group {group!r}: {', '.join(taken)}")


def _run(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RosterError(f"`{' '.join(command)}` failed (exit {done.returncode}): "
                          f"{(done.stderr or done.stdout).strip()}")


def create_unix_users(students: list[Student], group: str,
                      passwords_file: Path) -> list[str]:
    """Create the missing students as Unix users; returns the ids created."""
    if os.geteuid() != 0:
        raise RosterError("creating Unix users needs root: run `sudo course roster import ...` "
                          "(or --gradebook-only to add names to the gradebook alone)")
    if _group_members(group) is None:
        _run(["groupadd", group])
    created = []
    for student in students:
        if _user_exists(student.id):
            _run(["usermod", "-c", student.full_name, student.id])
            continue
        _run(["useradd", "--create-home", "--shell", "/bin/bash", "--gid", group,
              "--comment", student.full_name, student.id])
        home = Path(pwd.getpwnam(student.id).pw_dir)
        home.chmod(0o700)  # classmates cannot read each other's work
        password = secrets.token_urlsafe(12)
        done = subprocess.run(["chpasswd"], input=f"{student.id}:{password}\n", text=True,
                              capture_output=True)
        if done.returncode != 0:
            raise RosterError(f"chpasswd failed for {student.id}: {done.stderr.strip()}")
        # Written at once: if a later student fails, this one's password is not lost.
        _append_password(passwords_file, student.id, password)
        created.append(student.id)
    return created


def _append_password(passwords_file: Path, student_id: str, password: str) -> None:
    passwords_file.parent.mkdir(parents=True, exist_ok=True)
    new = not passwords_file.exists()
    fd = os.open(passwords_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a", newline="") as out:
        writer = csv.writer(out)
        if new:
            writer.writerow(["id", "password"])
        writer.writerow([student_id, password])
    passwords_file.chmod(0o600)


def remove_unix_users(ids: list[str], group: str) -> list[str]:
    """Delete course-created users and their homes (never an account outside the group)."""
    members = _group_members(group) or set()
    outside = [name for name in ids if _user_exists(name) and name not in members]
    if outside:
        raise RosterError(f"refusing to remove accounts outside the group {group!r}: "
                          f"{', '.join(outside)}")
    removed = []
    for name in ids:
        if _user_exists(name):
            subprocess.run(["pkill", "-KILL", "-u", name], capture_output=True)
            _run(["userdel", "--remove", name])
            removed.append(name)
    return removed


# -- command line -------------------------------------------------------------------------

def cmd_import(args) -> int:
    try:
        course = Course.load(args.root)
        students, columns = read_roster_columns(Path(args.roster))
        saved_at = course.roster_path
        current = read_roster(saved_at) if saved_at.exists() else None
        change = merge_roster(current, students, columns, args.remove_missing)
        if not args.gradebook_only:
            check_accounts(students, args.group)
            created = create_unix_users(students, args.group, Path(args.passwords))
        add_to_gradebook(change.roster, course)
        saved = save_roster(change.roster, course)
    except (RosterError, CourseError) as error:
        print(f"course roster import: {error}", file=sys.stderr)
        return 1
    for line in change.lines(f"{len(students)} student(s) in {args.roster}"):
        print(line)
    print(f"roster: {len(change.roster)} student(s) in the gradebook and on the roster used for matching, "
          f"kept at {saved} (git-ignored)")
    if not args.gradebook_only:
        print(f"created {len(created)} Unix user(s) in group {args.group!r}"
              + (f"; their passwords were added to {args.passwords} (root only)"
                 if created else ""))
    return 0


def cmd_remove(args) -> int:
    try:
        ids = [s.id for s in read_roster(Path(args.roster))]
        removed = remove_unix_users(ids, args.group)
    except RosterError as error:
        print(f"course roster remove: {error}", file=sys.stderr)
        return 1
    print(f"removed {len(removed)} Unix user(s) and their homes")
    return 0


DEFAULT_PASSWORDS = "/srv/nbgrader/hub/passwords.csv"


def register(subparsers) -> None:
    roster = subparsers.add_parser("roster", help="import the class list: Unix users + gradebook")
    actions = roster.add_subparsers(dest="roster_command", metavar="ACTION", required=True)
    load = actions.add_parser("import", help="create students from a CSV (id, first_name, "
                              "last_name, email)")
    load.add_argument("roster", help="CSV file with a header row")
    load.add_argument("--root", help="course root (default: this repository)")
    load.add_argument("--group", default=STUDENTS_GROUP,
                      help=f"Unix group of the course's students (default {STUDENTS_GROUP})")
    load.add_argument("--passwords", default=DEFAULT_PASSWORDS,
                      help="where new students' passwords are appended "
                      f"(default {DEFAULT_PASSWORDS})")
    load.add_argument("--gradebook-only", action="store_true",
                      help="only add the names to the gradebook; create no Unix users")
    load.add_argument("--remove-missing", action="store_true",
                      help="remove students who are not in this file from the roster used for matching "
                           "(default: a smaller file adds and updates, and keeps everyone else)")
    load.set_defaults(func=cmd_import)
    remove = actions.add_parser("remove", help="delete the roster's Unix users and their homes")
    remove.add_argument("roster", help="the CSV that was imported")
    remove.add_argument("--group", default=STUDENTS_GROUP)
    remove.set_defaults(func=cmd_remove)
