"""The student's self-check: `course validate` judges a notebook the way `course grade` does.

The notebook goes through the grader's own code (:mod:`autograder.validate`, which the
course repository and the student kit both hold): the same runs, with and without torch,
and the same verdict, message for message, on the checks the notebook can see; hidden
checks are the only difference. Where bubblewrap is installed the runs happen in the
grader's sandboxes; where it is missing, or cannot start (a student's laptop), they happen
in ordinary processes with the same stand-ins for the packages an exercise is graded
without, and the report says that the notebook was not sandboxed. Only where the grader's
code cannot run at all (no ``autograder/``, or not Linux) does it fall back to nbgrader's
Validator in a Jupyter kernel, and say so. JupyterLab's Validate button gives the same
judgement (course/validate_button.py).

Stock `nbgrader validate` prints failures but always exits 0; `course validate` prints one
line per graded test cell and exits 1 when any of them fails, so scripts and CI can rely on it.
"""
from __future__ import annotations

import atexit
import importlib.util
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from course import nbgrader_course
from coursebase.model import Course

EXIT_PASSED, EXIT_FAILED, EXIT_UNUSABLE = 0, 1, 2
_validator = None


def _recording_validator(config):
    """nbgrader's Validator, keeping the executed notebook so each cell can be reported."""
    from nbgrader.validator import Validator

    class RecordingValidator(Validator):
        executed = None

        def _preprocess(self, nb):
            nb = super()._preprocess(nb)
            self.executed = nb
            return nb

    return RecordingValidator(config=config)


def _error_line(cell) -> str | None:
    """The last error a cell raised, as one line: `Name: message`."""
    for output in reversed(cell.get("outputs", [])):
        if output.get("output_type") == "error":
            message = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}".strip()
            return message.splitlines()[0] if message else "error"
    return None


def _cell_id(cell) -> str:
    return cell.metadata.get("nbgrader", {}).get("grade_id") or cell.get("id", "?")


def _old_form_cells(notebook) -> list[str]:
    """The grader's refusal of old assert-form test cells, said before running anything.

    A test cell the student edited is not the instructor's form: it is left out here (its
    nbgrader checksum no longer matches) and reported as EDIT after the run. Only where the
    grader's code is here (the course repository, the student kit)."""
    if importlib.util.find_spec("autograder") is None:
        return []
    import nbformat
    from nbformat.v4.rwbase import rejoin_lines
    from nbgrader import utils

    from autograder.probes import OldFormTestCell, old_form_test_cells

    def untouched(cell) -> bool:
        metadata = cell.get("metadata") if isinstance(cell, dict) else None
        meta = metadata.get("nbgrader") if isinstance(metadata, dict) else None
        checksum = meta.get("checksum") if isinstance(meta, dict) else None
        return checksum is None or checksum == utils.compute_checksum(cell)

    # nbformat's own reading joins list-of-lines sources, as nbgrader's checksums expect.
    cells = rejoin_lines(nbformat.from_dict(notebook)).get("cells", []) if isinstance(notebook, dict) else []
    kept = [cell for cell in cells if untouched(cell)]
    return [str(OldFormTestCell(grade_id)) for grade_id in old_form_test_cells({"cells": kept})]


def grader_available() -> bool:
    """The grader's own code can judge here (with or without a sandbox): it needs Linux."""
    return importlib.util.find_spec("autograder") is not None and sys.platform.startswith("linux")


def _shared_validator(plain: bool | None = None):
    """One validator per process: `course validate a b c` starts its sandboxes once.
    ``plain``: without a sandbox (default: where bubblewrap is missing)."""
    global _validator
    if _validator is not None and plain is not None and _validator.plain != plain:
        _validator.close()
        _validator = None
    if _validator is None:
        from autograder.validate import NotebookValidator
        _validator = NotebookValidator(plain=plain)
        atexit.register(_validator.close)
    return _validator


def _announce(shown: str, plain: bool, out) -> None:
    where = ("not sandboxed: bubblewrap is missing or cannot start here, so the notebook runs as an "
             "ordinary process of yours (fine for checking your own work; grading runs it in a sandbox)"
             if plain else "in the grader's sandbox")
    print(f"Validating {shown} with the grader's own checks (the visible ones; each exercise with "
          f"or without torch, as graded), {where}; this takes a few seconds", file=out, flush=True)


def validate_notebook(path: str | Path, out=None) -> int:
    """Validate one notebook, print a report to ``out`` (standard output at call time, not
    whichever stream was standard output when this module was imported), return the exit status."""
    out = out or sys.stdout
    path = Path(path)
    shown = nbgrader_course.relative(path)
    if not path.is_file():
        print(f"course validate: no such notebook: {shown}", file=sys.stderr)
        return EXIT_UNUSABLE
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        print(f"course validate: {shown} is not a notebook (invalid JSON: {error})", file=sys.stderr)
        return EXIT_UNUSABLE
    if grader_available():
        return _validate_as_graded(path, shown, out)
    print(f"course validate: the grader's code cannot run here (it needs Linux and autograder/): {shown} "
          "runs in a Jupyter kernel, with torch for every exercise (grading runs some without it)", file=out)
    return _validate_in_kernel(path, shown, notebook, out)


