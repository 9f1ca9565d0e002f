"""`course collect <a>`: bring submissions into ``submitted/<student>/<a>/``.

From nbgrader's exchange, or from a folder or zip file downloaded from an LMS (Canvas,
Moodle, Blackboard, Brightspace, or one folder per student). A file is placed only when
exactly one student on the roster is certainly its author and its graded cells are this
assignment's; anything else is listed, never placed, and the command exits 1.

**Who.** An LMS download names its files (``autograder/lms_names.py``, one path component
per scheme): each upload is matched against the roster exactly once, by the outermost
folder an LMS names a submission folder, else by the file's own name; a folder inside a
student's folder names nobody. Where the LMS writes a user id beside the name (Canvas,
Brightspace) the id must agree with the name. Names are compared as written: canonical
Unicode (NFC), case-folded, letters and digits only; look-alike characters (full-width
letters, ligatures) are other letters, never folded into a classmate's name. Two different
LMS senders (two Moodle participants, a Canvas and a folder name) that fit one student place
neither. From the exchange, a submission counts only when its folder and every file in it
belong to the student's Unix account (``c.CourseExchange.owner``, default the student id):
the inbound folder is writable by every student, and a folder's name is theirs to choose.

**When** (the time late penalties use, ``timestamp.txt``) is never the student's word:
Blackboard's and Brightspace's own time in the name (the first pattern in it: a student can
type another into their file name), nothing for Canvas and Moodle (their downloads carry no
submission time; Canvas's LATE mark is kept for `course export`), the server's own clock for
the exchange (the latest change time the kernel recorded on the submission's folder and
files: a student can neither set it back nor choose it by a folder name or timestamp.txt),
and the time of this collect for a plain folder or zip (its files' own times are whatever
the tool that wrote them kept, the student's included).

**Cost.** A download is bounded before it is parsed: the zip's central directory is
walked by its own byte counts (no more than ``ArchiveLimits.entries`` entries), each
entry's declared size and compression ratio are checked before it is inflated and nothing
past its declared size is ever read, a file and a folder of one name refuse that entry
alone, and every step is linear in the number of entries.

Versions: per student the latest version by LMS time is placed; a submission that was
graded already is never replaced unless ``--replace-graded`` is given (the exchange: a newer
submission of the student's own replaces it, said in the table), and an older file never
replaces a newer one. The download is kept under ``var/collected/<a>/<run>/``.
"""
from __future__ import annotations

import hashlib
import json
import os
import pwd
import re
import shutil
import stat
import struct
import zipfile
import zlib
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from zoneinfo import ZoneInfo

from traitlets import Unicode
from traitlets.config import Configurable

from coursebase.model import Course
from coursebase.roster import RosterError, roster_ids, roster_index

from .lms_names import (GENERIC, STUDENT_FOLDER, STUDENT_PREFIX, Claim, collect_rule, namings, not_a_submission,
                        untimed)
from .results import is_graded

# A student id read from a folder name when no roster is imported (the old layout).
_STUDENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$")
# Files the grader writes itself next to a submission; a student's copy would be taken as ours.
RESERVED = {"timestamp.txt": "the submission time comes from the LMS or the server, not from the student",
            "submission_secret.txt": "written by nbgrader's exchange only"}
# What an LMS puts beside a notebook that is not graded: exports of the notebook itself.
EXPORTS = (".html", ".htm", ".pdf")
PLACED, UNCHANGED, REPLACED, IGNORED, OLDER, NOT_PLACED = (
    "placed", "unchanged", "replaced", "ignored", "older version", "NOT PLACED")


@dataclass(frozen=True)
class ArchiveLimits:
    """What one download may cost the host. An honest class download is far inside each:
    300 students with a notebook and a few data files each are about 1,500 entries."""
    entries: int = 20_000              # files and folders in one download
    per_submission: int = 500          # files in one student's submission
    file_bytes: int = 64 * 1024**2     # one file, inflated
    total_bytes: int = 1024**3         # the whole download, inflated
    ratio: int = 100                   # inflated / compressed, for an entry of more than ratio_floor bytes
    ratio_floor: int = 1024**2
    directory_bytes: int = 32 * 1024**2  # the zip's central directory
    kept_refused: int = 200            # refused files of a zip also kept unpacked (the zip is kept whole)


LIMITS = ArchiveLimits()


class CollectError(Exception):
    """The source cannot be read at all; nothing was placed."""


class CourseExchange(Configurable):
    owner = Unicode("{student}", help="the Unix account that must own a student's submission in "
                    "nbgrader's exchange, from the student id: '{student}' (the course hub, a "
                    "roster's Unix users) or 'jupyter-{student}' (The Littlest JupyterHub)").tag(config=True)


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
    rule: str = field(default_factory=collect_rule)

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
        lines = [f"course collect {self.assignment} from {self.source}: {self.rule}."]
        if self.kept_at:
            lines.append(f"the download is kept in {self.kept_at} (git-ignored: it holds students' names)")
        if self.rows:
            header = Row("student", "outcome", "file", "time", "note")
            rows = [header] + sorted(self.rows, key=lambda r: (r.outcome != NOT_PLACED, r.student, r.file))
            widths = [min(48, max(len(getattr(r, name)) for r in rows))
                      for name in ("student", "outcome", "file", "when")]
            for row in rows:
                cells = [row.student, row.outcome, row.file, row.when]
                lines.append("  ".join(_fit(c, w) for c, w in zip(cells, widths)) + f"  {row.note}".rstrip())
        counts = Counter(r.outcome for r in self.rows)
        summary = f"collected {counts[PLACED] + counts[REPLACED]} submission(s)"
        if counts[UNCHANGED]:
            summary += f", {counts[UNCHANGED]} unchanged"
        if counts[IGNORED]:
            summary += f", {counts[IGNORED]} file(s) ignored (not graded)"
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


