"""`course student-kit`: the students' repository holds the last commit's lessons,
assignments and reftorch (nothing uncommitted), no solution, no hidden test, no instructor
config; its `course` lists only what it has, its README the lessons it holds; and its own
`make test` passes in a fresh clone inside a private folder whose path has spaces.

The scan rule (course/student_kit.py): every stripped line inside a `### BEGIN SOLUTION` or
`### BEGIN HIDDEN TESTS` region of solutions/*/*.ipynb is secret, except lines of fewer
than 8 characters or without a letter, and lines the course shows students anyway (a line
of a lesson, of reftorch/, or of a released notebook). Each file of the kit is checked line
by line, notebooks and JSON also string by string.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from course import student_kit
from course.lessons import lesson_paths

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def secrets():
    return student_kit.secret_lines(REPO)


DRAFT_LESSON = "lessons/99_draft.ipynb"
EDITED = "reftorch/__init__.py"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The kit of a clone of this repository's HEAD with uncommitted work in it: a new,
    untracked lesson and an edit to a tracked file. Returns (kit, what the command printed)."""
    clone = tmp_path_factory.mktemp("source") / "course"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True, timeout=120)
    shutil.copy(clone / "lessons" / "01_tensors.ipynb", clone / DRAFT_LESSON)
    with open(clone / EDITED, "a") as handle:
        handle.write("UNCOMMITTED = True\n")
    dest = tmp_path_factory.mktemp("kit") / "reftorch-student"
    result = subprocess.run([sys.executable, "-m", "course.cli", "student-kit", str(dest), "--root", str(clone)],
                            cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return dest, result.stdout


@pytest.fixture(scope="module")
def kit(built):
    return built[0]


@pytest.fixture
def kit_copy(kit, tmp_path):
    copy = tmp_path / "kit"
    shutil.copytree(kit, copy)
    return copy


def test_the_secret_lines_cover_every_solution_and_hidden_test(secrets):
    origins = {secret.origin for secret in secrets.values()}
    for notebook in sorted(REPO.glob("solutions/*/*.ipynb")):
        name = notebook.relative_to(REPO)
        assert f"{name}, solution" in origins, name
        assert f"{name}, hidden tests" in origins, name
    assert len(secrets) > 300, "the rule leaves too few lines to check"


def test_the_kit_holds_no_secret_line_instructor_file_or_setting(kit, secrets):
    assert student_kit.audit_kit(kit, REPO, secrets) == []
    names = {path.relative_to(kit).as_posix() for path in student_kit.kit_files(kit)}
    assert not any(name.startswith(("solutions/", "bench/")) for name in names)
    # the grader's code behind `course validate`, and none of grading's own (gradebook, collection...)
    shipped = sorted(name.split("/", 1)[1] for name in names if name.startswith("autograder/"))
    assert shipped == student_kit.grader_files(REPO)
    assert {"validate.py", "zygote.py", "judge.py", "forbidden.py"} <= set(shipped)
    assert not {"grade.py", "collect.py", "results.py", "feedback.py", "export.py"} & set(shipped)
    for wanted in ("Makefile", "README.md", "environment.yml", "pyproject.toml", "requirements.lock",
                   "course/nbgrader_config.py", "course/jupyter_server_config.py", "reftorch/tensor.py",
                   "lessons/01_tensors.ipynb", "assignments/01_tensors/01_tensors.ipynb"):
        assert wanted in names, wanted


def test_the_kit_is_the_last_commit_and_says_what_it_left_out(built):
    kit, printed = built
    assert not (kit / DRAFT_LESSON).exists()
    assert "UNCOMMITTED" not in (kit / EDITED).read_text()
    assert "99_draft" not in (kit / "README.md").read_text()
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    assert f"files from git HEAD {head[:12]} (committed files only)" in printed, printed
    assert f"not in the kit: 2 uncommitted change(s) ({DRAFT_LESSON}, {EDITED})" in printed, printed


def test_the_kit_course_command_lists_only_what_the_kit_has(kit):
    """The kit's own `course` (no other course code reachable): its commands, each working."""
    probe = ("import contextlib, io, json, sys\n"
             "sys.path.insert(0, '.')\n"
             "from course.cli import build_parser, main\n"
             "parser = build_parser()\n"
             "commands = sorted(parser._subparsers._group_actions[0].choices)\n"
             "helps = {}\n"
             "for command in commands:\n"
             "    with contextlib.redirect_stdout(io.StringIO()):\n"
             "        try:\n"
             "            main([command, '--help'])\n"
             "        except SystemExit as done:\n"
             "            helps[command] = done.code\n"
             "files = sorted(m.__file__ for n, m in sys.modules.items() if n.split('.')[0] == 'course')\n"
             "print(json.dumps([commands, helps, files]))\n")
    done = subprocess.run([sys.executable, "-I", "-c", probe], cwd=kit, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    commands, helps, files = json.loads(done.stdout.strip().splitlines()[-1])
    assert commands == ["lessons", "validate"]
    assert helps == {"lessons": 0, "validate": 0}
    assert all(Path(name).resolve().is_relative_to(kit.resolve()) for name in files), files


def test_the_kit_readme_lists_the_lessons_and_assignments_it_holds(kit):
    readme = (kit / "README.md").read_text()
    lessons = lesson_paths(folder=kit / "lessons")
    assert len(lessons) >= 8
    count = student_kit.NUMBER_WORDS[len(lessons)]
    assert f"open `lessons/README.md`: {count} lessons, in order" in readme
    for lesson in lessons:
        assert f"| `lessons/{lesson.name}` | {student_kit._title(lesson)} |" in readme, lesson.name
    for assignment in sorted((kit / "assignments").iterdir()):
        assert f"`assignments/{assignment.name}/`" in readme, assignment.name
    assert "@" not in readme.replace("@example", "")  # every placeholder filled


def test_the_kit_ships_reftorch_tests_and_no_grading_or_instructor_test(kit):
    shipped = sorted(p.name for p in (kit / "tests").iterdir())
    assert shipped == student_kit.student_tests(REPO)
    assert {p.name for p in REPO.glob("tests/test_engine_*.py")} <= set(shipped)
    assert not [name for name in shipped if name.startswith(
        ("test_grading", "test_hub", "test_assignments", "test_student_kit", "test_lesson"))], shipped


def test_the_audit_finds_a_planted_solution_line(kit_copy, secrets):
    line, secret = next((line, s) for line, s in sorted(secrets.items()) if s.origin.endswith("solution"))
    with open(kit_copy / "reftorch" / "tensor.py", "a") as handle:
        handle.write(f"\n    {line}\n")
    assert student_kit.audit_kit(kit_copy, REPO, secrets) == [
        f"reftorch/tensor.py: holds a line of {secret.origin}: {line!r}"]


def test_the_audit_finds_a_hidden_test_line_in_a_notebook_output(kit_copy, secrets):
    line, secret = next((line, s) for line, s in sorted(secrets.items()) if s.origin.endswith("hidden tests"))
    path = kit_copy / "lessons" / "01_tensors.ipynb"
    notebook = json.loads(path.read_text())
    cell = next(c for c in notebook["cells"] if c["cell_type"] == "code")
    cell["outputs"].append({"output_type": "stream", "name": "stdout", "text": ["leaked:\n", f"  {line}\n"]})
    path.write_text(json.dumps(notebook))
    assert student_kit.audit_kit(kit_copy, REPO, secrets) == [
        f"lessons/01_tensors.ipynb: holds a line of {secret.origin}: {line!r}"]


def test_the_audit_finds_instructor_files_and_settings(kit_copy, secrets):
    shutil.copytree(REPO / "solutions" / "01_tensors", kit_copy / "solutions" / "01_tensors")
    (kit_copy / "course" / "gradebook.db").write_bytes(b"")
    with open(kit_copy / "course" / "nbgrader_config.py", "a") as handle:
        handle.write('c.CourseDirectory.db_url = "sqlite:///gradebook.db"\n')
    with open(kit_copy / "course" / "jupyter_server_config.py", "a") as handle:
        handle.write('c.ServerApp.jpserver_extensions.update({"nbgrader.server_extensions.formgrader": True})\n')
    problems = student_kit.audit_kit(kit_copy, REPO, secrets)
    assert "solutions/01_tensors/01_tensors.ipynb: instructor-only file" in problems
    assert any(p.startswith("solutions/01_tensors/01_tensors.ipynb: holds a line of") for p in problems)
    assert "course/gradebook.db: instructor-only file" in problems
    assert "course/nbgrader_config.py: sets the instructor's CourseDirectory.db_url" in problems
    assert "course/jupyter_server_config.py: switches the formgrader on" in problems


def test_a_leaking_build_writes_nothing_and_a_used_folder_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(student_kit, "COPIED_TREES", student_kit.COPIED_TREES + ("solutions",))
    dest = tmp_path / "kit"
    with pytest.raises(student_kit.KitError, match="would leak instructor material"):
        student_kit.build_kit(dest, REPO)
    assert not dest.exists() and list(tmp_path.iterdir()) == []

    dest.mkdir()
    (dest / "notes.txt").write_text("mine")
    with pytest.raises(student_kit.KitError, match="exists and is not an empty folder"):
        student_kit.build_kit(dest, REPO)
    assert [p.name for p in dest.iterdir()] == ["notes.txt"]
    with pytest.raises(student_kit.KitError, match="inside the course repository"):
        student_kit.build_kit(REPO / "student-kit-here", REPO)


def test_the_kit_installs_torch_first_and_alone(kit):
    makefile = (kit / "Makefile").read_text()
    torch_line = makefile.index("pip install --quiet torch==2.13.0\n")
    assert torch_line < makefile.index("pip install --quiet -r requirements.lock")
    lock = (kit / "requirements.lock").read_text().splitlines()
    assert "torch==2.13.0" in lock and "nbgrader==0.9.6" in lock
    assert not any(line.startswith(("distributed==", "playwright==", "psycopg==")) for line in lock)
    assert "make lab" in (kit / "README.md").read_text() and "make test" in (kit / "README.md").read_text()


def test_the_kit_dependency_files_agree(kit):
    from test_environment import mismatches

    texts = [(kit / name).read_text() for name in ("pyproject.toml", "environment.yml", "requirements.lock")]
    assert mismatches(*texts) == []


def _git(*args, cwd):
    subprocess.run(["git", "-c", "user.name=course", "-c", "user.email=course@localhost", *args],
                   cwd=cwd, check=True, capture_output=True, timeout=120)


def _failure_excerpt(log: str) -> str:
    """What a reviewer needs from a long make log: the first failure's report (pytest's
    "____ name ____" section) and the summary at the end, not pages of warnings."""
    first = re.search(r"^_{3,} .+ _{3,}$", log, re.M)
    head = log[first.start():first.start() + 6000] + "\n...\n" if first else ""
    return head + log[-2500:]


@pytest.mark.slow
def test_make_test_passes_in_a_fresh_clone_of_the_kit(kit, tmp_path):
    """git init + commit the kit, clone it into a private folder whose path has spaces, and
    run its `make test` there: a new .venv from the
    pinned files (torch first), reftorch's tests, every lesson under nbval. Then the student's
    terminal check: `course validate` on an unanswered assignment names the missing answers."""
    origin = tmp_path / "origin"
    shutil.copytree(kit, origin)
    _git("init", "-q", cwd=origin)
    _git("add", "-A", cwd=origin)
    _git("commit", "-q", "-m", "Student kit", cwd=origin)
    # A student's clone in a private folder (0700, as `mktemp -d` makes), at a path with spaces.
    private = tmp_path / "private folder"
    private.mkdir(mode=0o700)
    clone = private / "reftorch student"
    _git("clone", "-q", str(origin), str(clone), cwd=tmp_path)
    assert not (clone / ".venv").exists()

    # Nothing of this repository may leak in: no PYTHONPATH, no Jupyter paths of ours.
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("PYTHON", "JUPYTER", "VIRTUAL_ENV"))}
    env["REFTORCH_ENGINE_EXAMPLES"] = "5"  # the property tests' search depth; the tests are the same
    # Two steps, so a slow machine shows where the time went; the limits only stop a hang.
    outputs = {}
    for target in ("venv", "test"):
        log = tmp_path / f"make-{target}.log"
        started = time.monotonic()
        with open(log, "w") as handle:
            result = subprocess.run(["make", target], cwd=clone, env=env, stdout=handle,
                                    stderr=subprocess.STDOUT, timeout=1500)
        outputs[target] = log.read_text()
        print(f"make {target}: {time.monotonic() - started:.0f} s")
        assert result.returncode == 0, f"make {target} failed:\n" + _failure_excerpt(outputs[target])
    assert " passed" in outputs["test"] and " failed" not in outputs["test"]

    notebook = "assignments/01_tensors/01_tensors.ipynb"
    check = subprocess.run([str(clone / ".venv" / "bin" / "course"), "validate", notebook], cwd=clone, env=env,
                           capture_output=True, text=True, timeout=300)
    assert check.returncode == 1, check.stdout + check.stderr
    assert "TODO  answer cell" in check.stdout and "Success" not in check.stdout


