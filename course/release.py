"""`course release`: the instructor's assignment command (a student's `course validate` is
course/self_check.py).

    course release 01_tensors        # regenerate assignments/01_tensors/ from solutions/
    course release --all
    course release --all --check     # exit 1 when assignments/ differs from a fresh release
"""
from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

from course import nbgrader_course, release_audit
from coursebase.model import Course, CourseError
from coursebase.paths import CONFIG_RELATIVE_PATH


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
    release.add_argument("--root", help="course root (default: this repository)")
    release.set_defaults(func=run_release)


def run_release(args) -> int:
    if args.all and args.assignments:
        print("course release: give assignment names or --all, not both", file=sys.stderr)
        return 2
    if args.check and args.exchange:
        print("course release: --check writes nothing, so it cannot go with --exchange", file=sys.stderr)
        return 2
    names = args.assignments
    try:
        course = Course.load(getattr(args, "root", None))  # no course there: say so before anything else
        names = course.assignment_ids() if args.all else args.assignments
        if not names:
            print("course release: name at least one assignment, or use --all", file=sys.stderr)
            return 2
        nbgrader_course.check_assignment_ids(names, course)
        unreadable = [problem for name in names if (problem := source_problem(name, course))]
        if unreadable:
            print(f"course release: {unreadable[0]}", file=sys.stderr)
            return 1
        refused = old_form_problems(names, course)
        if refused:
            for problem in refused:
                print(f"course release: {problem}", file=sys.stderr)
            return 1
        if args.check:
            return _check_releases(names, course)
        written = nbgrader_course.generate_release(names, course)
        published = [nbgrader_course.publish_to_exchange(name, course) for name in names] if args.exchange else []
    except CourseError as error:
        print(f"course release: {error}", file=sys.stderr)
        return 2
    except Exception as error:  # nbgrader's own failures (bad metadata, nested regions, ...)
        detail = " ".join(str(error).split())[:300]
        print(f"course release: nbgrader failed on {', '.join(names)}: {type(error).__name__}: {detail}",
              file=sys.stderr)
        return 1
    for path in written:
        print(f"released {nbgrader_course.relative(path)}")
    for path in published:
        print(f"published to the exchange: {path}")
    return 0


def source_problem(name: str, course: Course | Path | None = None) -> str:
    """Why the source notebook of ``name`` cannot be read ("" when it can): the file and the
    place in it, not nbgrader's bare "JSONDecodeError"."""
    path = nbgrader_course.source_notebook(name, course)
    try:
        json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as error:
        return f"{nbgrader_course.relative(path)} is not UTF-8 text ({error.reason} at byte {error.start})"
    except json.JSONDecodeError as error:
        return (f"{nbgrader_course.relative(path)} is not a valid notebook: invalid JSON at line {error.lineno}, "
                f"column {error.colno} ({error.msg}); fix it, or restore it with `git checkout -- {path.name}`")
    except OSError as error:
        return f"{nbgrader_course.relative(path)}: {error.strerror}"
    return ""


def ensure_in_gradebook(course, assignment: str) -> str:
    """Record ``assignment`` and its graded cells in ``course``'s gradebook when they are not
    there yet (a fresh clone has no gradebook), with nbgrader's GenerateAssignment writing its
    release into a scratch folder: assignments/ is left as committed. Returns what was done
    ("" when the gradebook was up to date)."""
    from nbgrader.api import MissingEntry

    source = json.loads(course.source_notebook(assignment).read_text(encoding="utf-8"))
    expected = {cell["metadata"]["nbgrader"]["grade_id"] for cell in source.get("cells", [])
                if cell.get("metadata", {}).get("nbgrader", {}).get("grade")}
    with course.open_gradebook() as gradebook:
        try:
            recorded = {cell.name for cell in gradebook.find_notebook(assignment, assignment).grade_cells}
        except MissingEntry:
            recorded = None
    if recorded == expected:
        return ""
    from nbgrader.converters import GenerateAssignment

    with tempfile.TemporaryDirectory(prefix="course-record-") as scratch:
        try:
            nbgrader_course.run_converter(GenerateAssignment, course, assignment,
                                          directories={"release_directory": scratch}, force=True)
        except Exception as error:  # noqa: BLE001 - nbgrader refuses, e.g. cells removed after grading
            raise RuntimeError(f"the gradebook's record of {assignment} differs from solutions/{assignment} "
                               f"and nbgrader could not update it ({type(error).__name__}); run "
                               f"`course release {assignment}` and read its message") from None
    what = "recorded" if recorded is None else "updated the graded cells of"
    return (f"course grade: {what} {assignment} in the gradebook (nbgrader generate_assignment into a "
            "scratch folder; assignments/ untouched)")


def old_form_problems(names: list[str], course: Course | Path | None = None) -> list[str]:
    """One line per test cell the autograder would refuse (the old assert form), so a
    release never ships tests that cannot be graded. Unknown names are left to nbgrader."""
    from autograder.probes import OldFormTestCell, old_form_test_cells  # instructor side only

    problems = []
    for name in names:
        path = nbgrader_course.source_notebook(name, course)
        if path.is_file():
            notebook = json.loads(path.read_text(encoding="utf-8"))
            problems += [f"{nbgrader_course.relative(path)}: {OldFormTestCell(grade_id)}"
                         for grade_id in old_form_test_cells(notebook)]
            problems += [f"{nbgrader_course.relative(path)}: {problem}"
                         for problem in release_audit.credit_problems(notebook)]
    return problems


def _check_releases(names: list[str], course: Course) -> int:
    """Generate into a scratch course and compare with the committed assignments/: what a
    student gets (cells, their sources and nbgrader metadata), not what JupyterLab writes
    when the notebook is opened and run (outputs, execution counts, kernel metadata)."""
    root = course.root
    with tempfile.TemporaryDirectory(prefix="course-release-check-") as scratch:
        scratch_root = Path(scratch)
        (scratch_root / "course").mkdir()
        shutil.copy(root / CONFIG_RELATIVE_PATH, scratch_root / CONFIG_RELATIVE_PATH)
        for name in names:
            shutil.copytree(root / "solutions" / name, scratch_root / "solutions" / name)
        nbgrader_course.generate_release(names, scratch_root)
        problems = []
        for name in names:
            problems += release_audit.release_differences(
                root / "assignments" / name, scratch_root / "assignments" / name)
    for problem in problems:
        print(problem)
    if problems:
        print("course release --check: assignments/ is stale; run `course release` for the names above",
              file=sys.stderr)
        return 1
    print(f"up to date: {', '.join(names)}")
    for name in names:
        released = course.release_notebook(name)
        try:
            ran = any(cell.get("outputs") for cell in json.loads(released.read_text(encoding="utf-8"))["cells"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
        if ran:
            print(f"note: {nbgrader_course.relative(released)} holds outputs saved by JupyterLab (not compared); "
                  f"`course release {name}` writes it without them")
    return 0

