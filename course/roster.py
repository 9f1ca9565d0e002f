"""`course roster import roster.csv`: the class list becomes Unix users and gradebook rows.

The roster is a CSV with a header row: ``id`` (required; it becomes the Unix login, so it
must be a safe lowercase name), and optionally ``first_name``, ``last_name``, ``email`` and
``lms_id`` (the student's number in the LMS: Canvas's user id, Brightspace's user id, which
an LMS download names files by; see ``course collect``).
Import checks the whole file first and changes nothing when any row is wrong, then:

1. creates each student as a Unix user (``useradd``) in the course's students group, with a
   private home (0700: no student can read another's work) and a generated password that
   JupyterHub's PAM login checks; the passwords go to a file only root can read, for the
   instructor to hand out;
2. adds each student to nbgrader's gradebook with their names (formgrader shows them);
3. keeps the imported roster as ``course/roster.csv`` (git-ignored): ``course collect``
   refuses submissions from anyone not on it.

Importing again merges: new students are added, a known student's fields are updated from
the columns the file has and the cells it fills (an absent ``lms_id`` column or an empty
cell never erases an LMS id), and students not in the file stay on the roster unless
``--remove-missing`` is given; the command says who was added, updated, kept and removed.
Existing students keep their password and home.
An existing account that the course did not create (not in the students group) is refused.
"""
from __future__ import annotations

import csv
import grp
import os
import pwd
import re
import secrets
import subprocess
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path

# Debian's adduser rule for login names, minus the trailing `$` of machine accounts, and
# at most 32 characters (utmp's limit).
UNIX_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
STUDENTS_GROUP = "course-students"
COLUMNS = ("id", "first_name", "last_name", "email", "lms_id")


class RosterError(ValueError):
    """A roster that cannot be imported; the message lists every problem found."""

    def one_line(self) -> str:
        """The message for commands that only read the roster (no "nothing was imported")."""
        text = str(self).replace("nothing was imported, ", "").replace(":\n  ", ": ").replace("\n  ", "; ")
        return f"the roster cannot be read: {text}"


@dataclass(frozen=True)
class Student:
    id: str
    first_name: str
    last_name: str
    email: str
    lms_id: str = ""

    @property
    def full_name(self) -> str:
        return " ".join(part for part in (self.first_name, self.last_name) if part)


def read_roster(path: Path) -> list[Student]:
    """Every row of the roster, checked; RosterError names each bad line."""
    return read_roster_columns(path)[0]