# -- reading a folder or a zip, bounded ---------------------------------------------------------

@dataclass
class _Entry:
    name: str            # path inside the folder or zip, POSIX style
    size: int
    modified: datetime
    read: object         # () -> bytes; raises _Damaged
    refused: str = ""    # why it is never read ("" when it may be)


class _Damaged(Exception):
    pass


def _entries_from_folder(folder: Path, report: CollectReport, limits: ArchiveLimits) -> list[_Entry]:
    """Regular files under ``folder``; links (to files or folders) and special files are
    listed in the report and not followed: a link could point at anything on this machine.
    More than ``limits.entries`` names stop the walk there (nothing placed)."""
    entries, seen = [], 0
    for directory, subdirectories, files in os.walk(folder):
        seen += len(subdirectories) + len(files)
        if seen > limits.entries:
            raise CollectError(f"{folder} holds more than {limits.entries:,} files and folders, more than a "
                               "class's download; remove what is not a submission and collect it again")
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
                def read(path=path, limit=info.st_size):
                    try:
                        with open(path, "rb") as handle:
                            return handle.read(limit)
                    except OSError as error:
                        raise _Damaged(f"unreadable: {error.strerror}") from None
                entries.append(_Entry(relative, info.st_size,
                                      datetime.fromtimestamp(info.st_mtime, timezone.utc), read))
    entries.sort(key=lambda e: e.name)
    return entries


_EOCD, _EOCD64_LOCATOR, _EOCD64, _CENTRAL = b"PK\x05\x06", b"PK\x06\x07", b"PK\x06\x06", b"PK\x01\x02"


def check_central_directory(path: Path, limits: ArchiveLimits = LIMITS) -> int:
    """How many entries the zip at ``path`` holds, counted by walking its central directory
    by the byte counts in each header (the same bytes zipfile will parse), before zipfile
    builds an object per entry. CollectError past the limits, naming the folders with the
    most entries (so the instructor knows whose upload to remove)."""
    size = path.stat().st_size
    with open(path, "rb") as handle:
        tail_size = min(size, 22 + 65535 + 20)
        handle.seek(size - tail_size)
        tail = handle.read(tail_size)
        at = tail.rfind(_EOCD)
        if at < 0 or len(tail) - at < 22:
            raise CollectError(f"{path} is not a readable zip file (no end of central directory); "
                               "download it again or unpack it and collect the folder")
        (_, _, _, _, _, cd_size, cd_offset, _) = struct.unpack("<4s4H2LH", tail[at: at + 22])
        eocd_at = size - tail_size + at
        if at >= 20 and tail[at - 20: at - 16] == _EOCD64_LOCATOR:
            # zip64 (more than 65,535 entries or 4 GiB): the real counts are in its own record,
            # which sits between the central directory and the end record
            eocd_at = size - tail_size + at - 20 - 56
            handle.seek(max(0, eocd_at))
            record = handle.read(56)
            if len(record) != 56 or record[:4] != _EOCD64:
                raise CollectError(f"{path} is not a readable zip file (damaged zip64 record)")
            (_, _, _, _, _, _, _, _, cd_size, cd_offset) = struct.unpack("<4sQ2H2L4Q", record)
        if cd_size > limits.directory_bytes:
            raise CollectError(f"{path}: its table of contents is {cd_size:,} bytes, more than a class's download "
                               f"(at most {limits.directory_bytes:,}); nothing was placed")
        start = eocd_at - cd_size  # zipfile's own rule: data prepended to the archive moves everything
        if start < 0:
            raise CollectError(f"{path} is not a readable zip file (damaged central directory)")
        handle.seek(start)
        directory = handle.read(cd_size)
    count, at, tops = 0, 0, Counter()
    while at + 46 <= len(directory) and directory[at: at + 4] == _CENTRAL:
        name_length, extra_length, comment_length = struct.unpack_from("<3H", directory, at + 28)
        name = directory[at + 46: at + 46 + name_length]
        tops[name.split(b"/", 1)[0]] += 1
        count += 1
        at += 46 + name_length + extra_length + comment_length
    if at != len(directory):
        raise CollectError(f"{path} is not a readable zip file (damaged central directory); "
                           "download it again or unpack it and collect the folder")
    if count > limits.entries:
        biggest = ", ".join(f"{top.decode('utf-8', 'replace')!r} ({n:,})" for top, n in tops.most_common(3))
        raise CollectError(
            f"{path} holds {count:,} entries, more than a class's download (at most {limits.entries:,}); "
            f"the most are under {biggest}. Nothing was placed: remove that upload "
            f"(`zip -d DOWNLOAD.zip 'NAME/*'`) and collect again")
    return count


