"""How each LMS names the files of a "download all submissions" archive.

One nbgrader ``FileNameCollectorPlugin`` per naming scheme, each with its ``named_regexp``
(nbgrader's plugin point for exactly this: ``nbgrader zip_collect``). A plugin says *who the
LMS says* the file is from (``student_id``, a name, a user number), *when* (``timestamp``,
where the LMS writes one into the name) and the student's own file name (``file_id``); who
that is on the course roster is decided in ``autograder/collect.py``, never here.

Sources for each scheme (read from the LMSs' own code or documentation):

- Canvas (``ContentZipper#get_filename``, canvas-lms ``lib/content_zipper.rb``):
  ``<sortable name, lowercased, non-word characters removed>[_LATE]_<user id>_<attachment id>_<file>``;
  ``anon_<id>`` instead of the name and user id when the assignment is anonymous. Only the
  latest submission is in the download; the name has no time, only the LATE mark.
- Moodle (``mod/assign`` ``downloader::get_student_prefix``): ``<Full Name>_<participant id>_
  assignsubmission_file[_]/<file>`` with "Download submissions in folders" (the default since
  3.1; older versions end the folder with ``_``), else the same prefix joined to the file
  name with ``_``. Blind marking writes ``Participant`` for the name. Only the latest
  submission is in the download and the zip entries carry the download time.
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

_QUIET = logging.getLogger("course.collect.names")
_QUIET.addHandler(logging.NullHandler())
_QUIET.propagate = False  # nbgrader's _match warns on every name that does not match


@dataclass(frozen=True)
class Claim:
    """What one naming scheme reads from one file's path."""
    lms: str                    # "Canvas", "Moodle", ...
    how: str                    # how `key` is matched against the roster: id, prefix, suffix, name, lms_id
    key: str                    # the text matched
    file_name: str              # the student's own file name
    timestamp: datetime | None  # when the LMS says it was submitted, where the name says it
    late: bool = False          # the LMS marked it late (Canvas)
    folder: str | None = None   # for folder layouts: the path of the submission's folder


class LmsNaming(FileNameCollectorPlugin):
    """A naming scheme; ``claims(path)`` reads every claim the name makes."""
    lms = "?"

    def __init__(self, config=None, **kwargs):
        super().__init__(log=_QUIET, **({"config": config} if config is not None else {}), **kwargs)
        self.valid_ext = [".ipynb"]

    def match(self, path: str) -> dict | None:
        # nbgrader's own matcher (re.match on the whole path), without its extension filter:
        # receipts and data files are told apart later.
        return self._match(path)

    def claims(self, path: str, timezone: ZoneInfo) -> list[Claim]:
        raise NotImplementedError


class Canvas(LmsNaming):
    lms = "Canvas"
    named_regexp = Unicode((r"^(?:.*/)?(?P<sortable_name>[^/]+?)(?P<late>_LATE)?_(?P<student_id>\d+|anon_[A-Za-z0-9]+)"
                    r"_(?P<attachment_id>\d+)_(?P<file_id>[^/]+)$")).tag(config=True)

    def claims(self, path, timezone):
        found = self.match(path)
        if not found:
            return []
        late = bool(found["late"])
        claims = [Claim(self.lms, "lms_id", found["student_id"], found["file_id"], None, late)]
        if not found["student_id"].startswith("anon_"):
            claims.append(Claim(self.lms, "name", found["sortable_name"], found["file_id"], None, late))
        return claims


class MoodleFolder(LmsNaming):
    lms = "Moodle"
    named_regexp = Unicode((r"^(?P<top>(?:.*/)?(?P<full_name>[^/_]+)_(?P<student_id>\d+)_assignsubmission_file_?)/"
                    r"(?P<file_id>.+)$")).tag(config=True)

    def claims(self, path, timezone):
        found = self.match(path)
        if not found:
            return []
        return [Claim(self.lms, "name", found["full_name"], found["file_id"].rsplit("/", 1)[-1], None,
                      folder=found["top"])]


class MoodleFlat(LmsNaming):
    lms = "Moodle"
    named_regexp = Unicode(r"^(?:.*/)?(?P<full_name>[^/_]+)_(?P<student_id>\d+)_assignsubmission_file_"
                           r"(?P<file_id>[^/]+)$").tag(config=True)

    def claims(self, path, timezone):
        found = self.match(path)
        if not found:
            return []
        return [Claim(self.lms, "name", found["full_name"], found["file_id"], None)]


