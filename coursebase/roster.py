"""The roster: the class list a course imports, and who a name in an LMS download can mean.

A roster is a CSV with a header row: ``id`` (required; on the course hub it becomes the Unix
login, so it must be a safe lowercase name), and optionally ``first_name``, ``last_name``,
``email`` and ``lms_id`` (the student's number in the LMS: Canvas's user id, Brightspace's
user id, which an LMS download names files by; see `course collect`). The imported roster is
kept as ``var/roster.csv`` (git-ignored; ``Course.roster_path``): `course collect` refuses
submissions from anyone not on it, and matches LMS names against it (:class:`RosterIndex`).

Importing again merges (:func:`merge_roster`): new students are added, a known student's
fields are updated from the columns the file has and the cells it fills (an absent
``lms_id`` column or an empty cell never erases an LMS id), and students not in the file stay
on the roster unless they are removed. `course roster import` (course/roster.py) does that,
and makes the roster's Unix accounts on the course hub.
"""
from __future__ import annotations

import csv
import os
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from .model import Course

# Debian's adduser rule for login names, minus the trailing `$` of machine accounts, and
# at most 32 characters (utmp's limit).
UNIX_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
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


def roster_ids(course: Course) -> set[str] | None:
    """The ids of the imported roster, or None when no roster was imported."""
    path = course.roster_path
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


def roster_index(course: Course) -> RosterIndex | None:
    """The imported roster (var/roster.csv); without one, the students in nbgrader's gradebook
    (formgrader or `nbgrader db student add` put them there); None when neither has any."""
    path = course.roster_path
    if path.exists():
        return RosterIndex(read_roster(path), str(path))
    try:
        if not course.has_gradebook():
            return None  # opening a missing SQLite gradebook would create one
        with course.open_gradebook() as gradebook:
            students = [Student(s.id, s.first_name or "", s.last_name or "", s.email or "", s.lms_user_id or "")
                        for s in gradebook.students]
    except Exception:  # noqa: BLE001 - no gradebook yet is the same as no roster
        return None
    return RosterIndex(students, "the gradebook's students") if students else None


def add_to_gradebook(students: list[Student], course: Course) -> None:
    """Each student with their names in nbgrader's gradebook (formgrader's student list)."""
    db_file = _sqlite_file(course.db_url)
    with course.open_gradebook() as gradebook:
        for student in students:
            # Only the fields the roster holds: nbgrader sets every keyword it is given, so a
            # None would erase what Formgrader or an earlier import put there.
            known = {"first_name": student.first_name, "last_name": student.last_name,
                     "email": student.email, "lms_user_id": student.lms_id}
            gradebook.update_or_create_student(student.id, **{k: v for k, v in known.items() if v})
    if db_file is not None:
        _give_to_course_owner(db_file, course.root / "course")


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


def save_roster(students: list[Student], course: Course) -> Path:
    path = course.roster_path
    course.make_state_root()
    with open(path, "w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(COLUMNS)
        for student in students:
            writer.writerow([student.id, student.first_name, student.last_name, student.email,
                             student.lms_id])
    _give_to_course_owner(path, course.root / "course")
    return path