def _entries_from_zip(archive: zipfile.ZipFile, report: CollectReport, limits: ArchiveLimits) -> list[_Entry]:
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
        refused = ""
        if info.file_size > limits.ratio_floor and info.file_size > limits.ratio * max(1, info.compress_size):
            refused = (f"compressed {info.file_size // max(1, info.compress_size):,}:1 ({info.file_size:,} bytes "
                       f"from {info.compress_size:,}): not something a student hands in; not unpacked")

        def read(info=info):
            # Never more than the header says (the cap was checked against it): a lying header
            # cannot make the host inflate more, and a CRC or inflate error names this entry alone.
            try:
                with archive.open(info) as handle:
                    data = handle.read(info.file_size + 1)
            except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError,
                    OSError, ValueError) as error:
                raise _Damaged(f"damaged in the archive ({type(error).__name__}: {error})") from None
            if len(data) != info.file_size:
                raise _Damaged("damaged in the archive (not the length its header says)")
            return data
        entries.append(_Entry(info.filename, info.file_size, modified, read, refused))
    return entries


def _unsafe(name: str) -> str:
    if name.startswith("/") or ".." in name.split("/") or "\\" in name or "\x00" in name:
        return "path points outside the archive"
    return ""


def _clashes(names: list[str]) -> dict[str, str]:
    """Names that cannot all be written: the same name twice, or a file that is also a
    folder of other entries. Linear: each name adds its own folders once."""
    counts = Counter(names)
    folders = set()
    for name in counts:
        parts = name.split("/")
        for end in range(1, len(parts)):
            folders.add("/".join(parts[:end]))
    clashes = {}
    for name, count in counts.items():
        if count > 1:
            clashes[name] = f"the archive holds {count} entries of this name; none of them is used"
        elif name in folders:
            clashes[name] = "a file and a folder of the same name in the archive; the file is not used"
    return clashes


def _ignorable(name: str) -> str:
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if any(p.startswith(("__MACOSX", ".")) for p in parts) or ".ipynb_checkpoints" in parts:
        return "system file from the archive tool or Jupyter"
    return not_a_submission(parts[-1])


def _export(name: str) -> str:
    if name.lower().endswith(EXPORTS):
        return "an HTML or PDF export beside the notebook: the notebook is graded"
    return ""


# -- which assignment a notebook is -------------------------------------------------------

_GRADE_ID = re.compile(rb'"grade_id"\s*:\s*"((?:[^"\\]|\\.){1,200})"')


def _grade_ids_in(data: bytes) -> set[str] | None:
    """The graded cell ids a notebook's text names, read by a linear scan (a hostile notebook
    of millions of cells costs its bytes, not a parse tree); None when it is not JSON-like."""
    if not data.lstrip()[:1] == b"{":
        return None
    found = set()
    for match in _GRADE_ID.finditer(data):
        try:
            found.add(json.loads(b'"' + match.group(1) + b'"'))
        except ValueError:
            continue
    return found


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
    ids = _grade_ids_in(data)
    if ids is None:
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
class _Reading:
    """What a path says about its sender: the claims of one component, and where in the
    path the submission starts."""
    claims: list[Claim]
    folder: str | None       # the submission's folder ("" for a flat file)
    inner: str               # the path inside that folder (the file's name for a flat file)
    generic: bool = False    # a folder or file name per student id, not an LMS's naming
    fallback: list[Claim] = field(default_factory=list)  # a flat file's name read as a student id's,
                                                         # when its LMS reading fits nobody


def _read_path(name: str, schemes, roster, assignment: str, zone, seen: dict | None = None) -> _Reading:
    """The outermost submission folder an LMS names, else a folder named by a roster id,
    else the file's own LMS name (then, if that fits nobody, the file's name read as a
    student id's). Nothing inside a submission folder names anyone. ``seen`` caches each
    folder's reading (a submission's files share it)."""
    parts = name.split("/")
    folders, base = parts[:-1], parts[-1]
    seen = {} if seen is None else seen
    for depth, component in enumerate(folders):
        if component not in seen:
            seen[component] = [c for s in schemes if s.reads == "folder" for c in s.claims(component, zone)]
        claims = seen[component]
        if claims:
            top = "/".join(parts[: depth + 1])
            return _Reading([replace(c, file_name=base, folder=top) for c in claims], top,
                            "/".join(parts[depth + 1:]))
    generic = _generic_reading(parts, roster, assignment)
    if generic.folder:
        return generic
    claims = [c for s in schemes if s.reads == "file" for c in s.claims(base, zone)]
    if claims:
        return _Reading(claims, "", base, fallback=generic.claims if roster is not None else [])
    return generic


