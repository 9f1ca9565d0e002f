"""`course collect|grade|feedback|export|report`: the instructor's grading front door."""
from __future__ import annotations

import sys


def _course(args):
    from .course import Course
    return Course.load(getattr(args, "root", None), getattr(args, "db_url", None))


def _common(parser, db=True):
    parser.add_argument("assignment", help="assignment id, e.g. 03_autograd")
    parser.add_argument("--root", help="course root (default: this repository)")
    if db:
        parser.add_argument("--db-url", help="gradebook database URL (default: from nbgrader_config.py)")


def cmd_grade(args) -> int:
    from .sandbox import Limits, bwrap_available, close_early, launch_early

    if not bwrap_available():
        print("course grade: bubblewrap (bwrap) is not installed; run `make sysdeps`", file=sys.stderr)
        return 2
    limits = Limits(wall_seconds=args.timeout, cpu_seconds=int(args.timeout),
                    memory_bytes=int(args.memory_mb) * 1024**2)
    if (args.dask or args.dask_local is not None) and args.workers:
        print("course grade: --workers sets threads on this machine; with Dask, start more workers",
              file=sys.stderr)
        return 2
    if not (args.dask or args.dask_local is not None):
        import os
        launch_early(limits, max(1, args.workers or os.cpu_count() or 1))  # they import torch while we load the course
    from .grade import Grader, GradingError
    from .summary import print_summary
    try:
        if args.dask or args.dask_local is not None:
            from .distributed import grade_on_dask
            rows = grade_on_dask(_course(args), args.assignment, args.dask, args.dask_local,
                                 limits=limits, force=args.force, students=args.student)
        else:
            grader = Grader(_course(args), args.assignment, workers=args.workers, limits=limits,
                            force=args.force, students=args.student)
            grader.wait_for_teardown = False   # the sandboxes are killed; the kernel finishes on its own
            rows = grader.run()
    except (GradingError, FileNotFoundError, RuntimeError) as error:
        print(f"course grade: {error}", file=sys.stderr)
        return 1
    finally:
        close_early()
    print_summary(rows, sys.stdout)
    return 0


def cmd_export(args) -> int:
    from .export import export_csv
    course = _course(args)
    path = export_csv(course, args.assignment, args.output)
    print(f"wrote {path}")
    return 0


def cmd_feedback(args) -> int:
    from .feedback import write_feedback
    course = _course(args)
    paths = write_feedback(course, args.assignment)
    print(f"wrote feedback for {len(paths)} submission(s) under {course.feedback_root}")
    return 0


def cmd_report(args) -> int:
    from .report import write_report
    course = _course(args)
    summary = write_report(course, args.assignment)
    print(summary)
    return 0


def cmd_collect(args) -> int:
    from .collect import collect
    course = _course(args)
    report = collect(course, args.assignment, args.source)
    print(report.text())
    return 0 if not (report.failed or report.refused) else 1


def register(subparsers) -> None:
    collect = subparsers.add_parser("collect", help="collect submissions from the exchange, a folder or a zip")
    _common(collect, db=False)
    collect.add_argument("--from", dest="source", help="a folder or .zip downloaded from an LMS "
                         "(default: nbgrader's exchange)")
    collect.set_defaults(func=cmd_collect)

    grade = subparsers.add_parser("grade", help="grade all submissions in sandboxes, in parallel")
    _common(grade)
    grade.add_argument("--workers", type=int, default=None, help="parallel sandboxes (default: cores)")
    grade.add_argument("--timeout", type=float, default=60.0, help="seconds per notebook (wall and CPU)")
    grade.add_argument("--memory-mb", type=int, default=2048, help="memory per notebook, MiB")
    grade.add_argument("--force", action="store_true", help="re-grade submissions already graded")
    grade.add_argument("--student", action="append", help="grade only this student (repeatable)")
    cluster = grade.add_mutually_exclusive_group()
    cluster.add_argument("--dask", metavar="ADDRESS", help="grade on the Dask cluster whose scheduler is "
                         "ADDRESS (tcp://host:8786); workers must share the course folder (docs/deploy.md)")
    cluster.add_argument("--dask-local", type=int, metavar="N", help="grade on a Dask cluster of N worker "
                         "processes started on this machine")
    grade.set_defaults(func=cmd_grade)

    feedback = subparsers.add_parser("feedback", help="per-test feedback for each student (no hidden tests)")
    _common(feedback)
    feedback.set_defaults(func=cmd_feedback)

    export = subparsers.add_parser("export", help="CSV: student, score, max_score, status, message")
    _common(export)
    export.add_argument("--output", "-o", help="CSV path (default: course/reports/<a>/grades.csv)")
    export.set_defaults(func=cmd_export)

    report = subparsers.add_parser("report", help="CSV, score distribution per question (PNG), summary")
    _common(report)
    report.set_defaults(func=cmd_report)
