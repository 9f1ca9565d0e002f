"""Due dates and late penalties, per assignment, through nbgrader's own parts.

The due date is nbgrader's (``Assignment.duedate`` in the gradebook, which Formgrader shows
and edits); the course sets it from ``c.CourseDeadlines.due`` in course/nbgrader_config.py
when one is given there. How late a submission is, is nbgrader's ``total_seconds_late``
(its timestamp, from `course collect`, against the due date plus any extension). The
penalty is decided by the ``LateSubmissionPlugin`` named in ``c.AssignLatePenalties.plugin_class``
(nbgrader's own setting, so stock ``nbgrader autograde`` would apply the same one) and stored
where nbgrader stores it, ``SubmittedNotebook.late_submission_penalty``, by `course grade`
when it writes the grade (autograder/results.py, the one writer of grades); the gradebook's
score less that penalty is what `course export`, `course report` and the feedback pages
show, and they write nothing. After a change of the due date (or an extension, or a manual
grade in Formgrader), `course grade` decides the penalties again; the reading commands
refuse a due date that differs from the one the grades were made with.

    c.CourseDeadlines.due = {"03_autograd": "2026-11-20 23:59 Europe/Berlin"}
    c.AssignLatePenalties.plugin_class = "autograder.late.PercentPerDay"
    c.PercentPerDay.percent_per_day = {"03_autograd": 10}   # of the score, per started day
    c.PercentPerDay.max_percent = 50
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

from nbgrader.plugins import LateSubmissionPlugin
from traitlets import Dict, Float, Unicode
from traitlets.config import Configurable

from coursebase.model import Course


class DeadlineError(ValueError):
    """A due date in the configuration that cannot be read; the message names it."""


class CourseDeadlines(Configurable):
    due = Dict(help="assignment id -> due date with its zone, e.g. '2026-11-20 23:59 Europe/Berlin' "
                    "or '2026-11-20T23:59:00+01:00'").tag(config=True)
    timezone = Unicode("", help="the course's time zone (IANA name, e.g. Europe/Berlin) for the times "
                       "feedback pages and exports show; default: the zone of the assignment's due date, "
                       "else UTC").tag(config=True)


class PercentPerDay(LateSubmissionPlugin):
    """Each started day (24 h) late costs ``percent_per_day`` of the score, at most ``max_percent``."""

    percent_per_day = Dict(help="assignment id -> percent of the score lost per started day late").tag(config=True)
    default_percent_per_day = Float(0.0, help="for assignments not in percent_per_day").tag(config=True)
    max_percent = Float(100.0, help="the most a late submission can lose, in percent of its score").tag(config=True)
    assignment = ""  # set by the caller: nbgrader's plugin interface does not pass it

    def rate(self) -> float:
        return float(self.percent_per_day.get(self.assignment, self.default_percent_per_day))

    def late_submission_penalty(self, student_id: str, score: float, total_seconds_late: float):
        days = math.ceil(total_seconds_late / 86400)
        return score * min(self.max_percent, days * self.rate()) / 100.0

    def describe(self) -> str:
        rate = self.rate()
        if not rate:
            return "no penalty for late submissions"
        return f"{rate:g}% of the score per started day late, at most {self.max_percent:g}%"


def parse_due(text: str, assignment: str) -> datetime:
    """A due date as an aware datetime; a date without a zone is refused, not guessed."""
    text = str(text).strip()
    zone = None
    match = re.match(r"^(.*\d)\s+([A-Za-z][\w+-]*(?:/[\w+-]+)*)$", text)
    if match:
        text, zone_name = match.groups()
        try:
            zone = timezone.utc if zone_name.upper() == "UTC" else ZoneInfo(zone_name)
        except (ValueError, KeyError, OSError):
            raise DeadlineError(f"due date of {assignment}: unknown time zone {zone_name!r}") from None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise DeadlineError(f"due date of {assignment}: {text!r} is not a date like "
                            "'2026-11-20 23:59 Europe/Berlin'") from None
    if zone is not None:
        moment = moment.replace(tzinfo=zone)
    if moment.tzinfo is None:
        raise DeadlineError(f"due date of {assignment}: {text!r} has no time zone; add one "
                            "('2026-11-20 23:59 Europe/Berlin' or '...+01:00')")
    return moment


def configured_due(course: Course, assignment: str) -> datetime | None:
    due = CourseDeadlines(config=course.config).due.get(assignment)
    return parse_due(due, assignment) if due else None


def course_timezone(course: Course, assignment: str):
    """The zone the course's times are shown in: ``c.CourseDeadlines.timezone``, else the
    zone the assignment's due date was written with, else UTC."""
    name = CourseDeadlines(config=course.config).timezone
    if name:
        try:
            return timezone.utc if name.upper() == "UTC" else ZoneInfo(name)
        except (ValueError, KeyError, OSError):
            raise DeadlineError(f"c.CourseDeadlines.timezone: unknown time zone {name!r}; give an IANA "
                                "name such as Europe/Berlin") from None
    due = configured_due(course, assignment)
    return due.tzinfo if due is not None and due.tzinfo is not None else timezone.utc


def shown_time(moment: datetime | None, zone) -> str:
    """A time as the course shows it; a naive time (nbgrader's) is UTC."""
    if moment is None:
        return ""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(zone).strftime("%Y-%m-%d %H:%M %Z")


def penalty_plugin(course: Course, assignment: str):
    from nbgrader.preprocessors import AssignLatePenalties

    plugin = AssignLatePenalties(config=course.config).plugin_class(config=course.config)
    plugin.assignment = assignment
    return plugin


@dataclass
class Lateness:
    due: datetime | None           # UTC, naive (as nbgrader keeps it)
    submitted: datetime | None
    seconds_late: float
    penalty: float
    raw_score: float
    score: float                   # after the penalty
    rule: str
    zone: object = timezone.utc    # the course's time zone, for what is shown

    def sentence(self, max_score: float) -> str:
        """What the student's feedback page says about the deadline."""
        due = f"Due {shown_time(self.due, self.zone)}"
        if self.submitted is None:
            return f"{due}; the submission time is not known, so no late penalty was applied."
        submitted = f"submitted {shown_time(self.submitted, self.zone)}"
        if self.seconds_late <= 0:
            return f"{due}; {submitted}: on time."
        return (f"{due}; {submitted}, late by {self.late_by}: {self.penalty:g} point(s) off ({self.rule}); "
                f"score after the penalty: {self.score:g} / {max_score:g}.")

    @property
    def late_by(self) -> str:
        if self.seconds_late <= 0:
            return ""
        hours, rest = divmod(int(self.seconds_late), 3600)
        days, hours = divmod(hours, 24)
        return (f"{days}d " if days else "") + f"{hours}h {rest // 60:02d}m"


def late_penalty(plugin, student: str, score: float, seconds_late: float) -> float:
    """The points ``plugin`` takes off ``score`` for ``seconds_late`` (0 when on time), within
    [0, score]. Decided by `course grade` alone, when it writes the grade (autograder/results.py)."""
    if seconds_late <= 0:
        return 0.0
    penalty = plugin.late_submission_penalty(student, score, seconds_late)
    return 0.0 if penalty is None else min(max(0.0, float(penalty)), score)
