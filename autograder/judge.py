"""On the host: points per test cell from a student's run and the reference run.

A test cell earns its points when, in the student's run, its probes ran to the end, and
every case the reference run recorded has a result that the instructor's ``mismatch``
(run here, on the host, on rebuilt values) finds equal to the expected value. Points
already earned survive a later crash, timeout or exit.
"""
from __future__ import annotations

import signal
from dataclasses import dataclass, field

from .plan import AssignmentSpec, Plan
from .sandbox import RunOutcome
from .values import BadObservation, rebuild

HIDDEN = "[hidden test]"


@dataclass
class TestResult:
    grade_id: str
    points: float
    max_points: float
    passed: bool
    message: str
    hint: str = ""


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
    """One run's messages, grouped by cell."""
    started: set[int] = field(default_factory=set)
    ended: dict[int, tuple[bool, str]] = field(default_factory=dict)
    calls: dict[int, list[dict]] = field(default_factory=dict)        # reference run: cases
    outs: dict[int, dict[int, dict]] = field(default_factory=dict)    # student run: results
    done: bool = False
    harness_error: str = ""
    last_started: int | None = None

    @classmethod
    def of(cls, outcome: RunOutcome) -> "RunView":
        view = cls()
        for message in outcome.messages:
            kind, cell = message.get("t"), message.get("cell")
            if kind == "start" and type(cell) is int:
                view.started.add(cell)
                view.last_started = cell
            elif kind == "end" and type(cell) is int and cell not in view.ended:
                error = message.get("error")
                view.ended[cell] = (message.get("ok") is True, error if isinstance(error, str) else "")
            elif kind == "call" and type(cell) is int:
                view.calls.setdefault(cell, []).append(message)
            elif kind == "out" and type(cell) is int and type(message.get("n")) is int:
                view.outs.setdefault(cell, {}).setdefault(message["n"], message)
            elif kind == "done":
                view.done = True
            elif kind == "harness_error" and isinstance(message.get("error"), str):
                view.harness_error = message["error"][:300]
        return view


def describe_end(outcome: RunOutcome, view: RunView, plan: Plan) -> str:
    """'ok' or why the run stopped early, naming the cell (1-based, code cells)."""
    def where():
        if view.last_started is None:
            return ""
        cells = [c for c in plan.cells if c["index"] == view.last_started]
        named = f" ({cells[0]['grade_id']})" if cells and cells[0].get("grade_id") else ""
        return f" at cell {view.last_started + 1}{named}"
    if outcome.overflow:
        return "output limit: too much data sent from the notebook"
    end = outcome.end
    if end is None:
        return f"sandbox stopped responding{where()}"
    if end.get("how") == "timeout":
        return f"timed out{where()}"
    if end.get("how") == "signal":
        number = end.get("signal")
        if number in (signal.SIGXCPU, signal.SIGKILL) and view.last_started is not None:
            name = "CPU time limit" if number == signal.SIGXCPU else "killed (CPU or memory limit)"
            return f"{name}{where()}"
        try:
            name = signal.Signals(number).name
        except (ValueError, TypeError):
            name = f"signal {number}"
        return f"kernel died{where()} ({name})"
    if view.harness_error:
        return f"could not run: {view.harness_error}"
    if not view.done:
        return f"notebook exited{where()} (exit code {end.get('code')})"
    memory = [i for i, (ok, error) in sorted(view.ended.items())
              if not ok and ("MemoryError" in error or "can't allocate memory" in error)]
    if memory:
        return f"memory limit at cell {memory[0] + 1}"
    return "ok"


def _redact(text: str, hidden_lines: list[str]) -> str:
    for line in hidden_lines:
        if line and line in text:
            text = text.replace(line, HIDDEN)
    return " ".join(text.split())[:500]


def _hint(spec: AssignmentSpec, grade_id: str, message: str) -> str:
    if "NotImplementedError" in message or "not implemented" in message:
        return "Replace `raise NotImplementedError()` in the answer cell above with your code."
    if "is not defined" in message:
        return "Run (and keep) the answer cell that defines this name; check its spelling."
    if "did not reach" in message or "stopped" in message:
        return "Your code stopped before this test finished: look for an exception or a long loop."
    return "Compare your result with the expected value in the message; try that input yourself."


