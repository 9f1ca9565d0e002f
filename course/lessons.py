"""`course lessons`: execute the lessons and store their outputs, or check them.

    course lessons execute [NAME ...]   run each notebook top to bottom in a fresh kernel,
                                        store outputs in place, print the time each took
    course lessons check                every lesson is stored executed, in order, with no
                                        unexpected error output (what a student reads first)

`make lessons` runs `execute`; CI re-runs the lessons with nbval against the stored outputs.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat

from course.model import REPO

LESSONS = REPO / "lessons"
TIME_LIMIT_S = 60
RAISES_TAG = "raises-exception"


def lesson_paths(names=()) -> list[Path]:
    paths = sorted(LESSONS.glob("[0-9][0-9]_*.ipynb"))
    if names:
        wanted = [n.removesuffix(".ipynb") for n in names]
        paths = [p for p in paths if p.stem in wanted or p.stem[:2] in wanted]
        if len(paths) != len(wanted):
            raise SystemExit(f"course lessons: no lesson named {', '.join(wanted)} in {LESSONS}")
    return paths


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


if __name__ == "__main__":
    import argparse
    top = argparse.ArgumentParser(prog="python -m course.lessons")
    subs = top.add_subparsers(dest="command", required=True)
    register(subs)
    arguments = top.parse_args(["lessons", *sys.argv[1:]])
    sys.exit(arguments.func(arguments))
