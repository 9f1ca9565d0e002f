"""Put the class's student kit into a student's home: all of it at the first login, and
later only the files the kit gained since (next week's lesson or assignment). A file the
student already has is never touched, nor one delivered before and since deleted or changed.

The course hub runs this as the student (their Unix user, never root: whatever links they
made in their home lead only where they may write anyway), with the class Python:

    python -I deliver_kit.py KIT HOME

It keeps the list of what it delivered in HOME/.course-kit.json. Standard library only.
"""
import json
import os
import shutil
import sys
from pathlib import Path

RECORD = ".course-kit.json"


def deliver(kit: Path, home: Path) -> tuple[list[str], list[str]]:
    """Copy the kit's files that were never delivered and are not in ``home``; returns
    (delivered now, could not be written)."""
    record = home / RECORD
    try:
        delivered = set(json.loads(record.read_text())["delivered"])
    except (OSError, ValueError, KeyError, TypeError):
        delivered = set()
    new, failed = [], []
    for folder, folders, files in os.walk(kit):
        folders.sort()
        for name in sorted(files):
            source = Path(folder, name)
            relative = source.relative_to(kit).as_posix()
            target = home / relative
            if relative in delivered:
                continue
            if os.path.lexists(target):
                delivered.add(relative)  # the student's own file by that name stays theirs
                continue
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(source, target)
            except OSError as error:
                failed.append(f"{relative}: {error.strerror}")
                continue
            new.append(relative)
            delivered.add(relative)
    scratch = record.with_name(RECORD + ".new")
    scratch.write_text(json.dumps({"kit": str(kit), "delivered": sorted(delivered)}, indent=1))
    os.replace(scratch, record)
    return new, failed


if __name__ == "__main__":
    kit, home = Path(sys.argv[1]), Path(sys.argv[2])
    new, failed = deliver(kit, home)
    print(f"course kit: {len(new)} new file(s) in {home}"
          + (f"; not written: {'; '.join(failed)}" if failed else ""))
    sys.exit(1 if failed else 0)
