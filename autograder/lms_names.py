"""How each LMS names the files of a "download all submissions" archive.

Each naming is declared once, here: a class in NAMINGS, with its test's examples in
tests/test_lms_names.py (adding an LMS's naming touches these two files; `course collect`,
its help and its report read everything from the class). One nbgrader
``FileNameCollectorPlugin`` per naming scheme, each with its ``named_regexp``
(nbgrader's plugin point for exactly this: ``nbgrader zip_collect``). A plugin says *who the
LMS says* the file is from (``student_id``, a name, a user number), *when* (``timestamp``,
where the LMS writes one into the name) and the student's own file name (``file_id``); who
that is on the course roster is decided in ``autograder/collect.py``, never here.

Each regexp reads **one path component**, never a whole path: a *folder* scheme reads a
folder's name (Moodle's and Brightspace's submission folders), a *file* scheme a file's own
name (Canvas, Blackboard, Moodle's and Brightspace's flat layouts). ``collect.py`` reads the
outermost folder that a folder scheme recognises as the submission's, and a file's own name
only when no folder above it is a submission folder, so a folder inside a student's folder
(or a file named like a classmate's upload) never names a student. Where a name holds the
LMS's pattern more than once (a student can type ``_attempt_2026-...`` into their own file
name) the LMS's own prefix is the first one: every pattern is anchored at the start and lazy.

Sources for each scheme (read from the LMSs' own code or documentation):

- Canvas (``ContentZipper#get_filename``, canvas-lms ``lib/content_zipper.rb``):
  ``<sortable name, lowercased, non-word characters removed>[_LATE]_<user id>_<attachment id>_<file>``;
  ``anon_<id>`` instead of the user id when the assignment is anonymous. Canvas removes any
  ``_<digits>_`` from the name, so the first ``_<digits>_<digits>_`` is its own. Only the latest
  submission is in the download; the name has no time, only the LATE mark.
- Moodle (``mod/assign`` ``downloader::get_student_prefix``): ``<Full Name>_<participant id>_
  assignsubmission_<plugin>[_]/<file>`` with "Download submissions in folders" (the default since
  3.1; older versions end the folder with ``_``), else the same prefix joined to the file
  name with ``_``. The participant id is per assignment (it is not on a roster). Blind marking
  writes ``Participant`` for the name. Only the latest submission is in the download and the
  zip entries carry the download time. Plugins other than ``file`` (``onlinetext``) hold
  what the student typed into Moodle, not files to grade.
- Blackboard Learn (Grade Centre, "Assignment File Download"; the naming nbgrader's own
  zip_collect documentation uses): ``<assignment>_<username>_attempt_<YYYY-MM-DD-HH-MM-SS>_<file>``
  plus a receipt ``<assignment>_<username>_attempt_<time>.txt``; every attempt can be in it.
- Brightspace (D2L, "Download" of an assignment's submissions):
  ``<submission id>-<user id> - <First Last> - <Mon D, YYYY HMM AM> - <file>`` (older), or a
  folder of that name holding the files (newer), beside an ``index.html``.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from nbgrader.plugins.zipcollect import FileNameCollectorPlugin
from traitlets import Unicode

_QUIET = logging.getLogger("autograder.lms_names")
_QUIET.addHandler(logging.NullHandler())
_QUIET.propagate = False  # nbgrader's _match warns on every name that does not match
_QUIET.disabled = True    # ... and would build a log record for each, thousands per download


@dataclass(frozen=True)
class Claim:
    """What one naming scheme reads from one path component."""
    lms: str                    # "Canvas", "Moodle", ...
    how: str                    # how `key` is matched against the roster: id, prefix, suffix, name, lms_id
    key: str                    # the text matched
    file_name: str              # the student's own file name
    timestamp: datetime | None  # when the LMS says it was submitted, where the name says it
    late: bool = False          # the LMS marked it late (Canvas)
    folder: str | None = None   # for folder layouts: the path of the submission's folder
    identity: str = ""          # who the LMS says uploaded it, as it says it ("Canvas user 123")
    prefix: str = ""            # the LMS's own part of the name, to hand a feedback file back
    ignored: str = ""           # the LMS's own non-file content (Moodle's online text): why not graded


class LmsNaming(FileNameCollectorPlugin):
    """A naming scheme: ``claims(component, timezone)`` reads every claim one path component makes."""
    lms = "?"
    reads = "file"   # "file": a file's own name; "folder": a submission folder's name
    # The name says when it was submitted (a claim's timestamp). Else the download holds only
    # each student's latest submission, and its entries' times (the download's) order versions
    # but are no submission time.
    timed = False
    # Files the LMS puts in a download that are not a submission: a file's own name (regexp),
    # and what it is.
    not_submissions: tuple[tuple[str, str], ...] = ()

    def __init__(self, config=None, **kwargs):
        super().__init__(log=_QUIET, **({"config": config} if config is not None else {}), **kwargs)
        self.valid_ext = [".ipynb"]

    def match(self, component: str) -> dict | None:
        # nbgrader's own matcher (re.match), without its extension filter: receipts and data
        # files are told apart later. A component never holds "/".
        return self._match(component) if "/" not in component else None

    def claims(self, component: str, timezone: ZoneInfo) -> list[Claim]:
        raise NotImplementedError


class Canvas(LmsNaming):
    lms = "Canvas"
    named_regexp = Unicode(r"^(?P<sortable_name>[^/]+?)(?P<late>_LATE)?_(?P<student_id>\d+|anon_[A-Za-z0-9]+)"
                           r"_(?P<attachment_id>\d+)_(?P<file_id>[^/]+)$").tag(config=True)

    def claims(self, component, timezone):
        found = self.match(component)
        if not found:
            return []
        late = bool(found["late"])
        prefix = component[: len(component) - len(found["file_id"])]
        identity = f"Canvas user {found['student_id']}"
        claims = [Claim(self.lms, "lms_id", found["student_id"], found["file_id"], None, late,
                        identity=identity, prefix=prefix)]
        if not found["student_id"].startswith("anon_"):
            claims.append(Claim(self.lms, "name", found["sortable_name"], found["file_id"], None, late,
                                identity=identity, prefix=prefix))
        return claims


_MOODLE = r"(?P<full_name>[^/_]+)_(?P<student_id>\d+)_assignsubmission_(?P<plugin>[a-z]+)"


class MoodleFolder(LmsNaming):
    lms = "Moodle"
    reads = "folder"
    named_regexp = Unicode(r"^" + _MOODLE + r"_?$").tag(config=True)

    def claims(self, component, timezone):
        found = self.match(component)
        if not found:
            return []
        ignored = "" if found["plugin"] == "file" else (
            f"Moodle's {found['plugin']} submission (typed into Moodle, not a file to grade)")
        return [Claim(self.lms, "name", found["full_name"], "", None, identity=f"Moodle participant "
                      f"{found['student_id']}", prefix=component, ignored=ignored)]


class MoodleFlat(LmsNaming):
    lms = "Moodle"
    named_regexp = Unicode(r"^" + _MOODLE + r"_(?P<file_id>[^/]+)$").tag(config=True)

    def claims(self, component, timezone):
        found = self.match(component)
        if not found:
            return []
        ignored = "" if found["plugin"] == "file" else (
            f"Moodle's {found['plugin']} submission (typed into Moodle, not a file to grade)")
        prefix = component[: len(component) - len(found["file_id"])]
        return [Claim(self.lms, "name", found["full_name"], found["file_id"], None,
                      identity=f"Moodle participant {found['student_id']}", prefix=prefix, ignored=ignored)]


class Blackboard(LmsNaming):
    lms = "Blackboard"
    timed = True
    not_submissions = ((r"_attempt_\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2}\.txt$", "Blackboard's submission receipt"),)
    # Lazy and anchored: the first "_attempt_<time>" is Blackboard's; the student's own file
    # name comes after it and may hold another one.
    named_regexp = Unicode(r"^(?P<student_id>[^/]+?)_attempt_"
                           r"(?P<timestamp>\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2})(?:_(?P<file_id>[^/]+)|\.txt)$"
                           ).tag(config=True)

    def claims(self, component, timezone):
        found = self.match(component)
        if not found:
            return []
        try:
            moment = datetime.strptime(found["timestamp"], "%Y-%m-%d-%H-%M-%S").replace(tzinfo=timezone)
        except ValueError:
            return []
        # "<assignment name>_<username>": the username is the part after an underscore that
        # is a roster id; both may contain underscores, so the roster decides.
        return [Claim(self.lms, "suffix", found["student_id"], found["file_id"] or "(receipt)", moment,
                      identity=f"Blackboard attempt by {found['student_id']}")]


_BRIGHTSPACE = (r"(?P<submission_id>\d+)-(?P<student_id>\d+) - (?P<full_name>[^/]+?) - "
                r"(?P<timestamp>[A-Z][a-z]{2} \d{1,2}, \d{4} \d{3,4} [AP]M)")


def _brightspace_time(text: str, timezone: ZoneInfo) -> datetime | None:
    """"Oct 10, 2025 1022 AM": the hour and minutes are written without a separator, so
    strptime's %I%M would read "122 AM" as 12:02; the minutes are the last two digits."""
    day, clock, half = text.rsplit(" ", 2)
    hour, minute = int(clock[:-2]) % 12, int(clock[-2:])
    try:
        return datetime.strptime(day, "%b %d, %Y").replace(
            hour=hour + (12 if half == "PM" else 0), minute=minute, tzinfo=timezone)
    except ValueError:
        return None


