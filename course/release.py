"""`course release` and `course validate`: the instructor's and the student's assignment commands.

    course release 01_tensors        # regenerate assignments/01_tensors/ from solutions/
    course release --all
    course validate assignments/01_tensors/01_tensors.ipynb   # exit 1 when a test fails
"""
from __future__ import annotations

import sys

from course import nbgrader_course
from course.self_check import validate_notebook


def register(subparsers) -> None:
    release = subparsers.add_parser(
        "release",
        help="regenerate assignments/<a>/ from solutions/<a>/ with nbgrader",
        description="Regenerate the student release of assignments from their nbgrader sources "
                    "(solutions/<a>/<a>.ipynb -> assignments/<a>/<a>.ipynb), with nbgrader's "
                    "GenerateAssignment, and record them in the course gradebook.",
    )
    release.add_argument("assignments", nargs="*", metavar="ASSIGNMENT",
                         help="assignment names, e.g. 01_tensors")
    release.add_argument("--all", action="store_true", help="release every assignment in solutions/")
    release.set_defaults(func=run_release)

    validate = subparsers.add_parser(
        "validate",
        help="run a notebook's tests and exit non-zero when one fails (student self-check)",
        description="Execute a notebook the way the autograder does and report every graded test "
                    "cell. Exits 1 when a test fails or errors, 2 when the notebook cannot be checked.",
    )
    validate.add_argument("notebooks", nargs="+", metavar="NOTEBOOK", help="path to an .ipynb file")
    validate.set_defaults(func=run_validate)


def run_release(args) -> int:
    if args.all and args.assignments:
        print("course release: give assignment names or --all, not both", file=sys.stderr)
        return 2
    try:
        names = nbgrader_course.assignment_ids() if args.all else args.assignments
        if not names:
            print("course release: name at least one assignment, or use --all", file=sys.stderr)
            return 2
        written = nbgrader_course.generate_release(names)
    except nbgrader_course.CourseError as error:
        print(f"course release: {error}", file=sys.stderr)
        return 2
    except Exception as error:  # nbgrader's own failures (bad metadata, nested regions, ...)
        print(f"course release: nbgrader failed: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    for path in written:
        print(f"released {nbgrader_course.relative(path)}")
    return 0


def run_validate(args) -> int:
    status = 0
    for notebook in args.notebooks:
        status = max(status, validate_notebook(notebook))
    return status
