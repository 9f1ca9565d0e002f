"""What an LMS download costs the host in `course collect`: hostile archives against an honest one.

Each download is collected by `course collect A --from ZIP` in a fresh process on its own
throw-away course (roster of 30), start-up included; printed: wall time, peak memory
(RSS), bytes the collect wrote under var/, and each hostile download's ratio to the
honest one measured in the same run. The aim (issue 31): no download costs more than about
twice an honest one.

- honest: a Moodle "Download all submissions" of 30 students (their notebook, a data file);
- entries: the same plus one student folder of 200,000 empty files (a 24 MB zip);
- bomb: one student folder of 15 zeroed 64 MiB files declared as such (a ~1 MB zip);
- liar: one entry whose header declares 1 KiB but inflates to 512 MiB;
- clash: a file and a folder of the same name beside the 30 honest submissions.

    .venv/bin/python -m bench.bench_collect [--entries 200000] [--timeout 300]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib
from pathlib import Path

from coursebase.paths import REPO, state_root
ASSIGNMENT = "03_autograd"
STUDENTS = [(f"s{i:02d}", f"First{i:02d}", f"Last{chr(65 + i % 26)}{i:02d}") for i in range(30)]


def _course(root: Path) -> None:
    for step in ("solutions", "assignments"):
        shutil.copytree(REPO / step / ASSIGNMENT, root / step / ASSIGNMENT)
    (root / "course").mkdir(parents=True)
    shutil.copy(REPO / "course" / "nbgrader_config.py", root / "course" / "nbgrader_config.py")
    lines = ["id,first_name,last_name,email,lms_id"] + [f"{i},{f},{l},," for i, f, l in STUDENTS]
    (root / "var").mkdir(exist_ok=True)
    (root / "var" / "roster.csv").write_text("\n".join(lines) + "\n")


def _honest(archive: zipfile.ZipFile) -> None:
    notebook = (REPO / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_bytes()
    for number, (_, first, last) in enumerate(STUDENTS):
        folder = f"{first} {last}_{300 + number}_assignsubmission_file"
        archive.writestr(f"{folder}/{ASSIGNMENT}.ipynb", notebook.replace(b"Autograd", f"Autograd {number}".encode(), 1))
        archive.writestr(f"{folder}/points.csv", "x,y\n1,2\n")


def _zero_stream(size: int) -> bytes:
    """``size`` zero bytes deflated, made chunk by chunk (the bomb never sits in memory)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    chunk = bytes(1 << 20)
    parts = [packer.compress(chunk) for _ in range(size >> 20)]
    return b"".join(parts) + packer.flush()


def _raw_entry(archive: zipfile.ZipFile, name: str, deflated: bytes, declared: int, crc: int) -> None:
    """A deflated entry whose header says ``declared`` bytes (a forged size when it lies)."""
    info = zipfile.ZipInfo(name, (2026, 11, 20, 12, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.file_size, info.compress_size, info.CRC = declared, len(deflated), crc
    info.header_offset = archive.fp.tell()
    archive.fp.write(info.FileHeader(zip64=False))
    archive.fp.write(deflated)
    archive.start_dir = archive.fp.tell()
    archive.filelist.append(info)
    archive.NameToInfo[name] = info
    archive._didModify = True  # noqa: SLF001 - write the central directory on close


def build(kind: str, path: Path, entries: int) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        _honest(archive)
        eve = "Eve Adams_399_assignsubmission_file"
        if kind == "entries":
            for number in range(entries):
                archive.writestr(zipfile.ZipInfo(f"{eve}/d{number // 1000}/f{number}"), b"")
        elif kind == "bomb":
            size = 64 << 20
            deflated = _zero_stream(size)
            crc = 0
            for _ in range(size >> 20):
                crc = zlib.crc32(bytes(1 << 20), crc)
            for number in range(15):
                _raw_entry(archive, f"{eve}/blob{number}.bin", deflated, size, crc)
        elif kind == "liar":
            _raw_entry(archive, f"{eve}/small.bin", _zero_stream(512 << 20), 1024, 0)
        elif kind == "clash":
            archive.writestr(f"{eve}/{ASSIGNMENT}.ipynb", b"{}")
            archive.writestr(f"{eve}/data", b"a file")
            archive.writestr(f"{eve}/data/points.csv", b"and a folder")
    return path


RUNNER = """
import resource, sys, time
sys.argv = ["course"] + sys.argv[1:]
started = time.perf_counter()
from course.cli import main
status = main(sys.argv[1:])
print("BENCH", status, time.perf_counter() - started, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
"""


def _written(root: Path) -> int:
    total = 0
    for folder in ("collected", "submitted"):
        for directory, _, files in os.walk(state_root(root) / folder):
            total += sum(os.lstat(os.path.join(directory, name)).st_size for name in files)
    return total


def measure(kind: str, work: Path, entries: int, timeout: float) -> dict:
    root = work / kind / "course"
    _course(root)
    download = build(kind, work / kind / "download.zip", entries)
    started = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-c", RUNNER, "collect", ASSIGNMENT, "--from", str(download),
                               "--root", str(root)], capture_output=True, text=True, timeout=timeout, cwd=REPO)
    except subprocess.TimeoutExpired:
        return {"kind": kind, "zip_bytes": download.stat().st_size, "seconds": None, "timeout": timeout,
                "written": _written(root)}
    wall = time.perf_counter() - started
    line = next((l for l in done.stderr.splitlines() if l.startswith("BENCH ")), None)
    if line is None:
        return {"kind": kind, "zip_bytes": download.stat().st_size, "seconds": wall, "crashed": done.stderr[-500:],
                "written": _written(root)}
    _, status, _, rss_kib = line.split()
    placed = sum(1 for _ in (root / "var" / "submitted").glob(f"*/{ASSIGNMENT}/{ASSIGNMENT}.ipynb"))
    return {"kind": kind, "zip_bytes": download.stat().st_size, "seconds": wall, "rss_mib": int(rss_kib) / 1024,
            "written": _written(root), "status": int(status), "placed": placed}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=200_000)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--only", nargs="*", default=["honest", "entries", "bomb", "liar", "clash"])
    args = parser.parse_args(argv if argv is not None else [])
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-collect-") as scratch:
        for kind in args.only:
            result = measure(kind, Path(scratch), args.entries, args.timeout)
            results.append(result)
            shutil.rmtree(Path(scratch) / kind, ignore_errors=True)
    honest = next((r for r in results if r["kind"] == "honest" and r.get("seconds")), None)
    print(f"{'download':8} {'zip':>9} {'wall':>9} {'peak RSS':>9} {'written':>10} {'placed':>6} exit  ratio")
    for r in results:
        wall = f"{r['seconds']:8.2f}s" if r.get("seconds") else f">{r['timeout']:.0f}s"
        rss = f"{r['rss_mib']:7.0f}Mi" if "rss_mib" in r else "-"
        ratio = (f"{r['seconds'] / honest['seconds']:.2f}x time, {r['rss_mib'] / honest['rss_mib']:.2f}x memory"
                 if honest and r.get("seconds") and "rss_mib" in r else "")
        print(f"{r['kind']:8} {r['zip_bytes'] / 2**20:8.1f}M {wall:>9} {rss:>9} {r['written'] / 2**20:9.1f}M "
              f"{r.get('placed', '-'):>6} {r.get('status', '-'):>4}  {ratio}" + (f"  crashed: {r['crashed'][-200:]}" if "crashed" in r else ""))
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
