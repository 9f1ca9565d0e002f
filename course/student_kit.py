"""`course student-kit DEST`: the students' own repository, with no trace of solutions.

    course student-kit ../reftorch-student      # write it (DEST must be new or empty)
    course student-kit --audit ../reftorch-student   # scan an existing kit, exit 1 on a leak

The kit is built from the repository's last commit (git HEAD), never from the working
tree: only committed files go in, and uncommitted course files are named (student data is never committed).
It holds what a student reads and runs: the lessons with their stored outputs
(lessons/*.ipynb), the released assignments (assignments/*/), reftorch, the tests of
reftorch against torch (every tests/test_*.py that imports nothing but reftorch, torch and
the other student packages), the base layer (coursebase/: the course model, nbgrader's
markers, the roster, the paths), the parts of course/ behind `course validate` and
`course lessons`, the grader modules behind `course validate` (autograder/validate.py and
what it and the zygote import: the same judgement as grading, run without a sandbox where
bubblewrap is missing; the grader's code is not secret, the tests and solutions are), a
`course` command listing only those, and a Makefile, README, pyproject, lock and
environment.yml of its own (course/kit/ holds the fixed ones; the README's lesson list and
the dependency files are derived from the repository's). It holds nothing of solutions/,
the rest of autograder/ (grading, gradebook, collection, feedback), the grading tests, the
gradebook or the instructor's nbgrader settings.

The kit is written to a scratch folder beside DEST, audited, and only then renamed to
DEST, so a failed build leaves nothing behind. The audit (also ``--audit``) fails on:

- a *secret line* in any file of the kit. Secret lines are the lines of every
  ``### BEGIN SOLUTION`` ... ``### END SOLUTION`` and ``### BEGIN HIDDEN TESTS`` ...
  ``### END HIDDEN TESTS`` region of solutions/*/*.ipynb, stripped, except
  (1) trivial lines: fewer than 8 characters or no letter (``pass``, ``else:``, ``)``), and
  (2) lines the course shows students anyway: a line of a lesson notebook, of reftorch/, of
  reftorch's own tests that the kit ships, or of a released notebook in assignments/ (the
  lessons teach what the assignments ask), or of the grader modules the kit ships.
  A kit file's lines are its text lines, stripped, and for .ipynb/.json files also every
  line of every string in the JSON (cell sources, outputs, metadata);
- an instructor-only path: solutions/, autograder/ (but the modules behind `course
  validate`), bench/, nbgrader's source, submitted,
  autograded, feedback or exchange folders, a database, an old grader's seed file;
- instructor settings in the kit's nbgrader or Jupyter config: a gradebook URL, nbgrader's
  instructor folders, the formgrader extension switched on.
"""
from __future__ import annotations

import ast
import io
import json
import os
import pwd
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from course.lessons import assignment_of, lesson_paths
from coursebase.markers import course_markers
from coursebase.model import Course, CourseError, read_config
from coursebase.paths import REPO

# The repository parts a kit is built from, exported from git HEAD (solutions/ only to
# know what must not leak; course/kit/ holds the kit's own fixed files).
KIT_SOURCES = ("lessons", "assignments", "reftorch", "coursebase", "course", "autograder", "tests", "solutions",
               "pyproject.toml", "environment.yml")
# Whole: the lessons, the engine, and the base layer (the course model, nbgrader's markers,
# the roster, the paths: what the grader's Validate stands on; nothing in it is secret).
# Of assignments/, the released ones.
COPIED_TREES = ("lessons", "reftorch", "coursebase")
# course/ modules behind `course validate` and `course lessons`; the kit's own course/cli.py
# (course/kit/cli.py) offers exactly those two commands.
COURSE_FILES = ("__init__.py", "self_check.py", "nbgrader_course.py", "validate_button.py", "lessons.py",
                "lab/overrides.json")
# Where `course validate` starts in autograder/: the validator, and the zygote it runs as a
# script (in the sandbox, or as a plain process where bubblewrap is missing).
GRADER_ENTRY_POINTS = ("__init__.py", "validate.py", "zygote.py")
# What a shipped test may import besides the standard library: reftorch against torch, no
# assignment or grading code (those tests run solutions/ and hidden tests).
STUDENT_TEST_IMPORTS = {"reftorch", "torch", "numpy", "ml_dtypes", "hypothesis", "pytest",
                        "torchviz", "graphviz", "matplotlib"}
