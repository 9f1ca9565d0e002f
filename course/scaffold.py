"""`course new NAME`: the source notebook of a new assignment, ready to release and grade.

    course new 09_softplus            # solutions/09_softplus/09_softplus.ipynb
    course release 09_softplus        # assignments/09_softplus/ (nbgrader)
    course validate solutions/09_softplus/09_softplus.ipynb    # passes
    course validate assignments/09_softplus/09_softplus.ipynb  # fails: nothing answered yet

The notebook has nbgrader's metadata on every graded cell, the read-only grading-tools cell
copied from the first existing assignment (the gates require it to be the same in all of
them), and two sample questions in the probe form: one graded without torch, one with
torch as the oracle, each with visible and hidden checks, worth 5 points each: the 10 points
every assignment must be worth at least (coursebase.model.MIN_POINTS, a CI gate). Replace them with yours; the
tests and CI gates find the new assignment by itself (they list solutions/).
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from course import nbgrader_course
from coursebase.model import MIN_POINTS, Course, CourseError
from coursebase.paths import REPO

NAME = re.compile(r"^\d{2}_[a-z][a-z0-9_]*$")
# Two sample questions, together exactly the course's minimum (coursebase.model.MIN_POINTS).
SAMPLE_POINTS = MIN_POINTS // 2

INTRO = """# {name}

One paragraph: what this assignment practises, and which lesson it follows.

**How this works.** Write your code only in the cells marked `# YOUR CODE HERE` (delete the
`raise NotImplementedError()` line). The visible checks under each answer are a start;
graders also run hidden checks on many generated inputs. Check your work with
`course validate assignments/{name}/{name}.ipynb`.

| Question | Points |
|---|---|
| 1. a dot product, without torch | 5 |
| 2. rows that sum to one | 5 |
"""

QUESTION_1 = """## 1. A dot product, without torch (5 points)

Write `dot(xs, ys)`: the sum of the products of two equally long lists of numbers, in plain
Python. This question is graded where torch cannot be imported (`@probe(torch=False)`)."""

ANSWER_1 = '''def dot(xs, ys):
    """The sum of xs[i] * ys[i]."""
    ### BEGIN SOLUTION
    return sum(first * second for first, second in zip(xs, ys))
    ### END SOLUTION'''

TEST_1 = '''@probe(torch=False)
def _dot(xs, ys):
    return dot(list(xs), list(ys))

check("dot([1, 2, 3], [4, 5, 6])", _dot, [1, 2, 3], [4, 5, 6], expect=32)
### BEGIN HIDDEN TESTS
_pairs = st.integers(0, 6).flatmap(lambda n: st.tuples(
    st.lists(st.integers(-50, 50), min_size=n, max_size=n), st.lists(st.integers(-50, 50), min_size=n, max_size=n)))
for _xs, _ys in examples(_pairs):
    check(f"dot({_xs}, {_ys})", _dot, _xs, _ys, expect=int(torch.dot(torch.tensor(_xs + [0]), torch.tensor(_ys + [0]))))
### END HIDDEN TESTS'''

QUESTION_2 = """## 2. Rows that sum to one (5 points)

