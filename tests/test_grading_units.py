"""The grader's parts on small inputs: check rewriting, host-side verdicts, value validation,
cell restoration, LMS collection, and the sandbox's walls."""
from __future__ import annotations

import zipfile

import nbformat
import pytest
import torch

from autograder.checks import checks_for_test_cell, check_functions_defined_in
from autograder.values import BadObservation, Opaque, rebuild
from autograder.verdict import judge_site

TOOLS = '''
import torch
class TestFailure(AssertionError):
    pass
def expect(condition, message):
    if not condition:
        raise TestFailure(message)
def expect_close(got, expected, what, rtol=1e-4, atol=1e-5):
    expected = torch.as_tensor(expected, dtype=torch.float64)
    got = torch.as_tensor(got).detach().to(torch.float64)
    expect(got.shape == expected.shape and torch.allclose(got, expected, rtol=rtol, atol=atol),
           f"{what}: expected {expected}, got {got}")
'''


def _tools():
    namespace = {}
    exec(TOOLS, namespace)
    return namespace


def _tensor(values, dtype="float32", subclass=None):
    return {"kind": "tensor", "dtype": dtype, "shape": [len(values)], "data": values,
            "requires_grad": False, "grad_fn": None, "subclass": subclass, "device": "cpu"}


def test_sites_cover_asserts_and_helper_calls_and_flag_hidden_ones():
    source = ("x = torch.randn(3)\nassert torch.allclose(f(x), torch.relu(x))\n"
              "expect_close(g(x), [1.0], 'g')\n### BEGIN HIDDEN TESTS\nassert f(x).shape == (3,)\n"
              "### END HIDDEN TESTS\n")
    checks = checks_for_test_cell("t", source, check_functions_defined_in(TOOLS))
    assert [(s.mode, s.hidden) for s in checks.sites] == [("truth", False), ("call", False), ("truth", True)]
    assert "__course_check__(0, 'truth'" in checks.sandbox_source
    assert checks.hidden_lines[0] == "assert f(x).shape == (3,)"
    assert any(line.startswith("__course_check__(2, 'truth'") for line in checks.hidden_lines)
    assert checks.sites[0].source == "assert torch.allclose(f(x), torch.relu(x))"
    assert checks.sites[2].source == ""


def _judge(source, student, reference, index=0):
    checks = checks_for_test_cell("t", source, check_functions_defined_in(TOOLS))
    site = checks.sites[index]
    return judge_site(site, {k: rebuild(v, "s") for k, v in student.items()},
                      {k: rebuild(v, "r") for k, v in reference.items()}, _tools())


def test_host_recomputes_the_check_instead_of_trusting_the_run():
    # torch.allclose(f(x), torch.relu(x)): taps 1 = f(x), 3 = x; tap 0 (the run's own verdict) lies.
    source = "assert torch.allclose(f(x), torch.relu(x))"
    x = _tensor([-1.0, 2.0])
    honest = {0: True, 1: _tensor([0.0, 2.0]), 2: _tensor([0.0, 2.0]), 3: x}
    assert _judge(source, honest, honest) == (True, "passed")
    lying = {0: True, 1: _tensor([5.0, 5.0]), 2: _tensor([5.0, 5.0]), 3: x}
    assert _judge(source, lying, honest)[0] is False


def test_doctored_expected_value_is_caught_by_the_reference():
    # expect_close(got, expected): the student's process made `expected` equal its wrong answer.
    source = "expect_close(got, expected, 'f(x)')"
    reference = {0: None, 1: _tensor([1.0, 2.0]), 2: _tensor([1.0, 2.0]), 3: "f(x)"}
    doctored = {0: None, 1: _tensor([9.0, 9.0]), 2: _tensor([9.0, 9.0]), 3: "f(x)"}
    passed, why = _judge(source, doctored, reference)
    assert not passed and "expected" in why


