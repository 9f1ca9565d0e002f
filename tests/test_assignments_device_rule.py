"""Assignment 02's parse_device: the rule its text states is torch's rule, on every string the
hidden test can draw, so a student who follows the text to the letter earns the points.

The hidden test draws strings from the product of `_DEVICE_PARTS` (its test cell). Here every
string of that product goes through real `torch.device`, through `stated_rule` below (a second
implementation, written from the task text alone, with a regular expression where the
solution walks characters) and through the instructor's solution; all three must agree.
"""
from __future__ import annotations

import ast
import itertools
import json
import re

import torch

from course import nbgrader_course

NOTEBOOK = nbgrader_course.source_notebook("02_devices")


def _cells() -> dict[str, str]:
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    return {cell["metadata"]["nbgrader"]["grade_id"]: "".join(cell["source"])
            for cell in cells if "nbgrader" in cell["metadata"]}


def _literal(source: str, name: str):
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and [t.id for t in node.targets if isinstance(t, ast.Name)] == [name]:
            return ast.literal_eval(node.value)
    raise AssertionError(f"{name} is not assigned in the cell")


CELLS = _cells()
KNOWN = _literal(CELLS["known_device_types"], "KNOWN_DEVICE_TYPES")
PARTS = _literal(CELLS["test_parse_device"], "_DEVICE_PARTS")
STRINGS = sorted({"".join(pieces) for pieces in itertools.product(*PARTS)})


def torch_reading(spec: str):
    try:
        device = torch.device(spec)
    except RuntimeError as error:
        return "RuntimeError", str(error)
    return device.type, device.index


def stated_rule(spec: str):
    """The three steps of the task text, in its order."""
    if spec == "":
        return "RuntimeError", "Device string must not be empty"
    form = re.fullmatch(r"([A-Za-z_]+)(?::(0|[1-9][0-9]*))?", spec, flags=re.ASCII)
    if form is None:
        return "RuntimeError", f"Invalid device string: '{spec}'"
    device_type, index = form.groups()
    if device_type not in KNOWN:
        return "RuntimeError", (f"Expected one of {', '.join(KNOWN)} device type at start of device string: "
                                f"{device_type}")
    return device_type, None if index is None else int(index)


def index_first(spec: str):
    """One natural reading the old text allowed: split at ':', judge the index, then the type."""
    device_type, separator, index = spec.partition(":")
    if separator and not (index.isdigit() and (index == "0" or not index.startswith("0"))):
        return "RuntimeError", f"Invalid device string: '{spec}'"
    if device_type not in KNOWN:
        return "RuntimeError", (f"Expected one of {', '.join(KNOWN)} device type at start of device string: "
                                f"{device_type}")
    return device_type, int(index) if separator else None


def type_first(spec: str):
    """The other natural reading: the type part must be known, then the index is judged."""
    device_type, separator, index = spec.partition(":")
    if device_type not in KNOWN:
        return "RuntimeError", (f"Expected one of {', '.join(KNOWN)} device type at start of device string: "
                                f"{device_type}")
    if separator and not (index.isdigit() and (index == "0" or not index.startswith("0"))):
        return "RuntimeError", f"Invalid device string: '{spec}'"
    return device_type, int(index) if separator else None


def solution_reading(spec: str):
    scope = {"KNOWN_DEVICE_TYPES": KNOWN}
    exec(CELLS["parse_device"], scope)
    try:
        return tuple(scope["parse_device"](spec))
    except RuntimeError as error:
        return "RuntimeError", str(error)


def test_the_stated_rule_is_torchs_on_every_string_the_test_can_draw():
    assert len(STRINGS) > 2000 and "" in STRINGS
    differing = [(spec, torch_reading(spec), stated_rule(spec)) for spec in STRINGS
                 if torch_reading(spec) != stated_rule(spec)]
    assert not differing, differing[:5]


def test_the_solution_follows_the_stated_rule():
    differing = [(spec, stated_rule(spec), solution_reading(spec)) for spec in STRINGS
                 if stated_rule(spec) != solution_reading(spec)]
    assert not differing, differing[:5]


def test_the_strings_tell_the_readings_apart():
    # Both readings the old text allowed lose points on these strings ('meta12', 'cpu-1'...).
    for reading in (index_first, type_first):
        wrong = {spec for spec in STRINGS if reading(spec) != torch_reading(spec)}
        assert len(wrong) > 100 and {"meta12", "cpu1:1", "cpu-1"} <= wrong, reading.__name__


def test_the_text_states_each_message_and_the_order():
    text = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    task = next("".join(c["source"]) for c in text if "## 1. Parse a device string" in "".join(c["source"]))
    for words in ("Device string must not be empty", "Invalid device string: '", "comes before the type",
                  "device type at start of device string:", "ASCII letters", "underscores", "do not start with `0`"):
        assert words in task, words
