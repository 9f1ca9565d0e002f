"""`course grade <a>`: grade every submission of an assignment, in parallel, resumably.

Worker threads each own a sandbox; the main thread alone talks to the gradebook, one
submission at a time, so SQLite and PostgreSQL see one writer and every submission is
either fully recorded or not at all. After a submission's grades are committed a small
state file (autograder/results.py) records its status and the digest of what was graded;
a re-run skips submissions whose digest is unchanged, so a killed batch resumes where it
stopped and nothing is counted twice.
"""
from __future__ import annotations

import concurrent.futures
import functools
import hashlib
import json
import os
import queue
import resource
import sys
import threading
from pathlib import Path

from coursebase import markers
from coursebase.model import Course

from .judge import NotebookResult, Reference, RunView, TestResult, describe_end
from .notebook_runs import NotebookRuns, load_tools, outcomes
from .notebook_runs import extra_files as _extra_files
from .plan import AssignmentSpec, UnreadableNotebook, build_plan, load_spec, read_submission
from .probes import ProbeFormError
from .progress import ProgressBar
from .results import STATE_FILE, SubmissionRow, final_digest
from .sandbox import Limits, RunOutcome, Sandbox, SandboxError, close_early, reap_namespaces, take_early
from .student_seeds import PER_RUN, course_secret, per_student_hidden, revealed_tests, student_seed

# The grader's code a reference run depends on: a change to any of them runs it again.
REFERENCE_CODE = ("harness.py", "observe.py", "plan.py", "probes.py", "zygote.py", "forbidden.py", "structure.py",
                  "tools.py")
GRADER_VERSION = "1"


class GradingError(RuntimeError):
    """The batch cannot start (unknown assignment, no sandbox...)."""


def _digest(*parts: bytes) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(hashlib.sha256(part).digest())
    return hasher.hexdigest()