def _generic_reading(parts: list[str], roster, assignment: str) -> _Reading:
    """A folder per student: the outermost folder that is a roster id (wrapper folders above
    it are fine); without a roster, the first folder (the second under one named for the
    assignment), whose name is the id. Else a flat file named from a roster id."""
    folders, base = parts[:-1], parts[-1]
    if roster is not None:
        for depth, component in enumerate(folders):
            if roster.by_id(component):
                top = "/".join(parts[: depth + 1])
                return _Reading([Claim(STUDENT_FOLDER, "id", component, base, None, folder=top,
                                       identity=f"folder {top}")], top, "/".join(parts[depth + 1:]), True)
        return _Reading([Claim(STUDENT_PREFIX, "prefix", base, base, None, identity=f"file name {base}")],
                        "", base, True)
    start = 1 if folders[:1] == [assignment] else 0
    if len(folders) > start:
        student = folders[start]
        inside = folders[start + 1:]
        if inside in ([], [assignment]) and _STUDENT.match(student):
            top = "/".join(parts[: start + 1 + len(inside)])
            return _Reading([Claim(STUDENT_FOLDER, "id", student, base, None, folder=top,
                                   identity=f"folder {top}")], top, base, True)
    return _Reading([], "", base, True)


def _resolve(reading: _Reading, roster) -> tuple[str | None, Claim | None, str]:
    """(the one roster id the reading fits, the claim that says so, why none)."""
    claims = reading.claims
    if roster is None:
        if reading.generic and claims:
            return claims[0].key, claims[0], ""
        lms = sorted({c.lms for c in claims if c.lms not in GENERIC})
        return None, None, ("no roster to match names against: run `course roster import roster.csv "
                            "--gradebook-only` (id,first_name,last_name,email,lms_id)"
                            + (f"; named as {', '.join(lms)} names files" if lms else ""))
    if reading.generic:
        claim = claims[0]
        found = roster.lookup(claim.how, claim.key)
        if len(found) == 1:
            return next(iter(found)), claim, ""
        if found:
            return None, None, f"ambiguous: could be {', '.join(sorted(found))} on the roster"
        return None, None, f"cannot tell the student from the name: no roster id ({roster.source}) fits"
    # One LMS reading (its id and its name) must name one student, and agree.
    fits: set[str] = set()
    for identity in dict.fromkeys(c.identity for c in claims):
        mine = [c for c in claims if c.identity == identity]
        by_id = set().union(*(roster.lookup(c.how, c.key) for c in mine if c.how == "lms_id"))
        named = [c for c in mine if c.how != "lms_id"]
        by_name = set().union(*(roster.lookup(c.how, c.key) for c in named))
        if by_id and by_name and by_id != by_name:
            return None, None, (f"{identity} is {', '.join(sorted(by_id))} on the roster, but the name "
                                f"{named[0].key!r} is {', '.join(sorted(by_name))}'s")
        if not by_id and len(by_name) == 1 and any(c.how == "lms_id" for c in mine):
            student = next(iter(by_name))
            known = roster.students[student].lms_id
            if known:
                return None, None, (f"{identity} is not {student}'s (the roster's lms_id is {known}); "
                                    f"the name {named[0].key!r} alone is not enough")
        fits |= by_id or by_name
    if len(fits) > 1:
        return None, None, f"ambiguous: could be {', '.join(sorted(fits))} on the roster"
    if fits:
        student = next(iter(fits))
        return student, sorted(claims, key=lambda c: c.how != "lms_id")[0], ""
    if reading.fallback:
        student, claim, why = _resolve(_Reading(reading.fallback, "", reading.inner, True), roster)
        if student or why.startswith("ambiguous"):
            return student, claim, why
    said = ", ".join(sorted({repr(c.key) for c in claims}))
    return None, None, f"{claims[0].lms} names {said}: nobody on the roster ({roster.source}) fits"


# -- placing ------------------------------------------------------------------------------

def _records_path(course: Course, assignment: str) -> Path:
    return course.collected_root / assignment / "records.json"


def load_records(course: Course, assignment: str) -> dict[str, dict]:
    """Per student, what the last collect placed: LMS, file, times, Canvas's LATE mark, and
    the LMS's own name for the upload (to hand a feedback file back the same way)."""
    try:
        return json.loads(_records_path(course, assignment).read_text())
    except (OSError, ValueError):
        return {}


@dataclass
class _Candidate:
    entry: _Entry
    student: str
    claim: Claim
    data: bytes
    order_time: datetime
    submitted_at: datetime | None
    identity: str
    extras: list[tuple[str, _Entry]] = field(default_factory=list)

    @property
    def when(self) -> str:
        if self.claim.timestamp:
            return _shown(self.claim.timestamp)
        if untimed(self.claim.lms):
            return "(not in download)"
        return f"{_shown(self.submitted_at)} (collected)" if self.submitted_at else ""


def collect_files(course: Course, assignment: str, source: Path, lms_timezone=None,
                  replace_graded: bool = False, limits: ArchiveLimits = LIMITS) -> CollectReport:
    """An LMS download (a folder or a zip) collected in four steps: read it within the limits,
    read who each file is from, choose each student's latest notebook and place it with the
    files beside it, and list every file not placed. The download is kept as it came."""
    source = Path(source)
    report = CollectReport(assignment, str(source))
    entries, archive = _open_download(source, report, limits)
    try:
        roster = roster_index(course)
    except RosterError as error:
        raise CollectError(error.one_line()) from None
    keeper = _Keeper(course.collected_root / assignment / datetime.now().strftime("%Y%m%d-%H%M%S"),
                     source if archive is not None else None, report, limits)
    readings = _read_senders(entries, namings(course.config), roster, assignment,
                             lms_timezone or local_timezone(), report, keeper, limits)
    found = _candidates(readings, roster, assignment, assignment_fingerprints(course), keeper, limits)
    records = load_records(course, assignment)
    placed = _place_latest(course, assignment, found, records, keeper, replace_graded, report)
    _list_not_placed(found, placed, report)
    _records_path(course, assignment).parent.mkdir(parents=True, exist_ok=True)
    _records_path(course, assignment).write_text(json.dumps(records, indent=1, sort_keys=True))
    return report


