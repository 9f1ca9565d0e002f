"""`course collect <a>`: bring submissions into ``submitted/<student>/<a>/``.

From nbgrader's exchange (its own ``ExchangeCollect``), or from a folder or zip file
downloaded from an LMS (Canvas, Moodle, Blackboard, Brightspace, or one folder per
student). Every file's name is read by each LMS's naming scheme (``autograder/lms_names.py``,
nbgrader ``FileNameCollectorPlugin``s) and matched against the course roster; a file is
placed only when exactly one student on the roster fits and its graded cells are this
assignment's. Anything else (an unknown or ambiguous student, another assignment's notebook,
a damaged archive entry, a link) is listed and never placed, and the command exits 1.

Versions: every file of the download is kept under ``course/collected/<a>/<run>/``; per
student the latest version by LMS time is placed (the time in Blackboard's and
Brightspace's file names; Canvas and Moodle put only each student's latest submission in a
download, so their files are ordered by the download's own time). A submission that was
graded already is never replaced unless ``--replace-graded`` is given, and an older file
never replaces a newer one.

The submission time recorded for late penalties (``timestamp.txt``) is never the student's
word: it is the LMS's time from the file name, or for a plain folder or zip the time of the
file in it; Canvas and Moodle downloads carry no submission time, so none is recorded
(Canvas's LATE mark is kept and shown by `course export`). From the exchange it is the
time in the name of the inbound folder nbgrader's collector chose.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import zipfile
import zlib
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from zoneinfo import ZoneInfo

from course.model import Course

from .lms_names import GENERIC, Claim, namings
from .results import graded_score

MAX_FILE_BYTES = 64 * 1024**2
MAX_TOTAL_BYTES = 1024**3
# A student id read from a folder name when no roster is imported (the old layout).
_STUDENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$")
# Files the grader writes itself next to a submission; a student's copy would be taken as ours.
RESERVED = {"timestamp.txt": "the submission time comes from the LMS, not from the student",
            "submission_secret.txt": "written by nbgrader's exchange only"}
# LMS downloads carry no submission time: their zip entries hold the time of the download.
NO_SUBMISSION_TIME = {"Canvas", "Moodle"}
RULE = ("per student the latest version by LMS time is placed (the time in Blackboard's and "
        "Brightspace's file names; Canvas and Moodle downloads hold only each student's latest "
        "submission)")
PLACED, UNCHANGED, REPLACED, IGNORED, OLDER, NOT_PLACED = (
    "placed", "unchanged", "replaced", "ignored", "older version", "NOT PLACED")


class CollectError(Exception):
    """The source cannot be read at all; nothing was placed."""


@dataclass
class Row:
    student: str     # "?" when no student could be told
    outcome: str
    file: str        # the path inside the download
    when: str = ""   # the LMS time the choice was made by
    note: str = ""


@dataclass
class CollectReport:
    assignment: str = ""
    source: str = ""
    rows: list[Row] = field(default_factory=list)
    failed: str = ""
    kept_at: Path | None = None

    @property
    def placed(self) -> dict[str, str]:
        return {r.student: r.file for r in self.rows if r.outcome in (PLACED, REPLACED)}

    @property
    def not_placed(self) -> list[Row]:
        return [r for r in self.rows if r.outcome == NOT_PLACED]

    @property
    def status(self) -> int:
        return 1 if self.failed or self.not_placed else 0

    def add(self, student: str, outcome: str, file: str, when: str = "", note: str = "") -> None:
        self.rows.append(Row(student, outcome, file, when, note))

    def text(self) -> str:
        lines = [f"course collect {self.assignment} from {self.source}: {RULE}."]
        if self.kept_at:
            lines.append(f"every file of the download is kept in {self.kept_at}")
        if self.rows:
            header = Row("student", "outcome", "file", "LMS time", "note")
            rows = [header] + sorted(self.rows, key=lambda r: (r.outcome != NOT_PLACED, r.student, r.file))
            widths = [min(48, max(len(getattr(r, name)) for r in rows))
                      for name in ("student", "outcome", "file", "when")]
            for row in rows:
                cells = [row.student, row.outcome, row.file, row.when]
                lines.append("  ".join(_fit(c, w) for c, w in zip(cells, widths)) + f"  {row.note}".rstrip())
        counts = {o: sum(1 for r in self.rows if r.outcome == o) for o in (PLACED, REPLACED, UNCHANGED)}
        summary = f"collected {counts[PLACED] + counts[REPLACED]} submission(s)"
        if counts[UNCHANGED]:
            summary += f", {counts[UNCHANGED]} unchanged"
        if self.not_placed:
            summary += (f"; {len(self.not_placed)} file(s) NOT PLACED (listed above; none of them "
                        "will be graded)")
        lines.append(summary)
        if self.failed:
            lines.append(f"error: {self.failed}")
        return "\n".join(lines)


def _fit(text: str, width: int) -> str:
    return text.ljust(width) if len(text) <= width else text[: width - 1] + "…"


def _stamp(moment: datetime) -> str:
    """nbgrader's timestamp.txt format; a naive time (nbgrader's parse_utc gives those) is UTC."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f") + " UTC"


