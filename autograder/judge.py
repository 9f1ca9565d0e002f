"""On the host: points per test cell from a student's runs and the reference run.

A test cell earns its points when, in the student's run, its probes ran and every case the
reference run recorded has a result that the instructor's ``mismatch`` (run here, on the
host, on rebuilt values) finds equal to the expected value. Points already earned survive a
later crash, timeout or exit.

What the student is shown comes only from the *visible* part of a run: the cells, the
visible cases and how the run ended, all before any hidden case reached the sandbox. A
hidden case's result is only right or wrong; a test cell that fails on one says so in
fixed words, with nothing its input, the expected value or the student's code chose (no
exception text, no value, not even which case or how many). So nothing a submission does
with a hidden case can carry it back to the student; at most a test cell's own pass or
fail, at the price of its points.
"""
from __future__ import annotations

import dataclasses
import signal
from dataclasses import dataclass, field

from .plan import AssignmentSpec, Plan
from .sandbox import Limits, RunOutcome

HIDDEN = "[hidden test]"
HIDDEN_FAILED = ("passed the visible checks, not every hidden check (hidden checks try other inputs; "
                 "their inputs, expected values and your results are not shown)")
HIDDEN_PARTIAL = "the wrong ones are hidden checks (not shown)"
# After the due date, where the course's reveal policy says so (c.CourseGrading.reveal_hidden):
# the first failing hidden check of a test, which was drawn for this student alone.
HIDDEN_REVEALED = "failed a hidden check (shown because the due date has passed)"

HINTS = {
    "not_implemented": "Replace `raise NotImplementedError()` in the answer cell above with your code.",
    "not_defined": "Run (and keep) the answer cell that defines this name; check its spelling.",
    "cell_error": "Fix the error named here first: the test used what that cell should have defined.",
    "not_run": "This test never ran: your notebook stopped earlier (see the run's status above).",
    "stopped": "Your code stopped during this test: look for an endless loop, or a result that takes "
               "too much time or memory.",
    "timeout": "Your code ran past this test's time limit: look for an endless loop, or work that grows "
               "too fast with the input (the tests after it still ran).",
    "raised": "Your code raised an exception for this input: try the input from the message yourself.",
    "wrong": "Compare your result with the expected value in the message; try that input yourself.",
    "unusable": "Return plain values (numbers, strings, lists, dicts, tensors), as the question asks.",
    "hidden": "Hidden checks use other inputs than the visible ones: test your code on more cases "
              "(other shapes, sizes, signs, edge cases) than the examples above.",
    "reference": "Not your fault: the instructor's test is broken; tell the instructor.",
}


@dataclass
class TestResult:
    grade_id: str
    points: float
    max_points: float
    passed: bool
    message: str
    hint: str = ""
    # The verdict rests on hidden checks (visible ones passed): Validate cannot see it.
    hidden: bool = False


@dataclass
class NotebookResult:
    status: str                      # "ok" or a short reason (timed out at cell N, ...)
    message: str                     # one line for the export, reasons joined
    tests: list[TestResult] = field(default_factory=list)

    @property
    def score(self) -> float:
        return sum(t.points for t in self.tests)

    @property
    def max_score(self) -> float:
        return sum(t.max_points for t in self.tests)