def test_tensor_subclass_counts_only_by_its_data():
    source = "assert torch.equal(f(x), expected)"
    reference = {0: True, 1: _tensor([1.0]), 2: _tensor([1.0]), 3: _tensor([1.0])}
    liar = {0: True, 1: _tensor([7.0], subclass="__main__.Liar"), 2: _tensor([1.0]), 3: _tensor([1.0])}
    assert _judge(source, liar, reference)[0] is False
    honest_subclass = {**liar, 1: _tensor([1.0], subclass="__main__.Mine")}
    assert _judge(source, honest_subclass, reference)[0] is True


def test_float64_answers_are_compared_by_value():
    source = "assert torch.allclose(f(x), expected)"
    reference = {0: True, 1: _tensor([0.5]), 2: _tensor([0.5])}
    float64 = {0: True, 1: _tensor([0.5], "float64"), 2: _tensor([0.5])}
    assert _judge(source, float64, reference) == (True, "passed")


def test_opaque_objects_never_decide_a_check():
    source = "expect(ok(thing), 'ok')"
    opaque = {"kind": "opaque", "mro": ["__main__.Truthy"], "id": 1}
    assert _judge(source, {0: None, 1: opaque, 2: "ok"}, {0: None, 1: True, 2: "ok"})[0] is False


@pytest.mark.parametrize("data", [
    {"kind": "tensor", "dtype": "float32", "shape": [3], "data": [1.0]},
    {"kind": "tensor", "dtype": "evil", "shape": [1], "data": [1.0]},
    {"kind": "tensor", "dtype": "float32", "shape": [10**7], "data": []},
    {"kind": "pickle", "data": "gASV"},
    {"kind": "list", "items": "nope"},
    {"kind": "opaque", "mro": "x", "id": 1},
])
def test_malformed_observations_are_rejected(data):
    with pytest.raises(BadObservation):
        rebuild(data, "s")


def test_rebuild_round_trip():
    assert torch.equal(rebuild(_tensor([1.0, 2.0]), "s"), torch.tensor([1.0, 2.0]))
    assert rebuild({"kind": "size", "dims": [2, 3]}, "s") == torch.Size([2, 3])
    assert rebuild({"kind": "dtype", "name": "float64"}, "s") is torch.float64
    assert isinstance(rebuild({"kind": "opaque", "mro": ["a.B"], "id": 3}, "s"), Opaque)


def _notebook(cells):
    nb = nbformat.v4.new_notebook()
    for source, meta in cells:
        cell = nbformat.v4.new_code_cell(source)
        if meta:
            cell.metadata["nbgrader"] = meta
        nb.cells.append(cell)
    return nb


def test_plan_restores_deleted_edited_and_duplicated_cells(tmp_path):
    from autograder.plan import build_plan, load_spec

    test = {"grade": True, "solution": False, "locked": True, "points": 2, "grade_id": "t1"}
    answer = {"grade": False, "solution": True, "grade_id": "a1"}
    source = _notebook([("def f():\n    return 1", answer), ("assert f() == 1", test),
                        ("assert f() + 1 == 2", {**test, "grade_id": "t2"})])
    path = tmp_path / "a.ipynb"
    nbformat.write(source, str(path))
    spec = load_spec("a", "a", path)
    student = _notebook([("def f():\n    return 2", answer), ("pass", {**test, "points": 99}),
                         ("pass", {**test, "points": 99})])
    plan = build_plan(spec, student)
    assert [c["kind"] for c in plan.cells] == ["code", "test", "test"]
    assert plan.cells[0]["source"].endswith("return 2")
    assert "__course_check__" in plan.cells[1]["source"]
    notes = " | ".join(plan.notes)
    assert "t1 edited" in notes and "t1 duplicated" in notes and "t2 deleted" in notes
    assert spec.max_score == 4


