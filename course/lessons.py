"""`course lessons`: execute the lessons and store their outputs, or check them.

    course lessons execute [NAME ...]   run each notebook top to bottom in a fresh kernel,
                                        store outputs in place, print the time each took
    course lessons check                every lesson is stored executed, in order, with no
                                        unexpected error output (what a student reads first)
    course lessons times [NAME ...]     each lesson's core path in honest minutes, part by part
                                        (the estimate below, which tests/test_lessons.py gates)

`make lessons` runs `execute`; CI re-runs the lessons with nbval against the stored outputs.
"""
from __future__ import annotations

import ast
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat

from coursebase.paths import REPO

LESSONS = REPO / "lessons"
TIME_LIMIT_S = 60
RAISES_TAG = "raises-exception"
# NN_topic.ipynb; a lesson split in two keeps its number and adds a letter (01_tensors, 01b_strides)
LESSON_GLOB = "[0-9][0-9]*_*.ipynb"
LESSON_NAME = re.compile(r"(?P<number>\d\d)(?P<part>[a-z]?)_\w+")


def lesson_paths(names=(), folder: Path = LESSONS) -> list[Path]:
    paths = sorted(p for p in folder.glob(LESSON_GLOB) if LESSON_NAME.fullmatch(p.stem))
    if names:
        wanted = [n.removesuffix(".ipynb") for n in names]
        paths = [p for p in paths if p.stem in wanted or p.stem.partition("_")[0] in wanted]
        if len(paths) != len(wanted):
            raise SystemExit(f"course lessons: no lesson named {', '.join(wanted)} in {LESSONS}")
    return paths


def assignment_number(lesson: str) -> str:
    """The assignment a lesson leads into is the one with the lesson's number: lessons
    01_tensors and 01b_strides both lead into assignments/01_tensors (gradebooks keep their ids)."""
    return LESSON_NAME.fullmatch(lesson).group("number")


def assignment_of(lesson: str, assignments) -> str | None:
    """Of the assignment names given, the one lesson ``lesson`` leads into (None when none)."""
    number = assignment_number(lesson)
    found = [name for name in assignments if name.startswith(f"{number}_")]
    return found[0] if found else None


def execute(path: Path) -> float:
    """Run ``path`` in a fresh kernel (cwd = lessons/) and store its outputs."""
    from nbclient import NotebookClient
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=TIME_LIMIT_S * 2, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}},
                            allow_error_names=(), record_timing=False)
    start = time.perf_counter()
    client.execute()
    elapsed = time.perf_counter() - start
    nbformat.write(nb, path)
    return elapsed


def problems(path: Path) -> list[str]:
    """What is wrong with the stored state of a lesson (empty list when all is well)."""
    nb = nbformat.read(path, as_version=4)
    found = []
    expected = 1
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or not cell.source.strip():
            continue
        if cell.execution_count != expected:
            found.append(f"cell {index}: execution_count {cell.execution_count}, expected {expected} "
                         "(run `make lessons` to store a top-to-bottom run)")
        expected += 1
        errors = [o for o in cell.outputs if o.output_type == "error"]
        tagged = RAISES_TAG in cell.metadata.get("tags", [])
        if errors and not tagged:
            found.append(f"cell {index}: raised {errors[0].ename} but is not tagged '{RAISES_TAG}'")
        if tagged and not errors:
            found.append(f"cell {index}: tagged '{RAISES_TAG}' but raised nothing")
    return found


# -- the core path and its honest time ------------------------------------------------
APPENDIX_HEADING = "## Appendix"
EXERCISES_HEADING = "## Exercises"


def appendix_start(nb) -> int:
    """Index of the appendix heading cell; len(cells) for a lesson without an appendix."""
    starts = [i for i, c in enumerate(nb.cells)
              if c.cell_type == "markdown" and c.source.startswith(APPENDIX_HEADING)]
    assert len(starts) <= 1, f"more than one cell opens with {APPENDIX_HEADING!r}: cells {starts}"
    return starts[0] if starts else len(nb.cells)


def core_path(nb) -> list:
    """What a student must do in the stated time: everything before the appendix heading."""
    return nb.cells[:appendix_start(nb)]


