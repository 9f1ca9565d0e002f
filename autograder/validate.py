"""`course validate`: a notebook judged exactly as `course grade` judges it, on the checks it can see.

The same code does both: the notebook's plan (locked and test cells put back from a
trusted copy), the same runs (with torch, and without it for the exercises graded without
it, in the same sandboxes), the same verdict on the host (:mod:`autograder.judge`), message
for message. What differs is only what the checks know:

- grading's reference run is the instructor's notebook, hidden tests included;
- Validate's reference run is the trusted copy of the notebook's test and locked cells
  (the release in ``assignments/``, or the instructor's source when that is what is being
  validated), *without any answer cell*: a check with ``expect=`` gets its expected value
  from the test code alone, and one without checks the form only, as a visible check does
  in grading too. So a test cell passes Validate exactly when its visible checks pass in
  grading; hidden checks can only take points away after that.

The trusted copy is found by the notebook's name (``<course>/assignments/<a>/<a>.ipynb``). A
notebook of no known assignment is its own copy: its test and locked cells are trusted only
where nbgrader's checksum says they are unchanged, and its grading tools only when they are
the course's own (they run on this machine, outside any sandbox).

Where bubblewrap is missing (a student's laptop, the student kit), ``plain=True`` runs the
same zygote as an ordinary process (:class:`autograder.sandbox.Unsandboxed`): the same plan,
runs, stand-ins for the packages an exercise is graded without, limits and judge, so the
same verdict and messages, but nothing around the notebook but its own process. That is
fine for a student checking their own work; grading always uses the sandbox.
"""
from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from .judge import NotebookResult, Reference
from .notebook_runs import NotebookRuns, load_tools
from .notebook_runs import extra_files as _extra_files
from .plan import AssignmentSpec, Plan, UnreadableNotebook, build_plan, read_submission, spec_of
from .sandbox import REPO, Limits, Sandbox, SandboxError, Unsandboxed, bwrap_available



class ValidationError(Exception):
    """The notebook cannot be validated; the message says why."""


@dataclass
class Validation:
    result: NotebookResult
    spec_path: Path
    edited: list[str] = field(default_factory=list)        # test or locked cells: grade_id
    form_only: set[str] = field(default_factory=set)       # test cells whose checks only check the form
    todo: list[str] = field(default_factory=list)          # answer cells still raising NotImplementedError


def _course_limits(root: Path) -> Limits:
    """The limits grading uses, from the course's configuration (the kit's carries them too)."""
    from coursebase.model import Course
    try:
        config = Course.load(root).config
    except Exception:  # noqa: BLE001 - CourseError, or a configuration that does not load
        config = None   # no readable configuration: the defaults grading would use too
    return Limits.of_course(config)


def trusted_copy(path: Path, root: Path = REPO) -> Path:
    """The notebook whose test and locked cells are trusted for ``path``."""
    notebook = path.resolve()
    stem = notebook.stem
    source = (root / "solutions" / stem / f"{stem}.ipynb").resolve()
    release = root / "assignments" / stem / f"{stem}.ipynb"
    if notebook == source:
        return notebook   # the instructor validating a source notebook: its hidden tests too
    return release.resolve() if release.is_file() else notebook


def _unchanged(cell) -> bool:
    from nbgrader import utils

    meta = cell.get("metadata", {}).get("nbgrader", {})
    checksum = meta.get("checksum") if isinstance(meta, dict) else None
    try:
        return checksum is None or checksum == utils.compute_checksum(cell)
    except Exception:  # noqa: BLE001 - metadata nbgrader cannot read: not trusted
        return False


def _own_copy(notebook: nbformat.NotebookNode) -> tuple[nbformat.NotebookNode, list[str]]:
    """A notebook as its own trusted copy: cells whose checksum shows an edit lose their
    test or locked role (they run as the student's cells), and are named."""
    edited = []
    for cell in notebook.cells:
        meta = cell.get("metadata", {}).get("nbgrader")
        if cell.get("cell_type") != "code" or not isinstance(meta, dict) or meta.get("solution"):
            continue
        if (meta.get("grade") or meta.get("locked")) and not _unchanged(cell):
            edited.append(str(meta.get("grade_id")))
            cell.metadata["nbgrader"] = {}
    return notebook, edited


