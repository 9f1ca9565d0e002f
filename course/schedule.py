"""When each assignment goes to students: the course's release schedule.

    c.CourseSchedule.release = {
        "01_tensors": "2026-09-07 09:00 Europe/Berlin",
        "02_devices": "2026-09-14 09:00 Europe/Berlin",
    }

in course/nbgrader_config.py. The student kit (`course student-kit`) and the class hub's copy
of it (`course hub start|publish`) hold the lessons and, of the assignments, only those whose
release time has come when they are built; an assignment the schedule does not name is not
released. Without a schedule every assignment is released (a self-paced course). Times need
their zone, as due dates do (autograder/late.py reads both the same way).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from traitlets import Dict
from traitlets.config import Configurable

from coursebase.model import Course, CourseError


class CourseSchedule(Configurable):
    release = Dict(help="assignment id -> when students get it, e.g. '2026-09-07 09:00 Europe/Berlin'; "
                        "empty: every assignment is released").tag(config=True)


@dataclass(frozen=True)
class Releases:
    released: list[str]                     # shipped now, in course order
    upcoming: list[tuple[str, datetime]]    # scheduled later, soonest first
    unscheduled: list[str]                  # a schedule exists and does not name these
    scheduled: bool                         # False: no schedule, everything is released

    def describe(self) -> str:
        if not self.scheduled:
            return f"all {len(self.released)} assignments (no release schedule in course/nbgrader_config.py)"
        text = f"{len(self.released)} released assignment(s)" + (
            f" ({', '.join(self.released)})" if self.released else "")
        if self.upcoming:
            name, moment = self.upcoming[0]
            text += f"; next: {name} at {moment:%Y-%m-%d %H:%M %Z}"
        if self.unscheduled:
            text += f"; not in the schedule, so not released: {', '.join(self.unscheduled)}"
        return text


def parse_moment(text: str, assignment: str) -> datetime:
    from autograder.late import DeadlineError, parse_due   # the one reader of dates with zones
    try:
        return parse_due(text, assignment)
    except DeadlineError as error:
        raise CourseError(f"release schedule: {error}".replace("due date of", "release time of")) from None


def releases(root: Path | str, assignments: list[str], now: datetime | None = None) -> Releases:
    """Which of ``assignments`` (the course's, in order) students get at ``now`` (default: now)."""
    schedule = CourseSchedule(config=Course.load(root).config).release
    if not schedule:
        return Releases(list(assignments), [], [], scheduled=False)
    unknown = sorted(set(schedule) - set(assignments))
    if unknown:
        raise CourseError(f"release schedule names {', '.join(unknown)}, which the course does not "
                          f"have (assignments: {', '.join(assignments)})")
    now = now or datetime.now(timezone.utc)
    moments = {name: parse_moment(when, name) for name, when in schedule.items()}
    released = [name for name in assignments if name in moments and moments[name] <= now]
    upcoming = sorted(((name, moment) for name, moment in moments.items() if moment > now), key=lambda x: x[1])
    unscheduled = [name for name in assignments if name not in moments]
    return Releases(released, upcoming, unscheduled, scheduled=True)


def parse_as_of(text: str) -> datetime:
    """`--as-of` on the command line: a date or time with its zone (as in the schedule)."""
    return parse_moment(text, "--as-of")
