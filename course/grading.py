"""`course collect|grade|feedback|export|report`: the instructor's grading front door.

Every refusal is one line on stderr, naming what is wrong and what to run instead, with a
non-zero exit (2: the command line or the course is wrong; 1: nothing to do yet, or the
work could not be completed). tests/test_cli_contract.py holds the table of them.
"""
from __future__ import annotations

import json
import sys

from course.arguments import positive_int, positive_number


class Refused(Exception):
    """One line for stderr, and the exit status."""

    def __init__(self, message: str, status: int = 2):
        super().__init__(message)
        self.status = status


def _course(args):
    from coursebase.model import Course, CourseError, NoCourse
    try:
        return Course.load(getattr(args, "root", None), getattr(args, "db_url", None))
    except NoCourse as error:
        raise Refused(f"{error}; give the course folder with --root") from None
    except CourseError as error:
        raise Refused(str(error)) from None


def _known_assignment(course, assignment: str) -> None:
    known = course.assignment_ids()
    if assignment not in known:
        raise Refused(f"no assignment named {assignment!r} in {course.source_root}; "
                      f"known assignments: {', '.join(known) or '(none)'}")
    source = course.source_notebook(assignment)
    try:
        json.loads(source.read_text(encoding="utf-8"))
    except ValueError as error:
        raise Refused(f"{source} is not a valid notebook (invalid JSON: {error}); "
                      "fix it, or restore it with git") from None


def _run(name: str, body, args) -> int:
    try:
        return body(args)
    except Refused as error:
        print(f"course {name}: {error}", file=sys.stderr)
        return error.status
    except Exception as error:  # noqa: BLE001 - the known ones become one line, the rest propagate
        explained = _explain(error)
        if explained is None:
            raise
        message, status = explained
        print(f"course {name}: {message}", file=sys.stderr)
        return status


def _explain(error: Exception) -> tuple[str, int] | None:
    """One line and an exit status for a failure we know, or None. The classes are imported
    here, not before the command runs: `course grade` starts its sandboxes before it loads
    nbgrader's gradebook (seconds)."""
    from nbgrader.api import MissingEntry
    from sqlalchemy.exc import SQLAlchemyError

    from coursebase.roster import RosterError

    from autograder.collect import CollectError
    from autograder.export import ExportIncomplete, NothingGraded
    from autograder.grade import GradingError
    from autograder.late import DeadlineError
    from autograder.results import StaleGrades

    if isinstance(error, (NothingGraded, CollectError, ExportIncomplete, StaleGrades)):
        return str(error), 1
    if isinstance(error, RosterError):
        return error.one_line(), 1
    if isinstance(error, (GradingError, DeadlineError)):
        return str(error), 2
    if isinstance(error, SQLAlchemyError):
        reason = str(getattr(error, "orig", None) or error).splitlines()[0]
        return f"cannot use the gradebook ({reason}); check --db-url or course/nbgrader_config.py", 1
    if isinstance(error, MissingEntry):
        return f"not in the gradebook: {error}", 1
    if isinstance(error, OSError):
        return f"{error.strerror or error}: {error.filename or ''}".rstrip(": "), 1
    return None


# -- grade --------------------------------------------------------------------------------

def _submitted(course, assignment: str) -> list[str]:
    root = course.submitted_root
    return sorted(p.name for p in root.iterdir() if (p / assignment).is_dir()) if root.is_dir() else []