def exercises_start(nb) -> int:
    return max(i for i, c in enumerate(core_path(nb)) if c.cell_type == "markdown" and EXERCISES_HEADING in c.source)


# The time a student takes, part by part. Reading and running are measured in words and lines;
# an exercise by its kind (a tag on its answer cell) and its size (what the cell asks for:
# values to predict, functions or classes to write). Calibration, in lessons/README.md: a
# prediction is a minute and a half of reasoning per value; a short function (one idea, a few
# lines) takes eight minutes to write, check and fix once; a multi-step function (a walk over
# an index space through strides and an offset, with size-1, stride-0 and error cases) takes
# twenty-five, as lesson 01's strided exercises did.
WORDS_PER_MINUTE = 130       # reading technical prose
CODE_LINES_PER_MINUTE = 15   # reading a code cell, on top of a minute to run it and look
OUTPUT_LINES_PER_MINUTE = 20  # reading what a cell printed
MINUTES_PER_PICTURE = 0.5
MINUTES_PER_PROMPT = 1       # each "**Predict**" in the text: think before running
MINUTES_FOR_SETUP = 2        # the first code cell (imports, helpers): run it
MINUTES_PER_CHECK = 0.5      # running an exercise's self-check and reading its line
EXERCISE_KINDS = {           # tag: (minutes to read the question, minutes per thing asked)
    "exercise-predict": (2, 1.5),
    "exercise-write": (0, 8),
    "exercise-multistep": (0, 25),
}
PROMPT = re.compile(r"\*{1,2}Predict\b")   # **Predict:** or *Predict:*


def answer_cells(nb) -> list[int]:
    """The cells a student fills in: code after the Exercises heading, stored without output."""
    cells, start = core_path(nb), exercises_start(nb)
    return [i for i, c in enumerate(cells) if i > start and c.cell_type == "code" and not c.outputs]


def exercise_kind(cell) -> str | None:
    kinds = [tag for tag in cell.metadata.get("tags", []) if tag in EXERCISE_KINDS]
    return kinds[0] if len(kinds) == 1 else None


def _blank(node) -> bool:
    return isinstance(node, ast.Constant) and (node.value is None or node.value is ...)


def things_asked(source: str) -> tuple[int, int]:
    """(values to predict, functions or classes to write) in an answer cell: each None or ...
    left to fill in (alone, or as a value of a dict or an item of a list), and each top-level
    def or class (or a name set to None where a class is asked for)."""
    values = definitions = 0
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            definitions += 1
        elif isinstance(node, ast.Assign):
            value = node.value
            if isinstance(value, ast.Dict):
                values += sum(_blank(v) for v in value.values)
            elif isinstance(value, (ast.List, ast.Tuple, ast.Set)):
                values += sum(_blank(v) for v in value.elts)
            elif _blank(value):
                values += 1
    return values, definitions


def exercise_minutes(cell) -> float:
    kind = exercise_kind(cell)
    if kind is None:
        raise ValueError(f"an answer cell needs one tag of {sorted(EXERCISE_KINDS)}: {cell.source[:60]!r}")
    values, definitions = things_asked(cell.source)
    asked = values if kind == "exercise-predict" else definitions or values
    if not asked or (kind == "exercise-predict" and definitions):
        raise ValueError(f"a {kind} cell asks for {values} values and {definitions} definitions: "
                         f"{cell.source[:60]!r}")
    first, each = EXERCISE_KINDS[kind]
    return first + each * asked


@dataclass
class Estimate:
    reading: float
    code: float
    outputs: float
    prompts: float
    exercises: float
    checks: float

    @property
    def total(self) -> float:
        return self.reading + self.code + self.outputs + self.prompts + self.exercises + self.checks


def _output_lines_and_pictures(cell) -> tuple[int, int]:
    lines = pictures = 0
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if "image/png" in data or "image/svg+xml" in data:
            pictures += 1
        elif output.output_type == "stream":
            lines += len(output.text.splitlines())
        elif "text/plain" in data:
            lines += len(data["text/plain"].splitlines())
        elif output.output_type == "error":
            lines += 2   # the exception's name and message, not the traceback
    return lines, pictures


