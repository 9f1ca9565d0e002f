"""`make test`'s first and last steps: the checkout is as the suite found it.

    python -m tests.checkout_state save FILE    # before the suite: `git status --porcelain --ignored`
    python -m tests.checkout_state check FILE   # after it: exit 1, listing what appeared or changed

No test or benchmark writes into the checkout (tracked files, var/, artifacts, anything
else); only caches may appear (CACHES: virtual environments, bytecode, pytest's and
Hypothesis's caches, npm's node_modules, an egg-info).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CACHES = {".venv", "__pycache__", ".pytest_cache", ".hypothesis", "node_modules"}


def status(root: Path) -> set[str]:
    """Every entry of `git status --porcelain --ignored` in ``root`` (changed, untracked, ignored)."""
    done = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--ignored=matching", "-z"],
                          capture_output=True, check=True)
    return {entry for entry in done.stdout.decode(errors="replace").split("\0") if entry}


def is_cache(entry: str) -> bool:
    parts = Path(entry[3:].rstrip("/")).parts
    return bool(CACHES & set(parts)) or any(part.endswith(".egg-info") for part in parts)


def written(before: set[str], after: set[str]) -> list[str]:
    """What the suite left in the checkout: entries it added, less caches."""
    return sorted(entry for entry in after - before if not is_cache(entry))


def main(argv: list[str]) -> int:
    action, record = argv
    root = Path.cwd()
    if action == "save":
        Path(record).write_text("\0".join(sorted(status(root))))
        return 0
    before = set(filter(None, Path(record).read_text().split("\0")))
    left = written(before, status(root))
    if left:
        print("make test: the suite wrote into the checkout (a test or benchmark must write to a temporary "
              "folder instead):\n  " + "\n  ".join(left), file=sys.stderr)
        return 1
    print("the checkout is as the suite found it (git status --ignored, caches aside)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