def _grade(args) -> int:
    from autograder.sandbox import Limits, bwrap_available, close_early, launch_early

    course = _course(args)
    _known_assignment(course, args.assignment)
    if (args.dask or args.dask_local is not None) and args.workers:
        raise Refused("--workers sets threads on this machine; with Dask, start more Dask workers")
    submitted = _submitted(course, args.assignment)
    if not submitted:
        raise Refused(f"no submissions of {args.assignment} in {course.submitted_root}: run "
                      f"`course collect {args.assignment}` (from the exchange) or "
                      f"`course collect {args.assignment} --from DOWNLOAD.zip` first", 1)
    if args.student:
        missing = sorted(set(args.student) - set(submitted))
        if missing:
            from coursebase.roster import roster_ids
            roster = roster_ids(course) or set()
            why = [f"{s!r}" + (" (not on the roster)" if roster and s not in roster else "") for s in missing]
            raise Refused(f"no submission of {args.assignment} from {', '.join(why)}; "
                          f"submitted: {', '.join(submitted[:10])}{' ...' if len(submitted) > 10 else ''}")
    if not bwrap_available():
        raise Refused("bubblewrap (bwrap) is not installed; run `make sysdeps`", 1)
    limits = Limits.of_course(course.config, args.timeout, args.notebook_timeout, args.memory_mb)
    on_dask = args.dask or args.dask_local is not None
    try:
        if not on_dask:
            import os
            # They import torch while we load the gradebook and the grader (seconds).
            launch_early(limits, max(1, min(args.workers or os.cpu_count() or 1, len(args.student or submitted))))
        from course.release import ensure_in_gradebook

        from autograder.grade import Grader
        from autograder.summary import print_summary
        recorded = ensure_in_gradebook(course, args.assignment)
        if recorded:
            print(recorded, file=sys.stderr)
        if on_dask:
            from autograder.distributed import grade_on_dask
            rows = grade_on_dask(course, args.assignment, args.dask, args.dask_local,
                                 limits=limits, force=args.force, students=args.student)
        else:
            grader = Grader(course, args.assignment, workers=args.workers, limits=limits,
                            force=args.force, students=args.student)
            grader.wait_for_teardown = False   # the sandboxes are killed; the kernel finishes on its own
            rows = grader.run()
    except RuntimeError as error:  # GradingError is one: the batch could not start
        raise Refused(str(error), 1) from None
    finally:
        close_early()
    print_summary(rows, sys.stdout)
    return 0


def cmd_grade(args) -> int:
    return _run("grade", _grade, args)


# -- export, feedback, report ---------------------------------------------------------------

def _export(args) -> int:
    from autograder.export import export_csv
    course = _course(args)
    _known_assignment(course, args.assignment)
    path = export_csv(course, args.assignment, args.output, args.format, args.column or "")
    print(f"wrote {path}")
    return 0


def cmd_export(args) -> int:
    return _run("export", _export, args)


def _feedback(args) -> int:
    from autograder.export import check_graded, nothing_graded
    from autograder.feedback import write_feedback
    course = _course(args)
    _known_assignment(course, args.assignment)
    check_graded(course, args.assignment)
    paths = write_feedback(course, args.assignment)
    if not paths:
        raise nothing_graded(args.assignment)
    print(f"wrote feedback for {len(paths)} submission(s) under {course.feedback_root}")
    if args.lms:
        from autograder.feedback import LMS_NAMES, write_lms_bundle
        bundle = write_lms_bundle(course, args.assignment, args.lms)
        lms = LMS_NAMES[args.lms]
        how = {"canvas": "Canvas: Grades > the assignment's menu > Re-Upload Submissions (each page is attached "
                         "as a comment)",
               "moodle": "Moodle: the assignment's submissions > Upload multiple feedback files in a zip; the "
                         "worksheet: Upload grading worksheet"}[args.lms]
        print(f"wrote {', '.join(str(p) for p in bundle.written)}: {len(bundle.matched)} student(s) named as "
              f"{lms}'s download named them, for {how}")
        if bundle.unmatched:
            raise Refused(f"{len(bundle.unmatched)} graded student(s) were not collected from a {lms} download, "
                          f"so {lms} cannot match them: {', '.join(bundle.unmatched)}; their pages are in "
                          f"{bundle.written[0]} under <student id>/ to hand back", 1)
    return 0


def cmd_feedback(args) -> int:
    return _run("feedback", _feedback, args)


def _report(args) -> int:
    from autograder.export import check_graded
    from autograder.report import write_report
    course = _course(args)
    _known_assignment(course, args.assignment)
    check_graded(course, args.assignment)
    print(write_report(course, args.assignment))
    return 0


def cmd_report(args) -> int:
    return _run("report", _report, args)


# -- collect --------------------------------------------------------------------------------

def _collect(args) -> int:
    from pathlib import Path

    from autograder.collect import collect, parse_timezone
    course = _course(args)
    _known_assignment(course, args.assignment)
    if args.source and not Path(args.source).exists():
        raise Refused(f"{args.source}: no such folder or zip file", 1)
    zone = parse_timezone(args.timezone)
    report = collect(course, args.assignment, args.source, zone, args.replace_graded)
    print(report.text())
    return report.status


