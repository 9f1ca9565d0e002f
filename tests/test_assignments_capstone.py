"""Assignment 10, the capstone: each piece of the student's engine is graded on its own.

A test of one piece runs only that piece of the student's: the operations' probes put copying
stand-ins in place of the student's views, `backward()`'s probe walks a graph the test builds
(with `+` made a plain value add), the module and optimizer probes use only the given
`Tensor`. So a piece written wrong costs that piece's points (and the training test's, which
uses every piece), never those of the pieces built on it, even when the student's other
pieces call it. Graded with the real grader, in one batch; honest variants keep full marks and
`course validate` gives them the grader's verdict.

The stand-ins live in the probes, which reach the student's process; none of them may be the
answer to another question (a correct piece in a probe's text could be found in memory and
used to pass that question): no solution line is in any test cell.
"""
from __future__ import annotations

import copy
import json
import re

import pytest

from attacks import inject, same_judgement
from coursebase.paths import REPO
from test_assignments_transfer import MIN_LENGTH, normalised, solution_lines

ASSIGNMENT = "10_own_torch"
SOURCE = REPO / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"

# Each answer cell and the test cells that grade it.
PIECES = {"views": {"test_views", "test_views_backward"}, "ops": {"test_ops_values", "test_ops_backward"},
          "backward": {"test_backward"}, "modules": {"test_modules"}, "sgd": {"test_sgd"}}
TRAINING = "test_fit"

# A piece broken on purpose: (answer cell, text of the solution, what replaces it, honest
# variants put in first). The "... uses ..." ones break a piece that another piece of the
# same student calls: the other piece must keep its points.
BROKEN = {
    "transpose_keeps_strides": ("views", "    steps[first], steps[second] = steps[second], steps[first]\n", "", []),
    "transpose_keeps_strides__ops_use_views": (
        "views", "    steps[first], steps[second] = steps[second], steps[first]\n", "", ["own_torch_ops_with_views"]),
    "relu_passes_negative_gradients": ("ops", "g if v > 0 else 0.0 for g, v", "g for g, v", []),
    "add_subtracts__backward_uses_plus": (
        "ops", "[x + y for x, y in zip(left, right)]", "[x - y for x, y in zip(left, right)]",
        ["own_torch_kahn_backward"]),
    "leaf_grad_overwritten": (
        "backward", "node.grad = incoming if node.grad is None else add_grads(node.grad, incoming)",
        "node.grad = incoming", []),
    "tied_weight_listed_twice": ("modules", "if id(parameter) not in seen_parameters:", "if True:", []),
    "nesterov_ignored": ("sgd", "if self.nesterov else buffer", "if False else buffer", []),
}
HONEST = ["own_torch_ops_with_views", "own_torch_kahn_backward", "own_torch_generator_modules",
          "own_torch_sgd_state", "own_torch_fit_variant"]



def _with_variants(notebook, names):
    for name in names:
        source, place = inject.attack_source(name)
        notebook = inject.insert(notebook, source, place)
    return notebook


def _broken(notebook, cell, old, new):
    notebook = copy.deepcopy(notebook)
    for each in notebook.cells:
        if each.get("metadata", {}).get("nbgrader", {}).get("grade_id") == cell:
            assert old in each.source, f"{cell} no longer contains {old!r}"
            each.source = each.source.replace(old, new)
            return notebook
    raise AssertionError(f"no answer cell {cell}")


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    from coursebase.model import Course
    from autograder.grade import Grader

    root = inject.make_course(tmp_path_factory.mktemp("capstone") / "course", ASSIGNMENT)
    honest = inject.honest(root, ASSIGNMENT)
    inject.submit(root, ASSIGNMENT, "honest", honest)
    for name in HONEST:
        inject.submit(root, ASSIGNMENT, name, _with_variants(honest, [name]))
    for student, (cell, old, new, variants) in BROKEN.items():
        inject.submit(root, ASSIGNMENT, student, _broken(_with_variants(honest, variants), cell, old, new))
    rows = {row.student: row for row in Grader(Course.load(root), ASSIGNMENT, workers=2).run()}
    maximum = sum(points for _, points in inject.test_points(root, ASSIGNMENT))
    return root, rows, maximum


@pytest.mark.slow
@pytest.mark.xdist_group("grading_capstone")
def test_honest_answers_and_variants_keep_full_marks(batch):
    root, rows, maximum = batch
    assert maximum == 22
    for student in ["honest", *HONEST]:
        failed = [(t.grade_id, t.message) for t in rows[student].tests if not t.passed]
        assert rows[student].score == maximum, (student, failed)
    validated = {student: rows[student] for student in ["honest", *HONEST]}
    assert not same_judgement.differences(validated, root, ASSIGNMENT, workers=2)


@pytest.mark.slow
@pytest.mark.xdist_group("grading_capstone")
@pytest.mark.parametrize("student", sorted(BROKEN))
def test_a_broken_piece_costs_only_its_own_points(batch, student):
    _, rows, _ = batch
    cell = BROKEN[student][0]
    failed = {t.grade_id for t in rows[student].tests if not t.passed}
    assert failed & PIECES[cell], f"{student}: the broken piece {cell} lost nothing ({failed})"
    others = failed - PIECES[cell] - {TRAINING}
    assert not others, f"{student}: a mistake in {cell} cost the points of {sorted(others)} too"


def _test_cells(notebook: dict) -> dict[str, str]:
    return {cell["metadata"]["nbgrader"]["grade_id"]: "".join(cell["source"])
            for cell in notebook["cells"]
            if cell.get("metadata", {}).get("nbgrader", {}).get("grade") and not cell["metadata"]["nbgrader"].get("solution")}


def answers_in_test_cells(source=SOURCE) -> list[str]:
    """'test cell: line' for every solution line (normalised, MIN_LENGTH or longer) that a test cell
    of the capstone contains: probes reach the student's process, and a stand-in must never be
    the answer to a question."""
    answers = {line for _, line in solution_lines(source)}
    found = []
    for grade_id, text in _test_cells(json.loads(source.read_text(encoding="utf-8"))).items():
        for line in text.splitlines():
            if len(line := normalised(line)) >= MIN_LENGTH and line in answers:
                found.append(f"{grade_id}: {line}")
    return found


def test_no_test_cell_holds_an_answer():
    assert answers_in_test_cells() == []


def test_the_answer_check_finds_a_planted_answer(tmp_path):
    notebook = json.loads(SOURCE.read_text(encoding="utf-8"))
    answer = next(c for c in notebook["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "backward")
    line = next(line for line in "".join(answer["source"]).splitlines()
                if "add_grads(node.grad" in line)
    test = next(c for c in notebook["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "test_sgd")
    test["source"] = "".join(test["source"]) + "\n### BEGIN HIDDEN TESTS\n" + line.strip() + "\n### END HIDDEN TESTS\n"
    planted = tmp_path / "planted.ipynb"
    planted.write_text(json.dumps(notebook), encoding="utf-8")
    assert answers_in_test_cells(planted) == [f"test_sgd: {normalised(line)}"]


def test_the_stand_ins_are_the_same_in_both_operation_tests():
    """The two cells of part B carry the same stand-ins for the views (copied, not shared:
    a probe may use nothing else its cell defines)."""
    cells = _test_cells(json.loads(SOURCE.read_text(encoding="utf-8")))
    pattern = re.compile(r"    # The test's own stand-ins.*?\n    try:\n", re.S)
    values, grads = (pattern.search(cells[name]) for name in ("test_ops_values", "test_ops_backward"))
    assert values and grads and values.group(0) == grads.group(0)
