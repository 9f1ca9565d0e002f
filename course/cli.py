"""`course`: the one command-line front door for instructors and students.

Each subcommand lives in its own module, which exposes ``register(subparsers)``; the
module adds its parser(s) and sets ``func`` to a callable taking the parsed arguments and
returning an exit status. Modules are imported only to build the parser, so a missing
optional part fails with a clear message instead of breaking every other command.
"""
from __future__ import annotations

import argparse
import importlib
import sys

# Order is the order `course --help` lists them in.
COMMAND_MODULES = (
    "course.release",      # release, validate (nbgrader source -> release; student self-check)
    "autograder.commands",  # collect, grade, feedback, export, report
    "course.lessons",      # lessons execute / check
    # -- beyond one machine: the students' repository (issue 12) --
    "course.student_kit",  # student-kit DEST (lessons, releases, reftorch; no solutions)
    # the course server for a class: roster -> Unix users + gradebook; JupyterHub
    "course.roster",       # roster import / remove
    "course.hub",          # hub start / stop / status
    "course.site",         # site (the course website: lessons, assignments, reftorch reference)
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="course",
        description="Run the course: release assignments, validate, collect, grade, report.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:
            if not (name == error.name or name.startswith(f"{error.name}.")):
                raise
            continue  # that part of the course is not built yet, or not shipped (student kit)
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