def _shown(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M %Z").strip() if moment else ""


# -- reading a folder or a zip ------------------------------------------------------------

@dataclass
class _Entry:
    name: str            # path inside the folder or zip, POSIX style
    size: int
    modified: datetime
    read: object         # () -> bytes; raises _Damaged


class _Damaged(Exception):
    pass


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
                report.add("?", NOT_PLACED, relative, note=f"symbolic link (to {os.readlink(path)}): not followed")
            elif name in files and not stat.S_ISREG(info.st_mode):
                report.add("?", NOT_PLACED, relative, note="not a regular file")
            elif name in files:
                def read(path=path):
                    try:
                        return path.read_bytes()
                    except OSError as error:
                        raise _Damaged(f"unreadable: {error.strerror}") from None
                entries.append(_Entry(relative, info.st_size,
                                      datetime.fromtimestamp(info.st_mtime, timezone.utc), read))
    entries.sort(key=lambda e: e.name)
    return entries


def _entries_from_zip(archive: zipfile.ZipFile, report: CollectReport) -> list[_Entry]:
    entries = []
    for info in archive.infolist():
        if info.is_dir():
            continue
        kind = stat.S_IFMT(info.external_attr >> 16)
        if kind == stat.S_IFLNK:
            report.add("?", NOT_PLACED, info.filename, note="symbolic link in the archive: not followed")
            continue
        if kind and kind != stat.S_IFREG:
            report.add("?", NOT_PLACED, info.filename, note="not a regular file")
            continue
        try:
            modified = datetime(*info.date_time, tzinfo=timezone.utc)
        except ValueError:  # a damaged header's date
            modified = datetime(1980, 1, 1, tzinfo=timezone.utc)

        def read(info=info):
            # Never more than the header says (nor than the cap): a lying header cannot make
            # the host inflate more, and a CRC or inflate error names this entry alone.
            try:
                with archive.open(info) as handle:
                    data = handle.read(min(info.file_size, MAX_FILE_BYTES) + 1)
            except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError,
                    OSError, ValueError) as error:
                raise _Damaged(f"damaged in the archive ({type(error).__name__}: {error})") from None
            if len(data) > info.file_size:
                raise _Damaged("damaged in the archive (longer than its header says)")
            return data
        entries.append(_Entry(info.filename, info.file_size, modified, read))
    return entries


def _unsafe(name: str) -> str:
    parts = PurePosixPath(name).parts
    if name.startswith("/") or ".." in parts or "\\" in name or "\x00" in name:
        return "path points outside the archive"
    return ""


def _ignorable(name: str) -> str:
    parts = [p for p in PurePosixPath(name).parts if p not in ("", ".")]
    if any(p.startswith(("__MACOSX", ".")) for p in parts) or ".ipynb_checkpoints" in parts:
        return "system file from the archive tool or Jupyter"
    if parts[-1] == "index.html":
        return "the LMS's index of the download"
    if re.search(r"_attempt_\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2}\.txt$", parts[-1]):
        return "Blackboard's submission receipt"
    return ""


# -- which assignment a notebook is -------------------------------------------------------

