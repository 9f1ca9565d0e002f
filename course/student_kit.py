"""`course student-kit DEST`: the students' own repository, with no trace of solutions.

    course student-kit ../reftorch-student      # write it (DEST must be new or empty)
    course student-kit --audit ../reftorch-student   # scan an existing kit, exit 1 on a leak

The kit holds what a student reads and runs: the lessons with their stored outputs, the
released assignments, reftorch, reftorch's own tests against torch, the parts of course/
behind `course validate` and `make lab`, and a Makefile, README, pyproject, lock and
environment.yml of its own (course/kit/ holds the fixed ones; the dependency files are
derived from the repository's, limited to what a student needs). It holds nothing of
solutions/, autograder/, the grading tests, the gradebook or the instructor's nbgrader
settings.

The kit is written to a scratch folder beside DEST, audited, and only then renamed to
DEST, so a failed build leaves nothing behind. The audit (also ``--audit``) fails on:

- a *secret line* in any file of the kit. Secret lines are the lines of every
  ``### BEGIN SOLUTION`` ... ``### END SOLUTION`` and ``### BEGIN HIDDEN TESTS`` ...
  ``### END HIDDEN TESTS`` region of solutions/*/*.ipynb, stripped, except
  (1) trivial lines: fewer than 8 characters or no letter (``pass``, ``else:``, ``)``), and
  (2) lines the course shows students anyway: a line of a lesson notebook, of reftorch/, of
  reftorch's own tests that the kit ships, or of a released notebook in assignments/ (the
  lessons teach what the assignments ask).
  A kit file's lines are its text lines, stripped, and for .ipynb/.json files also every
  line of every string in the JSON (cell sources, outputs, metadata);
- an instructor-only path: solutions/, autograder/, bench/, nbgrader's source, submitted,
  autograded, feedback or exchange folders, a database, an old grader's seed file;
- instructor settings in the kit's nbgrader or Jupyter config: a gradebook URL, nbgrader's
  instructor folders, the formgrader extension switched on.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
KIT_TEMPLATES = Path(__file__).resolve().parent / "kit"

COPIED_TREES = ("lessons", "assignments", "reftorch")
# course/ modules behind `course validate` and `course lessons` (cli.py skips the missing ones).
COURSE_FILES = ("__init__.py", "cli.py", "release.py", "release_audit.py", "nbgrader_course.py",
                "self_check.py", "lessons.py", "lab/overrides.json")
# reftorch against torch, with no assignment or grading code in them. Not shipped: the
# assignment and grading tests (they run solutions/ and hidden tests), the lesson gates and
# the environment test (instructor tooling), the browser walk-through (instructor loop).
STUDENT_TESTS = ("conftest.py", "engine_support.py", "test_engine_api.py", "test_engine_autograd.py",
                 "test_engine_autograd_advanced.py", "test_engine_errors.py", "test_engine_fidelity.py", "test_engine_gradients.py",
                 "test_engine_inplace.py", "test_engine_lowprec.py", "test_engine_random.py",
                 "test_engine_tensor.py", "test_engine_training.py", "test_engine_views.py",
                 "test_mlp_fast_paths.py", "test_nn_parity.py", "test_torchviz_parity.py", "test_snippets.py",
                 "test_engine_graphs.py")
# What `make lab` and `make test` need; the lock gets these and everything they require.
STUDENT_PACKAGES = ("torch", "numpy", "ml_dtypes", "jupyterlab", "nbgrader", "nbval", "torchviz", "graphviz",
                    "matplotlib", "ipykernel", "hypothesis", "pytest", "onnx", "onnxscript")
# The venv's own installer and build tools: every venv has them, the lock does not pin them.
VENV_TOOLS = ("pip", "setuptools", "wheel")
SKIPPED_NAMES = ("__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".hypothesis")

MIN_SECRET_LENGTH = 8
INSTRUCTOR_FOLDERS = {"solutions", "autograder", "bench", "source", "submitted", "autograded",
                      "feedback", "exchange", "source_with_tests", "attacks"}
INSTRUCTOR_FILE = re.compile(r"(\.db|\.sqlite3?)$|^\.seed-|^gradebook")
INSTRUCTOR_COURSE_TRAITS = {"db_url", "source_directory", "submitted_directory", "autograded_directory",
                            "feedback_directory", "solution_directory", "source_with_tests_directory"}
MARKERS = {"### BEGIN SOLUTION": "### END SOLUTION", "### BEGIN HIDDEN TESTS": "### END HIDDEN TESTS"}


class KitError(Exception):
    """The kit cannot be written; the message says why."""


@dataclass(frozen=True)
class Secret:
    line: str
    origin: str  # e.g. "solutions/03_autograd/03_autograd.ipynb, hidden tests"


# -- what must not leak ---------------------------------------------------------------------

def _cell_source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _is_trivial(line: str) -> bool:
    return len(line) < MIN_SECRET_LENGTH or not re.search(r"[A-Za-z]", line)


def marked_lines(root: Path) -> dict[str, Secret]:
    """Every stripped line inside a solution or hidden-test region of solutions/*/*.ipynb."""
    found: dict[str, Secret] = {}
    for notebook in sorted((root / "solutions").glob("*/*.ipynb")):
        for cell in json.loads(notebook.read_text(encoding="utf-8")).get("cells", []):
            closing = None
            for raw in _cell_source(cell).splitlines():
                line = raw.strip()
                if closing is None and line in MARKERS:
                    closing, kind = MARKERS[line], ("solution" if "SOLUTION" in line else "hidden tests")
                elif line == closing:
                    closing = None
                elif closing is not None and line:
                    found.setdefault(line, Secret(line, f"{notebook.relative_to(root)}, {kind}"))
    return found