@dataclass
class RunView:
    """One run's messages, grouped by cell: the visible part, and the hidden cases' results."""
    started: set[int] = field(default_factory=set)
    ended: dict[int, tuple[bool, str]] = field(default_factory=dict)
    calls: dict[int, list[dict]] = field(default_factory=dict)        # reference run: cases
    # reference run: each student's own hidden cases, cell -> student -> cases, and the
    # (cell, student) whose draw failed (that student keeps the shared hidden cases)
    seeded: dict[int, dict[str, list[dict]]] = field(default_factory=dict)
    seed_errors: set = field(default_factory=set)
    outs: dict[int, dict[int, dict]] = field(default_factory=dict)    # student run: visible results
    hidden_outs: dict[int, dict[int, dict]] = field(default_factory=dict)
    hidden_started: set[int] = field(default_factory=set)            # hidden part: cells begun
    done: bool = False
    visible_done: bool = False
    harness_error: str = ""
    last_started: int | None = None

    @classmethod
    def of(cls, outcome: RunOutcome, hidden: RunOutcome | None = None) -> "RunView":
        """``hidden``: a separate run that only ran hidden cases (every message of it counts as
        hidden); otherwise the hidden results are what ``outcome`` sent after ``visible_done``."""
        view = cls()
        boundary = outcome.visible_end if outcome.visible_end is not None else len(outcome.messages)
        for message in outcome.messages[:boundary]:
            kind, cell = message.get("t"), message.get("cell")
            if kind == "start" and type(cell) is int:
                view.started.add(cell)
                view.last_started = cell
            elif kind == "end" and type(cell) is int and cell not in view.ended:
                error = message.get("error")
                view.ended[cell] = (message.get("ok") is True, error if isinstance(error, str) else "")
            elif kind == "call" and type(cell) is int and isinstance(message.get("seed"), str):
                view.seeded.setdefault(cell, {}).setdefault(message["seed"], []).append(message)
            elif kind == "call" and type(cell) is int:
                view.calls.setdefault(cell, []).append(message)
            elif kind == "seed_error" and type(cell) is int and isinstance(message.get("seed"), str):
                view.seed_errors.add((cell, message["seed"]))
            elif kind == "out" and type(cell) is int and type(message.get("n")) is int:
                view.outs.setdefault(cell, {}).setdefault(message["n"], message)
            elif kind == "done":
                view.done = True
            elif kind == "harness_error" and isinstance(message.get("error"), str):
                view.harness_error = message["error"][:300]
        view.visible_done = outcome.visible_end is not None
        rest = outcome.messages[boundary:] + (hidden.messages if hidden is not None else [])
        for message in rest:
            cell = message.get("cell")
            if message.get("t") == "out" and type(cell) is int and type(message.get("n")) is int:
                view.hidden_outs.setdefault(cell, {}).setdefault(message["n"], message)
            elif message.get("t") == "hidden_start" and type(cell) is int:
                view.hidden_started.add(cell)
            elif message.get("t") == "done" and view.visible_done:
                view.done = True
        return view


@dataclass(frozen=True)
class Reference:
    """The instructor's notebook run once per batch (autograder/grade.py) or per trusted copy
    (autograder/validate.py): its plan, how it ran, and what every student run and verdict
    reads from it, derived here once."""
    plan: Plan
    outcome: RunOutcome
    view: RunView
    # grade_id -> (visible cases, hidden cases), each as [n, probe, arguments]
    cases: dict[str, tuple[list, list]]

    @classmethod
    def of(cls, plan: Plan, outcome: RunOutcome, view: RunView | None = None) -> "Reference":
        view = view or RunView.of(outcome)
        cases = {}
        for grade_id, index in plan.test_index.items():
            calls = view.calls.get(index, [])
            cases[grade_id] = tuple([[call.get("n"), call.get("probe"), call.get("args")]
                                     for call in calls if (call.get("hidden") is True) == hidden]
                                    for hidden in (False, True))
        return cls(plan, outcome, view, cases)

    def students_drawn(self) -> set[str]:
        """The students whose own hidden cases this reference holds (or tried to draw)."""
        return {student for by_student in self.view.seeded.values() for student in by_student} | \
            {student for _, student in self.view.seed_errors}

    def for_student(self, student: str) -> "Reference":
        """This reference as one student meets it: the visible cases, and in each test cell
        the hidden cases drawn from that student's seed, where they were drawn and the
        instructor's solution passes them all (otherwise the shared hidden cases)."""
        if not self.view.seeded:
            return self
        calls = {}
        for index, shared in self.view.calls.items():
            own = self.view.seeded.get(index, {}).get(student)
            usable = own and (index, student) not in self.view.seed_errors and not any(c.get("ref_error") for c in own)
            calls[index] = [c for c in shared if c.get("hidden") is not True] + own if usable else shared
        view = dataclasses.replace(self.view, calls=calls, seeded={}, seed_errors=set())
        return Reference.of(self.plan, self.outcome, view)