def _grade_ids(notebook: dict) -> set[str]:
    ids = set()
    for cell in notebook.get("cells", []) if isinstance(notebook, dict) else []:
        meta = cell.get("metadata", {}).get("nbgrader", {}) if isinstance(cell, dict) else {}
        if isinstance(meta, dict) and isinstance(meta.get("grade_id"), str):
            ids.add(meta["grade_id"])
    return ids


def assignment_fingerprints(course: Course) -> dict[str, set[str]]:
    """Each assignment's graded cell ids, less those every assignment has (grading_tools)."""
    found = {}
    if course.source_root.is_dir():
        for folder in sorted(course.source_root.iterdir()):
            source = folder / f"{folder.name}.ipynb"
            try:
                found[folder.name] = _grade_ids(json.loads(source.read_text(encoding="utf-8")))
            except (OSError, ValueError):
                continue
    common = set.intersection(*found.values()) if len(found) > 1 else set()
    return {name: ids - common for name, ids in found.items()}


def _plain_name(file_name: str) -> str:
    """The student's file name without what LMSs add to repeated uploads ("-1", " (2)")."""
    stem = PurePosixPath(file_name).stem
    return re.sub(r"(-\d+| \(\d+\))$", "", stem).strip().lower()


def foreign_notebook(data: bytes, file_name: str, assignment: str, fingerprints: dict[str, set[str]]) -> str:
    """Why this notebook is not a submission for ``assignment`` ("" when it is one)."""
    named = _plain_name(file_name)
    try:
        ids = _grade_ids(json.loads(data))
    except (ValueError, UnicodeDecodeError, RecursionError):
        if named == assignment.lower():
            return ""  # the student's damaged notebook: placed, and grading says what is wrong with it
        return f"not a readable notebook, and its name does not say {assignment}"
    overlap = {name: len(ids & cells) for name, cells in fingerprints.items()}
    best = max(overlap, key=lambda name: (overlap[name], name == assignment), default=None)
    if best is not None and overlap[best]:
        if best != assignment and overlap[best] > overlap.get(assignment, 0):
            return f"a notebook of {best} (its graded cells are {best}'s), not of {assignment}"
        return ""
    if named == assignment.lower():
        return ""
    other = next((name for name in fingerprints if name.lower() == named), None)
    if other:
        return f"a notebook of {other} (by its name), not of {assignment}"
    return f"has none of {assignment}'s graded cells and is named {file_name!r}"


# -- who a file is from -------------------------------------------------------------------

@dataclass
class _Candidate:
    entry: _Entry
    student: str
    claim: Claim
    data: bytes
    order_time: datetime
    submitted_at: datetime | None

    @property
    def when(self) -> str:
        if self.claim.timestamp:
            return _shown(self.claim.timestamp)
        return f"{_shown(self.order_time)} (file)" if self.claim.lms not in NO_SUBMISSION_TIME else "(not in download)"


def _resolve(claims: list[Claim], roster, assignment: str) -> tuple[set[str], list[Claim], str]:
    """(roster ids the claims fit, the claims that fit them, why none fits)."""
    if roster is None:
        # No roster: only a plain folder per student is certain (the folder's name is the id).
        fitting = [c for c in claims if c.how == "id" and _STUDENT.match(c.key)
                   and c.folder in (c.key, f"{assignment}/{c.key}", f"{c.key}/{assignment}")]
        if fitting:
            return {fitting[0].key}, fitting, ""
        lms = sorted({c.lms for c in claims if c.lms not in GENERIC})
        return set(), [], ("no roster to match names against: run `course roster import roster.csv "
                           "--gradebook-only` (id,first_name,last_name,email,lms_id)"
                           + (f"; named as {', '.join(lms)} names files" if lms else ""))
    ids, fitting = set(), []
    for claim in claims:
        found = roster.lookup(claim.how, claim.key)
        if found:
            ids |= found
            fitting.append(claim)
    if ids:
        return ids, fitting, ""
    lms = [c for c in claims if c.lms not in GENERIC]
    if lms:
        said = ", ".join(sorted({f"{c.key!r}" for c in lms}))
        return set(), [], f"{lms[0].lms} names {said}: nobody on the roster ({roster.source}) fits"
    return set(), [], f"cannot tell the student from the name: no roster id ({roster.source}) fits"