def public_lines(root: Path) -> set[str]:
    """Lines the course shows students in any case: lesson and release notebooks, reftorch/
    and the engine tests the kit ships (as they are in the repository, not in a kit)."""
    lines: set[str] = set()
    for notebook in [*(root / "lessons").glob("*.ipynb"), *(root / "assignments").glob("*/*.ipynb")]:
        for cell in json.loads(notebook.read_text(encoding="utf-8")).get("cells", []):
            lines.update(line.strip() for line in _cell_source(cell).splitlines())
    for module in [*(root / "reftorch").rglob("*.py"), *(root / "tests" / name for name in STUDENT_TESTS)]:
        lines.update(line.strip() for line in module.read_text(encoding="utf-8").splitlines())
    return lines


def secret_lines(root: Path = REPO_ROOT) -> dict[str, Secret]:
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
    from traitlets.config import PyFileConfigLoader

    problems = []
    for name in ("nbgrader_config.py", "jupyter_server_config.py"):
        path = kit / "course" / name
        if not path.is_file():
            problems.append(f"course/{name}: missing")
            continue
        config = PyFileConfigLoader(name, path=str(path.parent)).load_config()
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


def audit_files(folder: Path, root: Path = REPO_ROOT, secrets: dict[str, Secret] | None = None) -> list[str]:
    """Every file under ``folder`` that is instructor-only or holds a secret line (empty when
    none does). Also audits the course website (course/site/build.py)."""
    secrets = secret_lines(root) if secrets is None else secrets
    if not secrets:
        return [f"no secret lines found under {root / 'solutions'}: nothing to check the kit against"]
    problems = []
    for path in kit_files(folder):
        relative = path.relative_to(folder)
        if INSTRUCTOR_FOLDERS & set(relative.parts[:-1]) or INSTRUCTOR_FILE.search(relative.name):
            problems.append(f"{relative}: instructor-only file")
        for line in sorted(file_lines(path) & secrets.keys()):
            problems.append(f"{relative}: holds a line of {secrets[line].origin}: {line!r}")
    return problems


def audit_kit(kit: Path, root: Path = REPO_ROOT, secrets: dict[str, Secret] | None = None) -> list[str]:
    """Every way ``kit`` leaks what only the instructor may see (empty when it does not)."""
    secrets = secret_lines(root) if secrets is None else secrets
    if not secrets:
        return audit_files(kit, root, secrets)  # says there is nothing to check against
    return audit_files(kit, root, secrets) + _config_problems(kit)


# -- dependency files -----------------------------------------------------------------------

def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_pins(root: Path) -> dict[str, str]:
    pins = {}
    for line in (root / "requirements.lock").read_text().splitlines():
        if "==" in line and not line.lstrip().startswith("#"):
            name, version = line.split("==", 1)
            pins[_normal(name.strip())] = f"{name.strip()}=={version.strip()}"
    return pins


def student_lock(root: Path) -> list[str]:
    """The repository's pins of the student packages and all they require here (torch's own
    requirements excepted: torch is installed first and alone, and brings them)."""
    from importlib.metadata import PackageNotFoundError, requires
    from packaging.requirements import Requirement

    pins = lock_pins(root)
    wanted, queue = set(), [_normal(n) for n in STUDENT_PACKAGES]
    while queue:
        name = queue.pop()
        if name in wanted or name in VENV_TOOLS:
            continue
        if name not in pins:
            raise KitError(f"{name} is needed by the student kit but not pinned in requirements.lock")
        wanted.add(name)
        if name == "torch":
            continue
        try:
            needs = requires(name) or []
        except PackageNotFoundError:
            raise KitError(f"{name} is pinned but not installed here; run `make venv` first") from None
        for text in needs:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                queue.append(_normal(requirement.name))
    return sorted((pins[name] for name in wanted), key=str.lower)


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
# Ranges for people installing by hand; `make` installs the exact pins in requirements.lock,
# torch first and alone (an unpinned torch pulls the CUDA build).
dependencies = [
{dependencies}]