class Grader:
    def __init__(self, course: Course, assignment: str, workers: int | None = None,
                 limits: Limits | None = None, force: bool = False, students: list[str] | None = None):
        self.course = course
        self.assignment = assignment
        self.workers = max(1, workers or os.cpu_count() or 1)
        self.limits = limits or Limits.of_course(course.config)
        self.force = force
        self.only = set(students or [])
        source = course.source_notebook(assignment)
        if not source.is_file():
            raise GradingError(f"No source notebook for assignment {assignment!r} at {source}")
        try:
            self.spec = load_spec(assignment, source.stem, source, markers.course_markers(course.root))
        except ProbeFormError as error:  # e.g. a test cell in the old assert form: refused, not guessed
            raise GradingError(f"cannot grade {assignment}: {error}") from None
        self.spec_digest = _digest(source.read_bytes(), GRADER_VERSION.encode())
        self.with_torch = not self.spec.forbids_torch
        self.runs = NotebookRuns(self.spec, self.with_torch, lambda: load_tools(self.spec), self.limits)
        self.kinds = self.runs.kinds   # with torch (True) and/or without (False)
        self.pid_namespaces: set[str] = set()
        # Wait, after a batch, until the kernel has torn down every sandbox (a second or two;
        # they are killed either way). The command line has nothing to wait for.
        self.wait_for_teardown = True
        self._progress = None  # the batch's ProgressBar, told when a worker starts a student
        self._lock = threading.Lock()
        self._begun = 0           # tasks of the local batch that took their sandboxes
        self._stopping = threading.Event()   # the batch is over (or interrupted): no more retries
        self.per_student = per_student_hidden(course)   # each student's own hidden cases
        self._seeds: dict[str, int] = {}    # students whose own cases the kept reference holds -> seed
        self._drawing = threading.Lock()

    def submissions(self) -> list[str]:
        students = []
        root = self.course.submitted_root
        if root.is_dir():
            for entry in sorted(root.iterdir()):
                if (entry / self.assignment).is_dir() and (not self.only or entry.name in self.only):
                    students.append(entry.name)
        return students

    def _kept_reference(self):
        """What the reference run needs (the files beside the instructor's notebook), its key,
        and the copy an earlier batch kept under that key (None when there is none)."""
        files = self._reference_files()
        key = self._reference_key(files)
        return files, key, self._cached_reference(key)

    def reference(self, sandbox: Sandbox | None, kept=None) -> Reference:
        """The instructor's notebook, run once per batch: every case with its expected value
        (which never goes into a student's process). Kept across batches in the autograded
        folder while nothing it depends on changed (see :meth:`_reference_key`); ``sandbox``
        may be None when that copy is there. ``kept``: :meth:`_kept_reference`, if already read."""
        plan = build_plan(self.spec, None)
        files, key, cached = kept or self._kept_reference()
        self._key, self._files = key, files
        if cached is not None:
            return Reference.of(plan, cached)
        job = {"cells": plan.cells, "files": files, "reference": True}
        if sandbox is None:
            sandbox = Sandbox(self.limits, True)
            try:
                outcome = sandbox.run(job)
            finally:
                sandbox.close()
        else:
            outcome = sandbox.run(job)
        reference = Reference.of(plan, outcome)
        self._seeds = {}
        self._store_reference(key, reference)
        self._key = key
        return reference

    def draw_for(self, reference: Reference, students: list[str], boxes: list[Sandbox]) -> Reference:
        """``reference`` with each of ``students``' own hidden cases (see student_seeds.py), drawn
        in reference runs of PER_RUN students, one per sandbox at a time, and kept with it."""
        if not self.per_student or not students:
            return reference
        with self._drawing:
            secret = course_secret(self.course)
            wanted = {s: student_seed(secret, self.assignment, s) for s in students}
            missing = {s: seed for s, seed in wanted.items() if self._seeds.get(s) != seed}
            if not missing:
                return reference
            names = sorted(missing)
            size = max(1, min(PER_RUN, -(-len(names) // max(1, len(boxes)))))   # every sandbox draws
            chunks = [{s: missing[s] for s in names[k:k + size]} for k in range(0, len(names), size)]
            plan = build_plan(self.spec, None)
            free: queue.SimpleQueue = queue.SimpleQueue()
            for box in boxes:
                free.put(box)

            def draw(chunk):
                box = free.get()
                try:
                    return chunk, box.run({"cells": plan.cells, "files": self._files, "reference": True, "seeds": chunk})
                except SandboxError:
                    return chunk, None
                finally:
                    free.put(box)
            with concurrent.futures.ThreadPoolExecutor(max(1, min(len(boxes), len(chunks)))) as pool:
                drawn = list(pool.map(draw, chunks))
            kept = [m for m in reference.outcome.messages if m.get("seed") not in missing]
            for chunk, outcome in drawn:
                if outcome is None or describe_end(outcome, RunView.of(outcome), plan, self.limits) != "ok":
                    continue   # these students keep the shared hidden cases (tried again next batch)
                kept += [m for m in outcome.messages if m.get("t") in ("call", "seed_error") and m.get("seed") in chunk]
                self._seeds.update(chunk)
            updated = Reference.of(reference.plan, RunOutcome(messages=kept, end=reference.outcome.end))
            self._store_reference(self._key, updated)
            return updated

    def _reference_key(self, files) -> str:
        """What the reference run depends on: the instructor's notebook and files, the code
        that runs it and the versions of the libraries that draw and compute the cases."""
        from importlib.metadata import version

        code = b"".join((Path(__file__).parent / name).read_bytes() for name in REFERENCE_CODE) + \
            Path(markers.__file__).read_bytes()   # which lines of a test cell are hidden
        versions = " ".join(f"{name}={version(name)}" for name in ("torch", "numpy", "hypothesis"))
        return _digest(self.course.source_notebook(self.assignment).read_bytes(), json.dumps(files).encode(),
                       code, versions.encode(), sys.version.encode(), GRADER_VERSION.encode())

    def _reference_path(self) -> Path:
        return self.course.autograded_root / f".reference-{self.assignment}.json"

    def _cached_reference(self, key: str) -> RunOutcome | None:
        try:
            saved = json.loads(self._reference_path().read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(saved, dict) or saved.get("key") != key:
            return None
        seeds = saved.get("seeds")
        self._seeds = {k: v for k, v in seeds.items() if isinstance(v, int)} if isinstance(seeds, dict) else {}
        return RunOutcome(messages=saved["messages"], end=saved["end"])

    def _store_reference(self, key: str, reference: Reference) -> None:
        outcome = reference.outcome
        if describe_end(outcome, reference.view, reference.plan, self.limits) != "ok" or outcome.grader_fault:
            return  # only a clean run is worth keeping
        path = self._reference_path()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            temporary = path.with_suffix(".tmp")
            temporary.write_text(json.dumps({"key": key, "messages": outcome.messages, "end": outcome.end,
                                             "seeds": self._seeds}))
            os.replace(temporary, path)
        except OSError:
            pass  # no copy kept: the next batch runs it again

    def grade_one(self, sandboxes: dict[bool, Sandbox], student: str, reference: Reference) -> SubmissionRow:
        from . import autograded_notebook   # nbconvert and bleach: imported while the sandboxes start
        folder = self.course.submitted_root / student / self.assignment
        path = folder / f"{self.spec.notebook}.ipynb"
        raw = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
        digest = _digest(raw, self.spec_digest.encode())
        tests_zero = [TestResult(c.grade_id, 0.0, c.points, False, "") for c in self.spec.tests]
        try:
            if folder.is_symlink() or folder.parent.is_symlink():
                raise UnreadableNotebook("unreadable notebook: the submission folder is a symbolic link")
            if not path.is_file() and not path.is_symlink():
                raise UnreadableNotebook(f"no submitted notebook {path.name}")
            submission = read_submission(path)
        except UnreadableNotebook as error:
            for test in tests_zero:
                test.message = str(error)
            row = self._row(student, NotebookResult(str(error), str(error), tests_zero), digest)
            row.autograded, _ = autograded_notebook.build(self.spec, None)
            return row
        plan = build_plan(self.spec, submission)
        files = _extra_files(folder, path.name)
        if self.per_student and student not in reference.students_drawn():
            # not drawn with the batch (a Dask worker, a draw that failed): this student's alone
            boxes = [sandboxes[True]] if True in sandboxes else []
            reference = self.draw_for(reference, [student], boxes) if boxes else reference
        reveal = revealed_tests(self.course, self.assignment, [c.grade_id for c in self.spec.tests])
        result, runs = self.runs.run(sandboxes, plan, files, reference.for_student(student), reveal)
        row = self._row(student, result, digest)
        row.grader_fault = next((outcome.grader_fault for outcome in outcomes(runs) if outcome.grader_fault), "")
        try:
            row.autograded, notes = autograded_notebook.build(self.spec, submission)
        except Exception as error:  # noqa: BLE001 - the grade stands; formgrader shows no cells, and says why
            row.autograded, _ = autograded_notebook.build(self.spec, None)
            notes = [f"autograded notebook left empty: {type(error).__name__}: {error}"[:200]]
        if notes:
            row.message = "; ".join([row.message, *notes[:5]] + ([f"{len(notes) - 5} more"] if len(notes) > 5 else []))
        unprepared = [outcome for outcome in outcomes(runs)
                      if outcome.end is not None and outcome.end.get("setup") is not True]
        if unprepared:
            # Nothing of the notebook ran: say so rather than how the broken child exited.
            row.status = f"not graded: {unprepared[0].grader_fault}"
            row.message = "; ".join([row.status] + plan.notes)
        return row

    def _row(self, student, result: NotebookResult, digest) -> SubmissionRow:
        return SubmissionRow(student, result.score, result.max_score, result.status, result.message,
                             result.tests, digest)

    def _done_already(self, student: str) -> bool:
        if self.force:
            return False
        recorded = final_digest(self.course, self.assignment, student)
        path = self.course.submitted_root / student / self.assignment / f"{self.spec.notebook}.ipynb"
        try:
            raw = path.read_bytes() if path.is_file() else b""
        except OSError:
            return False
        return recorded is not None and recorded == _digest(raw, self.spec_digest.encode())

    def run(self, progress_stream=None) -> list[SubmissionRow]:
        from .results import GradebookWriter

        students = self.submissions()
        if not students:
            return []
        self._stopping.clear()
        # Sandboxes are launched first (importing torch in them is most of a batch's fixed
        # cost), for every student; those not needed once the finished ones are known are
        # closed again.
        sandboxes = [{kind: take_early(self.limits, kind) for kind in self.kinds}
                     for _ in range(min(self.workers, len(students)))]
        # The reference run computes expectations (torch as the oracle): always with torch.
        reference_box = sandboxes[0].get(True) or take_early(self.limits, True)
        everything = [box for boxes in sandboxes for box in boxes.values()] + \
            ([] if True in sandboxes[0] else [reference_box])
        previous_limit = _cap_own_memory()
        starting: list = []
        writer = pool = None
        rows: dict[str, SubmissionRow] = {}
        try:
            starting = _start_all(everything)
            writer = GradebookWriter(self.course, self.assignment, self.spec)
            pending, rows = self.split_done(writer, students)
            if not pending:
                return [rows[s] for s in students]
            # Fewer submissions wait than there are workers (a late one after a batch): the
            # surplus sandboxes, still starting, are closed for good; their start-up threads
            # then fail, which says nothing about the sandboxes the batch keeps.
            for boxes in sandboxes[len(pending):]:
                for box in boxes.values():
                    box.close(reap=False, retire=True)
            sandboxes = sandboxes[:len(pending)]
            # The host imports torch (for the grading tools) while the sandboxes start. The
            # reference run, when not kept from an earlier batch, goes first on its own.
            self.runs.tools  # noqa: B018 - loads them now
            kept = self._kept_reference()
            cached = kept[2]
            if cached is None:
                _finish_starting([entry for entry in starting if entry[2] is reference_box])
            reference = self.reference(None if cached is not None else reference_box, kept)
            self._check_reference(reference)
            _finish_starting(starting)
            if self.per_student:   # every waiting student's own hidden cases, on every sandbox with torch
                torch_boxes = [reference_box] + [boxes[True] for boxes in sandboxes
                                                 if True in boxes and boxes[True] is not reference_box]
                reference = self.draw_for(reference, pending, torch_boxes)
            pool = concurrent.futures.ThreadPoolExecutor(len(sandboxes), thread_name_prefix="grade")
            free: queue.SimpleQueue = queue.SimpleQueue()   # each task takes a worker's sandboxes
            for boxes in sandboxes:
                free.put(boxes)
            self._begun = 0
            grade = functools.partial(self._grade_on_free_sandboxes, free, len(pending), reference)
            self.grade_batch(writer, pending, rows, pool, grade, f"grading {self.assignment}", progress_stream)
        finally:
            self._stopping.set()
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
            for box in everything:   # a sandbox still starting, or running a notebook, fails fast once killed
                box.close(reap=False, retire=True)
            for thread, _, _ in starting:
                thread.join()
            for box in everything:
                box.close(reap=False)
                self.pid_namespaces |= box.pid_namespaces - {""}
            self.pid_namespaces |= close_early() - {""}
            if self.wait_for_teardown:
                reap_namespaces(self.pid_namespaces)   # all at once: each takes the kernel a second or two
            if pool is not None:
                pool.shutdown(wait=True)
            if writer is not None:
                writer.close()
            resource.setrlimit(resource.RLIMIT_AS, previous_limit)
        return [rows[s] for s in students]

    def grade_batch(self, writer, pending: list[str], rows: dict[str, SubmissionRow], executor, grade,
                    label: str, progress_stream=None) -> None:
        """The one loop of a batch, here or on Dask: ``grade(student)`` for every pending
        student on ``executor`` (threads with a sandbox each here; Dask's executor on a
        cluster), each row committed by this thread alone as it finishes, and shown."""
        self._progress = bar = ProgressBar(len(pending), label, progress_stream)
        futures = [executor.submit(grade, student) for student in pending]
        try:
            for future in concurrent.futures.as_completed(futures):
                row = future.result()  # a GradingError on a Dask worker stops the batch here
                writer.commit(row)
                rows[row.student] = row
                bar.advance(row)
        finally:
            for future in futures:
                future.cancel()

    def _reference_files(self):
        return _extra_files(self.course.source_notebook(self.assignment).parent, self.spec.notebook + ".ipynb")

    def split_done(self, writer, students: list[str]) -> tuple[list[str], dict[str, SubmissionRow]]:
        """(students still to grade, rows of those graded already and unchanged since)."""
        pending = [s for s in students if not (self._done_already(s) and writer.has_submission(s))]
        rows = {s: writer.kept_row(s) for s in students if s not in pending}
        return pending, rows

    def _check_reference(self, reference: Reference) -> None:
        status = describe_end(reference.outcome, reference.view, reference.plan)
        if status != "ok":
            raise GradingError(f"the instructor's solution for {self.assignment} does not run cleanly "
                               f"in the sandbox: {status}")

    def _grade_on_free_sandboxes(self, free: queue.SimpleQueue, total: int, reference: Reference,
                                 student: str) -> SubmissionRow:
        """One task of the local batch: as many run at once as there are workers, so a set of
        sandboxes is always free."""
        sandboxes = free.get()
        with self._lock:
            self._begun += 1
        if self._progress is not None:
            self._progress.start(student)
        try:
            return self.grade_one_safely(sandboxes, student, reference)
        finally:
            with self._lock:
                done_with_them = self._begun == total
            if done_with_them:   # no more work: the kernel tears them down while the last rows are written
                for box in sandboxes.values():
                    box.close(reap=False)
            else:
                free.put(sandboxes)

    def grade_one_safely(self, sandboxes: dict[bool, Sandbox], student: str, reference: Reference) -> SubmissionRow:
        """grade_one, with the grader's own failure turned into a row, tried once more on fresh
        sandboxes when it may be the grader's fault: one bad submission never stops the batch
        (threads here, Dask workers in autograder/distributed.py)."""
        row = self._grade_guarded(sandboxes, student, reference)
        if row.grader_fault and not self._stopping.is_set():
            # Perhaps the sandbox's trouble, not the notebook's: once more, on a fresh one.
            for box in sandboxes.values():
                box.close(reap=False)
            row = self._grade_guarded(sandboxes, student, reference)
        return row

    def _grade_guarded(self, sandboxes: dict[bool, Sandbox], student: str, reference: Reference) -> SubmissionRow:
        try:
            return self.grade_one(sandboxes, student, reference)
        except Exception as error:  # noqa: BLE001 - one bad submission never stops the batch
            zero = [TestResult(c.grade_id, 0.0, c.points, False, "internal grader error") for c in self.spec.tests]
            why = f"grader error: {type(error).__name__}: {error}"[:300]
            return SubmissionRow(student, 0.0, self.spec.max_score, why, why, zero, grader_fault=why)



def _start_all(boxes: list[Sandbox]) -> list[tuple[threading.Thread, list, Sandbox]]:
    """Start sandboxes: launched from this (long-lived) thread, waited for in parallel
    threads; :func:`_finish_starting` waits for them and raises the first failure."""
    starting = []
    for box in boxes:
        errors: list = []
        if box.process is None:   # not launched early
            box.launch()

        def start(box=box, errors=errors):
            try:
                box.wait_ready()
            except Exception as error:  # noqa: BLE001 - raised again in the batch's thread
                errors.append(error)
        thread = threading.Thread(target=start, daemon=True)
        thread.start()
        starting.append((thread, errors, box))
    return starting


def _finish_starting(starting) -> None:
    for thread, errors, box in starting:
        thread.join()
        if errors and not box.retired:   # a retired box was closed on purpose while it started
            raise errors[0]


def _cap_own_memory(headroom: int = 8 * 1024**3) -> tuple[int, int]:
    """Judging recomputes checks on values the runs sent; a value built to blow up (a huge
    outer product) must fail that check with a MemoryError, not take the host down.
    Only the soft limit is lowered, so the sandboxes can still set their own."""
    import psutil

    previous = resource.getrlimit(resource.RLIMIT_AS)
    soft = psutil.Process().memory_info().vms + headroom
    if previous[1] != resource.RLIM_INFINITY:
        soft = min(soft, previous[1])
    if previous[0] == resource.RLIM_INFINITY or previous[0] > soft:
        resource.setrlimit(resource.RLIMIT_AS, (soft, previous[1]))
    return previous