# A test that reaches for the instructor's folders names them as paths or strings ("solutions",
# ROOT / "assignments", autograder/...): the bare word in prose ("lessons, assignments and
# tutorials use") is no reference.
INSTRUCTOR_REFERENCE = re.compile(r"""(["'/])(solutions|autograder|assignments)(["'/])|\bautograder\.""")
# What `make lab` and `make test` need; the kit's locks (course/kit/locks/, written with the
# course's own by course/locks.py) pin these and everything they require.
STUDENT_PACKAGES = ("torch", "numpy", "ml_dtypes", "jupyterlab", "nbgrader", "nbval", "torchviz", "graphviz",
                    "matplotlib", "ipykernel", "hypothesis", "pytest", "onnx", "onnxscript",
                    "scikit-learn")  # assignment 10's digits (and its tests' reference run in Validate)
SKIPPED_NAMES = ("__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".hypothesis")

MIN_SECRET_LENGTH = 8
INSTRUCTOR_FOLDERS = {"solutions", "autograder", "bench", "source", "submitted", "autograded",
                      "feedback", "exchange", "source_with_tests", "attacks"}
INSTRUCTOR_FILE = re.compile(r"(\.db|\.sqlite3?)$|^\.seed-|^gradebook")
INSTRUCTOR_COURSE_TRAITS = {"db_url", "source_directory", "submitted_directory", "autograded_directory",
                            "feedback_directory", "solution_directory", "source_with_tests_directory"}


class KitError(Exception):
    """The kit cannot be written; the message says why."""


@dataclass(frozen=True)
class Secret:
    line: str
    origin: str  # e.g. "solutions/03_autograd/03_autograd.ipynb, hidden tests"


# -- which tests ship ------------------------------------------------------------------------

def _imported_modules(path: Path) -> set[str]:
    """Top-level names of every absolute import in a Python file (at any depth)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def student_tests(root: Path) -> list[str]:
    """tests/ files the kit ships: conftest.py, every test_*.py that imports only the standard
    library, the student packages, reftorch and the helpers beside it (which must follow the
    same rule), and names no solutions/, autograder/ or assignments/."""
    tests = root / "tests"
    local = {path.stem for path in tests.glob("*.py") if not path.name.startswith("test_")}

    def fits(path: Path, seen: frozenset = frozenset()) -> set[str] | None:
        """The helper files `path` needs, or None when it cannot ship."""
        if INSTRUCTOR_REFERENCE.search(path.read_text(encoding="utf-8")):
            return None
        needed = set()
        for name in _imported_modules(path) - set(sys.stdlib_module_names) - STUDENT_TEST_IMPORTS:
            if name in seen:
                continue
            helper = fits(tests / f"{name}.py", seen | {name}) if name in local else None
            if helper is None:
                return None
            needed |= {f"{name}.py"} | helper
        return needed

    chosen = {"conftest.py"} if (tests / "conftest.py").is_file() else set()
    for path in sorted(tests.glob("test_*.py")):
        helpers = fits(path)
        if helpers is not None:
            chosen |= {path.name} | helpers
    return sorted(chosen)


# -- which grader modules ship ----------------------------------------------------------------

def _grader_imports(path: Path) -> set[str]:
    """The autograder modules a module of autograder/ imports (relative or by name)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:
                inner = node.module
            elif node.level == 0 and (node.module or "").split(".")[0] == "autograder":
                inner = node.module.partition(".")[2]
            else:
                continue
            if inner:   # from .judge import X / from autograder.judge import X
                found.add(inner.split(".")[0])
            else:       # from . import harness / from autograder import harness
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name.split(".")[1] for alias in node.names
                         if alias.name.startswith("autograder."))
    return found


def grader_files(root: Path) -> list[str]:
    """autograder/ files the kit ships: the entry points of `course validate` and every
    autograder module they import, at any depth (no gradebook, collection or feedback code)."""
    folder = root / "autograder"
    chosen, queue = set(), list(GRADER_ENTRY_POINTS)
    while queue:
        name = queue.pop()
        if name in chosen:
            continue
        if not (folder / name).is_file():
            raise KitError(f"`course validate` needs autograder/{name}, which is missing")
        chosen.add(name)
        queue += [f"{module}.py" for module in _grader_imports(folder / name) if (folder / f"{module}.py").is_file()]
    return sorted(chosen)