def test_collect_from_an_lms_zip_reports_what_it_cannot_place(tmp_path):
    from autograder.collect import collect_files
    from autograder.course import Course

    course = Course(tmp_path, "c", "sqlite://", tmp_path / "solutions", tmp_path / "submitted",
                    tmp_path / "autograded", tmp_path / "feedback", tmp_path / "exchange")
    notebook = nbformat.writes(nbformat.v4.new_notebook()).encode()
    archive = tmp_path / "lms.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("alice_1234_03_autograd.ipynb", notebook)
        zf.writestr("bob/03_autograd.ipynb", notebook)
        zf.writestr("bob/data.csv", "1,2\n")
        zf.writestr("../../escape_03_autograd.ipynb", notebook)
        zf.writestr("readme.txt", "hello")
        zf.writestr("noid.ipynb", notebook)
    report = collect_files(course, "03_autograd", archive)
    assert sorted(report.placed) == ["alice", "bob"]
    assert (tmp_path / "submitted" / "bob" / "03_autograd" / "data.csv").read_text() == "1,2\n"
    unplaced = dict(report.unplaceable)
    assert set(unplaced) == {"readme.txt", "noid.ipynb", "../../escape_03_autograd.ipynb"}
    assert unplaced["../../escape_03_autograd.ipynb"] == "path points outside the archive"
    assert not (tmp_path.parent / "escape_03_autograd.ipynb").exists()
    assert "could not place" in report.text()


@pytest.fixture(scope="module")
def sandbox():
    from autograder.sandbox import Limits, Sandbox
    with Sandbox(Limits(wall_seconds=10, cpu_seconds=10)) as box:
        yield box


def _run(sandbox, source):
    job = {"seed": 1, "files": [["data/x.txt", "aGk="]],
           "cells": [{"index": 0, "kind": "code", "source": source, "grade_id": None},
                     {"index": 1, "kind": "test", "grade_id": "t",
                      "source": checks_for_test_cell("t", "assert probe == probe").sandbox_source}]}
    outcome = sandbox.run(job)
    taps = [m for m in outcome.messages if m.get("t") == "obs"]
    return outcome, (taps[0]["taps"] if taps else None)


@pytest.mark.slow
def test_sandbox_walls(sandbox, tmp_path):
    from autograder.sandbox import REPO
    probe = (
        "import os, socket\n"
        "def can(f):\n"
        "    try:\n        f(); return True\n    except Exception:\n        return False\n"
        f"probe = [os.path.exists('{REPO / 'solutions'}') or os.path.exists('{REPO / 'course'}'),\n"
        f"         os.path.exists('{tmp_path}'), os.path.exists('/root/.bashrc'),\n"
        "         can(lambda: socket.create_connection(('1.1.1.1', 80), timeout=1)),\n"
        "         can(lambda: open('/usr/x', 'w')), open('data/x.txt').read(), os.getcwd(), os.getuid()]\n"
        "leftover = open('/tmp/mark', 'w').write('x')\n"
    )
    outcome, taps = _run(sandbox, probe)
    values = {number: value for number, value in taps}
    seen = [item if not isinstance(item, dict) else item.get("text") for item in values[1]["items"]]
    assert seen == [False, False, False, False, False, "hi", "/tmp/work", 65534]
    # A new child sees none of the previous one's files or globals.
    outcome, taps = _run(sandbox, "import os\nprobe = [os.path.exists('/tmp/mark'), 'leftover' in globals()]")
    values = {number: value for number, value in taps}
    assert values[1]["items"] == [False, False]


@pytest.mark.slow
def test_sandbox_limits_processes(sandbox):
    source = ("import os, time\nn = 0\ntry:\n    for _ in range(500):\n        if os.fork() == 0:\n"
              "            time.sleep(5); os._exit(0)\n        n += 1\nexcept OSError:\n    pass\nprobe = n")
    outcome, taps = _run(sandbox, source)
    forked = dict((number, value) for number, value in taps)[1]
    assert 0 < forked < 100
    assert outcome.end["how"] == "exit"


OPAQUE = {"kind": "opaque", "mro": ["__main__.Anything", "builtins.object"], "id": 7}