def _mib(size: int) -> str:
    return f"{size / 1024**2:g} MiB"


def describe_end(outcome: RunOutcome, view: RunView, plan: Plan, limits: Limits | None = None) -> str:
    """'ok' or why the visible part of the run stopped early, naming the cell (1-based, code
    cells) and the limit. What happened after ``visible_done`` is never described here."""
    limits = limits or Limits()

    def where():
        if view.last_started is None:
            return ""
        cells = [c for c in plan.cells if c["index"] == view.last_started]
        named = f" ({cells[0]['grade_id']})" if cells and cells[0].get("grade_id") else ""
        return f" at cell {view.last_started + 1}{named}"
    if not view.visible_done:
        trouble = _trouble(outcome, view, limits, where)
        if trouble:
            return trouble
    memory = [i for i, (ok, error) in sorted(view.ended.items())
              if not ok and ("MemoryError" in error or "can't allocate memory" in error)]
    if memory:
        return f"memory limit at cell {memory[0] + 1}: the notebook asked for more than {_mib(limits.memory_bytes)}"
    return "ok"


def _trouble(outcome: RunOutcome, view: RunView, limits: Limits, where) -> str:
    if outcome.overflow:
        return (f"output limit: the notebook sent more than {_mib(limits.observation_bytes)} of results "
                f"(or results that take more than {_mib(limits.parsed_bytes)} to read)")
    end = outcome.end
    if end is None:
        return f"sandbox stopped responding{where()}"
    if end.get("how") == "cell_timeout":
        return f"timed out{where()}: the cell ran longer than its {limits.per_cell:g} s time limit"
    if end.get("how") == "timeout":
        return f"timed out{where()}: the notebook ran longer than its {limits.wall_seconds:g} s time limit"
    if end.get("how") == "signal":
        number = end.get("signal")
        if number in (signal.SIGXCPU, signal.SIGKILL) and view.last_started is not None:
            if number == signal.SIGXCPU:
                return f"CPU time limit{where()}: more than {limits.cpu_seconds} s of CPU time"
            return (f"killed{where()}: over the memory limit ({_mib(limits.memory_bytes)}) "
                    f"or the CPU time limit ({limits.cpu_seconds} s)")
        try:
            name = signal.Signals(number).name
        except (ValueError, TypeError):
            name = f"signal {number}"
        return f"kernel died{where()} ({name})"
    if view.harness_error:
        return f"could not run: {view.harness_error}"
    if not view.done:
        return f"notebook exited{where()} (exit code {end.get('code')})"
    return ""


def _redact(text: str, hidden_lines: list[str]) -> str:
    for line in hidden_lines:
        if line and line in text:
            text = text.replace(line, HIDDEN)
    return " ".join(text.split())[:500]


def cell_name(plan: Plan, index: int) -> str:
    """'answer cell X', or for a cell of the student's own 'your code cell N (after X)'
    (N counts code cells only, as the run does)."""
    cells = [c for c in plan.cells if c["index"] == index]
    grade_id = cells[0].get("grade_id") if cells else None
    if grade_id:
        return f"{'read-only' if cells[0].get('locked') else 'answer'} cell {grade_id}"
    before = [c.get("grade_id") for c in plan.cells if c["index"] < index and c.get("grade_id")]
    return f"your code cell {index + 1}" + (f" (after {before[-1]})" if before else "")