def read_roster_columns(path: Path) -> tuple[list[Student], set[str]]:
    """The roster's rows, and the columns its header names (a column that is absent says
    nothing about the students: a re-import without ``lms_id`` keeps the LMS ids)."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except OSError as error:
        raise RosterError(f"cannot read the roster {path}: {error.strerror}") from None
    reader = csv.DictReader(text.splitlines())
    header = [name.strip() for name in (reader.fieldnames or [])]
    if "id" not in header:
        raise RosterError(f"{path}: the first line must name the columns, with at least `id` "
                          f"(found {header or 'nothing'}); known columns: {', '.join(COLUMNS)}")
    unknown = [name for name in header if name not in COLUMNS]
    if unknown:
        raise RosterError(f"{path}: unknown column(s) {', '.join(unknown)}; "
                          f"known columns: {', '.join(COLUMNS)}")
    problems: list[str] = []
    students: list[Student] = []
    first_line_of: dict[str, int] = {}
    lms_line_of: dict[str, int] = {}
    for line, row in enumerate(reader, start=2):
        row = {key.strip(): (value or "").strip() for key, value in row.items() if key}
        student_id = row.get("id", "")
        if not any(row.values()):
            continue  # a blank line
        if not UNIX_NAME.match(student_id):
            problems.append(f"line {line}: id {student_id!r} is not a valid Unix login "
                            "(lowercase letter first, then lowercase letters, digits, _ or -; "
                            "at most 32 characters)")
            continue
        if student_id in first_line_of:
            problems.append(f"line {line}: id {student_id!r} is a duplicate of line "
                            f"{first_line_of[student_id]}")
            continue
        first_line_of[student_id] = line
        lms_id = row.get("lms_id", "")
        if lms_id and lms_id in lms_line_of:
            problems.append(f"line {line}: lms_id {lms_id!r} is also line {lms_line_of[lms_id]}'s: an LMS id "
                            "names one student")
            continue
        if lms_id:
            lms_line_of[lms_id] = line
        students.append(Student(student_id, row.get("first_name", ""), row.get("last_name", ""),
                                row.get("email", ""), row.get("lms_id", "")))
    if problems:
        raise RosterError(f"{path}: nothing was imported, {len(problems)} problem(s):\n  "
                          + "\n  ".join(problems))
    if not students:
        raise RosterError(f"{path}: the roster has no students")
    return students, set(header)


@dataclass
class RosterChange:
    """What importing a file does to the roster used for matching."""
    roster: list[Student]                  # the roster after the import
    added: list[str]
    updated: dict[str, list[str]]          # id -> the fields changed ("lms_id '' -> '123'")
    unchanged: list[str]
    missing: list[str]                     # on the roster, not in the file: kept unless removed
    removed: list[str]

    def lines(self, source: str) -> list[str]:
        changed = "; ".join(f"{student}: {', '.join(fields)}" for student, fields in list(self.updated.items())[:5])
        changed += " ..." if len(self.updated) > 5 else ""
        said = [f"{len(self.added)} added" + (f" ({_few(self.added)})" if self.added else ""),
                f"{len(self.updated)} updated" + (f" ({changed})" if self.updated else ""),
                f"{len(self.unchanged)} unchanged"]
        lines = [f"roster: {source}: " + ", ".join(said)]
        if self.missing:
            lines.append(f"roster: {len(self.missing)} student(s) on the roster but not in this file, kept "
                         f"({_few(self.missing)}); `--remove-missing` removes them from the roster")
        if self.removed:
            lines.append(f"roster: removed {len(self.removed)} student(s) not in this file ({_few(self.removed)}) "
                         "from the roster used for matching; their gradebook records, submissions and grades stay")
        return lines


def _few(ids: list[str]) -> str:
    return ", ".join(ids[:8]) + (f" and {len(ids) - 8} more" if len(ids) > 8 else "")


def merge_roster(current: list[Student] | None, incoming: list[Student], columns: set[str],
                 remove_missing: bool = False) -> RosterChange:
    """The roster after importing ``incoming``: new students added; a known student's fields
    updated from the columns the file has and the cells it fills (an absent column or an
    empty cell never erases what the roster holds); students not in the file kept, unless
    ``remove_missing``. RosterError when two students would then share an LMS id."""
    known = {s.id: s for s in current or []}
    arriving = {s.id: s for s in incoming}
    added, updated, unchanged = [], {}, []
    result: dict[str, Student] = {}
    for student_id, old in known.items():
        new = arriving.get(student_id)
        if new is None:
            result[student_id] = old
            continue
        values, changes = {}, []
        for name in COLUMNS[1:]:
            before, after = getattr(old, name), getattr(new, name)
            if name in columns and after and after != before:
                values[name] = after
                changes.append(f"{name} {before!r} -> {after!r}")
        result[student_id] = Student(student_id, **{n: values.get(n, getattr(old, n)) for n in COLUMNS[1:]})
        (updated.__setitem__(student_id, changes) if changes else unchanged.append(student_id))
    for student_id, new in arriving.items():
        if student_id not in known:
            result[student_id] = new
            added.append(student_id)
    missing = sorted(set(known) - set(arriving))
    removed = []
    if remove_missing:
        removed = missing
        for student_id in removed:
            del result[student_id]
        missing = []
    owners: dict[str, str] = {}
    for student in result.values():
        if student.lms_id and owners.setdefault(student.lms_id, student.id) != student.id:
            raise RosterError(f"nothing was imported: lms_id {student.lms_id!r} would belong to both "
                              f"{owners[student.lms_id]} and {student.id}; fix the file or the roster")
    return RosterChange(list(result.values()), added, updated, unchanged, missing, removed)


def roster_path(course_root: Path) -> Path:
    return Path(course_root) / "course" / "roster.csv"


def roster_ids(course_root: Path) -> set[str] | None:
    """The ids of the imported roster, or None when no roster was imported."""
    path = roster_path(course_root)
    if not path.exists():
        return None
    return {student.id for student in read_roster(path)}


def name_key(text: str) -> str:
    """A name as it is compared with an LMS's: canonical Unicode (NFC, so an accent written
    as one character or two is the same), case-folded, letters and digits only ("Lovelace,
    Ada" and Canvas's "lovelaceada" meet at "lovelaceada"). Compatibility characters are not
    folded: a full-width "Ａｄａ" or a ligature is other letters, never a classmate's name."""
    folded = unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())
    return "".join(c for c in folded if c.isalnum())


