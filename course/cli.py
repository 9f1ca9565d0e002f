"""`course`: the one command-line front door for instructors and students.

Every command is declared once, in COMMANDS below, in the order `course --help` lists them:
each is a module of this package with ``register(subparsers)``, which adds its parser(s)
and sets ``func`` to a callable taking the parsed arguments and returning an exit status.
The student kit's `course` (course/kit/cli.py) offers the student's two of them alone
(tests/test_module_map.py checks both lists).
"""
from __future__ import annotations

import sys

from course import grading, hub, lessons, migrate_state, release, roster, scaffold, self_check, site, student_kit
from course.arguments import OneLineParser

COMMANDS = (
    release,        # release: nbgrader source -> student release
    self_check,     # validate: a student's (or instructor's) self-check, as grading judges
    scaffold,       # new NAME: a new assignment's source notebook
    grading,        # collect, grade, feedback, export, report
    lessons,        # lessons execute / check / times
    # -- beyond one machine: the students' repository and the class hub --
    student_kit,    # student-kit DEST (lessons, releases, reftorch; no solutions)
    roster,         # roster import / remove: Unix users + gradebook names
    hub,            # hub start / stop / status
    site,           # site (the course website: lessons, assignments, reftorch reference)
    migrate_state,  # migrate-state: runtime state from course/ into var/ (once, when upgrading)
)


def build_parser(commands=COMMANDS) -> OneLineParser:
    parser = OneLineParser(
        prog="course",
        description="Run the course: release assignments, validate, collect, grade, report.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    for module in commands:
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
