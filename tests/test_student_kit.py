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
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from course import student_kit
from course.lessons import lesson_paths

from coursebase.paths import REPO


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
    for wanted in ("Makefile", "README.md", "environment.yml", "pyproject.toml", "locks/python3.11.lock",
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
    shipped = len(list((kit / "assignments").glob("*/*.ipynb")))
    assert f"This copy holds {count} lessons and {student_kit.NUMBER_WORDS[shipped]} assignments released" in readme
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
    with pytest.raises(student_kit.KitError, match="exists and is neither an empty folder nor a student kit"):
        student_kit.build_kit(dest, REPO)
    assert [p.name for p in dest.iterdir()] == ["notes.txt"]
    with pytest.raises(student_kit.KitError, match="inside the course repository"):
        student_kit.build_kit(REPO / "student-kit-here", REPO)


def test_the_kit_installs_torch_first_and_alone(kit):
    makefile = (kit / "Makefile").read_text()
    torch_line = makefile.index("pip install --quiet torch==2.13.0 ")
    assert torch_line < makefile.index("pip install --quiet -r $(LOCK)")
    # on Linux PyPI's torch is the CUDA build: the CPU one comes from PyTorch's index where it answers
    assert "--extra-index-url $(TORCH_CPU_INDEX)" in makefile[torch_line:makefile.index("\n", torch_line)]
    assert "TORCH_CPU_INDEX := https://download.pytorch.org/whl/cpu" in makefile
    for minor in ("3.11", "3.12", "3.13"):
        lock = (kit / "locks" / f"python{minor}.lock").read_text().splitlines()
        assert "torch==2.13.0" in lock and "nbgrader==0.9.6" in lock
        assert not any(line.startswith(("distributed==", "playwright==", "psycopg==")) for line in lock)
    assert "make lab" in (kit / "README.md").read_text() and "make test" in (kit / "README.md").read_text()


def test_the_kit_dependency_files_agree(kit):
    from test_environment import mismatches

    for lock in sorted((kit / "locks").glob("python3.*.lock")):
        texts = [(kit / name).read_text() for name in ("pyproject.toml", "environment.yml")]
        assert mismatches(*texts, lock.read_text()) == [], lock.name


def _failure_excerpt(log: str) -> str:
    """What a reviewer needs from a long make log: the first failure's report (pytest's
    "____ name ____" section) and the summary at the end, not pages of warnings."""
    first = re.search(r"^_{3,} .+ _{3,}$", log, re.M)
    head = log[first.start():first.start() + 6000] + "\n...\n" if first else ""
    return head + log[-2500:]


KIT_STUDENT = "course-kit-student-test"
# What the fresh clone's `make test` runs: the lessons that lean on the student's machine rather
# than on Python alone (01: files and the first imports; 03b: torchviz and Graphviz's `dot`;
# 09b: torch.compile, which needs the C compiler and a path with spaces worked around), and
# reftorch's package test. Every lesson runs under nbval twice in the course's own `make test`,
# on the same files (the kit is git HEAD's: test_the_kit_is_the_last_commit_and_says_what_it_left_out),
# and every shipped test is collected here; running all thirteen again cost about 60 s of the suite for nothing new.
KIT_LESSONS_RUN = ("lessons/01_tensors.ipynb", "lessons/03b_autograd_functions.ipynb", "lessons/09b_compile.ipynb")
KIT_TESTS_RUN = ("tests/test_engine_package.py",)
# The student's pip cache, kept between runs (a fresh machine starts it empty, as root's is).
STUDENT_PIP_CACHE = Path("/var/cache/reftorch-course-tests/pip")


@pytest.fixture
def kit_student():
    """A student's Unix account with a 0700 home (removed afterwards)."""
    if os.geteuid() != 0 or not shutil.which("useradd"):
        pytest.skip("creating a user needs root and useradd (CI runs as root)")
    # torch.compile's cache outlives the account (/tmp/torchinductor_<user>): an earlier account of
    # this name, with another uid, left it unwritable and lesson 09b's compile failed on its lock
    inductor_cache = Path(tempfile.gettempdir()) / f"torchinductor_{KIT_STUDENT}"
    subprocess.run(["userdel", "-r", KIT_STUDENT], capture_output=True)
    shutil.rmtree(inductor_cache, ignore_errors=True)
    subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", KIT_STUDENT], check=True)
    home = Path(pwd.getpwnam(KIT_STUDENT).pw_dir)
    home.chmod(0o700)
    yield home
    subprocess.run(["pkill", "-KILL", "-u", KIT_STUDENT], capture_output=True)
    subprocess.run(["userdel", "-r", KIT_STUDENT], capture_output=True)
    shutil.rmtree(inductor_cache, ignore_errors=True)


def _package_sources() -> dict[str, str]:
    """This machine's pip package sources (find-links, extra indexes), as environment variables:
    a student installs from the same places root does (here, root's pip.conf holds them)."""
    sources = {}
    for key in ("find-links", "extra-index-url", "index-url"):
        done = subprocess.run([sys.executable, "-m", "pip", "config", "get", f"global.{key}"],
                              capture_output=True, text=True)
        if done.returncode == 0 and done.stdout.strip():
            sources[f"PIP_{key.upper().replace('-', '_')}"] = done.stdout.strip()
    return sources


def _lock_pins(lock: Path) -> dict[str, str]:
    pins = {}
    for line in lock.read_text().splitlines():
        name, _, version = line.split(";")[0].strip().partition("==")
        if version and not name.startswith("#"):
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version.strip()
    return pins


def seed_venv(venv: Path, lock: Path, python: str, owner) -> list[str]:
    """Put into the new ``venv`` (made by ``python -m venv``) every distribution of this
    environment (the instructor's .venv) that ``lock`` pins at the same version: its files
    hard-linked (read-only for the student, never changed: pip finds them satisfied, and only
    unlinks what it replaces), its scripts copied with their first line pointing at ``venv``.
    What this environment lacks, or holds at another version, pip installs as a student's
    `make` would. Returns the distributions reused."""
    import importlib.metadata
    import sysconfig

    ours = Path(sysconfig.get_paths()["purelib"])
    prefix = Path(sys.prefix)
    theirs = next((venv / "lib").glob("python3.*/site-packages"))
    pins = _lock_pins(lock)
    reused = []
    for dist in importlib.metadata.distributions(path=[str(ours)]):
        name = re.sub(r"[-_.]+", "-", dist.metadata["Name"]).lower()
        if pins.get(name) != dist.version or name in ("pip", "setuptools"):
            continue
        for entry in dist.files or []:
            source = (ours / entry).resolve()
            if not source.is_file() or not source.is_relative_to(prefix):
                continue
            inside = source.relative_to(ours) if source.is_relative_to(ours) else None
            target = theirs / inside if inside is not None else venv / source.relative_to(prefix)
            for folder in reversed([target.parent, *target.parent.parents]):
                if not folder.exists():
                    folder.mkdir()
                    os.chown(folder, owner.pw_uid, owner.pw_gid)
            if target.exists():
                continue
            if inside is None and source.parent == prefix / "bin":   # a console script: our Python's path in it
                text = source.read_bytes()
                if text.startswith(b"#!"):
                    text = b"#!" + str(venv / "bin" / "python").encode() + text[text.index(b"\n"):]
                target.write_bytes(text)
                target.chmod(0o755)
                os.chown(target, owner.pw_uid, owner.pw_gid)
            else:
                os.link(source, target)
        reused.append(name)
    return reused


@pytest.mark.slow
def test_make_test_passes_in_a_fresh_clone_of_the_kit(kit, kit_student):
    """A student's Unix account (not root) clones the kit repository into a private folder
    whose path has spaces, and runs its `make venv` and `make test` there with Debian 12's own
    python3.11 (3.11.2, where the system has it): the .venv from that Python's lock (torch
    first), then the lessons that use the machine's tools (KIT_LESSONS_RUN) under nbval and
    reftorch's package test, with every shipped test
    collected (all of them run in the course's own suite, on the same files). Then the
    student's terminal check: `course validate` on an unanswered assignment names the missing
    answers. The .venv reuses this environment's distributions that the kit's lock pins at
    the same version (seed_venv; REUSE_VENV=0 installs everything, as a first `make` does)."""
    account = pwd.getpwnam(KIT_STUDENT)
    python = next((str(p) for p in (Path("/usr/bin/python3.11"), Path(f"/usr/bin/python3.{sys.version_info.minor}"))
                   if p.exists()), "python3")
    origin = kit_student / "origin"
    shutil.copytree(kit, origin)
    private = kit_student / "private folder"   # 0700, as `mktemp -d` makes it
    private.mkdir(mode=0o700)
    STUDENT_PIP_CACHE.mkdir(parents=True, exist_ok=True)
    for path in (origin, private, STUDENT_PIP_CACHE):
        subprocess.run(["chown", "-R", f"{account.pw_uid}:{account.pw_gid}", str(path)], check=True)
    # Nothing of this repository may leak in: no PYTHONPATH, no Jupyter paths of ours.
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(kit_student), "USER": KIT_STUDENT,
           "LANG": "C.UTF-8", "PIP_CACHE_DIR": str(STUDENT_PIP_CACHE), **_package_sources(),
           "REFTORCH_ENGINE_EXAMPLES": "5"}   # the property tests' search depth; the tests are the same
    as_student = [shutil.which("setpriv"), f"--reuid={account.pw_uid}", f"--regid={account.pw_gid}",
                  "--init-groups", "--"]

    def run(argv, cwd, **options):
        return subprocess.run([*as_student, *argv], cwd=cwd, env=env, **options)

    clone = private / "reftorch student"   # the kit is a git repository: a clone of its commit
    assert run(["git", "clone", "-q", str(origin), str(clone)], kit_student, capture_output=True).returncode == 0
    assert not (clone / ".venv").exists()
    minor = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                           capture_output=True, text=True, check=True).stdout.strip()
    if os.environ.get("REUSE_VENV", "1") == "1" and f"{sys.version_info[0]}.{sys.version_info[1]}" == minor:
        assert run([python, "-m", "venv", str(clone / ".venv")], clone, capture_output=True).returncode == 0
        reused = seed_venv(clone / ".venv", clone / "locks" / f"python{minor}.lock", python, account)
        print(f"reused {len(reused)} distributions of the course's environment")
    # Two steps, so a slow machine shows where the time went; the limits only stop a hang.
    outputs = {}
    for target, options in (("venv", []), ("test", [f"TESTS={' '.join(KIT_LESSONS_RUN + KIT_TESTS_RUN)}"])):
        log = kit_student / f"make-{target}.log"
        started = time.monotonic()
        with open(log, "w") as handle:
            result = run(["make", target, f"PYTHON={python}", *options], clone, stdout=handle,
                         stderr=subprocess.STDOUT, timeout=1500)
        outputs[target] = log.read_text()
        print(f"make {target}: {time.monotonic() - started:.0f} s")
        assert result.returncode == 0, f"make {target} failed:\n" + _failure_excerpt(outputs[target])
    assert " passed" in outputs["test"] and " failed" not in outputs["test"]
    missing = [lesson for lesson in KIT_LESSONS_RUN if lesson not in outputs["test"]]
    assert not missing, f"make test did not run {missing}"
    collected = run([str(clone / ".venv" / "bin" / "python"), "-m", "pytest", "--collect-only", "-q", "tests"],
                    clone, capture_output=True, text=True, timeout=600)
    assert collected.returncode == 0, collected.stdout[-3000:] + collected.stderr[-2000:]   # every shipped test imports
    version = run([str(clone / ".venv" / "bin" / "python"), "-c", "import sys, torch; print(sys.version.split()[0], "
                   "torch.version.cuda)"], clone, capture_output=True, text=True).stdout.split()
    assert version[1] == "None", version   # the CPU build of torch
    base = subprocess.run([python, "-c", "import platform; print(platform.python_version())"],
                          capture_output=True, text=True).stdout.strip()
    assert version[0] == base, (version, python)   # the system's own Python (Debian 12: 3.11.2)
    print(f"the kit installed and tested with {python} {base}, as {KIT_STUDENT}")

    notebook = "assignments/01_tensors/01_tensors.ipynb"
    check = run([str(clone / ".venv" / "bin" / "course"), "validate", notebook], clone,
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

    from coursebase.model import Course
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



def test_make_update_never_touches_the_students_work(tmp_path):
    """The kit's `make update` (course/kit/update.py) in a real clone where the student has
    worked: plain `git pull` refuses (their notebook and the course's fix collide); the update
    keeps every file of theirs whole, puts the course's new version beside the ones both
    changed, brings what is new, restores what they deleted and the course changed, and
    leaves a clean clone; a second run has nothing to do."""
    def git(*args, cwd):
        return subprocess.run(["git", "-c", "user.name=Course", "-c", "user.email=course@localhost", *args],
                              cwd=cwd, capture_output=True, text=True, timeout=60)

    origin = tmp_path / "kit"
    (origin / "course").mkdir(parents=True)
    shutil.copy(REPO / "course" / "kit" / "update.py", origin / "course" / "update.py")
    files = {"lessons/01.ipynb": "lesson 1\n", "assignments/01/01.ipynb": "assignment 1\n",
             "lessons/02.ipynb": "lesson 2\n", "README.md": "readme\n", "notes.txt": "notes\n"}
    for name, text in files.items():
        (origin / name).parent.mkdir(parents=True, exist_ok=True)
        (origin / name).write_text(text)
    for step in (["init", "-q", "--initial-branch=main"], ["add", "-A"], ["commit", "-q", "-m", "week 1"]):
        git(*step, cwd=origin)
    clone = tmp_path / "student"
    git("clone", "-q", str(origin), str(clone), cwd=tmp_path)
    # the student works: answers assignment 1, runs lesson 1, deletes lesson 2, edits notes, adds a file
    (clone / "assignments/01/01.ipynb").write_text("my answers\n")
    (clone / "lessons/01.ipynb").write_text("lesson 1 with my outputs\n")
    (clone / "lessons/02.ipynb").unlink()
    (clone / "notes.txt").write_text("my notes\n")
    (clone / "scratch.py").write_text("mine\n")
    # the course's week 2: fixes assignment 1 and lessons 1 and 2, adds assignment 2, drops notes
    (origin / "assignments/01/01.ipynb").write_text("assignment 1, fixed\n")
    (origin / "lessons/01.ipynb").write_text("lesson 1, re-executed\n")
    (origin / "lessons/02.ipynb").write_text("lesson 2, fixed\n")
    (origin / "assignments/02").mkdir()
    (origin / "assignments/02/02.ipynb").write_text("assignment 2\n")
    (origin / "notes.txt").unlink()
    git("add", "-A", cwd=origin)
    git("commit", "-q", "-m", "week 2", cwd=origin)

    pulled = git("pull", "-q", cwd=clone)
    assert pulled.returncode != 0 and "would be overwritten" in pulled.stderr, pulled.stderr   # the old way
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "USER": "student", "LANG": "C.UTF-8"}
    done = subprocess.run([sys.executable, "-I", "course/update.py"], cwd=clone, capture_output=True, text=True,
                          env=env, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (clone / "assignments/01/01.ipynb").read_text() == "my answers\n"
    assert (clone / "lessons/01.ipynb").read_text() == "lesson 1 with my outputs\n"
    besides = {path.relative_to(clone).as_posix(): path.read_text() for path in clone.rglob("*.course-*")}
    assert sorted(besides.values()) == ["assignment 1, fixed\n", "lesson 1, re-executed\n"], besides
    assert (clone / "lessons/02.ipynb").read_text() == "lesson 2, fixed\n"    # deleted by them, fixed by the course
    assert (clone / "notes.txt").read_text() == "my notes\n"                  # dropped by the course, kept as theirs
    assert (clone / "scratch.py").read_text() == "mine\n"
    assert (clone / "assignments/02/02.ipynb").read_text() == "assignment 2\n"
    assert "new assignment(s): 02" in done.stdout and "yours is kept" in done.stdout, done.stdout
    assert git("status", "--porcelain", cwd=clone).stdout == ""
    again = subprocess.run([sys.executable, "-I", "course/update.py"], cwd=clone, capture_output=True, text=True,
                           env=env, timeout=60)
    assert again.returncode == 0 and "already up to date" in again.stdout, again.stdout + again.stderr


def test_a_kit_is_updated_in_place_only_when_clean(kit, tmp_path):
    """`course student-kit` on a kit written before: refused while the kit holds uncommitted
    edits (they would be overwritten), named; then an update with nothing new changes nothing
    and makes no commit; a file removed from the course is removed from the kit."""
    copy = tmp_path / "kit"
    shutil.copytree(kit, copy)
    head = subprocess.run(["git", "-C", str(copy), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    with open(copy / "README.md", "a") as handle:
        handle.write("an edit made in the kit\n")
    with pytest.raises(student_kit.KitError, match=r"uncommitted changes \(README.md\)"):
        student_kit.build_kit(copy, REPO)
    subprocess.run(["git", "-C", str(copy), "checkout", "--", "README.md"], check=True)
    (copy / "lessons" / "99_extra.ipynb").write_text("{}")   # committed in the kit, not in the course
    subprocess.run(["git", "-C", str(copy), "-c", "user.name=I", "-c", "user.email=i@l", "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(copy), "-c", "user.name=I", "-c", "user.email=i@l", "commit", "-qm", "x"],
                   check=True)
    updated = student_kit.build_kit(copy, REPO)
    assert updated.updated and updated.changes == ["removed lessons/99_extra.ipynb"] and updated.commit
    again = student_kit.build_kit(copy, REPO)
    assert again.changes == [] and again.commit == ""
    log = subprocess.run(["git", "-C", str(copy), "log", "--format=%s"], capture_output=True, text=True).stdout
    assert log.splitlines()[0] == "Course update" and head.strip()