class RosterIndex:
    """Who on the roster a name in an LMS download can mean; every lookup returns the set of
    roster ids it fits, so that a caller can refuse anything but exactly one."""

    def __init__(self, students: list[Student], source: str):
        self.students = {s.id: s for s in students}
        self.source = source  # where the roster came from, for messages
        self._names: dict[str, set[str]] = {}
        self._lms: dict[str, set[str]] = {}
        for student in students:
            first, last = student.first_name, student.last_name
            for order in ((first, last), (last, first)):
                key = name_key(" ".join(order))
                if key and first and last:
                    self._names.setdefault(key, set()).add(student.id)
            if student.lms_id:
                self._lms.setdefault(student.lms_id.strip(), set()).add(student.id)

    def by_id(self, text: str) -> set[str]:
        return {text} if text in self.students else set()

    def by_prefix(self, text: str) -> set[str]:
        """ids ``r`` with ``text`` = ``r`` + ``_...`` or ``r.ipynb`` (ids may contain ``_``)."""
        return {r for r in self.students if text.startswith(r + "_") or text == r + ".ipynb"}

    def by_suffix(self, text: str) -> set[str]:
        """ids ``r`` with ``text`` = ``..._r`` (Blackboard's ``<assignment>_<username>``)."""
        return {r for r in self.students if text == r or text.endswith("_" + r)}

    def by_name(self, text: str) -> set[str]:
        return set(self._names.get(name_key(text), set()))

    def by_lms_id(self, text: str) -> set[str]:
        return set(self._lms.get(text.strip(), set()))

    def lookup(self, how: str, text: str) -> set[str]:
        return getattr(self, f"by_{how}")(text)


def roster_index(course_root: Path, db_url: str | None = None, course_id: str | None = None) -> RosterIndex | None:
    """The imported roster (course/roster.csv); without one, the students in nbgrader's
    gradebook (formgrader or `nbgrader db student add` put them there); None when neither has any."""
    path = roster_path(course_root)
    if path.exists():
        return RosterIndex(read_roster(path), str(path))
    if not db_url or (db_url.startswith("sqlite:///") and not Path(db_url[len("sqlite:///"):]).exists()):
        return None  # opening a missing SQLite gradebook would create one
    from nbgrader.api import Gradebook
    try:
        with Gradebook(db_url, course_id or "default_course") as gradebook:
            students = [Student(s.id, s.first_name or "", s.last_name or "", s.email or "", s.lms_user_id or "")
                        for s in gradebook.students]
    except Exception:  # noqa: BLE001 - no gradebook yet is the same as no roster
        return None
    return RosterIndex(students, "the gradebook's students") if students else None


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


def add_to_gradebook(students: list[Student], course_root: Path) -> None:
    """Each student with their names in nbgrader's gradebook (formgrader's student list)."""
    from nbgrader.api import Gradebook

    from course.model import Course

    course = Course.load(course_root)
    db_file = _sqlite_file(course.db_url)
    with Gradebook(course.db_url, course_id=course.course_id) as gradebook:
        for student in students:
            # Only the fields the roster holds: nbgrader sets every keyword it is given, so a
            # None would erase what Formgrader or an earlier import put there.
            known = {"first_name": student.first_name, "last_name": student.last_name,
                     "email": student.email, "lms_user_id": student.lms_id}
            gradebook.update_or_create_student(student.id, **{k: v for k, v in known.items() if v})
    if db_file is not None:
        _give_to_course_owner(db_file, Path(course_root) / "course")


def _sqlite_file(db_url: str) -> Path | None:
    prefix = "sqlite:///"
    return Path(db_url[len(prefix):]) if db_url.startswith(prefix) else None


def _give_to_course_owner(path: Path, course_dir: Path) -> None:
    """Files root writes into the course belong to whoever owns the course folder (the
    instructor), or the instructor's formgrader could not write its own gradebook."""
    if os.geteuid() != 0 or not path.exists():
        return
    owner = course_dir.stat()
    os.chown(path, owner.st_uid, owner.st_gid)


def save_roster(students: list[Student], course_root: Path) -> Path:
    path = roster_path(course_root)
    with open(path, "w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(COLUMNS)
        for student in students:
            writer.writerow([student.id, student.first_name, student.last_name, student.email,
                             student.lms_id])
    _give_to_course_owner(path, path.parent)
    return path


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
    from course.model import REPO
    course_root = Path(args.root or REPO).resolve()
    try:
        students, columns = read_roster_columns(Path(args.roster))
        saved_at = roster_path(course_root)
        current = read_roster(saved_at) if saved_at.exists() else None
        change = merge_roster(current, students, columns, args.remove_missing)
        if not args.gradebook_only:
            check_accounts(students, args.group)
            created = create_unix_users(students, args.group, Path(args.passwords))
        add_to_gradebook(change.roster, course_root)
        saved = save_roster(change.roster, course_root)
    except RosterError as error:
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
