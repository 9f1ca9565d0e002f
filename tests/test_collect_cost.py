"""What an LMS download may cost the host, and the extras an honest LMS download holds.

An archive is bounded before it is parsed (issue 31): its entry count from the central
directory's own bytes, each entry's declared size and compression ratio before inflating,
never more than the declared size read; a file and a folder of one name refuse that entry
alone. `bench/bench_collect.py` measures the costs against an honest download; these tests
show each bound holds and the honest submissions around the hostile one are placed.
"""
from __future__ import annotations

import zipfile

import pytest

from lms_support import (ASSIGNMENT, cli_run, collect, deflated_zeros, make_course, make_zip,  # noqa: F401
                         raw_entry, release, submitted)

HONEST = {
    "Ada Lovelace_301_assignsubmission_file/03_autograd.ipynb": release(marker="ada"),
    "Ada Lovelace_301_assignsubmission_file/points.csv": "x,y\n1,2\n",
    "Hugo Smith_303_assignsubmission_file/03_autograd.ipynb": release(marker="hugo"),
}
EVE = "Eve Adams_399_assignsubmission_file"


@pytest.fixture()
def course_root(tmp_path):
    return make_course(tmp_path / "course")


def _honest_plus(path, extra):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in HONEST.items():
            archive.writestr(name, data)
        extra(archive)
    return path


def test_a_download_of_more_entries_than_a_class_is_refused_before_it_is_parsed(course_root, tmp_path, cli_run):
    entries = 20_000  # autograder.collect.LIMITS.entries

    def many(archive):
        for number in range(entries + 1):
            archive.writestr(zipfile.ZipInfo(f"{EVE}/d{number // 1000}/f{number}"), b"")
    download = _honest_plus(tmp_path / "many.zip", many)
    result = cli_run(course_root, "collect", ASSIGNMENT, "--from", str(download))
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr
    assert f"holds {entries + 4:,} entries, more than a class's download" in result.stderr
    assert f"the most are under '{EVE}' ({entries + 1:,})" in result.stderr
    assert "zip -d" in result.stderr and "Traceback" not in result.stderr
    assert not (course_root / "var" / "submitted").exists()
    from autograder.collect import LIMITS
    assert LIMITS.entries == entries


def test_a_zip_bomb_entry_is_refused_without_inflating_and_the_rest_placed(course_root, tmp_path):
    stream, crc = deflated_zeros(8 << 20)
    download = _honest_plus(tmp_path / "bomb.zip", lambda archive: [
        raw_entry(archive, f"{EVE}/blob{number}.bin", stream, 8 << 20, crc) for number in range(3)]
        + [archive.writestr(f"{EVE}/{ASSIGNMENT}.ipynb", release(marker="eve"))])
    report = collect(course_root, download)
    refused = {row.file: row.note for row in report.not_placed}
    assert set(refused) == {f"{EVE}/blob{n}.bin" for n in range(3)}, report.text()
    assert all("not something a student hands in; not unpacked" in note for note in refused.values())
    assert sorted(report.placed) == ["ada", "eve", "hugo"]
    assert not (submitted(course_root, "eve") / "blob0.bin").exists()
    kept = report.kept_at
    assert sum(p.stat().st_size for p in kept.rglob("*") if p.is_file()) < 2 * download.stat().st_size


def test_a_header_that_understates_the_size_is_read_no_further(course_root, tmp_path):
    stream, _ = deflated_zeros(64 << 20)
    download = _honest_plus(tmp_path / "liar.zip", lambda archive: [
        raw_entry(archive, f"{EVE}/{ASSIGNMENT}.ipynb", stream, 1024, 0)])
    report = collect(course_root, download)
    refused = {row.file: row.note for row in report.not_placed}
    assert refused[f"{EVE}/{ASSIGNMENT}.ipynb"].startswith("damaged in the archive"), report.text()
    assert sorted(report.placed) == ["ada", "hugo"]


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_a_file_and_a_folder_of_one_name_refuse_that_entry_alone(course_root, tmp_path):
    download = make_zip(tmp_path / "clash.zip", {
        **HONEST,
        f"{EVE}/{ASSIGNMENT}.ipynb": release(marker="eve"),
        f"{EVE}/data": "a file",
        f"{EVE}/data/points.csv": "and a folder",
        f"{EVE}/twice.py": "one",
    })
    with zipfile.ZipFile(download, "a") as archive:
        archive.writestr(f"{EVE}/twice.py", "two")  # the same name again (zipfile warns, as intended)
    report = collect(course_root, download)
    refused = {row.file: row.note for row in report.not_placed}
    assert refused == {
        f"{EVE}/data": "a file and a folder of the same name in the archive; the file is not used",
        f"{EVE}/twice.py": "the archive holds 2 entries of this name; none of them is used"}, report.text()
    assert sorted(report.placed) == ["ada", "eve", "hugo"]
    assert (submitted(course_root, "eve") / "data" / "points.csv").read_text() == "and a folder"
    assert report.status == 1


