"""The runs one notebook needs, and their verdict: shared by `course grade` and `course validate`.

A notebook is run once per kind its test cells need (with torch, without), each in a fresh
child of that kind's sandbox. Each run gets its test cells' visible cases in the job; the
hidden cases follow, through their own pipe, only once the run has said that its visible
part is over (see :meth:`autograder.sandbox.Sandbox.run`). A run that stopped before then
(a crash, a timeout, an exit) gets a second, hidden-only run up to the last test cell whose
visible part it finished, so points earned before a crash are kept. Then
:func:`autograder.judge.judge_notebook` decides, on the host.
"""
from __future__ import annotations

import base64
import dataclasses
import json
import signal
import time
from pathlib import Path

from .judge import NotebookResult, Reference, RunView, judge_notebook
from .plan import AssignmentSpec, Plan
from .sandbox import Limits, RunOutcome, Sandbox, SandboxError

STATE_FILE = "grading.json"   # the grader's record beside a submission: never one of its files
# Runs of one kind per notebook: the first, and reruns that each leave out one more cell
# that stopped the run before (over its time limit, or a crash); all within the notebook's
# time limit together.
MAX_RUNS = 4
MAX_EXTRA_FILES_BYTES = 64 * 1024**2


def extra_files(folder: Path, notebook_name: str) -> list[list[str]]:
    """The files beside a notebook that its run gets (written into its working folder), up
    to MAX_EXTRA_FILES_BYTES in all."""
    files, total = [], 0
    try:
        entries = sorted(folder.rglob("*"))
    except OSError:   # a folder the grader cannot list: the notebook runs without its files
        entries = []
    for path in entries:
        relative = path.relative_to(folder).as_posix()
        if not path.is_file() or path.is_symlink() or relative == notebook_name \
                or ".ipynb_checkpoints" in relative or relative in (STATE_FILE, "timestamp.txt"):
            continue
        try:
            total += path.stat().st_size
            if total > MAX_EXTRA_FILES_BYTES:
                break
            files.append([relative, base64.b64encode(path.read_bytes()).decode()])
        except OSError:
            continue  # a file the grader cannot read is not the notebook's to use
    return files


def load_tools(spec: AssignmentSpec | None = None) -> dict:
    """The grading tools (``mismatch``) the host compares with: the grader's own module,
    imported here, never a notebook's cell nor anything of the student's process."""
    from . import tools
    return vars(tools)


