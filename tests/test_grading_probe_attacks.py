"""Probes that hold: attacks on the checks that an exercise's mechanism was written by the student,
not handed to torch. Each attack here beat its baseline while those checks ran in the student's
process (the score before -> after is in autograder/README.md); each must now score no more than
its baseline, with Validate giving the grader's verdict, and the honest notebook full marks.

- 01: the puzzles handed to torch, and the locked rule check the probes called rebound;
- 06: scale_grad's wrong value behind a tensor subclass whose __torch_function__ says
  torch.equal is True; truncated_bptt keeping every graph alive with
  torch.autograd.graph.saved_tensors_hooks made a no-op;
- 07: torch's own nn/modules/module.py executed again as the student's Module;
- 08: BatchNorm2d handed to torch's with the grader's structure helpers wrapped; RMSprop and
  Adagrad handed to torch.optim with torch.optim.Optimizer rebound, or kept under a global
  whose name is computed.
"""
from __future__ import annotations

import pytest

from attacks import inject, same_judgement

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("grading_probe_attacks")]


def _answers(name: str) -> dict:
    source, _ = inject.attack_source(name)
    namespace: dict = {}
    exec(source, namespace)  # noqa: S102 - our own attack file
    return namespace["ANSWERS"]


def _replaced(notebook, answers: dict):
    for grade_id, source in answers.items():
        notebook = inject.insert(notebook, source, f"replace:{grade_id}")
    return notebook


def _with(notebook, name: str):
    source, place = inject.attack_source(name)
    return inject.insert(notebook, source, place)


# assignment -> {student: notebook builder(honest notebook)}; each attack "a" has baseline "a__baseline"
BATCHES = {
    "01_tensors": {
        "puzzle_rule_rebound__baseline": lambda nb: _replaced(nb, _answers("puzzles_delegated")),
        "puzzle_rule_rebound": lambda nb: _with(_replaced(nb, _answers("puzzles_delegated")), "puzzle_rule_rebound"),
    },
    "06_clone_detach": {
        "scale_grad_subclass__baseline": lambda nb: _with(nb, "scale_grad_plain"),
        "scale_grad_subclass": lambda nb: _with(nb, "scale_grad_subclass"),
        "saved_hooks_noop__baseline": lambda nb: _baseline_bptt(nb),
        "saved_hooks_noop": lambda nb: _with(nb, "saved_hooks_noop"),
    },
    "07_modules": {
        "module_from_torch_source__baseline": lambda nb: _with(nb, "module_is_torch"),
        "module_from_torch_source": lambda nb: _with(nb, "module_from_torch_source"),
    },
    "08_training": {
        "structure_helpers_wrapped__baseline": lambda nb: _with(nb, "batchnorm_delegated"),
        "structure_helpers_wrapped": lambda nb: _with(_with(nb, "batchnorm_delegated"), "structure_helpers_wrapped"),
        "optimizer_rebound__baseline": lambda nb: _replaced(nb, _answers("optimizers_delegated")),
        "optimizer_rebound": lambda nb: _with(_replaced(nb, _answers("optimizers_delegated")), "optimizer_rebound"),
        "optimizer_computed_global__baseline": lambda nb: _replaced(nb, _answers("optimizers_delegated")),
        "optimizer_computed_global": lambda nb: _replaced(nb, _answers("optimizer_computed_global")),
    },
}


def _baseline_bptt(notebook):
    """saved_hooks_noop without its no-op: the same graphs kept alive."""
    source, place = inject.attack_source("saved_hooks_noop")
    source = source.replace("torch.autograd.graph.saved_tensors_hooks = ", "_unused = ")
    return inject.insert(notebook, source, place)


@pytest.fixture(scope="module", params=sorted(BATCHES))
def batch(request, tmp_path_factory):
    from coursebase.model import Course
    from autograder.grade import Grader

    assignment = request.param
    root = inject.make_course(tmp_path_factory.mktemp(f"probes{assignment[:2]}") / "course", assignment)
    honest = inject.honest(root, assignment)
    inject.submit(root, assignment, "honest", honest)
    for student, build in BATCHES[assignment].items():
        inject.submit(root, assignment, student, build(honest))
    rows = {row.student: row for row in Grader(Course.load(root), assignment, workers=2).run()}
    print(f"\n{assignment}: " + ", ".join(f"{s} {r.score:g}/{r.max_score:g}" for s, r in sorted(rows.items())))
    return {"assignment": assignment, "root": root, "rows": rows}


def test_each_attack_scores_no_more_than_its_baseline(batch):
    rows = batch["rows"]
    assert rows["honest"].score == rows["honest"].max_score, [(t.grade_id, t.message) for t in rows["honest"].tests
                                                              if not t.passed]
    won = {name: (rows[f"{name}__baseline"].score, rows[name].score,
                  [(t.grade_id, t.message) for t in rows[name].tests if t.passed and not next(
                      b for b in rows[f"{name}__baseline"].tests if b.grade_id == t.grade_id).passed])
           for name in rows if f"{name}__baseline" in rows and rows[name].score > rows[f"{name}__baseline"].score}
    assert not won, won


def test_validate_gives_the_graders_verdict(batch):
    assert same_judgement.differences(batch["rows"], batch["root"], batch["assignment"]) == []