def estimate(nb) -> Estimate:
    """The core path's time in minutes, part by part (see the constants above)."""
    cells, start = core_path(nb), exercises_start(nb)
    answers = set(answer_cells(nb))
    reading = sum(len(c.source.split()) for c in cells if c.cell_type == "markdown") / WORDS_PER_MINUTE
    prompts = MINUTES_PER_PROMPT * sum(len(PROMPT.findall(c.source)) for c in cells[:start]
                                       if c.cell_type == "markdown")
    code = outputs = exercises = checks = 0.0
    code_cells = [i for i, c in enumerate(cells) if c.cell_type == "code"]
    for i in code_cells[1:]:
        if i in answers:
            exercises += exercise_minutes(cells[i])
        elif i > start:
            checks += MINUTES_PER_CHECK
        else:
            code += 1 + len(cells[i].source.splitlines()) / CODE_LINES_PER_MINUTE
            lines, pictures = _output_lines_and_pictures(cells[i])
            outputs += lines / OUTPUT_LINES_PER_MINUTE + pictures * MINUTES_PER_PICTURE
    code += MINUTES_FOR_SETUP if code_cells else 0
    return Estimate(reading, code, outputs, prompts, exercises, checks)


STATED_TIME = re.compile(r"\*\*(?:Expected )?[Tt]ime:\*\* (?:about )?(\d+)(?:[–-](\d+))? minutes")


def stated_minutes(nb) -> int:
    found = STATED_TIME.search(nb.cells[0].source)
    assert found, "the first cell states no time ('**Time:** about N minutes')"
    return int(found.group(2) or found.group(1))


def _times_command(args) -> int:
    print(f"{'lesson':24s} {'reading':>8s} {'code':>6s} {'output':>7s} {'predict':>8s} {'exercises':>10s} "
          f"{'checks':>7s} {'total':>6s} {'stated':>7s}")
    for path in lesson_paths(args.names):
        nb = nbformat.read(path, as_version=4)
        e = estimate(nb)
        print(f"{path.stem:24s} {e.reading:8.0f} {e.code:6.0f} {e.outputs:7.0f} {e.prompts:8.0f} "
              f"{e.exercises:10.0f} {e.checks:7.0f} {e.total:6.0f} {stated_minutes(nb):7d}")
    return 0


def _execute_command(args) -> int:
    total = 0.0
    slow = []
    for path in lesson_paths(args.names):
        elapsed = execute(path)
        total += elapsed
        print(f"{path.name:32s} {elapsed:6.1f} s")
        if elapsed > TIME_LIMIT_S:
            slow.append(path.name)
    print(f"{'total':32s} {total:6.1f} s")
    if slow:
        print(f"over the {TIME_LIMIT_S} s budget: {', '.join(slow)}", file=sys.stderr)
        return 1
    return 0


def _check_command(args) -> int:
    status = 0
    for path in lesson_paths(args.names):
        found = problems(path)
        for problem in found:
            print(f"{path.name}: {problem}")
        status |= bool(found)
    if not status:
        print("all lessons are stored executed, in order, without unexpected errors")
    return status


def register(subparsers) -> None:
    parser = subparsers.add_parser("lessons", help="execute or check the lesson notebooks")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    run = actions.add_parser("execute", help="run lessons and store their outputs")
    run.add_argument("names", nargs="*", help="lesson names or numbers (default: all)")
    run.set_defaults(func=_execute_command)
    check = actions.add_parser("check", help="check stored outputs")
    check.add_argument("names", nargs="*")
    check.set_defaults(func=_check_command)
    times = actions.add_parser("times", help="each lesson's core path in minutes, part by part")
    times.add_argument("names", nargs="*")
    times.set_defaults(func=_times_command)


if __name__ == "__main__":
    import argparse
    top = argparse.ArgumentParser(prog="python -m course.lessons")
    subs = top.add_subparsers(dest="command", required=True)
    register(subs)
    arguments = top.parse_args(["lessons", *sys.argv[1:]])
    sys.exit(arguments.func(arguments))