def student_cell_errors(view: RunView, plan: Plan, before: int | None = None) -> list[tuple[int, str]]:
    """(index, 'answer cell X raised E (line L)') for each of the student's cells that failed
    in the visible part of the run, before cell ``before`` when given."""
    kinds = {c["index"]: c["kind"] for c in plan.cells}
    found = []
    ended = {**view.ended, **{index: (False, "") for index in plan.skipped}}
    for index, (ok, error) in sorted(ended.items()):
        if before is not None and index >= before:
            break
        if index in plan.skipped and kinds.get(index) == "code":
            found.append((index, f"{cell_name(plan, index)} {plan.skipped[index][1]}"))
        elif not ok and kinds.get(index) == "code" and not error.startswith("NotImplementedError"):
            found.append((index, f"{cell_name(plan, index)} raised {error or 'an error'}"))
    return found


def _stops(plan: Plan) -> list[str]:
    """The run's news for each cell left out of it: '<cell> timed out ...; ran again without it'."""
    found = []
    for index, (how, why) in sorted(plan.skipped.items()):
        cells = [c for c in plan.cells if c["index"] == index]
        named = f" ({cells[0]['grade_id']})" if cells and cells[0].get("grade_id") else ""
        found.append(f"{how} at cell {index + 1}{named}: it {why}; the notebook ran again without it")
    return found


def judge_notebook(spec: AssignmentSpec, plan: Plan, runs: list, reference: Reference,
                   tools: dict, limits: Limits | None = None, reveal: frozenset = frozenset()) -> NotebookResult:
    """``runs``: the student's runs, one per kind (with torch, without), each as
    ``(variant of plan, outcome)`` or ``(variant, outcome, hidden-only outcome)``; every test
    cell is in exactly one of them. ``reveal``: the test cells whose failing hidden check may be
    shown (after the due date, by the course's policy)."""
    ref_view = reference.view
    views, statuses, errors = {}, [], None
    for run in runs:
        variant, outcome = run[0], run[1]
        view = RunView.of(outcome, run[2] if len(run) > 2 else None)
        run_status = describe_end(outcome, view, variant, limits)
        for stop in _stops(variant) + [run_status]:
            if stop not in statuses:
                statuses.append(stop)
        for grade_id in variant.test_index:
            views[grade_id] = (view, run_status, variant)
        # A cell's error is the run's news only when it happened in every kind of run (an
        # answer to a torch question fails without torch, as it should).
        failed = {index: text for index, text in student_cell_errors(view, variant)}
        errors = failed if errors is None else {i: t for i, t in errors.items() if i in failed}
    failures = [s for s in statuses if s != "ok"]
    status = "; ".join(failures) if failures else "ok"
    code = _LazyCode(plan)   # the notebook's cells compiled here, for code checks (written.py)
    tests = []
    for cell in spec.tests:
        index, ref_index = plan.test_index[cell.grade_id], reference.plan.test_index[cell.grade_id]
        view, run_status, variant = views.get(cell.grade_id, (RunView(), "not run", plan))
        try:
            if index in variant.skipped:   # this test's own cell stopped an earlier run
                how, why = variant.skipped[index]
                verdict = Verdict(0.0, f"this test {why}", "timeout" if how == "timed out" else "stopped")
            else:
                verdict = judge_cell(index, view, ref_index, ref_view, tools, run_status, code,
                                     cell.grade_id in reveal)
        except Exception as error:  # noqa: BLE001 - student data the host cannot judge fails this cell, for good
            verdict = Verdict(0.0, f"your results could not be judged ({type(error).__name__})", "unusable")
        if verdict.share < 1 and verdict.category not in ("not_implemented", "hidden", "reference", "not_run",
                                                          "timeout"):
            cause = student_cell_errors(view, variant, before=index)
            if cause:
                verdict.message += f" (first error above this test: {cause[0][1]})"
                verdict.category = "cell_error" if verdict.category in ("not_defined", "raised") else verdict.category
        message = _redact(verdict.message, cell.hidden_lines)
        ok = verdict.share == 1.0
        tests.append(TestResult(cell.grade_id, round(cell.points * verdict.share, 2), cell.points, ok, message,
                                "" if ok else HINTS.get(verdict.category, ""), verdict.category == "hidden"))
    notes = [text for _, text in sorted((errors or {}).items())][:3]
    message = "; ".join([status] + notes + plan.notes)
    return NotebookResult(status=status, message=message, tests=tests)