def _open_download(source: Path, report: CollectReport, limits: ArchiveLimits):
    """(the entries of a folder or zip, the open zip or None), bounded before anything is parsed."""
    if source.is_dir():
        return _entries_from_folder(source, report, limits), None
    if not source.is_file():
        raise CollectError(f"{source}: no such folder or zip file")
    check_central_directory(source, limits)
    try:
        archive = zipfile.ZipFile(source)
    except (zipfile.BadZipFile, OSError, ValueError) as error:
        raise CollectError(f"{source} is not a readable zip file ({error}); "
                           "download it again or unpack it and collect the folder") from None
    return _entries_from_zip(archive, report, limits), archive


class _Keeper:
    """The download, kept under var/collected/<a>/<run>/: a folder's files copied as met; a
    zip whole (download.zip), with its refused notebooks also unpacked beside it for review
    (a bounded number)."""

    def __init__(self, folder: Path, archive: Path | None, report: CollectReport, limits: ArchiveLimits):
        self.folder, self.zipped, self.report, self.limits = folder, archive is not None, report, limits
        self.unpacked = 0
        report.kept_at = folder
        folder.mkdir(parents=True, exist_ok=True)
        if archive is not None:
            shutil.copyfile(archive, folder / "download.zip")  # every file, byte for byte, in one write

    def keep(self, entry: _Entry, data: bytes | None, refused: bool) -> None:
        if self.zipped:
            if data is None or not refused or not entry.name.lower().endswith(".ipynb") \
                    or self.unpacked >= self.limits.kept_refused:
                return
            self.unpacked += 1
        elif data is None:
            try:
                data = entry.read()
            except _Damaged:
                return
        target = self.folder / entry.name
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        except OSError:
            pass  # e.g. a name this file system cannot hold; the download itself is kept

    def refuse(self, entry: _Entry, note: str, student: str = "?", data: bytes | None = None, when: str = "") -> None:
        self.report.add(student, NOT_PLACED, entry.name, when, note)
        self.keep(entry, data, True)


def _read_senders(entries: list[_Entry], schemes, roster, assignment: str, zone, report: CollectReport,
                  keeper: _Keeper, limits: ArchiveLimits) -> list[tuple[_Entry, _Reading]]:
    """Who each entry is from, as its path says; entries that are unsafe, not a submission
    (system files, an LMS's receipts and index, exports), or in a folder of more files than
    one submission holds are listed and left out."""
    clashes = _clashes([e.name for e in entries])
    readings, per_folder, folder_readings = [], Counter(), {}
    for entry in entries:
        why = _unsafe(entry.name) or clashes.get(entry.name, "") or entry.refused
        if why:
            keeper.refuse(entry, why)
            continue
        ignored = _ignorable(entry.name)
        if not ignored:
            reading = _read_path(entry.name, schemes, roster, assignment, zone, folder_readings)
            ignored = next((c.ignored for c in reading.claims if c.ignored), "") or _export(entry.name)
        if ignored:
            report.add("-", IGNORED, entry.name, note=ignored)
            continue
        if reading.folder:
            per_folder[reading.folder] += 1
        readings.append((entry, reading))
    crowded = {folder: count for folder, count in per_folder.items() if count > limits.per_submission}
    for entry, reading in readings:
        if reading.folder in crowded:
            keeper.refuse(entry, f"its submission folder holds {crowded[reading.folder]:,} files, more than "
                                 f"{limits.per_submission} (a notebook and its data): none of them is placed")
    return [(entry, reading) for entry, reading in readings if reading.folder not in crowded]


@dataclass
class _Found:
    """A download's notebooks by student, and the other files that may go beside them."""
    candidates: dict[str, list[_Candidate]] = field(default_factory=dict)
    extras: dict[tuple[str, str], list[tuple[str, _Entry]]] = field(default_factory=dict)  # (identity, folder)
    loose: list[tuple[_Entry, str, str, str]] = field(default_factory=list)  # flat: (entry, student, identity, name)


