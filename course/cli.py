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
    "course.scaffold",     # new NAME: a new assignment's source notebook
    "autograder.commands",  # collect, grade, feedback, export, report
    "course.lessons",      # lessons execute / check
    # -- beyond one machine: the students' repository --
    "course.student_kit",  # student-kit DEST (lessons, releases, reftorch; no solutions)
    # the course server for a class: roster -> Unix users + gradebook; JupyterHub
    "course.roster",       # roster import / remove
    "course.hub",          # hub start / stop / status
    "course.site",         # site (the course website: lessons, assignments, reftorch reference)
)


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a wrong command line gets one line (what is wrong, where to read more)
    instead of a usage block followed by the error."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: {message} (see `{self.prog} --help`)\n")


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {value}")
    return value


def positive_number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number greater than 0, got {text!r}") from None
    if not value > 0 or value != value or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number greater than 0, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="course",
        description="Run the course: release assignments, validate, collect, grade, report.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
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
        commands = ", ".join(parser._subparsers._group_actions[0].choices)  # noqa: SLF001 - argparse's own list
        print(f"course: name a command ({commands}); `course --help` says what each does", file=sys.stderr)
        return 2
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