def test_a_submission_of_too_many_files_is_refused_alone(course_root, tmp_path):
    from autograder.collect import ArchiveLimits

    files = {f"{EVE}/{ASSIGNMENT}.ipynb": release(marker="eve")}
    files.update({f"{EVE}/junk/{number}.txt": "x" for number in range(12)})
    download = make_zip(tmp_path / "crowded.zip", {**HONEST, **files})
    report = collect(course_root, download, limits=ArchiveLimits(per_submission=10))
    assert sorted(report.placed) == ["ada", "hugo"], report.text()
    assert {row.file for row in report.not_placed} == set(files)
    assert all("holds 13 files, more than 10" in row.note for row in report.not_placed)


def test_an_unpacked_folder_of_too_many_files_is_refused(course_root, tmp_path):
    from autograder.collect import ArchiveLimits, CollectError

    download = tmp_path / "download"
    (download / "ada").mkdir(parents=True)
    for number in range(30):
        (download / "ada" / f"{number}.txt").write_text("x")
    with pytest.raises(CollectError, match="holds more than 20 files and folders"):
        collect(course_root, download, limits=ArchiveLimits(entries=20))


def test_normal_lms_extras_are_listed_as_ignored_and_collect_succeeds(course_root, tmp_path, cli_run):
    download = make_zip(tmp_path / "moodle.zip", {
        **HONEST,
        "Ada Lovelace_301_assignsubmission_file/03_autograd.html": "<html>an export</html>",
        "Hugo Smith_303_assignsubmission_file/03_autograd.pdf": b"%PDF-1.4",
        "Hugo Smith_303_assignsubmission_onlinetext/onlinetext.html": "<p>I worked with Ada</p>",
        "Jo Miller_304_assignsubmission_onlinetext_/onlinetext.html": "<p>text only</p>",
    })
    result = cli_run(course_root, "collect", ASSIGNMENT, "--from", str(download))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "collected 2 submission(s), 4 file(s) ignored (not graded)" in result.stdout
    lines = {line.split()[2]: line for line in result.stdout.splitlines() if " ignored " in line}
    assert len(lines) == 4, result.stdout
    assert not (submitted(course_root, "ada") / "03_autograd.html").exists()
    canvas = make_zip(tmp_path / "canvas.zip", {
        "lovelaceada_123_9001_03_autograd.ipynb": release(marker="ada2"),
        "lovelaceada_123_9002_03_autograd.html": "<html>an export</html>",
        "lovelaceada_123_9003_helper.py": "X = 1\n",
    })
    again = cli_run(course_root, "collect", ASSIGNMENT, "--from", str(canvas))
    assert "1 file(s) ignored" in again.stdout
    assert (submitted(course_root, "ada") / "helper.py").read_text() == "X = 1\n"


def test_a_zip64_directory_is_counted_too(tmp_path, monkeypatch):
    """Past 65,535 entries a zip's counts live in its zip64 record (Python writes one when
    its file-count limit is passed; lowered here so a small archive has one)."""
    from autograder.collect import ArchiveLimits, CollectError, check_central_directory

    monkeypatch.setattr(zipfile, "ZIP_FILECOUNT_LIMIT", 10)
    path = tmp_path / "zip64.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for number in range(60):
            archive.writestr(f"{EVE}/f{number}", b"")
    assert b"PK\x06\x06" in path.read_bytes()[-200:]
    assert check_central_directory(path, ArchiveLimits(entries=60)) == 60
    with pytest.raises(CollectError, match="holds 60 entries"):
        check_central_directory(path, ArchiveLimits(entries=59))