class BrightspaceFlat(LmsNaming):
    lms = "Brightspace"
    timed = True
    not_submissions = ((r"^index\.html$", "the LMS's index of the download"),)
    named_regexp = Unicode(r"^" + _BRIGHTSPACE + r" - (?P<file_id>[^/]+)$").tag(config=True)

    def claims(self, component, timezone):
        found = self.match(component)
        moment = found and _brightspace_time(found["timestamp"], timezone)
        if not moment:
            return []
        identity = f"Brightspace user {found['student_id']}"
        return [Claim(self.lms, "lms_id", found["student_id"], found["file_id"], moment, identity=identity),
                Claim(self.lms, "name", found["full_name"], found["file_id"], moment, identity=identity)]


class BrightspaceFolder(LmsNaming):
    lms = "Brightspace"
    timed = True
    reads = "folder"
    named_regexp = Unicode(r"^" + _BRIGHTSPACE + r"$").tag(config=True)

    def claims(self, component, timezone):
        found = self.match(component)
        moment = found and _brightspace_time(found["timestamp"], timezone)
        if not moment:
            return []
        identity = f"Brightspace user {found['student_id']}"
        return [Claim(self.lms, "lms_id", found["student_id"], "", moment, identity=identity),
                Claim(self.lms, "name", found["full_name"], "", moment, identity=identity)]