# -- what must not leak ---------------------------------------------------------------------

def _cell_source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _is_trivial(line: str) -> bool:
    return len(line) < MIN_SECRET_LENGTH or not re.search(r"[A-Za-z]", line)


def marked_lines(root: Path) -> dict[str, Secret]:
    """Every stripped line inside a solution or hidden-test region of solutions/*/*.ipynb
    (regions as nbgrader reads them with the course's settings: coursebase/markers.py)."""
    markers = course_markers(root)
    found: dict[str, Secret] = {}
    for notebook in sorted((root / "solutions").glob("*/*.ipynb")):
        for cell in json.loads(notebook.read_text(encoding="utf-8")).get("cells", []):
            for marked in markers.lines(_cell_source(cell)):
                line = marked.text.strip()
                if marked.region is not None and not marked.marker and line:
                    found.setdefault(line, Secret(line, f"{notebook.relative_to(root)}, {marked.region}"))
    return found


def public_lines(root: Path) -> set[str]:
    """Lines the course shows students in any case: lesson and release notebooks, reftorch/
    and the engine tests the kit ships (as they are in the repository, not in a kit)."""
    lines: set[str] = set()
    for notebook in [*(root / "lessons").glob("*.ipynb"), *(root / "assignments").glob("*/*.ipynb")]:
        for cell in json.loads(notebook.read_text(encoding="utf-8")).get("cells", []):
            lines.update(line.strip() for line in _cell_source(cell).splitlines())
    grader = grader_files(root) if (root / "autograder").is_dir() else []
    for module in [*(root / "reftorch").rglob("*.py"), *(root / "coursebase").rglob("*.py"),
                   *(root / "tests" / name for name in student_tests(root)),
                   *(root / "autograder" / name for name in grader)]:
        lines.update(line.strip() for line in module.read_text(encoding="utf-8").splitlines())
    return lines


def secret_lines(root: Path = REPO) -> dict[str, Secret]:
    """The lines the kit must not contain (see the module docstring for the rule)."""
    shown = public_lines(root)
    return {line: secret for line, secret in marked_lines(root).items()
            if not _is_trivial(line) and line not in shown}


# -- the audit ------------------------------------------------------------------------------

def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def file_lines(path: Path) -> set[str]:
    """A kit file's stripped text lines, for JSON files also the lines of every string in it,
    and for HTML files also the lines a browser shows (tags dropped, entities decoded: code
    highlighted by the course website puts each token in its own tag)."""
    text = path.read_bytes().decode("utf-8", errors="replace")
    lines = {line.strip() for line in text.splitlines()}
    if path.suffix in (".html", ".htm"):
        from course.release_audit import visible_text
        lines.update(line.strip() for line in visible_text(path).splitlines())
    if path.suffix in (".ipynb", ".json"):
        try:
            document = json.loads(text)
        except ValueError:
            return lines  # not JSON after all: its raw lines were scanned
        for string in _strings(document):
            lines.update(line.strip() for line in string.splitlines())
    return lines


def kit_files(kit: Path) -> list[Path]:
    return sorted(p for p in kit.rglob("*") if p.is_file() and ".git" not in p.relative_to(kit).parts[:1]
                  and ".venv" not in p.relative_to(kit).parts[:1])


def _config_problems(kit: Path) -> list[str]:
    problems = []
    for name in ("nbgrader_config.py", "jupyter_server_config.py"):
        path = kit / "course" / name
        if not path.is_file():
            problems.append(f"course/{name}: missing")
            continue
        config = read_config(path)
        for trait in sorted(INSTRUCTOR_COURSE_TRAITS & set(config.get("CourseDirectory", {}))):
            problems.append(f"course/{name}: sets the instructor's CourseDirectory.{trait}")
        for section in config:
            if section.lower().startswith("formgrade"):
                problems.append(f"course/{name}: configures the instructor's {section}")
        extensions = config.get("ServerApp", {}).get("jpserver_extensions", {})
        if hasattr(extensions, "get_value"):  # set with .update(...): a change still to apply
            extensions = extensions.get_value({})
        if extensions.get("nbgrader.server_extensions.formgrader"):
            problems.append(f"course/{name}: switches the formgrader on")
    return problems


