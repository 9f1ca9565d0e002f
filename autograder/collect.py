"""`course collect <a>`: bring submissions into ``submitted/<student>/<a>/``.

From nbgrader's exchange (its own ``ExchangeCollect``), or from a folder or zip file
downloaded from an LMS. For the latter a file is placed when its student can be told:
``<student>/<...>.ipynb`` (one folder per student) or ``<student>_<anything>.ipynb``
(LMS-style flat names). Everything else is listed as unplaceable with the reason; nothing
is silently dropped (symbolic links and other non-regular files included: they are listed,
never followed), and zip entries are never extracted by their own paths.

The submission time recorded in the gradebook (``timestamp.txt``) is never the student's
word: from a folder or zip it is the LMS's modification time of the notebook taken, and a
student's own ``timestamp.txt`` (or ``submission_secret.txt``) is refused and listed; from
the exchange it is the time in the name of the inbound folder nbgrader's collector chose.
"""
from __future__ import annotations

import os
import re
import stat
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath

from .course import Course

MAX_FILE_BYTES = 64 * 1024**2
MAX_TOTAL_BYTES = 1024**3
_STUDENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.@+-]{0,63}$")
# Files the grader writes itself next to a submission; a student's copy would be taken as ours.
RESERVED = {"timestamp.txt": "the submission time comes from the LMS, not from the student",
            "submission_secret.txt": "written by nbgrader's exchange only"}