Write `normalize_rows(matrix)`: a new float64 tensor whose rows are the rows of `matrix`
divided by their sums (every row sum is positive). Do not change `matrix`."""

ANSWER_2 = '''import torch


def normalize_rows(matrix):
    """Each row divided by its sum, as a new float64 tensor."""
    ### BEGIN SOLUTION
    as_float = matrix.to(torch.float64)
    return as_float / as_float.sum(dim=1, keepdim=True)
    ### END SOLUTION'''

TEST_2 = '''@probe
def _normalize(rows):
    matrix = torch.tensor(rows, dtype=torch.float64)
    before = matrix.clone()
    result = normalize_rows(matrix)
    if not torch.equal(matrix, before):
        raise TestFailure("normalize_rows changed its input")
    return result

check("normalize_rows([[1, 3], [2, 2]])", _normalize, [[1.0, 3.0], [2.0, 2.0]],
      expect=torch.tensor([[0.25, 0.75], [0.5, 0.5]], dtype=torch.float64), close=True)
### BEGIN HIDDEN TESTS
_matrices = st.integers(1, 4).flatmap(lambda width: st.lists(
    st.lists(st.floats(0.5, 10.0), min_size=width, max_size=width), min_size=1, max_size=4))
for _rows in examples(_matrices):
    _expected = torch.nn.functional.normalize(torch.tensor(_rows, dtype=torch.float64), p=1, dim=1)
    check(f"normalize_rows({_rows})", _normalize, _rows, expect=_expected, close=True)
### END HIDDEN TESTS'''


def _cell(kind: str, source: str, grade_id: str | None = None, *, solution=False, grade=False,
          locked=False, points=None) -> dict:
    cell = {"cell_type": kind, "metadata": {}, "source": source}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    if grade_id:
        meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
                "solution": solution, "task": False}
        if points is not None:
            meta["points"] = points
        cell["metadata"]["nbgrader"] = meta
    return cell


def grading_tools_cell(root: Path) -> dict:
    """The grading-tools cell of the first assignment, as it is (source and metadata)."""
    course = Course.load(root)
    for name in course.assignment_ids():
        notebook = json.loads(course.source_notebook(name).read_text(encoding="utf-8"))
        for cell in notebook.get("cells", []):
            if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "grading_tools":
                source = cell["source"]
                return _cell("code", "".join(source) if isinstance(source, list) else source, "grading_tools",
                             locked=True)
    raise CourseError(
        f"no assignment in {root / 'solutions'} has a grading_tools cell to copy; "
        "`course new` copies it so that every assignment grades the same way")


def new_notebook(name: str, root: Path) -> dict:
    cells = [
        _cell("markdown", INTRO.format(name=name)),
        grading_tools_cell(root),
        _cell("markdown", QUESTION_1),
        _cell("code", ANSWER_1, "dot", solution=True),
        _cell("code", TEST_1, "test_dot", grade=True, locked=True, points=SAMPLE_POINTS),
        _cell("markdown", QUESTION_2),
        _cell("code", ANSWER_2, "normalize_rows", solution=True),
        _cell("code", TEST_2, "test_normalize_rows", grade=True, locked=True, points=SAMPLE_POINTS),
    ]
    for number, cell in enumerate(cells):
        cell["id"] = cell["metadata"].get("nbgrader", {}).get("grade_id", f"text-{number}").replace("_", "-")
    return {"cells": cells, "nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python",
                                        "name": "python3"},
                         "language_info": {"name": "python"}}}


def _shown(path: Path) -> str:
    """Relative to the current folder when inside it, else absolute."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def run_new(args) -> int:
    root = Path(args.root or REPO).resolve()
    name = args.name
    if not NAME.match(name):
        print(f"course new: {name!r} is not an assignment name: two digits, an underscore, then lowercase "
              "letters, digits or _ (like 09_softplus; the digits give the course order)", file=sys.stderr)
        return 2
    try:
        course = Course.load(root)
        folder = root / "solutions" / name
        if folder.exists():
            print(f"course new: {nbgrader_course.relative(folder)} exists already; nothing was changed",
                  file=sys.stderr)
            return 1
        notebook = new_notebook(name, root)
    except CourseError as error:
        print(f"course new: {error}", file=sys.stderr)
        return 2
    folder.mkdir(parents=True)
    path = folder / f"{name}.ipynb"
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    where = f" --root {root}" if args.root else ""
    print(f"wrote {_shown(path)}: two sample questions to replace with yours. Then:\n"
          f"  course release {name}{where}\n"
          f"  course validate {_shown(path)}\n"
          f"  course validate {_shown(course.release_notebook(name))}   # fails until answered")
    return 0


def register(subparsers) -> None:
    new = subparsers.add_parser(
        "new", help="start a new assignment: solutions/NAME/NAME.ipynb with sample questions",
        description="Write the nbgrader source notebook of a new assignment, with the grading-tools cell "
                    "and two sample questions in the probe form, ready for `course release NAME`.")
    new.add_argument("name", metavar="NAME", help="assignment id: two digits, _, a name (09_softplus)")
    new.add_argument("--root", help="course root (default: this repository)")
    new.set_defaults(func=run_new)
