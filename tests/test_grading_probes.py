"""The probe form on small inputs: what reaches the student's process, and the host's verdict."""
from __future__ import annotations

import pytest
import torch

from autograder.judge import RunView, _judge_probes
from autograder.observe import Converter, build
from autograder.probes import ProbeFormError, split_test_cell

CELL = '''
@probe(torch=False)
def _strides(shape):
    return tuple(contiguous_strides(shape))

def _oracle(shape):
    return torch.empty(shape).stride()

check("contiguous_strides((2, 3))", _strides, (2, 3), expect=(3, 1))
### BEGIN HIDDEN TESTS
for _shape in examples(st.lists(st.integers(1, 4), max_size=3).map(tuple)):
    check(f"contiguous_strides({_shape})", _strides, _shape, expect=_oracle(_shape))
### END HIDDEN TESTS
'''


def test_only_the_probes_reach_the_student():
    cell = split_test_cell(CELL)
    assert cell.names == ["_strides"] and cell.torch is False
    assert "contiguous_strides(shape)" in cell.source
    for expectation in ("_oracle", "torch.empty", "expect=", "examples", "check("):
        assert expectation not in cell.source


def test_probes_of_one_cell_share_their_torch_rule():
    with pytest.raises(ProbeFormError):
        split_test_cell("@probe\ndef a():\n    pass\n@probe(torch=False)\ndef b():\n    pass\n")


def test_arguments_round_trip_as_fresh_values():
    convert = Converter()
    values = [(2, 3), {"a": [1.5, None]}, torch.arange(6.).reshape(2, 3).t(), {1, 2}, float("nan")]
    rebuilt = build(convert(values))
    assert rebuilt[:2] == values[:2] and rebuilt[3] == {1, 2} and rebuilt[4] != rebuilt[4]
    assert torch.equal(rebuilt[2], values[2]) and rebuilt[2] is not values[2]


def _mismatch(got, expected, close=False, rtol=1e-4, atol=1e-5, agree=None):
    return None if type(got) is type(expected) and got == expected else f"expected {expected!r}, got {got!r}"


def _views(expected, outs, ref_error=""):
    convert = Converter()
    reference = RunView(ended={5: (True, "")}, calls={5: [
        {"n": 0, "what": "f(1)", "how": {"close": False}, "expected": convert(expected), "ref_error": ref_error}]})
    outs = {n: ({**out, "value": convert(out["value"])} if isinstance(out.get("value"), list) else out)
            for n, out in outs.items()}  # results arrive as the student's converter wrote them
    student = RunView(started={2}, ended={2: (True, "")}, outs={2: outs})
    return student, reference


@pytest.mark.parametrize("outs, passed, message", [
    ({0: {"n": 0, "value": [3, 1]}}, True, "passed"),
    ({0: {"n": 0, "value": [3, 2]}}, False, "f(1): expected [3, 1], got [3, 2]"),
    ({0: {"n": 0, "raised": "NotImplementedError"}}, False, "f(1): not answered yet"),
    # a probe that caught a blank answer's NotImplementedError as a RuntimeError (its base)
    ({0: {"n": 0, "value": [["RuntimeError", ""]], "unanswered": True}}, False, "f(1): not answered yet"),
    ({0: {"n": 0, "value": [3, 1], "unanswered": True}}, True, "passed"),
    ({0: {"n": 0, "raised": "TestFailure: f: expected a dict"}}, False, "f: expected a dict"),
    ({}, False, "f(1): no result from your code"),
    ({0: {"n": 0, "value": {"kind": "opaque", "mro": ["x.Liar"], "id": 1}}}, False, "f(1): expected [3, 1], got <x.Liar object>"),
])
def test_host_compares_each_result_with_the_reference_expectation(outs, passed, message):
    student, reference = _views([3, 1], outs)
    share, why = _judge_probes(2, student, 5, reference, {"mismatch": _mismatch}, "ok")
    assert share == (1.0 if passed else 0.0) and why.startswith(message), why


def test_a_broken_or_empty_reference_never_counts_for_the_student():
    student, reference = _views([3, 1], {0: {"n": 0, "value": [3, 1]}}, ref_error="AssertionError")
    assert _judge_probes(2, student, 5, reference, {"mismatch": _mismatch}, "ok") == (
        0.0, "the instructor's solution fails this test (f(1): AssertionError)")
    reference.calls[5] = []
    assert not _judge_probes(2, student, 5, reference, {"mismatch": _mismatch}, "ok")[0]


def _partial_views(outs, partial=True):
    """A reference that recorded three cases of one cell (expected 1, 2, 3)."""
    convert = Converter()
    how = {"close": False, "partial": partial}
    reference = RunView(ended={5: (True, "")}, calls={5: [
        {"n": n, "what": f"item {n}", "how": how, "expected": convert(n + 1), "ref_error": ""} for n in range(3)]})
    student = RunView(started={2}, ended={2: (True, "")}, outs={2: {
        n: {"n": n, **({"value": convert(v)} if not isinstance(v, str) else {"raised": v})} for n, v in outs.items()}})
    return student, reference


@pytest.mark.parametrize("outs, share, message", [
    ({0: 1, 1: 2, 2: 3}, 1.0, "passed"),
    ({0: 1, 1: 5, 2: 3}, 2 / 3, "2 of 3 right; item 1: expected 2, got 5"),
    ({0: 1, 1: "ValueError: no", 2: 9}, 1 / 3, "1 of 3 right; item 1: your code raised ValueError: no"),
    ({0: 1}, 1 / 3, "1 of 3 right; item 1: no result from your code"),
    ({0: 0, 1: 0, 2: 0}, 0.0, "0 of 3 right; item 0: expected 1, got 0"),
])
def test_partial_credit_shares_the_points_between_the_cases(outs, share, message):
    student, reference = _partial_views(outs)
    got, why = _judge_probes(2, student, 5, reference, {"mismatch": _mismatch}, "ok")
    assert got == pytest.approx(share) and why == message, why


def test_without_partial_one_wrong_case_costs_the_whole_cell():
    student, reference = _partial_views({0: 1, 1: 5, 2: 3}, partial=False)
    assert _judge_probes(2, student, 5, reference, {"mismatch": _mismatch}, "ok") == (
        0.0, "item 1: expected 2, got 5")


def test_partial_credit_needs_the_cell_to_have_run():
    student, reference = _partial_views({0: 1, 1: 2, 2: 3})
    student.ended[2] = (False, "KeyboardInterrupt")
    assert _judge_probes(2, student, 5, reference, {"mismatch": _mismatch}, "ok") == (0.0, "KeyboardInterrupt")