def _best_claim(fitting: list[Claim]) -> Claim:
    """The LMS's own claim (it carries the time and the LATE mark) over a generic one."""
    return sorted(fitting, key=lambda c: (c.lms in GENERIC, c.timestamp is None))[0]


# -- placing ------------------------------------------------------------------------------

def _records_path(course: Course, assignment: str) -> Path:
    return course.root / "course" / "collected" / assignment / "records.json"


def load_records(course: Course, assignment: str) -> dict[str, dict]:
    """Per student, what the last collect placed: LMS, file, times, Canvas's LATE mark."""
    try:
        return json.loads(_records_path(course, assignment).read_text())
    except (OSError, ValueError):
        return {}


def _keep(kept: Path, name: str, data: bytes) -> None:
    target = kept / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


def collect_files(course: Course, assignment: str, source: Path, lms_timezone=None,
                  replace_graded: bool = False) -> CollectReport:
    from course.roster import RosterError, roster_index

    source = Path(source)
    report = CollectReport(assignment, str(source))
    zone = lms_timezone or local_timezone()
    if source.is_dir():
        entries = _entries_from_folder(source, report)
    elif source.is_file():
        try:
            archive = zipfile.ZipFile(source)
        except (zipfile.BadZipFile, OSError, ValueError) as error:
            raise CollectError(f"{source} is not a readable zip file ({error}); "
                               "download it again or unpack it and collect the folder") from None
        entries = _entries_from_zip(archive, report)
    else:
        raise CollectError(f"{source}: no such folder or zip file")
    try:
        roster = roster_index(course.root, course.db_url, course.course_id)
    except RosterError as error:
        raise CollectError(error.one_line()) from None
    fingerprints = assignment_fingerprints(course)
    schemes = namings(assignment, course.config)
    run = datetime.now().strftime("%Y%m%d-%H%M%S")
    kept = course.root / "course" / "collected" / assignment / run
    report.kept_at = kept

    candidates: dict[str, list[_Candidate]] = {}
    folders: dict[str, dict[str, _Entry]] = {}  # submission folder -> its other files by relative path
    total = 0
    for entry in entries:
        why = _unsafe(entry.name)
        if why:
            report.add("?", NOT_PLACED, entry.name, note=why)
            continue
        if entry.size > MAX_FILE_BYTES or total + entry.size > MAX_TOTAL_BYTES:
            report.add("?", NOT_PLACED, entry.name, note=f"too large ({entry.size} bytes)")
            continue
        total += entry.size
        try:
            data = entry.read()
        except _Damaged as error:
            report.add("?", NOT_PLACED, entry.name, note=str(error))
            continue
        _keep(kept, entry.name, data)
        ignored = _ignorable(entry.name)
        if ignored:
            report.add("-", IGNORED, entry.name, note=ignored)
            continue
        claims = [c for scheme in schemes for c in scheme.claims(entry.name, zone)]
        if not entry.name.lower().endswith(".ipynb"):
            for claim in claims:
                if claim.folder:
                    folders.setdefault(claim.folder, {})[entry.name[len(claim.folder) + 1:]] = entry
            continue  # placed with its folder's notebook, or listed below
        ids, fitting, why = _resolve(claims, roster, assignment)
        if not ids:
            report.add("?", NOT_PLACED, entry.name, note=why)
            continue
        if len(ids) > 1:
            report.add("?", NOT_PLACED, entry.name,
                       note=f"ambiguous: could be {', '.join(sorted(ids))} on the roster")
            continue
        student = ids.pop()
        claim = _best_claim(fitting)
        if claim.how == "prefix" and claim.key.startswith(student + "_"):
            claim = replace(claim, file_name=claim.key[len(student) + 1:])  # the student's own name for it
        foreign = foreign_notebook(data, claim.file_name, assignment, fingerprints)
        if foreign:
            report.add(student, NOT_PLACED, entry.name, note=foreign)
            continue
        order_time = claim.timestamp or entry.modified
        submitted_at = claim.timestamp or (None if claim.lms in NO_SUBMISSION_TIME else entry.modified)
        candidates.setdefault(student, []).append(_Candidate(entry, student, claim, data, order_time, submitted_at))

    records = load_records(course, assignment)
    used_folders: set[str] = set()
    for student, versions in sorted(candidates.items()):
        versions.sort(key=lambda c: c.order_time)
        chosen = versions[-1]
        rivals = [c for c in versions[:-1] if c.order_time == chosen.order_time and c.data != chosen.data]
        if rivals:
            for candidate in versions:
                report.add(student, NOT_PLACED, candidate.entry.name, candidate.when,
                           f"ambiguous: {len(rivals) + 1} different notebooks of {student} with the same "
                           "LMS time; none placed")
            continue
        for older in versions[:-1]:
            report.add(student, OLDER, older.entry.name, older.when, f"kept; the latest is {chosen.entry.name}")
        if chosen.claim.folder:
            used_folders.add(chosen.claim.folder)
        extras = sorted(folders.get(chosen.claim.folder, {}).items()) if chosen.claim.folder else []
        _place(course, assignment, chosen, extras, records, kept, replace_graded, report)
    placed_from = {name for folder in used_folders for name in (e.name for e in folders.get(folder, {}).values())}
    # Other files: placed with their folder's notebook above, or listed here, never placed alone.
    listed = {r.file for r in report.rows}
    for entry in entries:
        if entry.name in listed or entry.name in placed_from or entry.name.lower().endswith(".ipynb"):
            continue
        in_folder = any(entry.name in {e.name for e in files.values()} for files in folders.values())
        report.add("?", NOT_PLACED, entry.name, note="no notebook was placed from its folder" if in_folder
                   else "not a notebook and not in a student's folder")
    _records_path(course, assignment).parent.mkdir(parents=True, exist_ok=True)
    _records_path(course, assignment).write_text(json.dumps(records, indent=1, sort_keys=True))
    return report