@pytest.mark.parametrize("source, student", [
    # library comparison applied to a student object: the run's True is not taken
    ("expect(torch.allclose(f(x), expected), 'f')", {0: None, 1: True, 2: OPAQUE, 3: _tensor([1.0])}),
    # arithmetic between a student object and a plain value
    ("assert abs(f(x) - 1.0) < 1e-6", {0: True, 1: 0.0, 2: 0.0, 3: OPAQUE}),
    # an object that claims to equal anything
    ("assert f(x) == 1.0", {0: True, 1: OPAQUE}),
])
def test_student_objects_cannot_vouch_for_themselves(source, student):
    checks = checks_for_test_cell("t", source, check_functions_defined_in(TOOLS))
    site = checks.sites[0]
    honest = {k: (_tensor([1.0]) if v == OPAQUE and "allclose" in source else (1.0 if v == OPAQUE else v))
              for k, v in student.items()}
    if "abs" in source:
        honest = {0: True, 1: 0.0, 2: 0.0, 3: 1.0}
    rebuilt = {k: rebuild(v, "s") for k, v in student.items()}
    reference = {k: rebuild(v, "r") for k, v in honest.items()}
    assert judge_site(site, rebuilt, reference, _tools())[0] is False
    assert judge_site(site, {k: rebuild(v, "s") for k, v in honest.items()}, reference, _tools())[0] is True


def test_a_student_container_answers_membership_itself():
    checks = checks_for_test_cell("t", "expect('w' in layer._parameters, 'registered')",
                                  check_functions_defined_in(TOOLS))
    student = {0: None, 1: True, 2: OPAQUE, 3: "registered"}
    passed, _ = judge_site(checks.sites[0], {k: rebuild(v, "s") for k, v in student.items()},
                           {k: rebuild(v, "r") for k, v in student.items()}, _tools())
    assert passed


@pytest.mark.slow
def test_exercises_that_forbid_torch_run_without_it():
    from autograder.sandbox import Limits, Sandbox
    source = ("try:\n    import torch\n    probe = 'imported'\nexcept ImportError as error:\n"
              "    probe = type(error).__name__\nimport sys\nprobe = [probe, 'torch' in sys.modules and "
              "sys.modules['torch'] is not None]")
    with Sandbox(Limits(wall_seconds=10, cpu_seconds=10), with_torch=False) as box:
        outcome, taps = _run(box, source)
    values = dict((number, value) for number, value in taps)
    assert values[1]["items"] == ["ModuleNotFoundError", False]


@pytest.mark.parametrize("source, student", [
    ("assert f(x) ** n == 1", {0: True, 1: 1, 2: 10, 3: 10**9}),
    ("assert len(list(range(f(x)))) == 3", {0: True, 1: 3, 2: [0, 1, 2], 3: range(3), 4: 10**15}),
    ("assert f(x) * n == 'aaa'", {0: True, 1: "aaa", 2: "a", 3: 10**12}),
])
def test_values_built_to_stall_the_host_fail_fast(source, student):
    import time
    checks = checks_for_test_cell("t", source)
    site = checks.sites[0]
    started = time.monotonic()
    values = {k: (v if not isinstance(v, range) else list(v)) for k, v in student.items()}
    passed, why = judge_site(site, values, values, {})
    assert not passed and time.monotonic() - started < 2, why



def test_sandbox_sees_packages_wherever_the_checkout_lives(monkeypatch, tmp_path):
    """A checkout (and its .venv) under /tmp must not vanish under the sandbox's own /tmp."""
    from autograder import sandbox as sandbox_module
    fake_site = tmp_path / ".venv" / "lib" / "python3.11" / "site-packages"
    (fake_site / "torch").mkdir(parents=True)
    monkeypatch.setattr(sandbox_module, "_site_packages", lambda: [str(fake_site)])
    for with_torch in (True, False):
        command = sandbox_module.bwrap_command(3, sandbox_module.Limits(), with_torch, seccomp_fd=4)
        bound_to = [command[i + 2] for i, word in enumerate(command) if word in ("--ro-bind", "--bind")]
        assert str(fake_site) in command
        assert not any(d.startswith("/tmp") for d in bound_to), bound_to
        search_path = command[command.index("COURSE_SITE_PACKAGES") + 1]
        assert search_path and not search_path.startswith("/tmp"), search_path