def _candidates(readings, roster, assignment: str, fingerprints: dict[str, set[str]], keeper: _Keeper,
                limits: ArchiveLimits) -> _Found:
    """Each readable notebook of this assignment whose sender is one student on the roster,
    with its time; files in a submission folder, and flat files of a known sender, set aside
    to go beside that sender's notebook. Everything else is refused."""
    found, total, now = _Found(), 0, datetime.now(timezone.utc)
    for entry, reading in readings:
        if entry.size > limits.file_bytes or total + entry.size > limits.total_bytes:
            keeper.refuse(entry, f"too large ({entry.size:,} bytes; at most {limits.file_bytes:,} per file and "
                                 f"{limits.total_bytes:,} in all)")
            continue
        total += entry.size
        is_notebook = entry.name.lower().endswith(".ipynb")
        if not is_notebook and reading.folder:   # placed with its folder's notebook, or listed
            keeper.keep(entry, None, False)
            found.extras.setdefault((reading.claims[0].identity, reading.folder), []).append((reading.inner, entry))
            continue
        try:
            data = entry.read()
        except _Damaged as error:
            keeper.refuse(entry, str(error))
            continue
        keeper.keep(entry, data, False)
        student, claim, why = _resolve(reading, roster)
        if student is None:
            keeper.refuse(entry, why if is_notebook else "not a notebook and not in a student's folder", data=data)
            continue
        if claim.how == "prefix":   # the student's own name for the file, after "<id>_"
            own = claim.key[len(student) + 1:] if claim.key.startswith(student + "_") else claim.key
            claim = replace(claim, file_name=own, identity=f"files named {student}_...")
        if not is_notebook:
            found.loose.append((entry, student, claim.identity, claim.file_name))
            continue
        foreign = foreign_notebook(data, claim.file_name, assignment, fingerprints)
        if foreign:
            keeper.refuse(entry, foreign, student, data)
            continue
        if claim.timestamp:                    # the LMS's own time
            order_time, submitted_at = claim.timestamp, claim.timestamp
        elif untimed(claim.lms):               # the download's time orders; no submission time
            order_time, submitted_at = entry.modified, None
        else:                                  # a plain folder or zip: nothing but this collect's time
            order_time, submitted_at = now, now
        found.candidates.setdefault(student, []).append(
            _Candidate(entry, student, claim, data, order_time, submitted_at, claim.identity))
    return found


def _place_latest(course: Course, assignment: str, found: _Found, records: dict, keeper: _Keeper,
                  replace_graded: bool, report: CollectReport) -> set[str]:
    """Per student, the latest notebook of one sender placed with the files beside it; two
    senders, or two different notebooks of the same time, place none. Returns the entries placed."""
    placed: set[str] = set()
    for student, versions in sorted(found.candidates.items()):
        senders = sorted({v.identity for v in versions})
        if len(senders) > 1:
            for candidate in versions:
                keeper.refuse(candidate.entry, f"{len(senders)} different senders fit {student}: "
                              f"{'; '.join(senders)}; none placed (a name alone cannot tell them apart)",
                              student, candidate.data, candidate.when)
            continue
        versions.sort(key=lambda c: c.order_time)
        chosen = versions[-1]
        rivals = [c for c in versions[:-1] if c.order_time == chosen.order_time and c.data != chosen.data]
        if rivals:
            for candidate in versions:
                keeper.refuse(candidate.entry, f"ambiguous: {len(rivals) + 1} different notebooks of {student} "
                              "with the same time; none placed", student, candidate.data, candidate.when)
            continue
        for older in versions[:-1]:
            report.add(student, OLDER, older.entry.name, older.when, f"kept; the latest is {chosen.entry.name}")
        beside = list(found.extras.get((chosen.identity, chosen.claim.folder), [])) if chosen.claim.folder else []
        beside += [(name, e) for e, owner, identity, name in found.loose
                   if owner == student and identity == chosen.identity]
        if _place(course, assignment, chosen, beside, records, keeper.folder, replace_graded, report):
            placed |= {chosen.entry.name} | {e.name for _, e in beside}
    return placed


def _list_not_placed(found: _Found, placed: set[str], report: CollectReport) -> None:
    """Files that go beside a notebook are placed with it or listed here, never placed alone."""
    listed = {r.file for r in report.rows}
    for files in found.extras.values():
        for _, entry in files:
            if entry.name not in listed and entry.name not in placed:
                report.add("?", NOT_PLACED, entry.name, note="no notebook was placed from its folder")
    for entry, student, _, _ in found.loose:
        if entry.name not in placed and entry.name not in listed:
            report.add(student, NOT_PLACED, entry.name, note="not a notebook, and no notebook of "
                       f"{student} from the same sender was placed")


