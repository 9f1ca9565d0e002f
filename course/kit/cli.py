"""`course` in the student kit: the commands a student runs, and only those.

The instructor's repository has more (release, grade, the hub, ...; course/cli.py declares
them all); the kit ships the code behind these two alone, so its `course --help` lists these
two alone.
"""
from __future__ import annotations

import argparse
import sys

from course import lessons, self_check

COMMANDS = (self_check, lessons)   # validate; lessons check


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="course",
        description="Check your work: `course validate NOTEBOOK` runs an assignment's visible "
                    "tests; `course lessons check` checks the stored lessons.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS:
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