def audit_files(folder: Path, root: Path = REPO, secrets: dict[str, Secret] | None = None) -> list[str]:
    """Every file under ``folder`` that is instructor-only or holds a secret line (empty when
    none does). Also audits the course website (course/site/build.py)."""
    secrets = secret_lines(root) if secrets is None else secrets
    if not secrets:
        return [f"no secret lines found under {root / 'solutions'}: nothing to check the kit against"]
    problems = []
    shipped_grader = {("autograder", name) for name in grader_files(root)} if (root / "autograder").is_dir() else set()
    for path in kit_files(folder):
        relative = path.relative_to(folder)
        if relative.parts in shipped_grader:
            pass   # the grader code behind `course validate`: its lines are scanned below
        elif INSTRUCTOR_FOLDERS & set(relative.parts[:-1]) or INSTRUCTOR_FILE.search(relative.name):
            problems.append(f"{relative}: instructor-only file")
        for line in sorted(file_lines(path) & secrets.keys()):
            problems.append(f"{relative}: holds a line of {secrets[line].origin}: {line!r}")
    return problems


def audit_kit(kit: Path, root: Path = REPO, secrets: dict[str, Secret] | None = None) -> list[str]:
    """Every way ``kit`` leaks what only the instructor may see (empty when it does not)."""
    secrets = secret_lines(root) if secrets is None else secrets
    if not secrets:
        return audit_files(kit, root, secrets)  # says there is nothing to check against
    return audit_files(kit, root, secrets) + _config_problems(kit)


# -- dependency files -----------------------------------------------------------------------

def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def student_pyproject(root: Path) -> str:
    from packaging.requirements import Requirement

    project = tomllib.loads((root / "pyproject.toml").read_text())
    ranges = {_normal(Requirement(d).name): d for d in project["project"]["dependencies"]}
    missing = [n for n in STUDENT_PACKAGES if _normal(n) not in ranges]
    if missing:
        raise KitError(f"pyproject.toml does not list {', '.join(missing)}")
    dependencies = "".join(f'  "{ranges[_normal(n)]}",\n' for n in STUDENT_PACKAGES)
    return f'''[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "reftorch-course-student"
version = "{project["project"]["version"]}"
description = "A course on how PyTorch works inside: lessons, the reftorch reference engine, assignments."
readme = "README.md"
requires-python = "{project["project"]["requires-python"]}"
# Ranges for people installing by hand; `make` installs the exact pins of locks/python3.X.lock
# (one per supported Python), torch first and alone (an unpinned torch pulls the CUDA build).
dependencies = [
{dependencies}]

[project.scripts]
course = "course.cli:main"

[tool.setuptools.packages.find]
include = ["reftorch*", "coursebase*", "autograder*", "course*"]

[tool.pytest.ini_options]
testpaths = ["tests"]
addopts = "-ra --strict-markers"
'''


def student_environment(root: Path) -> str:
    """environment.yml limited to the student packages (conda names as in the repository's)."""
    import yaml

    conda_names = {"torch": "pytorch", "graphviz": "python-graphviz"}
    wanted = {conda_names.get(n, n) for n in STUDENT_PACKAGES} | set(STUDENT_PACKAGES)
    environment = yaml.safe_load((root / "environment.yml").read_text())
    conda, pip = [], []
    for entry in environment["dependencies"]:
        if isinstance(entry, dict):
            pip += [line for line in entry.get("pip", []) if re.split(r"[<>=!\s]", line)[0] in wanted]
            continue
        name = re.split(r"[<>=!\s]", entry)[0]
        if name in wanted or name in ("python", "pip", "graphviz"):
            conda.append(entry)
    lines = ["# For conda users. `make` uses .venv and locks/python3.X.lock instead.",
             "name: reftorch-course-student", "channels:", "  - conda-forge", "dependencies:"]
    lines += [f"  - {entry}" for entry in conda] + ["  - pip:"]
    lines += [f"      - {entry}" for entry in pip] + ["      - -e .", ""]
    return "\n".join(lines)


# -- the repository's last commit -------------------------------------------------------------

@dataclass(frozen=True)
class Head:
    commit: str
    uncommitted: list[str]  # changed or untracked files of KIT_SOURCES: not in the kit


