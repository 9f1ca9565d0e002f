"""`course release` and `course validate`: the instructor's and the student's assignment commands.

    course release 01_tensors        # regenerate assignments/01_tensors/ from solutions/
    course release --all
    course release --all --check     # exit 1 when assignments/ differs from a fresh release
    course validate assignments/01_tensors/01_tensors.ipynb   # exit 1 when a test fails
"""
from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

from course import nbgrader_course, release_audit
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
    release.add_argument("--check", action="store_true",
                         help="write nothing; exit 1 when the committed release differs from a fresh one")
    release.add_argument("--exchange", action="store_true",
                         help="also publish the release to the course's nbgrader exchange, where "
                              "students fetch it (Assignment List in JupyterLab)")
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
    if args.check and args.exchange:
        print("course release: --check writes nothing, so it cannot go with --exchange", file=sys.stderr)
        return 2
    try:
        names = nbgrader_course.assignment_ids() if args.all else args.assignments
        if not names:
            print("course release: name at least one assignment, or use --all", file=sys.stderr)
            return 2
        refused = old_form_problems(names)
        if refused:
            for problem in refused:
                print(f"course release: {problem}", file=sys.stderr)
            return 1
        if args.check:
            return _check_releases(names)
        written = nbgrader_course.generate_release(names)
        published = [nbgrader_course.publish_to_exchange(name) for name in names] if args.exchange else []
    except nbgrader_course.CourseError as error:
        print(f"course release: {error}", file=sys.stderr)
        return 2
    except Exception as error:  # nbgrader's own failures (bad metadata, nested regions, ...)
        print(f"course release: nbgrader failed: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    for path in written:
        print(f"released {nbgrader_course.relative(path)}")
    for path in published:
        print(f"published to the exchange: {path}")
    return 0


def old_form_problems(names: list[str], root: Path | None = None) -> list[str]:
    """One line per test cell the autograder would refuse (the old assert form), so a
    release never ships tests that cannot be graded. Unknown names are left to nbgrader."""
    from autograder.probes import OldFormTestCell, old_form_test_cells  # instructor side only

    problems = []
    for name in names:
        path = nbgrader_course.source_notebook(name, root)
        if path.is_file():
            notebook = json.loads(path.read_text(encoding="utf-8"))
            problems += [f"{nbgrader_course.relative(path)}: {OldFormTestCell(grade_id)}"
                         for grade_id in old_form_test_cells(notebook)]
            problems += [f"{nbgrader_course.relative(path)}: {problem}"
                         for problem in release_audit.credit_problems(notebook)]
    return problems


def _check_releases(names: list[str]) -> int:
    """Generate into a scratch course and compare with the committed assignments/."""
    nbgrader_course.check_assignment_ids(names)
    with tempfile.TemporaryDirectory(prefix="course-release-check-") as scratch:
        scratch_root = Path(scratch)
        (scratch_root / "course").mkdir()
        shutil.copy(nbgrader_course.REPO_ROOT / nbgrader_course.CONFIG_RELATIVE_PATH,
                    scratch_root / nbgrader_course.CONFIG_RELATIVE_PATH)
        for name in names:
            shutil.copytree(nbgrader_course.REPO_ROOT / "solutions" / name, scratch_root / "solutions" / name)
        nbgrader_course.generate_release(names, scratch_root)
        problems = []
        for name in names:
            problems += release_audit.release_differences(
                nbgrader_course.REPO_ROOT / "assignments" / name, scratch_root / "assignments" / name)
    for problem in problems:
        print(problem)
    if problems:
        print("course release --check: assignments/ is stale; run `course release` for the names above",
              file=sys.stderr)
        return 1
    print(f"up to date: {', '.join(names)}")
    return 0


def run_validate(args) -> int:
    status = 0
    for notebook in args.notebooks:
        status = max(status, validate_notebook(notebook))
    return status