def _place(course: Course, assignment: str, chosen: _Candidate, extras: list[tuple[str, _Entry]],
           records: dict, kept: Path, replace_graded: bool, report: CollectReport) -> None:
    student = chosen.student
    folder = course.submitted_root / student / assignment
    notebook = folder / f"{assignment}.ipynb"
    note = f"{chosen.claim.lms}" + (": marked LATE by Canvas" if chosen.claim.late else "")
    outcome = PLACED
    if folder.is_symlink() or folder.parent.is_symlink():
        report.add(student, NOT_PLACED, chosen.entry.name, chosen.when, "the submission folder is a link")
        return
    if notebook.is_file():
        if hashlib.sha256(notebook.read_bytes()).digest() == hashlib.sha256(chosen.data).digest():
            report.add(student, UNCHANGED, chosen.entry.name, chosen.when, note)
            return
        previous = records.get(student, {}).get("order_time")
        if previous and datetime.fromisoformat(previous) > chosen.order_time:
            report.add(student, NOT_PLACED, chosen.entry.name, chosen.when,
                       f"older than the submission in place ({records[student].get('file')}); kept that one")
            return
        graded = graded_score(course, assignment, student)
        if graded and not replace_graded:
            report.add(student, NOT_PLACED, chosen.entry.name, chosen.when,
                       f"differs from the submission in place, {graded}: kept that one; "
                       "`--replace-graded` places this one (then `course grade` grades it)")
            return
        shutil.copytree(folder, kept / "replaced" / student / assignment, dirs_exist_ok=True)
        shutil.rmtree(folder)
        outcome = REPLACED
        note += f"; the previous one ({graded or 'not graded'}) is in {kept / 'replaced' / student}"
    folder.mkdir(parents=True, exist_ok=True)
    notebook.write_bytes(chosen.data)
    for relative, entry in extras:
        if relative.endswith(".ipynb") or not relative or relative in RESERVED:
            if relative in RESERVED:
                report.add(student, NOT_PLACED, entry.name, note=f"reserved name: {RESERVED[relative]}")
            continue
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(entry.read())
    # Last, so that nothing above can replace it.
    stamp = folder / "timestamp.txt"
    stamp.unlink(missing_ok=True)
    if chosen.submitted_at:
        stamp.write_text(_stamp(chosen.submitted_at))
    records[student] = {"lms": chosen.claim.lms, "file": chosen.entry.name, "late": chosen.claim.late,
                        "order_time": chosen.order_time.isoformat(),
                        "submitted_at": chosen.submitted_at.isoformat() if chosen.submitted_at else None}
    report.add(student, outcome, chosen.entry.name, chosen.when, note)