@dataclass
class GraderReport:
    """What the grader's judgement says of one notebook: the lines `course validate` prints,
    and the same verdicts as (what, why) pairs for JupyterLab's Validate button."""
    status: int                                   # EXIT_PASSED, EXIT_FAILED or EXIT_UNUSABLE
    lines: list[str] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)
    problem: str = ""                             # why it could not be judged (EXIT_UNUSABLE)


def _validate_as_graded(path: Path, shown: str, out) -> int:
    report = judge_as_graded(path, shown, out)
    if report.status == EXIT_UNUSABLE:
        print(f"course validate: {shown}: {report.problem}", file=sys.stderr)
    for line in report.lines:
        print(line, file=out)
    return report.status


def _graded_ids(notebook: dict) -> set[str]:
    """The grade ids of a notebook's answer and test cells (nbgrader's metadata)."""
    ids = set()
    for cell in notebook.get("cells", []) if isinstance(notebook, dict) else []:
        meta = cell.get("metadata", {}).get("nbgrader") if isinstance(cell, dict) else None
        if isinstance(meta, dict) and (meta.get("solution") or meta.get("grade")) and meta.get("grade_id"):
            ids.add(str(meta["grade_id"]))
    return ids


def not_a_submission(path: Path, root: Path) -> str:
    """Why ``path`` is not a notebook of the assignment its name points to ('' when it is, or
    when no assignment has that name): a lesson shares its assignment's name, and graded as
    that assignment it would get every test cell put back and fail them all."""
    from autograder.validate import trusted_copy

    copy = trusted_copy(path, root)
    if copy == path.resolve():
        return ""    # no assignment of that name: the notebook is its own copy
    try:
        mine = _graded_ids(json.loads(path.read_text(encoding="utf-8")))
        theirs = _graded_ids(json.loads(copy.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return ""    # the validator reads them again and says what is wrong
    if mine & theirs:
        return ""
    name = copy.parent.name
    lesson = " (it is a lesson: its exercises are for practice, not graded)" if path.parent.name == "lessons" else ""
    return (f"{path.name} is not a notebook of assignment {name}: it has none of its answer or test "
            f"cells{lesson}. Nothing was run; Validate checks the assignment's own notebook, "
            f"assignments/{name}/{name}.ipynb")


def judge_as_graded(path: Path, shown: str, out) -> GraderReport:
    """The grader's own judgement of ``path`` (its visible checks); what it is doing goes to
    ``out`` as it happens."""
    from autograder.probes import ProbeFormError
    from autograder.sandbox import REPO as GRADER_ROOT
    from autograder.sandbox import SandboxError
    from autograder.validate import ValidationError

    problem = not_a_submission(Path(path), GRADER_ROOT)
    if problem:
        return GraderReport(EXIT_UNUSABLE, problem=problem)
    validator = _shared_validator()
    _announce(shown, validator.plain, out)
    say = lambda line: print(line, file=out, flush=True)  # noqa: E731 - a cell still running, every few seconds
    try:
        try:
            validator.progress = say
            validation = validator.validate(path)
        except SandboxError as error:
            if validator.plain:
                raise ValidationError(f"the grader's process failed: {error}") from None
            # bwrap is installed but cannot start here (user namespaces switched off...)
            print(f"course validate: the sandbox cannot start here ({str(error).splitlines()[0][:200]})",
                  file=out)
            validator = _shared_validator(plain=True)
            _announce(shown, True, out)
            validator.progress = say
            validation = validator.validate(path)
    except (ValidationError, ProbeFormError, SandboxError) as error:
        return GraderReport(EXIT_UNUSABLE, problem=str(error))
    result, report = validation.result, GraderReport(EXIT_FAILED)
    width = max(len(test.grade_id) for test in result.tests)
    passed = 0
    for test in result.tests:
        verdict = "PASS" if test.passed else "FAIL"
        passed += test.passed
        score = f"{test.points:g}/{test.max_points:g}"
        line = f"  {verdict}  {test.grade_id:<{width}}  {score}"
        if not test.passed:
            line += f"  {test.message}"
            why = test.message + (f"\nhint: {test.hint}" if test.hint else "")
            report.failures.append((f"{test.grade_id}: {score} points", why))
        elif test.grade_id in validation.form_only:
            line += "  (the form only: grading compares your answers with the right ones)"
        report.lines.append(line)
        if test.hint and not test.passed:
            report.lines.append(f"  {'':4}  {'':<{width}}  hint: {test.hint}")
    for grade_id in validation.edited:
        why = "this read-only cell was edited; Validate and the grader run the original"
        report.lines.append(f"  EDIT  {grade_id}: {why}")
        report.failures.append((f"{grade_id}: edited", why))
    for grade_id in validation.todo:
        report.lines.append(f"  TODO  answer cell {grade_id} is not written yet")
        report.failures.append((f"answer cell {grade_id}", "not written yet"))
    if result.message != "ok":
        report.lines.append(f"Run: {result.message}")
        report.failures.append(("the run", result.message))
    summary = f"{passed} of {len(result.tests)} tests passed, {result.score:g} of {result.max_score:g} points."
    report.lines.append(summary)
    if passed == len(result.tests) and not validation.edited:
        report.lines.append("Success! Your notebook passes all the visible tests.")
        report.status = EXIT_PASSED
    else:
        report.failures.append(("in all", summary))
    return report


def _validate_in_kernel(path: Path, shown: str, notebook: dict, out) -> int:
    """nbgrader's Validator in a Jupyter kernel (where the grader's code cannot run), on a
    notebook validate_notebook has read and found to be JSON."""
    from nbgrader import utils

    refused = _old_form_cells(notebook)
    for message in refused:
        print(f"course validate: {shown}: {message}", file=sys.stderr)
    if refused:
        return EXIT_UNUSABLE

    validator = _recording_validator(Course.load().config)
    print(f"Validating {shown} (running every cell, this takes a few seconds)", file=out, flush=True)
    try:
        results = validator.validate(str(path))
    except Exception as error:  # the kernel died, a cell timed out, bad nbgrader metadata
        print(f"course validate: could not run {shown}: {type(error).__name__}: {error}", file=sys.stderr)
        return EXIT_UNUSABLE

    if results.get("type_changed"):
        for cell in results["type_changed"]:
            print(f"  CHANGED  a {cell['old_type']} cell became a {cell['new_type']} cell; "
                  "undo that change (or start again from the released notebook)", file=out)
        return EXIT_FAILED
    if validator.executed is None:
        print(f"course validate: nbgrader did not run {shown}", file=sys.stderr)
        return EXIT_UNUSABLE

    graded = [cell for cell in validator.executed.cells if utils.is_grade(cell) and cell.cell_type == "code"]
    if not graded:
        print(f"course validate: {shown} has no graded test cells to check", file=sys.stderr)
        return EXIT_UNUSABLE

    # Read-only cells edited in this copy: their result says nothing about the real tests.
    edited = {cell["source"] for cell in results.get("changed", [])}
    width = max(len(_cell_id(cell)) for cell in graded)
    failed, score_total, max_total = 0, 0.0, 0.0
    for cell in validator.executed.cells:
        error = _error_line(cell)
        if utils.is_grade(cell) and cell.cell_type == "code":
            score, max_score = utils.determine_grade(cell)
            max_total += max_score
            if cell.source.strip() in edited:
                failed += 1
                print(f"  EDIT  {_cell_id(cell):<{width}}  ?/{max_score:g}  this test cell was edited; "
                      "the autograder runs the original", file=out)
                continue
            score_total += score
            verdict = "PASS" if error is None and score == max_score else "FAIL"
            failed += verdict == "FAIL"
            line = f"  {verdict}  {_cell_id(cell):<{width}}  {score:g}/{max_score:g}"
            print(line + (f"  {error}" if error else ""), file=out)
        elif error and utils.is_solution(cell):
            if error.startswith("NotImplementedError"):
                print(f"  TODO  answer cell {_cell_id(cell)} is not written yet", file=out)
            else:
                print(f"  ERROR answer cell {_cell_id(cell)} raised {error}", file=out)
        elif error:
            print(f"  ERROR cell {_cell_id(cell)} raised {error}", file=out)

    changed = results.get("changed", [])
    graded_sources = {cell.source.strip() for cell in graded}
    for cell in changed:
        if cell["source"] in graded_sources:
            continue  # reported above
        first_line = cell["source"].splitlines()[0] if cell["source"] else ""
        print(f"  EDIT  a read-only cell was edited (it starts with {first_line!r}); "
              "the autograder uses the original", file=out)

    print(f"{len(graded) - failed} of {len(graded)} tests passed, "
          f"{score_total:g} of {max_total:g} points.", file=out)
    if failed == 0 and not changed:
        print("Success! Your notebook passes all the visible tests.", file=out)
        return EXIT_PASSED
    return EXIT_FAILED


# -- `course validate` ----------------------------------------------------------------------

def register(subparsers) -> None:
    validate = subparsers.add_parser(
        "validate",
        help="run a notebook's tests and exit non-zero when one fails (student self-check)",
        description="Execute a notebook the way the autograder does and report every graded test "
                    "cell. Exits 1 when a test fails or errors, 2 when the notebook cannot be checked.",
    )
    validate.add_argument("notebooks", nargs="+", metavar="NOTEBOOK", help="path to an .ipynb file")
    validate.set_defaults(func=run_validate)


def run_validate(args) -> int:
    status = 0
    for notebook in args.notebooks:
        status = max(status, validate_notebook(notebook))
    return status
