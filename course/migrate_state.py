"""`course migrate-state`: a course's runtime state from course/ (where it was kept before
var/) into var/, once, when upgrading mid-term.

Every other command refuses a course that still keeps state in course/ (coursebase/paths.py
says which names), so nothing is read from one place and written to the other. Each old
path is renamed into var/ (the same file system: nothing is copied, nothing deleted), and
nothing moves when var/ already holds one of them. Run it with the hub and JupyterLab
stopped: Formgrader keeps the gradebook open.
"""
from __future__ import annotations

import sys
from pathlib import Path

from coursebase.paths import REPO, STATE, StateError, migrate_state, old_state


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "migrate-state", help=f"move the runtime state of a course from course/ into {STATE}/ (once, when upgrading)",
        description=f"Move what an older version of the course kept in course/ (gradebook.db, roster.csv, "
                    f"submitted/, autograded/, feedback/, exchange/, collected/, reports/, ...) into {STATE}/, "
                    "where every command now reads it. Stop the hub and JupyterLab first.")
    parser.add_argument("--root", help="course root (default: this repository)")
    parser.set_defaults(func=run_migrate_state)


def run_migrate_state(args) -> int:
    root = Path(args.root or REPO).resolve()
    if not old_state(root):
        print(f"nothing to move: {root / 'course'} holds no runtime state; it is all in {root / STATE}")
        return 0
    try:
        moves = migrate_state(root)
    except (StateError, OSError) as error:
        print(f"course migrate-state: {error}", file=sys.stderr)
        return 1
    for source, target in moves:
        print(f"moved {source} -> {target}")
    print(f"the course's runtime state is now in {root / STATE}/ (git-ignored)")
    return 0