[project.scripts]
course = "course.cli:main"

[tool.setuptools.packages.find]
include = ["reftorch*", "course*"]

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
    lines = ["# For conda users. `make` uses .venv and requirements.lock instead.",
             "name: reftorch-course-student", "channels:", "  - conda-forge", "dependencies:"]
    lines += [f"  - {entry}" for entry in conda] + ["  - pip:"]
    lines += [f"      - {entry}" for entry in pip] + ["      - -e .", ""]
    return "\n".join(lines)


# -- writing the kit ------------------------------------------------------------------------

def _ignore(_folder, names):
    return [n for n in names if n in SKIPPED_NAMES or n.endswith(".pyc")]


def _course_id(root: Path) -> str:
    from course.nbgrader_course import course_config
    return course_config(root).CourseDirectory.course_id


def _fill(kit: Path, root: Path) -> None:
    for tree in COPIED_TREES:
        shutil.copytree(root / tree, kit / tree, ignore=_ignore)
    for name in COURSE_FILES:
        (kit / "course" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / "course" / name, kit / "course" / name)
    (kit / "tests").mkdir()
    for name in STUDENT_TESTS:
        shutil.copy2(root / "tests" / name, kit / "tests" / name)
    config = (KIT_TEMPLATES / "nbgrader_config.py").read_text().replace("@COURSE_ID@", _course_id(root))
    (kit / "course" / "nbgrader_config.py").write_text(config)
    shutil.copy2(KIT_TEMPLATES / "jupyter_server_config.py", kit / "course" / "jupyter_server_config.py")
    (kit / "course" / "labconfig").mkdir()
    shutil.copy2(KIT_TEMPLATES / "page_config.json", kit / "course" / "labconfig" / "page_config.json")
    shutil.copy2(KIT_TEMPLATES / "Makefile", kit / "Makefile")
    shutil.copy2(KIT_TEMPLATES / "README.md", kit / "README.md")
    shutil.copy2(KIT_TEMPLATES / "gitignore", kit / ".gitignore")
    (kit / "pyproject.toml").write_text(student_pyproject(root))
    (kit / "requirements.lock").write_text("\n".join(student_lock(root)) + "\n")
    (kit / "environment.yml").write_text(student_environment(root))


def build_kit(dest: Path | str, root: Path | str = REPO_ROOT) -> list[Path]:
    """Write the student kit to ``dest`` (new or empty); return its files. Raises KitError."""
    dest, root = Path(dest).resolve(), Path(root).resolve()
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise KitError(f"{dest} exists and is not an empty folder; give a new folder")
    if dest == root or root in dest.parents:
        raise KitError(f"{dest} is inside the course repository {root}; give a folder outside it")
    if not (root / "solutions").is_dir():
        raise KitError(f"{root} has no solutions/: the kit is built from the instructor's repository")
    dest.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
    try:
        _fill(scratch, root)
        problems = audit_kit(scratch, root)
        if problems:
            raise KitError("the kit would leak instructor material:\n  " + "\n  ".join(problems))
        umask = os.umask(0)
        os.umask(umask)
        scratch.chmod(0o777 & ~umask)  # mkdtemp made it private; the kit is an ordinary folder
        if dest.exists():
            dest.rmdir()
        os.replace(scratch, dest)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return kit_files(dest)


# -- `course student-kit` -------------------------------------------------------------------

def register(subparsers) -> None:
    kit = subparsers.add_parser(
        "student-kit", help="write the students' repository: lessons, assignments, reftorch, no solutions",
        description="Write a self-contained student repository to DEST (new or empty): lessons, released "
                    "assignments, reftorch and its tests, `course validate`, a Makefile with `make lab` "
                    "and `make test`. It is audited for solution lines, hidden tests and instructor "
                    "settings before it is written.")
    kit.add_argument("dest", metavar="DEST", help="folder to write (outside this repository)")
    kit.add_argument("--audit", action="store_true", help="write nothing; scan the existing kit at DEST "
                     "and exit 1 when it holds instructor material")
    kit.add_argument("--root", help="course repository to build from (default: this repository)")
    kit.set_defaults(func=run_student_kit)


def run_student_kit(args) -> int:
    root = Path(args.root or REPO_ROOT)
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
        files = build_kit(args.dest, root)
    except KitError as error:
        print(f"course student-kit: {error}", file=sys.stderr)
        return 1
    print(f"wrote the student kit to {args.dest}: {len(files)} files, audited clean")
    print(f"next: cd {args.dest} && git init && git add -A && git commit -m 'Student kit'")
    return 0