def _validate_report(stdout: str) -> dict[str, dict]:
    """`course validate a b`'s report: per notebook, how it was run and each test's line."""
    import re
    reports, current = {}, None
    for line in stdout.splitlines():
        if line.startswith("Validating "):   # a second one after a fallback: the last counts
            current = reports.setdefault(line.split()[1], {"tests": {}})
            current["header"] = line
        elif current is not None and (found := re.match(r"  (PASS|FAIL)  (\S+)\s+([\d.]+)/[\d.]+(?:  (.*))?$", line)):
            verdict, grade_id, points, message = found.groups()
            current["tests"][grade_id] = (verdict == "PASS", float(points), message or "")
    return reports


@pytest.mark.slow
def test_the_kits_validate_gives_the_graders_verdict_without_a_sandbox(kit, tmp_path):
    """The kit's own `course validate` where bubblewrap cannot start (a `bwrap` that fails,
    and no setpriv or unshare on the PATH): it says so and falls back to the grader's code run
    as plain processes, which gives an honest and a blank notebook the points and messages
    `course grade` gives them in its sandbox (a test decided by a hidden check passes
    Validate), says it did not sandbox them, and leaves nothing behind."""
    from attacks import inject

    from course.model import Course
    from autograder.grade import Grader

    assignment = "02_devices"   # graded with and without torch
    root = inject.make_course(tmp_path / "course", assignment)
    paths = {"honest": inject.submit(root, assignment, "honest", inject.honest(root, assignment)),
             "blank": inject.submit(root, assignment, "blank", inject.released(root, assignment))}
    rows = {row.student: row for row in Grader(Course.load(root), assignment, workers=2).run()}
    assert rows["honest"].score == rows["honest"].max_score > 0 and rows["blank"].score == 0

    scratch, tools = tmp_path / "scratch", tmp_path / "bin"
    scratch.mkdir()
    tools.mkdir()
    (tools / "bwrap").write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    (tools / "bwrap").chmod(0o755)
    command = ("import sys, pathlib; sys.path.insert(0, '.'); import autograder\n"
               "assert pathlib.Path(autograder.__file__).resolve().is_relative_to(pathlib.Path.cwd()), autograder.__file__\n"
               "from course.cli import main; sys.exit(main(sys.argv[1:]))")   # the kit's own grader code
    done = subprocess.run([sys.executable, "-I", "-c", command, "validate", str(paths["honest"]), str(paths["blank"])],
                          cwd=kit, capture_output=True, text=True, timeout=600,
                          env={"PATH": f"{Path(sys.executable).parent}:{tools}", "HOME": str(tmp_path),
                               "LANG": "C.UTF-8", "TMPDIR": str(scratch)})
    assert done.returncode == 1, done.stdout + done.stderr   # the blank one fails
    assert done.stdout.count("course validate: the sandbox cannot start here") == 1, done.stdout
    reports = _validate_report(done.stdout)
    assert len(reports) == 2, done.stdout
    for student, path in paths.items():
        report = next(r for shown, r in reports.items() if f"/{student}/" in shown)
        assert "not sandboxed" in report["header"], report["header"]
        graded = {t.grade_id: t for t in rows[student].tests}
        assert set(report["tests"]) == set(graded), done.stdout
        for grade_id, (passed, points, message) in report["tests"].items():
            test = graded[grade_id]
            if test.hidden:
                assert passed, (student, grade_id, message)
            else:
                assert (passed, points) == (test.passed, test.points), (student, grade_id, message, test)
                assert passed or message == test.message, (student, grade_id, message, test.message)
    assert list(scratch.iterdir()) == []   # the validator's folders are gone