def _stamp(moment: datetime) -> str:
    """nbgrader's timestamp.txt format; a naive time (nbgrader's parse_utc gives those) is UTC."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f") + " UTC"


@dataclass
class CollectReport:
    placed: dict[str, str] = field(default_factory=dict)        # student -> where it came from
    unplaceable: list[tuple[str, str]] = field(default_factory=list)  # (file, reason)
    failed: str = ""
    refused: dict[str, str] = field(default_factory=dict)  # student not on the roster -> kept at

    def text(self) -> str:
        lines = [f"collected {len(self.placed)} submission(s)"]
        lines += [f"  {student}: {origin}" for student, origin in sorted(self.placed.items())]
        if self.unplaceable:
            lines.append(f"could not place {len(self.unplaceable)} file(s):")
            lines += [f"  {name}: {reason}" for name, reason in self.unplaceable]
        if self.refused:
            lines.append(f"refused {len(self.refused)} submission(s) from students not on the "
                         "roster (`course roster import`); not graded, kept for review:")
            lines += [f"  {student}: {kept}" for student, kept in sorted(self.refused.items())]
        if self.failed:
            lines.append(f"error: {self.failed}")
        return "\n".join(lines)


@dataclass
class _Entry:
    name: str            # path inside the folder or zip, POSIX style
    size: int
    modified: datetime
    read: object         # () -> bytes


def _entries_from_folder(folder: Path, report: CollectReport) -> list[_Entry]:
    """Regular files under ``folder``; links (to files or folders) and special files are
    listed in the report and not followed: a link could point at anything on this machine."""
    entries = []
    for directory, subdirectories, files in os.walk(folder):
        subdirectories.sort()
        for name in sorted(subdirectories + files):
            path = Path(directory) / name
            relative = path.relative_to(folder).as_posix()
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                report.unplaceable.append((relative, f"symbolic link (to {os.readlink(path)}): not followed"))
            elif name in files and not stat.S_ISREG(info.st_mode):
                report.unplaceable.append((relative, "not a regular file"))
            elif name in files:
                entries.append(_Entry(relative, info.st_size, datetime.fromtimestamp(info.st_mtime, timezone.utc),
                                      path.read_bytes))
    entries.sort(key=lambda e: e.name)
    return entries


def _entries_from_zip(archive: zipfile.ZipFile, report: CollectReport) -> list[_Entry]:
    entries = []
    for info in archive.infolist():
        if info.is_dir():
            continue
        kind = stat.S_IFMT(info.external_attr >> 16)
        if kind == stat.S_IFLNK:
            report.unplaceable.append((info.filename, "symbolic link in the archive: not followed"))
            continue
        if kind and kind != stat.S_IFREG:
            report.unplaceable.append((info.filename, "not a regular file"))
            continue
        modified = datetime(*info.date_time, tzinfo=timezone.utc)
        entries.append(_Entry(info.filename, info.file_size, modified,
                              lambda info=info: archive.read(info)))
    return entries


def _student_and_role(name: str, assignment: str) -> tuple[str | None, str]:
    if name.startswith("/") or ".." in PurePosixPath(name).parts or "\\" in name:
        return None, "path points outside the archive"
    parts = [p for p in PurePosixPath(name).parts if p not in ("", ".")]
    if any(p.startswith(("__MACOSX", ".")) for p in parts):
        return None, "system file from the archive tool"
    if len(parts) >= 2:
        student = parts[0]
        if student == assignment and len(parts) >= 3:
            student = parts[1]
        return (student, "file") if _STUDENT.match(student) else (None, f"folder {student!r} is not a student id")
    stem = parts[0]
    if not stem.endswith(".ipynb"):
        return None, "not a notebook and not inside a student's folder"
    student = stem.split("_", 1)[0]
    if "_" not in stem or not _STUDENT.match(student):
        return None, "cannot tell the student from the file name (expected <student>_<name>.ipynb)"
    return student, "flat"


def collect_files(course: Course, assignment: str, source: Path) -> CollectReport:
    report = CollectReport()
    if zipfile.is_zipfile(source):
        archive = zipfile.ZipFile(source)
        entries = _entries_from_zip(archive, report)
    elif source.is_dir():
        entries = _entries_from_folder(source, report)
    else:
        report.failed = f"{source} is neither a folder nor a zip file"
        return report
    notebooks: dict[str, list[_Entry]] = {}
    extras: dict[str, list[tuple[str, _Entry]]] = {}
    total = 0
    for entry in entries:
        student, role = _student_and_role(entry.name, assignment)
        if student is None:
            report.unplaceable.append((entry.name, role))
            continue
        if entry.size > MAX_FILE_BYTES or total + entry.size > MAX_TOTAL_BYTES:
            report.unplaceable.append((entry.name, "too large"))
            continue
        total += entry.size
        if entry.name.endswith(".ipynb") and ".ipynb_checkpoints" not in entry.name:
            notebooks.setdefault(student, []).append(entry)
        elif role == "file":
            relative = PurePosixPath(*PurePosixPath(entry.name).parts[1:])
            if relative.parts and relative.parts[0] == assignment:
                relative = PurePosixPath(*relative.parts[1:])
            if relative.as_posix() in RESERVED:
                report.unplaceable.append((entry.name, f"reserved name: {RESERVED[relative.as_posix()]}"))
                continue
            extras.setdefault(student, []).append((relative.as_posix(), entry))
        else:
            report.unplaceable.append((entry.name, "not a notebook"))
    for student, candidates in sorted(notebooks.items()):
        exact = [e for e in candidates if PurePosixPath(e.name).name.endswith(f"{assignment}.ipynb")]
        chosen = sorted(exact or candidates, key=lambda e: e.modified)[-1]
        for other in candidates:
            if other is not chosen:
                report.unplaceable.append((other.name, f"another notebook of {student} was taken ({chosen.name})"))
        folder = course.submitted_root / student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{assignment}.ipynb").write_bytes(chosen.read())
        for relative, entry in extras.get(student, []):
            if relative.endswith(".ipynb") or not relative or ".." in PurePosixPath(relative).parts:
                continue
            target = folder / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(entry.read())
        # Last, so that nothing above can replace it.
        (folder / "timestamp.txt").write_text(_stamp(chosen.modified))
        report.placed[student] = chosen.name
    for student, files in extras.items():
        if student not in notebooks:
            for _, entry in files:
                report.unplaceable.append((entry.name, f"no notebook from {student} to go with it"))
    return report


def collect_exchange(course: Course, assignment: str) -> CollectReport:
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange.default import ExchangeCollect

    report = CollectReport()
    inbound = course.exchange_root / course.course_id / "inbound"
    coursedir = CourseDirectory(config=course.config)
    coursedir.assignment_id = assignment
    collector = ExchangeCollect(coursedir=coursedir, authenticator=Authenticator(config=course.config),
                                config=course.config)
    collector.update = True
    try:
        collector.start()
    except Exception as error:  # noqa: BLE001 - nbgrader's ExchangeError and friends, reported as is
        report.failed = f"nbgrader collect failed: {error}"
        return report
    for record in getattr(collector, "src_records", None) or []:
        # The time nbgrader chose this submission by (its inbound folder's name), not the
        # timestamp.txt inside it, which whoever wrote the folder controls.
        stamp = course.submitted_root / record["username"] / assignment / "timestamp.txt"
        if stamp.parent.is_dir() and not stamp.parent.is_symlink():
            stamp.unlink(missing_ok=True)
            stamp.write_text(_stamp(record["timestamp"]))
    if inbound.is_dir():
        for entry in sorted(inbound.iterdir()):
            parts = entry.name.split("+")
            if len(parts) >= 3 and parts[1] == assignment:
                report.placed[parts[0]] = f"exchange {entry.name}"
            elif len(parts) < 3:
                report.unplaceable.append((entry.name, "not an nbgrader submission folder"))
    return report


def collect(course: Course, assignment: str, source: str | None) -> CollectReport:
    if source:
        report = collect_files(course, assignment, Path(source))
    else:
        report = collect_exchange(course, assignment)
    from course.roster import refuse_off_roster
    refused = refuse_off_roster(course.root, course.submitted_root, assignment, list(report.placed))
    for student, kept in refused.items():
        del report.placed[student]
        report.refused[student] = str(kept)
    return report