def _place(course: Course, assignment: str, chosen: _Candidate, extras: list[tuple[str, _Entry]],
           records: dict, kept: Path, replace_graded: bool, report: CollectReport) -> bool:
    student = chosen.student
    folder = course.submitted_root / student / assignment
    notebook = folder / f"{assignment}.ipynb"
    note = f"{chosen.claim.lms}" + (f": marked LATE by {chosen.claim.lms}" if chosen.claim.late else "")
    outcome = PLACED
    if folder.is_symlink() or folder.parent.is_symlink():
        report.add(student, NOT_PLACED, chosen.entry.name, chosen.when, "the submission folder is a link")
        return False
    if notebook.is_file():
        if hashlib.sha256(notebook.read_bytes()).digest() == hashlib.sha256(chosen.data).digest():
            report.add(student, UNCHANGED, chosen.entry.name, chosen.when, note)
            return True
        previous = records.get(student, {}).get("order_time")
        if previous and datetime.fromisoformat(previous) > chosen.order_time:
            report.add(student, NOT_PLACED, chosen.entry.name, chosen.when,
                       f"older than the submission in place ({records[student].get('file')}); kept that one")
            return False
        graded = is_graded(course, assignment, student)
        if graded and not replace_graded:
            report.add(student, NOT_PLACED, chosen.entry.name, chosen.when,
                       "differs from the submission in place, which is graded: kept that one; "
                       "`--replace-graded` places this one (then `course grade` grades it)")
            return False
        shutil.copytree(folder, kept / "replaced" / student / assignment, dirs_exist_ok=True)
        shutil.rmtree(folder)
        outcome = REPLACED
        note += f"; the previous one ({'graded' if graded else 'not graded'}) is in {kept / 'replaced' / student}"
    folder.mkdir(parents=True, exist_ok=True)
    notebook.write_bytes(chosen.data)
    for relative, entry in extras:
        if relative.endswith(".ipynb") or not relative:
            continue
        if relative in RESERVED:
            report.add(student, NOT_PLACED, entry.name, note=f"reserved name: {RESERVED[relative]}")
            continue
        target = folder / relative
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(entry.read())
        except (OSError, _Damaged) as error:
            report.add(student, NOT_PLACED, entry.name, note=f"not placed beside the notebook ({error})")
    # Last, so that nothing above can replace it.
    stamp = folder / "timestamp.txt"
    stamp.unlink(missing_ok=True)
    if chosen.submitted_at:
        stamp.write_text(_stamp(chosen.submitted_at))
    records[student] = {"lms": chosen.claim.lms, "file": chosen.entry.name, "late": chosen.claim.late,
                        "order_time": chosen.order_time.isoformat(),
                        "submitted_at": chosen.submitted_at.isoformat() if chosen.submitted_at else None,
                        "identity": chosen.identity, "lms_prefix": chosen.claim.prefix}
    report.add(student, outcome, chosen.entry.name, chosen.when, note)
    return True


# -- the exchange -------------------------------------------------------------------------

@dataclass
class _Inbound:
    name: str
    path: Path
    student: str
    server_time: datetime
    files: list[Path]