def _git_as_owner(root: Path) -> dict:
    """subprocess options that run git as the repository's owner: root (the course hub)
    never runs git over another user's repository as root (its config could run commands)."""
    owner = root.stat().st_uid
    if os.geteuid() != 0 or owner == 0:
        return {}
    account = pwd.getpwuid(owner)
    return {"user": owner, "group": account.pw_gid,
            "extra_groups": os.getgrouplist(account.pw_name, account.pw_gid),
            "env": {"HOME": account.pw_dir, "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}}


def _git(root: Path, *args: str) -> bytes:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, timeout=120,
                          cwd="/", **_git_as_owner(root))
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        raise KitError(f"the kit is built from git HEAD, and `git {args[0]}` failed in {root}: "
                       f"{message[-1] if message else f'exit {done.returncode}'}")
    return done.stdout


def export_head(root: Path, dest: Path) -> Head:
    """Write the committed KIT_SOURCES of ``root``'s HEAD into ``dest`` (an empty folder)."""
    if not (root / ".git").exists():
        raise KitError(f"{root} is not a git repository: the kit is built from its last commit "
                       "(git HEAD), so that only committed files go to students")
    commit = _git(root, "rev-parse", "--verify", "HEAD").decode().strip()
    archive = _git(root, "archive", "--format=tar", "HEAD", "--", *KIT_SOURCES)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(dest, filter="data")
        else:  # Python before 3.11.4: git's own archive of our own commit
            tar.extractall(dest)
    status = _git(root, "status", "--porcelain", "--untracked-files=all", "-z", "--", *KIT_SOURCES)
    uncommitted = sorted({entry[3:] for entry in status.decode(errors="replace").split("\0")
                          if len(entry) > 3})
    return Head(commit, uncommitted)


# -- writing the kit ------------------------------------------------------------------------

def _ignore(_folder, names):
    return [n for n in names if n in SKIPPED_NAMES or n.endswith(".pyc")]


NUMBER_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen")


def _title(notebook: Path) -> str:
    """A notebook's first Markdown heading, without its '#' marks."""
    for cell in json.loads(notebook.read_text(encoding="utf-8")).get("cells", []):
        if cell.get("cell_type") == "markdown":
            for line in _cell_source(cell).splitlines():
                if line.startswith("#"):
                    return line.lstrip("#").strip()
    return notebook.stem


def student_readme(root: Path, releases: "Releases") -> str:
    """course/kit/README.md with the lessons of this commit and the assignments released."""
    lessons = lesson_paths(folder=root / "lessons")
    assignments = sorted(p.parent.name for p in (root / "assignments").glob("*/*.ipynb")
                         if p.stem == p.parent.name)
    released = set(releases.released)
    later = {name: f"from {moment:%Y-%m-%d}" for name, moment in releases.upcoming}
    count = NUMBER_WORDS[len(lessons)] if len(lessons) < len(NUMBER_WORDS) else str(len(lessons))
    # a lesson leads into the assignment of its number (01_tensors and 01b_strides into 01_tensors)
    leads_into = {path: assignment_of(path.stem, assignments) for path in lessons}
    listing = "\n".join(
        f"| `lessons/{path.name}` | {_title(path)} | "
        + (f"`assignments/{leads_into[path]}/`" if leads_into[path] in released
           else later.get(leads_into[path], "")) + " |"
        for path in lessons)
    unpaired = [name for name in releases.released if name not in set(leads_into.values())]
    listing += "".join(f"\n| | {_title(root / 'assignments' / name / f'{name}.ipynb')} | `assignments/{name}/` |"
                       for name in unpaired)   # an assignment without a lesson: the capstone
    shipped = len(releases.released)
    text = (root / "course" / "kit" / "README.md").read_text()
    return (text.replace("@LESSON_COUNT@", f"{count} lesson{'s' if len(lessons) != 1 else ''}")
                .replace("@ASSIGNMENT_COUNT@", f"{NUMBER_WORDS[shipped] if shipped < len(NUMBER_WORDS) else shipped} "
                         f"assignment{'s' if shipped != 1 else ''}")
                .replace("@LESSON_TABLE@", listing))


def kit_releases(tree: Path, now: datetime | None = None) -> "Releases":
    """The assignments of ``tree`` (an export of HEAD) that students get at ``now``."""
    from course.schedule import releases

    assignments = sorted(p.parent.name for p in (tree / "assignments").glob("*/*.ipynb")
                         if p.stem == p.parent.name)
    try:
        return releases(tree, assignments, now)
    except CourseError as error:
        raise KitError(str(error)) from None


def _fill(kit: Path, root: Path, releases: "Releases") -> None:
    """Write the kit's files into ``kit`` from ``root``, an export of the repository's HEAD,
    with the assignments of ``releases``."""
    templates = root / "course" / "kit"
    course = Course.load(root)
    for tree in COPIED_TREES:
        shutil.copytree(root / tree, kit / tree, ignore=_ignore)
    (kit / "assignments").mkdir()
    for name in releases.released:
        shutil.copytree(root / "assignments" / name, kit / "assignments" / name, ignore=_ignore)
    for name in COURSE_FILES:
        (kit / "course" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / "course" / name, kit / "course" / name)
    shutil.copy2(templates / "cli.py", kit / "course" / "cli.py")
    shutil.copy2(templates / "update.py", kit / "course" / "update.py")
    (kit / "autograder").mkdir()
    for name in grader_files(root):
        shutil.copy2(root / "autograder" / name, kit / "autograder" / name)
    (kit / "tests").mkdir()
    for name in student_tests(root):
        shutil.copy2(root / "tests" / name, kit / "tests" / name)
    config = (templates / "nbgrader_config.py").read_text().replace("@COURSE_ID@", course.course_id)
    (kit / "course" / "nbgrader_config.py").write_text(config + limits_settings(course.config))
    shutil.copy2(templates / "jupyter_server_config.py", kit / "course" / "jupyter_server_config.py")
    (kit / "course" / "labconfig").mkdir()
    shutil.copy2(templates / "page_config.json", kit / "course" / "labconfig" / "page_config.json")
    shutil.copy2(templates / "Makefile", kit / "Makefile")
    (kit / "README.md").write_text(student_readme(root, releases))
    shutil.copy2(templates / "gitignore", kit / ".gitignore")
    (kit / "pyproject.toml").write_text(student_pyproject(root))
    locks = sorted((templates / "locks").glob("python3.*.lock"))
    if not locks:
        raise KitError("course/kit/locks/ holds no lock: run `make locks` (course/locks.py)")
    (kit / "locks").mkdir()
    for lock in locks:
        shutil.copy2(lock, kit / "locks" / lock.name)
    (kit / "environment.yml").write_text(student_environment(root))
    (kit / KIT_MARK).write_text(json.dumps({"course_id": course.course_id,
                                            "assignments": releases.released}, indent=1) + "\n")


@dataclass(frozen=True)
class Kit:
    files: list[Path]
    head: Head
    releases: "Releases"
    changes: list[str]          # an update: "added X", "changed Y", "removed Z"; empty for a new kit
    commit: str                 # the kit repository's commit ("" when nothing changed)
    updated: bool               # DEST held a kit, now updated in place


def limits_settings(config) -> str:
    """The course's grading limits as configuration lines: Validate in the kit uses grading's."""
    from coursebase.model import GRADING_LIMITS, grading_limits
    values = grading_limits(config)
    return "# The course's grading limits (from the instructor's configuration): Validate uses them too.\n" + "".join(
        f"c.{section}.{setting} = {values[name]!r}\n" for name, (section, setting, _) in GRADING_LIMITS.items())


def build_kit(dest: Path | str, root: Path | str = REPO, now: datetime | None = None,
              commit: bool = True) -> Kit:
    """Write the student kit of ``root``'s git HEAD to ``dest``: a new (or empty) folder, or
    a kit written before, updated in place. With ``commit``, ``dest`` is a git repository
    and each build a commit on it (what students clone and `make update` from). Raises KitError."""
    dest, root = Path(dest).resolve(), Path(root).resolve()
    existing = dest.exists() and (not dest.is_dir() or any(dest.iterdir()))
    if existing and not is_kit(dest):
        raise KitError(f"{dest} exists and is neither an empty folder nor a student kit of this "
                       f"course (a git repository with {KIT_MARK}); give a new folder, or the kit to update")
    if dest == root or root in dest.parents:
        raise KitError(f"{dest} is inside the course repository {root}; give a folder outside it")
    if not (root / "solutions").is_dir():
        raise KitError(f"{root} has no solutions/: the kit is built from the instructor's repository")
    if existing:
        _check_kit_to_update(dest, root)
    with tempfile.TemporaryDirectory(prefix="course-head-") as exported:
        head = export_head(root, Path(exported))
        releases = kit_releases(Path(exported), now)
        if existing:
            changes = update_kit(dest, Path(exported), releases)
        else:
            write_kit(dest, Path(exported), releases)
            changes = []
    made = ""
    if commit and (changes or not existing):
        made = _commit_kit(dest, head, releases, changes)
    return Kit(kit_files(dest), head, releases, changes, made, existing)


def write_kit(dest: Path, tree: Path, releases: "Releases | None" = None) -> list[Path]:
    """Write the kit of ``tree`` (an export of the repository's HEAD) to ``dest`` (absent or
    empty): into a scratch folder beside it, audited, then renamed. Raises KitError."""
    scratch = _audited_scratch(dest, tree, releases)
    try:
        umask = os.umask(0)
        os.umask(umask)
        scratch.chmod(0o777 & ~umask)  # mkdtemp made it private; the kit is an ordinary folder
        if dest.exists():
            dest.rmdir()
        os.replace(scratch, dest)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return kit_files(dest)


def _audited_scratch(dest: Path, tree: Path, releases: "Releases | None") -> Path:
    """The kit of ``tree`` written into a scratch folder beside ``dest`` and audited."""
    if not (tree / "solutions").is_dir():
        raise KitError("the last commit has no solutions/: the kit is built from the instructor's repository")
    releases = releases or kit_releases(tree)
    dest.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
    try:
        _fill(scratch, tree, releases)
        problems = audit_kit(scratch, tree)
        if problems:
            raise KitError("the kit would leak instructor material:\n  " + "\n  ".join(problems))
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return scratch


# -- updating a kit in place --------------------------------------------------------------------

# Marks a folder as a student kit (and says which course, which assignments it ships).
KIT_MARK = "course/kit.json"


def is_kit(folder: Path) -> bool:
    return (folder / KIT_MARK).is_file()


def _kit_git(kit: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(["git", "-C", str(kit), *args], capture_output=True, text=True, timeout=120)
    if check and done.returncode != 0:
        raise KitError(f"`git {' '.join(args[:2])}` failed in the kit {kit}: "
                       f"{(done.stderr.strip().splitlines() or [f'exit {done.returncode}'])[-1]}")
    return done.stdout


def _check_kit_to_update(kit: Path, root: Path) -> None:
    """A kit is updated only when it is this course's and holds nothing uncommitted (an edit
    made in the kit itself would be lost)."""
    mark = json.loads((kit / KIT_MARK).read_text())
    course_id = Course.load(root).course_id
    if mark.get("course_id") != course_id:
        raise KitError(f"{kit} is the kit of course {mark.get('course_id')!r}, not of {course_id!r}")
    if (kit / ".git").exists():
        status = _kit_git(kit, "status", "--porcelain", "--untracked-files=all")
        if status.strip():
            changed = [line[3:] for line in status.splitlines()]
            raise KitError(f"the kit {kit} has uncommitted changes ({', '.join(changed[:5])}"
                           f"{' ...' if len(changed) > 5 else ''}): the update would overwrite them. "
                           "Make them in the course repository instead, or commit or discard them there")


def update_kit(kit: Path, tree: Path, releases: "Releases") -> list[str]:
    """Bring the kit at ``kit`` to the kit of ``tree``: files added, changed and removed in
    place (its .git and whatever git ignores there stay). Returns what changed."""
    scratch = _audited_scratch(kit, tree, releases)
    try:
        new = {path.relative_to(scratch).as_posix() for path in kit_files(scratch)}
        if (kit / ".git").exists():   # what the kit repository tracks (not what git ignores there)
            old = set(_kit_git(kit, "ls-files", "-z").split("\0")) - {""}
        else:
            old = {path.relative_to(kit).as_posix() for path in kit_files(kit)}
        changes = []
        for name in sorted(old - new):
            (kit / name).unlink()
            changes.append(f"removed {name}")
        for name in sorted(new):
            source, target = scratch / name, kit / name
            if name in old and target.read_bytes() == source.read_bytes():
                continue
            changes.append(f"{'changed' if name in old else 'added'} {name}")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
        for folder in sorted({(kit / name).parent for name in old - new}, key=lambda p: -len(p.parts)):
            while folder != kit and folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
                folder = folder.parent
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return changes


def _commit_kit(kit: Path, head: Head, releases: "Releases", changes: list[str]) -> str:
    """Commit the kit as it is now on its git repository (created the first time)."""
    if not (kit / ".git").exists():
        _kit_git(kit, "init", "--quiet", "--initial-branch=main")
    _kit_git(kit, "add", "--all")
    added = [change.split()[1].split("/")[1] for change in changes
             if change.startswith("added assignments/") and change.endswith(".ipynb")]
    title = (f"Course kit: {', '.join(releases.released) or 'lessons only'}" if not changes else
             f"Course update: {', '.join(added)} released" if added else "Course update")
    message = f"{title}\n\nBuilt from the course's commit {head.commit[:12]}.\n"
    if changes:
        message += "\n" + "\n".join(changes[:200]) + "\n"
    identity = [] if _kit_git(kit, "config", "user.email", check=False).strip() else [
        "-c", "user.name=course student-kit", "-c", "user.email=course-student-kit@localhost"]
    done = subprocess.run(["git", "-C", str(kit), *identity, "commit", "--quiet", "-m", message],
                          capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise KitError(f"`git commit` failed in the kit {kit}: {done.stderr.strip()[-300:]}")
    return _kit_git(kit, "rev-parse", "HEAD").strip()


# -- `course student-kit` -------------------------------------------------------------------

def register(subparsers) -> None:
    kit = subparsers.add_parser(
        "student-kit", help="write or update the students' repository: lessons, released assignments, "
                            "reftorch, no solutions",
        description="Write a self-contained student repository to DEST: lessons, the assignments "
                    "released by now (c.CourseSchedule.release; all without a schedule), reftorch and "
                    "its tests, `course validate`, a Makefile with `make lab`, `make test` and "
                    "`make update`. DEST is a git repository and each build a commit on it: a new "
                    "folder gets the first, a kit built before is updated in place (next week's "
                    "assignment, fixes) with a new commit. It is audited for solution lines, hidden "
                    "tests and instructor settings before anything is written.")
    kit.add_argument("dest", metavar="DEST", help="folder to write, or a kit to update (outside this repository)")
    kit.add_argument("--audit", action="store_true", help="write nothing; scan the existing kit at DEST "
                     "and exit 1 when it holds instructor material")
    kit.add_argument("--as-of", metavar="TIME", help="release the assignments scheduled by TIME "
                     "('2026-09-14 09:00 Europe/Berlin') instead of by now")
    kit.add_argument("--root", help="course repository to build from (default: this repository)")
    kit.set_defaults(func=run_student_kit)


def run_student_kit(args) -> int:
    root = Path(args.root or REPO)
    if args.audit:
        if not Path(args.dest).is_dir():
            print(f"course student-kit: no kit at {args.dest}", file=sys.stderr)
            return 2
        problems = audit_kit(Path(args.dest), root)
        for problem in problems:
            print(problem)
        if problems:
            return 1
        print(f"clean: {len(kit_files(Path(args.dest)))} files, no instructor material")
        return 0
    try:
        from course.schedule import parse_as_of
        now = parse_as_of(args.as_of) if args.as_of else None
        kit = build_kit(args.dest, root, now=now)
    except (KitError, CourseError) as error:
        print(f"course student-kit: {error}", file=sys.stderr)
        return 1
    source = f"git HEAD {kit.head.commit[:12]} (committed files only), audited clean"
    if not kit.updated:
        print(f"wrote the student kit to {args.dest}: {len(kit.files)} files from {source}")
    elif kit.changes:
        print(f"updated the student kit in {args.dest} from {source}: {len(kit.changes)} file(s) "
              "added, changed or removed")
        for change in kit.changes[:20]:
            print(f"  {change}")
        if len(kit.changes) > 20:
            print(f"  ... and {len(kit.changes) - 20} more")
    else:
        print(f"the student kit in {args.dest} is up to date with {source}; nothing to commit")
    print(f"assignments: {kit.releases.describe()}")
    if kit.head.uncommitted:
        shown = ", ".join(kit.head.uncommitted[:5]) + (" ..." if len(kit.head.uncommitted) > 5 else "")
        print(f"not in the kit: {len(kit.head.uncommitted)} uncommitted change(s) ({shown}); the kit "
              "holds the last commit only")
    if kit.commit:
        print(f"committed {kit.commit[:12]} on the kit's repository; publish it where students clone "
              f"from (git -C {shlex.quote(args.dest)} push), and they run `make update`")
    return 0