def cmd_collect(args) -> int:
    return _run("collect", _collect, args)


def register(subparsers) -> None:
    def common(parser, db=True):
        parser.add_argument("assignment", help="assignment id, e.g. 03_autograd")
        parser.add_argument("--root", help="course root (default: this repository)")
        if db:
            parser.add_argument("--db-url", help="gradebook database URL (default: from nbgrader_config.py)")

    collect = subparsers.add_parser(
        "collect", help="collect submissions from the exchange, or an LMS download (folder or zip)",
        description="Place each student's latest submission in var/submitted/. From an LMS download "
                    "(named as each LMS in autograder/lms_names.py names them, or a folder per student; "
                    "the report names the LMSs it reads) files are matched "
                    "against the roster; anything that cannot be placed for certain is listed, never "
                    "placed, and the exit status is 1.")
    common(collect)
    collect.add_argument("--from", dest="source", metavar="DOWNLOAD",
                         help="a folder or .zip downloaded from an LMS (default: nbgrader's exchange)")
    collect.add_argument("--timezone", metavar="ZONE", help="the LMS's time zone for the times in its file "
                         "names (where its naming has them), e.g. Europe/Berlin (default: this machine's)")
    collect.add_argument("--replace-graded", action="store_true",
                         help="place a newer file even where a graded submission is in place")
    collect.set_defaults(func=cmd_collect)

    grade = subparsers.add_parser("grade", help="grade all submissions in sandboxes, in parallel")
    common(grade)
    grade.add_argument("--workers", type=positive_int, default=None, help="parallel sandboxes (default: cores)")
    grade.add_argument("--timeout", type=positive_number, default=None,
                       help="seconds per cell: a cell past it is stopped and the tests after it still run "
                            "(default: c.Execute.timeout in course/nbgrader_config.py)")
    grade.add_argument("--notebook-timeout", type=positive_number, default=None,
                       help="seconds per notebook, all its cells together (default: "
                            "c.CourseLimits.notebook_timeout)")
    grade.add_argument("--memory-mb", type=positive_int, default=None,
                       help="memory per notebook, MiB (default: c.CourseLimits.memory_mb)")
    grade.add_argument("--force", action="store_true", help="re-grade submissions already graded")
    grade.add_argument("--student", action="append", help="grade only this student (repeatable)")
    cluster = grade.add_mutually_exclusive_group()
    cluster.add_argument("--dask", metavar="ADDRESS", help="grade on the Dask cluster whose scheduler is "
                         "ADDRESS (tcp://host:8786); workers must share the course folder (docs/deploy.md)")
    cluster.add_argument("--dask-local", type=positive_int, metavar="N", help="grade on a Dask cluster of N "
                         "worker processes started on this machine")
    grade.set_defaults(func=cmd_grade)

    feedback = subparsers.add_parser("feedback", help="per-test feedback for each student (no hidden tests)")
    common(feedback)
    feedback.add_argument("--lms", choices=("canvas", "moodle"), help="also bundle the pages for the LMS the "
                          "submissions were collected from: canvas-feedback.zip (Re-Upload Submissions), or "
                          "moodle-feedback.zip (Upload multiple feedback files in a zip) and "
                          "moodle-grading-worksheet.csv, in var/reports/<a>/")
    feedback.set_defaults(func=cmd_feedback)

    export = subparsers.add_parser("export", help="grades as CSV: for the course, or for Canvas or Moodle to import")
    common(export)
    export.add_argument("--format", choices=("course", "canvas", "moodle"), default="course",
                        help="course (default): student, score, status, late penalty...; canvas or moodle: "
                             "their gradebook import formats")
    export.add_argument("--column", help="the grade column's header for canvas/moodle, e.g. the Canvas "
                        "assignment's \"Autograd (1234)\" (default: the assignment id)")
    export.add_argument("--output", "-o", help="CSV path (default: var/reports/<a>/grades[-FORMAT].csv)")
    export.set_defaults(func=cmd_export)

    report = subparsers.add_parser("report", help="CSV, score distribution per question (PNG), summary")
    common(report)
    report.set_defaults(func=cmd_report)