class NotebookRuns:
    def __init__(self, spec: AssignmentSpec, with_torch: bool, tools, limits: Limits):
        """``tools``: the instructor's grading tools (a dict), or a function that loads them
        when first needed (they import torch on the host: seconds)."""
        self.spec, self.with_torch, self._tools, self.limits = spec, with_torch, tools, limits
        # The student runs a notebook needs: with torch (True) and/or without (False).
        self.kinds = sorted({self.kind(c.grade_id) for c in spec.tests}, reverse=True) or [with_torch]

    @property
    def tools(self) -> dict:
        if callable(self._tools):
            self._tools = self._tools()
        return self._tools

    def kind(self, grade_id: str) -> bool:
        cell = next(c for c in self.spec.tests if c.grade_id == grade_id)
        return cell.probes.torch and self.with_torch  # forbid_torch covers the whole assignment

    def variants(self, plan: Plan, reference: Reference) -> list[tuple[bool, Plan, bytes]]:
        """One plan per student run: its kind's test cells with their visible cases filled in
        from the reference, and the hidden cases to send once the visible part is over."""
        cases = reference.cases
        trusted = {c.grade_id: c for c in self.spec.tests}
        variants = []
        for kind in self.kinds:
            cells, index, hidden = [], {}, []
            for cell in plan.cells:
                grade_id = cell.get("grade_id")
                if grade_id in plan.test_index and self.kind(grade_id) != kind:
                    continue
                if cell["kind"] == "probe":
                    visible_calls, hidden_calls = cases.get(grade_id, ([], []))
                    cell = {**cell, "calls": visible_calls}
                    index[grade_id] = cell["index"]
                    if hidden_calls:
                        hidden.append({"index": cell["index"], "grade_id": grade_id, "calls": hidden_calls,
                                       "source": trusted[grade_id].probes.all_source})
                elif grade_id in plan.test_index:
                    index[grade_id] = cell["index"]
                cells.append(cell)
            variants.append((kind, Plan(cells, plan.notes, index), json.dumps({"cells": hidden}).encode()))
        return variants

    @staticmethod
    def hidden_only_job(variant: Plan, hidden: bytes, outcome: RunOutcome, files) -> dict | None:
        """When a run stopped before its hidden cases, the test cells whose visible part had
        finished still get theirs: in a second run that stops after the last of them and
        whose every message counts as hidden. When it stopped during its hidden cases (one
        over its cell's time limit), the cells after that one get theirs the same way."""
        view = RunView.of(outcome)
        if outcome.end is None or view.done or (view.visible_done and outcome.overflow):
            return None
        payload = {item["index"]: item for item in json.loads(hidden)["cells"]}
        if view.visible_done:
            started = [index for index in payload if index in view.hidden_started]
            wanted = [index for index in payload if started and index > max(started)]
        else:
            wanted = [index for index in payload if view.ended.get(index, (False, ""))[0]]
        if not wanted:
            return None
        cells = []
        for cell in variant.cells:
            if cell["index"] in variant.skipped:
                cell = {**cell, "skip": True}
            elif cell["index"] in wanted:
                item = payload[cell["index"]]
                cell = {**cell, "source": item["source"], "calls": item["calls"]}
            elif cell["kind"] == "probe":
                cell = {**cell, "calls": []}   # its hidden results, if any, came from the first run
            cells.append(cell)
        return {"cells": cells, "files": files, "hidden_only": True, "stop_after": max(wanted)}

    def run(self, sandboxes: dict[bool, Sandbox], plan: Plan, files, reference: Reference,
            reveal: frozenset = frozenset()) -> tuple[NotebookResult, list]:
        """(the verdict, the runs as (variant, outcome[, hidden-only outcome])); ``reveal``: see
        judge_notebook."""
        runs = []
        for kind, variant, hidden in self.variants(plan, reference):
            try:
                runs.append(self.run_kind(sandboxes[kind], variant, hidden, files))
            except SandboxError as error:
                runs.append((variant, RunOutcome(end=None, grader_fault=str(error))))
                plan.notes.append(str(error))
        return judge_notebook(self.spec, plan, runs, reference, self.tools, self.limits, reveal), runs

    def run_kind(self, box: Sandbox, variant: Plan, hidden: bytes, files) -> tuple:
        """One kind's runs of a notebook: when a cell stops the run before its visible part is
        over (past its own time limit, or a crash), the notebook runs again without that cell,
        so the tests after it still count; up to MAX_RUNS runs, within the notebook's time
        limit together. Then, if the hidden cases still did not run, a hidden-only run."""
        deadline = time.monotonic() + box.limits.wall_seconds
        skipped: dict[int, tuple[str, str]] = {}
        while True:
            left = max(1.0, deadline - time.monotonic())
            limits = None if not skipped else dataclasses.replace(   # a rerun: what is left of the time
                box.limits, wall_seconds=left, cpu_seconds=max(1, min(int(left), box.limits.cpu_seconds)))
            current = dataclasses.replace(variant, skipped=dict(skipped))
            cells = [{**cell, "skip": True} if cell["index"] in skipped else cell for cell in variant.cells]
            outcome = box.run({"cells": cells, "files": files}, hidden, limits)
            stopped = stopped_at(outcome, box.limits)
            if stopped is None or len(skipped) + 1 >= MAX_RUNS or deadline - time.monotonic() < 1:
                break
            skipped[stopped[0]] = stopped[1]
        again = self.hidden_only_job(current, hidden, outcome, files)
        return (current, outcome, box.run(again, b"", dataclasses.replace(
            box.limits, wall_seconds=max(1.0, deadline - time.monotonic())))) if again else (current, outcome)


def stopped_at(outcome: RunOutcome, limits: Limits) -> tuple[int, tuple[str, str]] | None:
    """(the cell, (how the run ended, what the cell did)) when one cell stopped the run before
    its visible part was over in a way a run without that cell can get past; None otherwise
    (the run finished, the notebook's own time or output limit, the grader's trouble)."""
    view = RunView.of(outcome)
    end = outcome.end
    if view.visible_done or end is None or outcome.overflow or outcome.grader_fault or view.harness_error:
        return None
    cell = view.last_started
    if cell is None or cell in view.ended:
        return None
    how = end.get("how")
    if how == "cell_timeout":
        return cell, ("timed out", f"timed out after {limits.per_cell:g} s (the time limit of one cell)")
    if how == "signal":
        number = end.get("signal")
        if number in (signal.SIGKILL, signal.SIGXCPU):
            return cell, ("killed", f"was killed: over the memory limit ({limits.memory_bytes / 1024**2:g} MiB) "
                                    "or the CPU time limit")
        try:
            name = signal.Signals(number).name
        except (ValueError, TypeError):
            name = f"signal {number}"
        return cell, ("kernel died", f"crashed the notebook's process ({name})")
    if how == "exit":
        return cell, ("notebook exited", f"ended the notebook's process (exit code {end.get('code')})")
    return None   # "timeout": the whole run's limit is spent


def outcomes(runs) -> list[RunOutcome]:
    return [run[i] for run in runs for i in range(1, len(run))]