def _owner(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _inspect_submission(path: Path, expected_owner: str, limits: ArchiveLimits) -> tuple[list[Path], datetime, str]:
    """(the submission's files, the latest change time the kernel recorded on it, why it
    is refused or ""). Every folder and file must belong to ``expected_owner``."""
    top = path.lstat()
    if not stat.S_ISDIR(top.st_mode):
        return [], datetime.fromtimestamp(top.st_ctime, timezone.utc), "not a folder"
    latest, files, strangers, count = top.st_ctime, [], {}, 0
    if _owner(top.st_uid) != expected_owner:
        strangers[_owner(top.st_uid)] = "the folder"
    for directory, subdirectories, names in os.walk(path):
        for name in subdirectories + names:
            count += 1
            if count > limits.per_submission:
                return [], datetime.fromtimestamp(latest, timezone.utc), (
                    f"more than {limits.per_submission} files: not a submission")
            item = Path(directory) / name
            info = item.lstat()
            latest = max(latest, info.st_ctime)
            owner = _owner(info.st_uid)
            if owner != expected_owner:
                strangers.setdefault(owner, item.relative_to(path).as_posix())
            if stat.S_ISLNK(info.st_mode):
                return [], datetime.fromtimestamp(latest, timezone.utc), (
                    f"holds a symbolic link ({item.relative_to(path).as_posix()}): not followed")
            if name in names:
                if not stat.S_ISREG(info.st_mode):
                    return [], datetime.fromtimestamp(latest, timezone.utc), "holds something not a regular file"
                files.append(item)
    when = datetime.fromtimestamp(latest, timezone.utc)
    if strangers:
        who = ", ".join(f"{owner} ({what})" for owner, what in sorted(strangers.items()))
        return files, when, f"written by {who}"
    return files, when, ""


def collect_exchange(course: Course, assignment: str, limits: ArchiveLimits = LIMITS,
                     replace_graded: bool = True) -> CollectReport:
    """Each student's latest submission in nbgrader's inbound folder, by the server's clock,
    when the student's own account wrote all of it."""
    report = CollectReport(assignment, "nbgrader's exchange", rule=(
        "per student the latest submission by the server's clock, written by the student's own account "
        "(its folder name and timestamp.txt are the student's and are not trusted)"))
    inbound = course.exchange_root / course.course_id / "inbound"
    if not inbound.is_dir():
        raise CollectError(f"no exchange inbound folder at {inbound}: release with `course release "
                           f"{assignment} --exchange` and let students submit, or collect an LMS download "
                           f"with --from")
    template = CourseExchange(config=course.config).owner
    try:
        allowed = roster_ids(course)
    except RosterError as error:
        raise CollectError(error.one_line()) from None
    # First each folder's own owner (one lstat): a classmate's folders named for a student
    # are refused here and never count against that student.
    own: dict[str, list[str]] = {}
    with os.scandir(inbound) as listing:
        names = sorted(entry.name for entry in listing)
    for name in names:
        parts = name.rsplit("+", 3) if name.count("+") >= 3 else name.rsplit("+", 2)
        if len(parts) < 3 or not _STUDENT.match(parts[0]):
            report.add("?", NOT_PLACED, f"exchange {name}", note="not an nbgrader submission folder")
            continue
        student, named_assignment = parts[0], parts[1]
        if named_assignment != assignment:
            continue
        expected = template.format(student=student)
        info = (inbound / name).lstat()
        if _owner(info.st_uid) != expected:
            report.add(student, NOT_PLACED, f"exchange {name}", _shown(datetime.fromtimestamp(info.st_ctime, timezone.utc)),
                       f"named for {student} but written by {_owner(info.st_uid)} (the folder); "
                       f"expected the account {expected}")
            continue
        own.setdefault(student, []).append(name)
    owned: dict[str, list[_Inbound]] = {}
    for student, folders in sorted(own.items()):
        if len(folders) > limits.per_submission:
            report.add(student, NOT_PLACED, f"exchange {student}+{assignment}+... ({len(folders):,} folders)",
                       note=f"more than {limits.per_submission} submissions of one student: remove old ones "
                            "from the exchange's inbound folder and collect again")
            continue
        expected = template.format(student=student)
        for name in folders:
            files, when, why = _inspect_submission(inbound / name, expected, limits)
            if why:
                report.add(student, NOT_PLACED, f"exchange {name}", _shown(when),
                           f"named for {student} but {why}; expected the account {expected}"
                           if why.startswith("written") else why)
                continue
            owned.setdefault(student, []).append(_Inbound(name, inbound / name, student, when, files))
    records = load_records(course, assignment)
    for student, versions in sorted(owned.items()):
        versions.sort(key=lambda v: (v.server_time, v.name))
        chosen = versions[-1]
        shown = f"exchange {chosen.name}"
        if allowed is not None and student not in allowed:
            report.add(student, NOT_PLACED, shown, _shown(chosen.server_time),
                       "not on the roster (`course roster import`); not placed, still in the exchange")
            continue
        _place_exchange(course, assignment, chosen, records, replace_graded, report)
    _records_path(course, assignment).parent.mkdir(parents=True, exist_ok=True)
    _records_path(course, assignment).write_text(json.dumps(records, indent=1, sort_keys=True))
    return report


def _place_exchange(course: Course, assignment: str, chosen: _Inbound, records: dict,
                    replace_graded: bool, report: CollectReport) -> None:
    student, shown = chosen.student, f"exchange {chosen.name}"
    folder = course.submitted_root / student / assignment
    when = _shown(chosen.server_time)
    if folder.is_symlink() or folder.parent.is_symlink():
        report.add(student, NOT_PLACED, shown, when, "the submission folder is a link")
        return
    contents = {}
    for path in chosen.files:
        relative = path.relative_to(chosen.path).as_posix()
        if relative == "timestamp.txt":
            continue  # the student's clock; ours is written below
        try:
            contents[relative] = path.read_bytes()
        except OSError as error:
            report.add(student, NOT_PLACED, shown, when, f"unreadable: {relative}: {error.strerror}")
            return
    # A change while it was read moves the server time on; take the latest.
    _, after, _ = _inspect_submission(chosen.path, _owner(chosen.path.lstat().st_uid), LIMITS)
    server_time = max(chosen.server_time, after)
    previous = records.get(student, {})
    before = _digest_of(folder)
    if before is not None and before == _digest_of_contents(contents):
        report.add(student, UNCHANGED, shown, when, "nbgrader exchange")
        return
    if previous.get("order_time") and datetime.fromisoformat(previous["order_time"]) > server_time:
        report.add(student, NOT_PLACED, shown, when, f"older than the submission in place ({previous.get('file')})")
        return
    outcome, note = PLACED, "nbgrader exchange"
    if before is not None:
        graded = is_graded(course, assignment, student)
        if graded and not replace_graded:
            report.add(student, NOT_PLACED, shown, when, "differs from the submission in place, which is graded")
            return
        outcome = REPLACED
        note = (f"a newer submission; the previous one ({'graded' if graded else 'not graded'}) is still in the exchange"
                + ("; `course grade` grades this one" if graded else ""))
        shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for relative, data in contents.items():
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    (folder / "timestamp.txt").write_text(_stamp(server_time))
    records[student] = {"lms": "exchange", "file": shown, "late": False, "order_time": server_time.isoformat(),
                        "submitted_at": server_time.isoformat(), "identity": f"Unix account "
                        f"{_owner(chosen.path.lstat().st_uid)}", "lms_prefix": ""}
    report.add(student, outcome, shown, _shown(server_time), note)


def _digest_of_contents(contents: dict[str, bytes]) -> str:
    digest = hashlib.sha256()
    for relative in sorted(contents):
        if relative.endswith(".ipynb"):
            digest.update(relative.encode() + b"\0" + hashlib.sha256(contents[relative]).digest())
    return digest.hexdigest()


def _digest_of(folder: Path) -> str | None:
    """The digest of the notebooks in place (what grading reads), None when nothing is."""
    if not folder.is_dir():
        return None
    contents = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*.ipynb") if p.is_file()}
    return _digest_of_contents(contents) if contents else None


def collect(course: Course, assignment: str, source: str | None, lms_timezone=None,
            replace_graded: bool = False, limits: ArchiveLimits = LIMITS) -> CollectReport:
    if source:
        return collect_files(course, assignment, Path(source), lms_timezone, replace_graded, limits)
    return collect_exchange(course, assignment, limits)


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
