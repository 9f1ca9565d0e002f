"""`make update`: bring in the course's update (next week's assignment, fixes) without ever
touching your work.

    make update          # = python3 course/update.py

1. Your changes are recorded first, in your own clone: a git commit of everything git does
   not ignore (nothing is sent anywhere). From then on nothing of yours can be lost.
2. The course's update is fetched and merged. A file only the course changed is updated; a
   file only you changed stays yours.
3. A file both you and the course changed (you ran a lesson the course re-executed since, or
   started an assignment the course then fixed) stays exactly as you left it, and the
   course's new version is written beside it as ``<name>.course-<date>.<ext>``, listed at
   the end. Nothing is ever merged line by line into a notebook.

Standard library and git only: it runs before `make lab` has installed anything.
"""
from __future__ import annotations

import datetime
import os
import subprocess
import sys
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent


class UpdateError(RuntimeError):
    pass


def git(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(["git", "-C", str(KIT), *args], capture_output=True, text=True)
    if check and done.returncode != 0:
        raise UpdateError(f"`git {' '.join(args)}` failed: "
                          f"{(done.stderr.strip().splitlines() or [f'exit {done.returncode}'])[-1]}")
    return done


def identity() -> list[str]:
    """Who the commits in the student's own clone are by: their git identity, else their login."""
    if git("config", "user.email", check=False).stdout.strip():
        return []
    user = os.environ.get("USER") or os.environ.get("LOGNAME") or "student"
    return ["-c", f"user.name={user}", "-c", f"user.email={user}@localhost"]


def changed(base: str, tip: str) -> set[str]:
    listed = git("diff", "--name-only", "--no-renames", "-z", base, tip).stdout
    return set(listed.split("\0")) - {""}


def exists_at(commit: str, path: str) -> bool:
    return git("cat-file", "-e", f"{commit}:{path}", check=False).returncode == 0


def beside(path: str, day: str) -> str:
    """lessons/01_tensors.ipynb -> lessons/01_tensors.course-2026-09-14.ipynb (numbered if taken)."""
    target = Path(path)
    stem, suffix = (target.stem, target.suffix) if target.suffix else (target.name, "")
    for number in range(1, 1000):
        tag = f"course-{day}" + (f"-{number}" if number > 1 else "")
        candidate = target.with_name(f"{stem}.{tag}{suffix}").as_posix()
        if not (KIT / candidate).exists():
            return candidate
    raise UpdateError(f"too many course versions beside {path}")


def update() -> list[str]:
    """Fetch and merge the course's update; returns the lines to show the student."""
    if not (KIT / ".git").exists():
        raise UpdateError(f"{KIT} is not a git clone of the course's kit. On the class hub, new "
                          "files arrive in your home at your next login; elsewhere clone the kit "
                          "(git clone <the kit's address>) and work in the clone")
    upstream = git("rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}", check=False).stdout.strip()
    if not upstream:
        raise UpdateError("this clone's branch follows no branch of the course's kit "
                          "(git branch --set-upstream-to=origin/main)")
    remote = upstream.split("/", 1)[0]
    if git("rev-parse", "-q", "--verify", "MERGE_HEAD", check=False).returncode == 0:
        raise UpdateError("a merge is half done in this clone (git status): finish it "
                          "(git commit) or undo it (git merge --abort), then run make update again")
    git("fetch", "--quiet", remote)
    said = []
    if git("status", "--porcelain", "--untracked-files=all").stdout.strip():
        day = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
        git("add", "--all")
        git(*identity(), "commit", "--quiet", "-m", f"My work, recorded before the course update ({day})")
        said.append("your work is recorded in your clone (a commit: `git log` shows it)")
    if git("merge-base", "--is-ancestor", upstream, "HEAD", check=False).returncode == 0:
        return said + ["the course has nothing new: already up to date"]
    base = git("merge-base", "HEAD", upstream).stdout.strip()
    theirs, ours = changed(base, upstream), changed(base, "HEAD")
    both = sorted(theirs & ours)
    day = datetime.date.today().isoformat()
    merged = git(*identity(), "merge", "--no-ff", "--no-commit", "--quiet", upstream, check=False)
    if merged.returncode != 0 and git("rev-parse", "-q", "--verify", "MERGE_HEAD", check=False).returncode != 0:
        raise UpdateError(f"git could not merge the update: {merged.stderr.strip()[-500:]}")
    kept = []
    for path in both:
        ours_exists, theirs_exists = exists_at("HEAD", path), exists_at(upstream, path)
        if not ours_exists:   # you deleted it, the course changed it: the course's version comes back
            if theirs_exists:
                git("checkout", upstream, "--", path)
            continue
        git("checkout", "HEAD", "--", path)      # yours, whole, never a line-by-line merge
        if theirs_exists:
            copy = beside(path, day)
            content = subprocess.run(["git", "-C", str(KIT), "show", f"{upstream}:{path}"],
                                     capture_output=True, check=True).stdout
            (KIT / copy).parent.mkdir(parents=True, exist_ok=True)
            (KIT / copy).write_bytes(content)
            git("add", "--", copy)
            kept.append(f"  {path}: yours is kept; the course's new version is {copy}")
        else:
            kept.append(f"  {path}: yours is kept (the course removed its own)")
        git("add", "--", path)
    git(*identity(), "commit", "--quiet", "--no-edit", "-m", f"Course update of {day}")
    new = sorted(path for path in theirs - ours if exists_at(upstream, path) and not exists_at(base, path))
    assignments = sorted({path.split("/")[1] for path in new if path.startswith("assignments/")})
    said.append(f"updated from the course: {len(theirs)} file(s)"
                + (f"; new assignment(s): {', '.join(assignments)}" if assignments else ""))
    if kept:
        said.append("changed both by you and by the course (yours untouched):")
        said += kept
    return said


def main() -> int:
    try:
        lines = update()
    except UpdateError as error:
        print(f"make update: {error}", file=sys.stderr)
        return 1
    for line in lines:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