@dataclass
class Verdict:
    share: float        # of the cell's points
    message: str
    category: str       # see HINTS


def _judge_probes(index, view: RunView, ref_index, ref_view: RunView, tools, status):
    """(share, message) of one probe-form test cell (see :func:`judge_cell`)."""
    verdict = judge_cell(index, view, ref_index, ref_view, tools, status)
    return verdict.share, verdict.message


class _LazyCode:
    """autograder.written.NotebookCode of a plan, compiled the first time a check needs it."""

    def __init__(self, plan: Plan):
        self.plan, self._code = plan, None

    def check(self, got, rule) -> str:
        from .written import NotebookCode
        if self._code is None:
            self._code = NotebookCode.of_plan(self.plan)
        return self._code.check(got, rule)


def judge_cell(index, view: RunView, ref_index, ref_view: RunView, tools, status, code=None,
               reveal: bool = False) -> Verdict:
    """A probe-form test: every case's result, compared on the host with its expected value.

    Visible cases are judged with their messages; a hidden case only right or wrong. The
    share is 0 or 1, or a fraction when the cell's checks ask for partial credit (each case
    compared with an expected value earns an equal share; cases that only check the form
    count when the cell has no other)."""
    ref_ok, ref_error = ref_view.ended.get(ref_index, (False, "did not run"))
    if not ref_ok:
        return Verdict(0.0, f"the instructor's solution fails this test ({ref_error or 'did not finish'})",
                       "reference")
    calls = ref_view.calls.get(ref_index, [])
    if not calls:  # a test that checks nothing must not give points away
        return Verdict(0.0, "the instructor's test recorded no cases (no check(...) call ran)", "reference")
    for call in calls:
        if call.get("ref_error"):
            return Verdict(0.0, f"the instructor's solution fails this test ({call.get('what')}: "
                                f"{call['ref_error']})", "reference")
    if index not in view.started:
        return Verdict(0.0, f"not run: {status}" if status != "ok" else "not run", "not_run")
    if index not in view.ended:
        return Verdict(0.0, f"the notebook stopped during this test: {status}", "stopped")
    ok, error = view.ended[index]
    if not ok:
        return Verdict(0.0, error or "failed", _category_of_error(error))
    partial = any(isinstance(call.get("how"), dict) and call["how"].get("partial") is True for call in calls)
    outs, hidden_outs = view.outs.get(index, {}), view.hidden_outs.get(index, {})
    first_wrong, first_category, right, wrong_hidden, first_hidden = "", "", {}, False, ""
    for call in calls:
        if call.get("hidden") is True:
            reason, _ = _case_mismatch(call, hidden_outs.get(call.get("n")), tools["mismatch"], code)
            right[id(call)] = not reason
            wrong_hidden = wrong_hidden or bool(reason)
            first_hidden = first_hidden or reason
            continue
        reason, category = _case_mismatch(call, outs.get(call.get("n")), tools["mismatch"], code)
        right[id(call)] = not reason
        if reason and not first_wrong:
            first_wrong, first_category = reason, category
            if not partial:
                return Verdict(0.0, reason, category)
    hidden_message = f"{HIDDEN_REVEALED}: {first_hidden}" if reveal and first_hidden else HIDDEN_FAILED
    if not partial:
        return Verdict(0.0, hidden_message, "hidden") if wrong_hidden else Verdict(1.0, "passed", "passed")
    compared = [c for c in calls if not c.get("form_only")] or calls
    count = sum(1 for c in compared if right[id(c)])
    share = count / len(compared)
    if share == 1.0 and all(right.values()):
        return Verdict(1.0, "passed", "passed")
    if first_wrong:
        return Verdict(share, f"{count} of {len(compared)} right; {first_wrong}", first_category)
    shown = f"{HIDDEN_REVEALED}: {first_hidden}" if reveal and first_hidden else HIDDEN_PARTIAL
    return Verdict(share, f"{count} of {len(compared)} right; {shown}", "hidden")