# The namings that are not an LMS's own: a folder per student id (``ada/03_autograd.ipynb``,
# also nbgrader's ``ada/03_autograd/03_autograd.ipynb``) and a file named from a student id
# (``ada_final.ipynb``); collect.py reads them from the roster itself. An LMS's claim, with its
# time and LATE mark, is preferred over theirs.
STUDENT_FOLDER, STUDENT_PREFIX = "folder per student", "named by student id"
GENERIC = (STUDENT_FOLDER, STUDENT_PREFIX)


# Every LMS naming `course collect` reads, each declared once above.
NAMINGS = (Canvas, MoodleFolder, MoodleFlat, Blackboard, BrightspaceFlat, BrightspaceFolder)


def namings(config=None) -> list[LmsNaming]:
    """Every LMS's scheme. ``config`` (the course's nbgrader configuration) may override a
    scheme's regexp (one path component), e.g. ``c.Canvas.named_regexp``."""
    return [scheme(config=config) for scheme in NAMINGS]


def lms_names(timed: bool | None = None) -> list[str]:
    """The LMSs whose downloads are read, in order (``timed``: only those whose names do, or
    do not, say when each file was submitted)."""
    return list(dict.fromkeys(n.lms for n in NAMINGS if timed is None or n.timed == timed))


def untimed(lms: str) -> bool:
    """An LMS whose download does not say when each file was submitted (it holds only each
    student's latest submission, and its entries carry the download's time)."""
    return lms in lms_names(timed=False)


def not_a_submission(file_name: str) -> str:
    """What an LMS's extra file is (a receipt, its index of the download), or "" for any other."""
    return next((what for naming in NAMINGS for pattern, what in naming.not_submissions
                 if re.search(pattern, file_name)), "")


def collect_rule() -> str:
    """How `course collect` chooses among a student's versions, naming the LMSs as declared."""
    return (f"per student the latest version by LMS time is placed (the time in "
            f"{' and '.join(name + chr(39) + 's' for name in lms_names(True))} file names; {' and '.join(lms_names(False))} downloads hold only each student's latest submission)")