class Blackboard(LmsNaming):
    lms = "Blackboard"
    named_regexp = Unicode((r"^(?:.*/)?(?P<student_id>[^/]+)_attempt_"
                            r"(?P<timestamp>\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2})(?:_(?P<file_id>[^/]+)|\.txt)$")
                           ).tag(config=True)

    def claims(self, path, timezone):
        found = self.match(path)
        if not found:
            return []
        moment = datetime.strptime(found["timestamp"], "%Y-%m-%d-%H-%M-%S").replace(tzinfo=timezone)
        # "<assignment name>_<username>": the username is the part after an underscore that
        # is a roster id; both may contain underscores, so the roster decides.
        return [Claim(self.lms, "suffix", found["student_id"], found["file_id"] or "(receipt)", moment)]


_BRIGHTSPACE = (r"(?P<submission_id>\d+)-(?P<student_id>\d+) - (?P<full_name>[^/]+?) - "
                r"(?P<timestamp>[A-Z][a-z]{2} \d{1,2}, \d{4} \d{3,4} [AP]M)")


def _brightspace_time(text: str, timezone: ZoneInfo) -> datetime:
    """"Oct 10, 2025 1022 AM": the hour and minutes are written without a separator, so
    strptime's %I%M would read "122 AM" as 12:02; the minutes are the last two digits."""
    day, clock, half = text.rsplit(" ", 2)
    hour, minute = int(clock[:-2]) % 12, int(clock[-2:])
    return datetime.strptime(day, "%b %d, %Y").replace(
        hour=hour + (12 if half == "PM" else 0), minute=minute, tzinfo=timezone)


class BrightspaceFlat(LmsNaming):
    lms = "Brightspace"
    named_regexp = Unicode(r"^(?:.*/)?" + _BRIGHTSPACE + r" - (?P<file_id>[^/]+)$").tag(config=True)

    def claims(self, path, timezone):
        found = self.match(path)
        if not found:
            return []
        moment = _brightspace_time(found["timestamp"], timezone)
        return [Claim(self.lms, "lms_id", found["student_id"], found["file_id"], moment),
                Claim(self.lms, "name", found["full_name"], found["file_id"], moment)]


class BrightspaceFolder(LmsNaming):
    lms = "Brightspace"
    named_regexp = Unicode(r"^(?P<top>(?:.*/)?" + _BRIGHTSPACE + r")/(?P<file_id>.+)$").tag(config=True)

    def claims(self, path, timezone):
        found = self.match(path)
        if not found:
            return []
        moment = _brightspace_time(found["timestamp"], timezone)
        name = found["file_id"].rsplit("/", 1)[-1]
        return [Claim(self.lms, "lms_id", found["student_id"], name, moment, folder=found["top"]),
                Claim(self.lms, "name", found["full_name"], name, moment, folder=found["top"])]


class StudentFolder(LmsNaming):
    """``<student id>/<file>`` (or ``<student id>/<assignment>/<file>``, nbgrader's own
    submitted layout), under any number of wrapper folders."""
    lms = "folder per student"
    named_regexp = Unicode(r"^(?P<top>(?:.*/)?(?P<student_id>[^/]+))/(?P<file_id>[^/]+)$").tag(config=True)

    def __init__(self, assignment: str, **kwargs):
        super().__init__(**kwargs)
        self.assignment = assignment

    def claims(self, path, timezone):
        found = self.match(path)
        if not found:
            return []
        top, student = found["top"], found["student_id"]
        if student == self.assignment and "/" in top:
            student = top.rsplit("/", 2)[-2]
        return [Claim(self.lms, "id", student, found["file_id"], None, folder=top)]


class StudentPrefix(LmsNaming):
    """``<student id>_<anything>`` or ``<student id>.ipynb``, flat: where the id ends is
    decided by the roster (ids may contain ``_``)."""
    lms = "named by student id"
    named_regexp = Unicode(r"^(?:.*/)?(?P<student_id>(?P<file_id>[^/]+))$").tag(config=True)

    def claims(self, path, timezone):
        found = self.match(path)
        if not found:
            return []
        return [Claim(self.lms, "prefix", found["student_id"], found["file_id"], None)]


def namings(assignment: str, config=None) -> list[LmsNaming]:
    """Every scheme, the LMSs' own first: a file is read by all of them, and the roster
    must find exactly one student among everything they claim. ``config`` (the course's
    nbgrader configuration) may override a scheme's regexp, e.g. ``c.Canvas.named_regexp``."""
    schemes = [Canvas, MoodleFolder, MoodleFlat, Blackboard, BrightspaceFlat, BrightspaceFolder]
    return [scheme(config=config) for scheme in schemes] + [StudentFolder(assignment, config=config),
                                                            StudentPrefix(config=config)]


# The namings that are not an LMS's own (a folder or a prefix per student id): an LMS's claim,
# with its time and LATE mark, is preferred over theirs.
GENERIC = (StudentFolder.lms, StudentPrefix.lms)
