"""`course` in the student kit: the commands a student runs, and only those.

The instructor's repository has more (release, grade, the hub, ...); the kit ships the code
behind these two alone, so its `course --help` lists these two alone.
"""
from __future__ import annotations

import argparse
import sys

from course import lessons, release

# module: the commands it registers that the kit offers (release.py registers the
# instructor's `release` next to `validate`)
KIT_COMMANDS = ((release, {"validate"}), (lessons, {"lessons"}))


class _Only:
    """Stands in for argparse's subparsers: keeps the named commands, drops the others."""

    def __init__(self, subparsers, names: set[str]):
        self.subparsers, self.names = subparsers, names

    def add_parser(self, name: str, **options):
        if name in self.names:
            return self.subparsers.add_parser(name, **options)
        return argparse.ArgumentParser(prog=name, add_help=False)  # built, never attached


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="course",
        description="Check your work: `course validate NOTEBOOK` runs an assignment's visible "
                    "tests; `course lessons check` checks the stored lessons.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module, names in KIT_COMMANDS:
        module.register(_Only(subparsers, names))
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