# -- the exchange -------------------------------------------------------------------------

def collect_exchange(course: Course, assignment: str) -> CollectReport:
    from nbgrader.auth import Authenticator
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange.default import ExchangeCollect

    report = CollectReport(assignment, "nbgrader's exchange")
    inbound = course.exchange_root / course.course_id / "inbound"
    before = _submitted_digests(course, assignment)
    coursedir = CourseDirectory(config=course.config)
    coursedir.assignment_id = assignment
    collector = ExchangeCollect(coursedir=coursedir, authenticator=Authenticator(config=course.config),
                                config=course.config)
    collector.update = True
    try:
        collector.start()
    except Exception as error:  # noqa: BLE001 - nbgrader's ExchangeError and friends, reported as is
        raise CollectError(f"nbgrader collect failed: {error}") from None
    for record in getattr(collector, "src_records", None) or []:
        # The time nbgrader chose this submission by (its inbound folder's name), not the
        # timestamp.txt inside it, which whoever wrote the folder controls.
        stamp = course.submitted_root / record["username"] / assignment / "timestamp.txt"
        if stamp.parent.is_dir() and not stamp.parent.is_symlink():
            stamp.unlink(missing_ok=True)
            stamp.write_text(_stamp(record["timestamp"]))
    after = _submitted_digests(course, assignment)
    latest = {}
    if inbound.is_dir():
        for entry in sorted(inbound.iterdir()):
            parts = entry.name.split("+")
            if len(parts) >= 3 and parts[1] == assignment:
                latest[parts[0]] = entry.name
            elif len(parts) < 3:
                report.add("?", NOT_PLACED, entry.name, note="not an nbgrader submission folder")
    for student, name in sorted(latest.items()):
        when = name.split("+")[2]
        if student in before and before[student] == after.get(student):
            report.add(student, UNCHANGED, f"exchange {name}", when, "nbgrader exchange")
        elif student in before:
            graded = graded_score(course, assignment, student)
            report.add(student, REPLACED, f"exchange {name}", when,
                       f"a newer submission; the previous one ({graded or 'not graded'}) is still in the exchange"
                       + ("; `course grade` grades this one" if graded else ""))
        else:
            report.add(student, PLACED, f"exchange {name}", when, "nbgrader exchange")
    return report


def _submitted_digests(course: Course, assignment: str) -> dict[str, bytes]:
    digests = {}
    if course.submitted_root.is_dir():
        for notebook in course.submitted_root.glob(f"*/{assignment}/*.ipynb"):
            digests[notebook.parent.parent.name] = hashlib.sha256(notebook.read_bytes()).digest()
    return digests


def collect(course: Course, assignment: str, source: str | None, lms_timezone=None,
            replace_graded: bool = False) -> CollectReport:
    if source:
        return collect_files(course, assignment, Path(source), lms_timezone, replace_graded)
    report = collect_exchange(course, assignment)
    from course.roster import refuse_off_roster
    refused = refuse_off_roster(course.root, course.submitted_root, assignment, list(report.placed))
    for row in report.rows:
        if row.student in refused:
            row.outcome, row.note = NOT_PLACED, (f"not on the roster (`course roster import`); "
                                                 f"not graded, kept in {refused[row.student]}")
    return report


def local_timezone():
    """This machine's zone, with its daylight-saving rules (a fixed offset would be an hour
    off for half the year)."""
    name = os.environ.get("TZ", "").lstrip(":")
    try:
        if name:
            return ZoneInfo(name)
        with open("/etc/localtime", "rb") as handle:
            return ZoneInfo.from_file(handle, key="localtime")
    except (OSError, ValueError, KeyError):
        return datetime.now().astimezone().tzinfo


def parse_timezone(name: str | None):
    """The LMS's time zone for the times in its file names (default: this machine's)."""
    if not name:
        return None
    try:
        return ZoneInfo(name)
    except (ValueError, KeyError, OSError):
        raise CollectError(f"unknown time zone {name!r}: give an IANA name such as Europe/Berlin or UTC") from None
