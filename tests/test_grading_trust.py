"""The probe design against the attacks that beat the previous one, with positive controls.

The student's process only runs probes on data; expected values stay in the reference run
and on the host. Each attack here must score no more than its baseline with `course grade`.
The positive control grades the same submissions with stock `nbgrader autograde`, where the
test cells (expected values, check helpers, torch) run in the student's kernel: there the
attacks score above their baseline, so they are real attacks and the tests can fail.
"""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from attacks import inject, same_judgement

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("grading_trust")]

# Attacks on 01_tensors that work wherever the test code runs with the student's code.
STOCK_BEATEN = ["delegate_to_torch", "delegate_to_numpy", "frame_expected", "shadow_helpers"]
# Attacks on the blank 01 release: the course's own engine answers the stride questions.
ON_BLANK = ["reftorch_storage"]


def _grade(root: Path, assignment: str) -> dict:
    from coursebase.model import Course
    from autograder.grade import Grader

    return {row.student: row for row in Grader(Course.load(root), assignment, workers=2).run()}


def _validate_differences(root: Path, assignment: str, rows: dict) -> list:
    """Where `course validate` and `course grade` disagree on these notebooks (see same_judgement)."""
    return same_judgement.differences(rows, root, assignment)


def _stock_scores(root: Path, assignment: str) -> dict[str, float]:
    """`nbgrader autograde` as shipped, on the same course folder."""
    environment = dict(os.environ, JUPYTER_CONFIG_PATH=str(root / "course"),
                       PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    subprocess.run([str(Path(sys.executable).parent / "nbgrader"), "autograde", assignment],
                   cwd=root, env=environment, capture_output=True, text=True, check=True, timeout=600)
    with sqlite3.connect(root / "var" / "gradebook.db") as connection:
        rows = connection.execute(
            "select s.student_id, sum(coalesce(g.auto_score, 0)) from submitted_assignment s "
            "join submitted_notebook n on n.assignment_id = s.id join grade g on g.notebook_id = n.id "
            "group by s.student_id").fetchall()
    return {student: float(score) for student, score in rows}


@pytest.fixture(scope="module")
def tensors(tmp_path_factory):
    assignment = "01_tensors"
    root = inject.make_course(tmp_path_factory.mktemp("trust01") / "course", assignment)
    partial = inject.honest(root, assignment, keep=0.5)
    inject.submit(root, assignment, "partial", partial)
    inject.submit(root, assignment, "honest", inject.honest(root, assignment))
    for name in STOCK_BEATEN:
        source, place = inject.attack_source(name)
        inject.submit(root, assignment, name, inject.insert(partial, source, place))
    blank = inject.released(root, assignment)
    inject.submit(root, assignment, "blank", blank)
    for name in ON_BLANK:
        source, place = inject.attack_source(name)
        inject.submit(root, assignment, name, inject.insert(blank, source, place))
    stock_root = tmp_path_factory.mktemp("trust01_stock") / "course"
    import shutil
    shutil.copytree(root, stock_root)
    (stock_root / "var" / "submitted" / "honest").rename(stock_root / "honest_not_graded")
    rows = _grade(root, assignment)
    return {"rows": rows, "stock": _stock_scores(stock_root, assignment),
            "validate": _validate_differences(root, assignment, rows)}


@pytest.mark.parametrize("name", STOCK_BEATEN)
def test_attack_beats_stock_nbgrader(tensors, name):
    stock = tensors["stock"]
    assert stock[name] > stock["partial"], f"{name}: {stock[name]} vs partial {stock['partial']} on stock nbgrader"


@pytest.mark.parametrize("name", STOCK_BEATEN)
def test_attack_gains_nothing_with_probes(tensors, name):
    rows = tensors["rows"]
    assert rows["honest"].score == rows["honest"].max_score
    assert rows[name].score <= rows["partial"].score, [t.message for t in rows[name].tests if not t.passed]


@pytest.mark.parametrize("name", ON_BLANK)
def test_ready_implementations_answer_on_stock_nbgrader_not_here(tensors, name):
    """reftorch.storage answers the stride questions where it can be imported (stock
    nbgrader: the control); the no-torch runs have neither reftorch nor numpy."""
    stock, rows = tensors["stock"], tensors["rows"]
    assert stock[name] > stock["blank"], f"{name}: {stock[name]} vs blank {stock['blank']} on stock nbgrader"
    assert rows[name].score <= rows["blank"].score == 0, [t.message for t in rows[name].tests if t.points]
    strides = next(t for t in rows[name].tests if t.grade_id == "test_is_contiguous")
    assert "reftorch is not available in this exercise" in strides.message, strides.message


def test_mechanism_exercises_run_without_torch(tensors):
    """Delegating to torch fails: the strided exercises of 01 run where torch cannot be
    imported, and the puzzles' rule check names the torch function used."""
    tests = {t.grade_id: t.message for t in tensors["rows"]["delegate_to_torch"].tests}
    assert "strided_zip" in tests["test_strided_zip"] and "NameError" not in tests["test_strided_zip"]
    assert "take breaks the puzzle rule: uses `take`" in tests["test_take"], tests["test_take"]


# 08 attacks on structure facts, each with the submission it starts from (those answers blank).
STRUCTURE_ATTACKS = {"batchnorm_forged_structure": ("batchnorm2d",), "optimizer_in_globals": ("rmsprop", "adagrad")}


@pytest.fixture(scope="module")
def training(tmp_path_factory):
    assignment = "08_training"
    root = inject.make_course(tmp_path_factory.mktemp("trust08") / "course", assignment)
    honest = inject.honest(root, assignment)
    partial = inject.honest(root, assignment, keep=0.75)  # everything but train
    inject.submit(root, assignment, "partial", partial)
    for name, base in (("honest_float64_init", honest), ("memorise_labels", partial)):
        source, place = inject.attack_source(name)
        inject.submit(root, assignment, name, inject.insert(base, source, place))
    for name, blanked in STRUCTURE_ATTACKS.items():
        base = inject.blank(honest, root, assignment, *blanked)
        inject.submit(root, assignment, f"{name}__baseline", base)
        source, place = inject.attack_source(name)
        inject.submit(root, assignment, name, inject.insert(base, source, place))
    rows = _grade(root, assignment)
    rows["validate"] = _validate_differences(root, assignment, rows)
    return rows


@pytest.mark.parametrize("fixture", ["tensors", "training"])
def test_validate_gives_the_graders_verdict(request, fixture):
    assert request.getfixturevalue(fixture)["validate"] == []


@pytest.mark.parametrize("name", STRUCTURE_ATTACKS)
def test_structure_is_read_by_the_grader_not_from_the_student_objects(training, name):
    """A forged __mro__ and a .clone() on torch's batch norm, real optimizers in a global
    dict: the previous design's probes believed them (README); the grader's readings do not."""
    attack, baseline = training[name], training[f"{name}__baseline"]
    assert attack.score <= baseline.score, [(t.grade_id, t.message) for t in attack.tests if t.passed]
    facts = {"batchnorm_forged_structure": ("torch classes in the class chain", "output made by a batch-norm kernel"),
             "optimizer_in_globals": ("a torch.optim.Optimizer reachable",)}[name]
    messages = " ".join(t.message for t in attack.tests)
    assert any(fact in messages for fact in facts), messages


def test_float64_init_and_extra_random_draws_keep_full_marks(training):
    row = training["honest_float64_init"]
    assert row.score == row.max_score, [t.message for t in row.tests if not t.passed]


def test_memorised_test_labels_earn_nothing(training):
    assert training["memorise_labels"].score <= training["partial"].score
    train = next(t for t in training["memorise_labels"].tests if t.grade_id == "test_train")
    # It fails on the hidden check (new points), which says nothing of those points.
    assert not train.passed and train.hidden and "not every hidden check" in train.message, train.message


def test_lying_prediction_dicts_and_shadowed_helpers_earn_nothing(tmp_path):
    # 05_inplace's first three answers are the predictions `versions`, `outcome` and `why` that
    # liar_dict fakes; each predicted item is a case with its own share of the points.
    assignment = "05_inplace"
    root = inject.make_course(tmp_path / "course", assignment)
    blank = inject.released(root, assignment)
    inject.submit(root, assignment, "blank", blank)
    # Control: the honest predictions alone do earn the prediction cells' points.
    inject.submit(root, assignment, "predictions_only", inject.honest(root, assignment, keep=0.5))
    for name in ("liar_dict", "shadow_helpers"):  # both beat the previous design's 04_inplace_clone (2 and 5 of 18)
        source, place = inject.attack_source(name)
        inject.submit(root, assignment, name, inject.insert(blank, source, place))
    rows = _grade(root, assignment)
    assert rows["blank"].score == 0
    predicted = {t.grade_id: t for t in rows["predictions_only"].tests}
    assert all(predicted[cell].passed for cell in ("test_versions", "test_outcome", "test_why")), predicted
    assert rows["predictions_only"].score == 3
    assert rows["liar_dict"].score == rows["shadow_helpers"].score == 0