class NotebookValidator:
    """Validates notebooks, keeping its sandboxes and reference runs between them."""

    def __init__(self, limits: Limits | None = None, root: Path = REPO, plain: bool | None = None):
        """``plain``: run notebooks without a sandbox (default: only where bubblewrap is missing)."""
        self.limits = limits or _course_limits(root)
        self.root = root
        self.plain = not bwrap_available() if plain is None else plain
        self.boxes: dict[bool, Sandbox] = {}
        self.references: dict[str, Reference] = {}
        # Told, every `progress_every` seconds, which cell is still running (a loop must not
        # look like a hang): a function taking one line, or None.
        self.progress = None
        self.progress_every = 5.0

    def _box(self, kind: bool) -> Sandbox:
        if kind not in self.boxes:
            self.boxes[kind] = (Unsandboxed if self.plain else Sandbox)(self.limits, kind)
        return self.boxes[kind]

    def _start(self, kinds) -> None:
        """Start the sandboxes this notebook needs, together (importing torch takes seconds)."""
        waiting = []
        for kind in kinds:
            box = self._box(kind)
            if not box.alive:
                box.launch()
                waiting.append(box)
        for box in waiting:
            box.wait_ready()

    def close(self) -> None:
        for box in self.boxes.values():
            box.close()
        self.boxes.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def validate(self, path: Path) -> Validation:
        """Raises :class:`ValidationError` (and ``ProbeFormError`` for an old-form test cell)."""
        path = Path(path)
        try:
            submission = read_submission(path)
        except UnreadableNotebook as error:
            raise ValidationError(str(error)) from None
        spec_path = trusted_copy(path, self.root)
        try:
            source = nbformat.read(str(spec_path), as_version=4)
        except Exception as error:  # noqa: BLE001 - the student's own file, as its own copy
            raise ValidationError(f"unreadable notebook: {type(error).__name__}: {error}"[:300]) from None
        edited: list[str] = []
        if spec_path == path.resolve():
            source, edited = _own_copy(source)
        spec = spec_of(spec_path.stem, spec_path.stem, source)
        if not spec.tests:
            raise ValidationError("no graded test cells to check")
        tools = load_tools(spec)
        with_torch = not spec.forbids_torch
        runs = NotebookRuns(spec, with_torch, tools, self.limits)
        self._start(set(runs.kinds) | {True})
        reference = self._reference(spec, spec_path)
        plan = build_plan(spec, submission)
        edited += [note.split()[2] for note in plan.notes if " edited: " in note]
        watcher = _Watcher(self, plan) if self.progress is not None else None
        try:
            result, run_list = runs.run(self.boxes, plan, _extra_files(path.parent, path.name), reference)
        except SandboxError as error:
            raise ValidationError(f"the sandbox failed: {error}") from None
        finally:
            if watcher is not None:
                watcher.stop()
        return Validation(result, spec_path, edited, _form_only(spec, reference), _todo(run_list))

    def _reference(self, spec: AssignmentSpec, spec_path: Path):
        """The trusted copy's test and locked cells, run without any answer: the cases and
        the expected values its checks compute."""
        plan = build_plan(spec, None)
        locked = {c.grade_id for c in spec.cells if c.role == "locked"}
        cells = [cell for cell in plan.cells if cell["kind"] == "reference_test" or cell.get("grade_id") in locked]
        for index, cell in enumerate(cells):
            cell["index"] = index
        plan = Plan(cells, [], {c["grade_id"]: c["index"] for c in cells if c["kind"] == "reference_test"})
        job = {"cells": cells, "files": _extra_files(spec_path.parent, spec_path.name), "reference": True,
               "validate": True}
        key = json.dumps(job, sort_keys=True)
        if key not in self.references:
            outcome = self._box(True).run(json.loads(key))
            self.references[key] = Reference.of(plan, outcome)
        return self.references[key]


class _Watcher:
    """Says which cell is still running, every ``progress_every`` seconds of one cell."""

    def __init__(self, validator: NotebookValidator, plan: Plan):
        self.validator, self.plan = validator, plan
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _running(self):
        """(the sandbox, the index of the cell its run began last), or None."""
        for box in list(self.validator.boxes.values()):
            outcome = box.current
            if outcome is None:
                continue
            for message in reversed(outcome.messages[-50:]):
                if message.get("t") in ("start", "hidden_start") and type(message.get("cell")) is int:
                    return box, message["cell"]
        return None

    def _name(self, index: int) -> str:
        cells = [c for c in self.plan.cells if c["index"] == index]
        if cells and cells[0].get("grade_id"):
            return cells[0]["grade_id"]
        return f"your code cell {index + 1}"

    def _watch(self) -> None:
        validator = self.validator
        seen, since, told = None, time.monotonic(), 0
        while not self.done.wait(0.25):
            running = self._running()
            now = time.monotonic()
            if running != seen:
                seen, since, told = running, now, 0
                continue
            if running is None:
                continue
            elapsed = now - since
            if elapsed >= validator.progress_every * (told + 1):
                told += 1
                validator.progress(f"  ... still running {self._name(running[1])}: {elapsed:.0f} s "
                                   f"(a cell may run {validator.limits.per_cell:g} s)")

    def stop(self) -> None:
        self.done.set()
        self.thread.join()


def _form_only(spec: AssignmentSpec, reference: Reference) -> set[str]:
    view = reference.view
    return {grade_id for grade_id, index in reference.plan.test_index.items()
            if view.calls.get(index) and all(call.get("form_only") for call in view.calls[index])}


def _todo(runs) -> list[str]:
    from .judge import RunView
    found = []
    for run in runs:
        variant, outcome = run[0], run[1]
        view = RunView.of(outcome)
        for cell in variant.cells:
            ok, error = view.ended.get(cell["index"], (True, ""))
            if cell["kind"] == "code" and cell.get("grade_id") and not ok and error.startswith("NotImplementedError"):
                if cell["grade_id"] not in found:
                    found.append(cell["grade_id"])
    return found