def _category_of_error(error: str) -> str:
    if error.startswith("NotImplementedError"):
        return "not_implemented"
    if error.startswith("NameError") or "is not defined" in error:
        return "not_defined"
    return "raised"


def _case_mismatch(call: dict, out: dict | None, mismatch, code=None) -> tuple[str, str]:
    """(why the student's result for one case is wrong, its category); ("", "passed") when right.

    The message may show the case's input and expected value: only visible cases' messages
    are ever shown."""
    what = call.get("what") if isinstance(call.get("what"), str) else "a check"
    if out is None:
        return f"{what}: no result from your code", "stopped"
    if "raised" in out:
        raised = out["raised"] if isinstance(out["raised"], str) else "an exception"
        if raised.startswith("NotImplementedError"):
            return f"{what}: not answered yet (your code raised NotImplementedError)", "not_implemented"
        if raised.startswith("TestFailure: "):
            text = raised[len("TestFailure: "):]
            return text, "not_defined" if "is not defined" in text else "wrong"
        return f"{what}: your code raised {raised}", _category_of_error(raised)
    how = call.get("how") if isinstance(call.get("how"), dict) else {}
    if how.get("code") is not None:   # a code check: judged here, on the notebook's own cells
        return _code_mismatch(what, how["code"], out, code)
    if call.get("form_only"):
        return "", "passed"   # no expected value: the form is what the probe checks
    unanswered = out.get("unanswered") is True
    from .values import BadObservation, rebuild   # torch on the host: imported once the sandboxes start
    try:
        got = rebuild(out.get("value"), "s")
        expected = rebuild(call.get("expected"), "r")
    except BadObservation as error:
        return f"{what}: your code returned an unusable value ({error})", "unusable"
    except Exception as error:  # noqa: BLE001 - whatever the data, a bounded, final verdict
        return f"{what}: your code returned an unusable value ({type(error).__name__})", "unusable"
    try:
        reason = mismatch(got, expected, **_how(call.get("how")))
    except Exception as error:  # noqa: BLE001 - a value the comparison cannot handle fails
        reason = f"cannot compare ({type(error).__name__}: {_first_line(error)})"
    if reason and unanswered:   # the probe caught a blank answer's NotImplementedError
        return f"{what}: not answered yet (your code raised NotImplementedError)", "not_implemented"
    return (f"{what}: {reason}", "wrong") if reason else ("", "passed")


def _code_mismatch(what: str, rule, out: dict, code) -> tuple[str, str]:
    from .values import BadObservation, rebuild
    from .written import rule_of
    if code is None:
        return f"{what}: the grader cannot check code here", "reference"
    try:
        got = rebuild(out.get("value"), "s")
    except BadObservation as error:
        return f"{what}: your code returned an unusable value ({error})", "unusable"
    reason = code.check(got, rule_of(rule))
    return (f"{what}: {reason}", "wrong") if reason else ("", "passed")


def _how(how) -> dict:
    """The comparison options the reference run recorded (its own data, checked anyway)."""
    how = how if isinstance(how, dict) else {}
    number = lambda value, default: float(value) if type(value) in (int, float) else default  # noqa: E731
    return {"close": how.get("close") is True, "rtol": number(how.get("rtol"), 1e-4),
            "atol": number(how.get("atol"), 1e-5), "agree": number(how.get("agree"), None)}


def _first_line(error) -> str:
    try:
        text = str(error).strip().splitlines()
    except Exception:  # noqa: BLE001
        return ""
    return text[0][:200] if text else ""