def judge_notebook(spec: AssignmentSpec, plan: Plan, runs: list[tuple[Plan, RunOutcome]],
                   reference_plan: Plan, reference: RunOutcome, tools: dict) -> NotebookResult:
    """``runs``: the student's runs (one per kind, with or without torch), each with the
    variant of ``plan`` it executed; every test cell is in exactly one of them."""
    ref_view = RunView.of(reference)
    views, statuses = {}, []
    for variant, outcome in runs:
        view = RunView.of(outcome)
        run_status = describe_end(outcome, view, variant)
        if run_status not in statuses:
            statuses.append(run_status)
        for grade_id in variant.test_index:
            views[grade_id] = (view, run_status)
    failures = [s for s in statuses if s != "ok"]
    status = "; ".join(failures) if failures else "ok"
    tests = []
    for cell in spec.tests:
        index, ref_index = plan.test_index[cell.grade_id], reference_plan.test_index[cell.grade_id]
        view, run_status = views.get(cell.grade_id, (RunView(), "not run"))
        share, reason = _judge_probes(index, view, ref_index, ref_view, tools, run_status)
        reason = _redact(reason, cell.hidden_lines)
        ok = share == 1.0
        tests.append(TestResult(cell.grade_id, round(cell.points * share, 2), cell.points, ok, reason,
                                "" if ok else _hint(spec, cell.grade_id, reason)))
    message = "; ".join([status] + plan.notes) if plan.notes else status
    return NotebookResult(status=status, message=message, tests=tests)


def _judge_probes(index, view: RunView, ref_index, ref_view: RunView, tools, status):
    """A probe-form test: every case's result, compared on the host with its expected value.

    Returns the share of the cell's points earned (0 or 1, or a fraction when the cell's
    checks ask for partial credit) and the reason."""
    ref_ok, ref_error = ref_view.ended.get(ref_index, (False, "did not run"))
    if not ref_ok:
        return 0.0, f"the instructor's solution fails this test ({ref_error or 'did not finish'})"
    calls = ref_view.calls.get(ref_index, [])
    if not calls:  # a test that checks nothing must not give points away
        return 0.0, "the instructor's test recorded no cases (no check(...) call ran)"
    for call in calls:
        if call.get("ref_error"):
            return 0.0, f"the instructor's solution fails this test ({call.get('what')}: {call['ref_error']})"
    if index not in view.started:
        return 0.0, f"not run: {status}" if status != "ok" else "not run"
    if index not in view.ended:
        return 0.0, f"the notebook stopped during this test: {status}"
    ok, error = view.ended[index]
    if not ok:
        return 0.0, error or "failed"
    outs = view.outs.get(index, {})
    partial = any(isinstance(call.get("how"), dict) and call["how"].get("partial") is True for call in calls)
    wrong = []
    for call in calls:
        reason = _case_mismatch(call, outs.get(call.get("n")), tools["mismatch"])
        if reason and not partial:
            return 0.0, reason
        if reason:
            wrong.append(reason)
    if not wrong:
        return 1.0, "passed"
    # Partial credit: the cell's points are shared equally by its cases.
    right = len(calls) - len(wrong)
    return right / len(calls), f"{right} of {len(calls)} right; {wrong[0]}"


def _case_mismatch(call: dict, out: dict | None, mismatch) -> str:
    """Why the student's result for one recorded case is wrong ("" when it is right)."""
    what = call.get("what") if isinstance(call.get("what"), str) else "a check"
    if out is None:
        return f"{what}: no result from your code"
    if "raised" in out:
        raised = out["raised"] if isinstance(out["raised"], str) else "an exception"
        if raised.startswith("NotImplementedError"):
            return f"{what}: not implemented yet (your code raised NotImplementedError)"
        if raised.startswith("TestFailure: "):
            return raised[len("TestFailure: "):]
        return f"{what}: your code raised {raised}"
    try:
        got = rebuild(out.get("value"), "s")
        expected = rebuild(call.get("expected"), "r")
    except BadObservation as error:
        return f"{what}: your code returned an unusable value ({error})"
    try:
        reason = mismatch(got, expected, **_how(call.get("how")))
    except Exception as error:  # noqa: BLE001 - a value the comparison cannot handle fails
        reason = f"cannot compare ({type(error).__name__}: {_first_line(error)})"
    return f"{what}: {reason}" if reason else ""


def _how(how) -> dict:
    """The comparison options the reference run recorded (its own data, checked anyway)."""
    how = how if isinstance(how, dict) else {}
    number = lambda value, default: float(value) if type(value) in (int, float) else default  # noqa: E731
    return {"close": how.get("close") is True, "rtol": number(how.get("rtol"), 1e-4),
            "atol": number(how.get("atol"), 1e-5), "agree": number(how.get("agree"), None)}


def _first_line(error) -> str:
    text = str(error).strip().splitlines()
    return text[0][:200] if text else ""
