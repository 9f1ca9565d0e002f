"""`course site`: the course website, built with Sphinx from the repository as it is.

    course site                       # build/site/html (make site)
    course site --lab-url 'https://hub.example.edu/hub/user-redirect/lab/tree/{path}'

It stages a source folder (build/site/src): docs/site/ (settings and the hand-written
pages), every lesson notebook ``lessons/[0-9]*.ipynb`` and every student release
``assignments/<a>/<a>.ipynb`` picked up by glob, and the README and docs/ files the pages
include. Sphinx then renders the notebooks from their stored outputs (never executed) and
the reftorch reference from its docstrings. Files are copied with their times, so a second
build reads again only what changed (all of it when a page came or went: every page lists
them all).

The built site is then audited with the student kit's audit (course/student_kit.py): any
line of a solution or hidden-test region of solutions/, or an instructor-only file, and the
site is deleted and the command exits 1. Sphinx warnings (a missing page, a broken include)
also exit 1, after the whole build has run, with every warning printed.
"""
from __future__ import annotations

import io
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from coursebase.paths import REPO

DEFAULT_OUT = REPO / "build" / "site"
SITE_SOURCES = Path("docs") / "site"
# Pages that the reference generator writes into the staged folder itself.
GENERATED = ("api",)


@dataclass
class SiteBuild:
    html: Path
    pages: int          # pages built from documents (lessons, assignments, reference, ...)
    source_pages: int   # reftorch's highlighted source, one page per module ([source] links)
    files: int
    seconds: float
    warnings: list[str]
    leaks: list[str]


def staged_files(root: Path) -> dict[Path, Path]:
    """{path in the staged source folder: file in the repository}."""
    staged = {}
    sources = root / SITE_SOURCES
    for path in sources.rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            staged[path.relative_to(sources)] = path
    for lesson in sorted((root / "lessons").glob("[0-9]*.ipynb")):
        staged[Path("lessons") / lesson.name] = lesson
    staged[Path("lessons/README.md")] = root / "lessons" / "README.md"
    for folder in sorted(p for p in (root / "assignments").iterdir() if p.is_dir()):
        release = folder / f"{folder.name}.ipynb"
        if release.is_file():
            staged[Path("assignments") / folder.name / release.name] = release
    staged[Path("_repo/README.md")] = root / "README.md"
    staged[Path("_repo/course/kit/README.md")] = root / "course" / "kit" / "README.md"
    for guide in sorted((root / "docs").glob("*.md")):   # deploy.md, instructors.md, ...
        staged[Path("docs") / guide.name] = guide
    for picture in sorted((root / "docs" / "img").glob("*.png")):
        staged[Path("docs/img") / picture.name] = picture
    return staged


def stage(root: Path, src: Path) -> bool:
    """Make ``src`` hold exactly the staged files (and the generated reference). True when a
    file came or went: every page's navigation (sidebar, previous/next) must then be written
    again, which Sphinx does not do by itself for pages that did not change."""
    staged = staged_files(root)
    came_or_went = not all((src / relative).is_file() for relative in staged)
    if src.is_dir():
        for path in sorted(src.rglob("*"), reverse=True):
            relative = path.relative_to(src)
            if relative.parts[0] in GENERATED:
                continue
            if path.is_file() and relative not in staged:
                path.unlink()
                came_or_went = True
            elif path.is_dir() and not any(path.iterdir()):
                path.rmdir()
    for relative, original in staged.items():
        target = src / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.is_file() or target.stat().st_mtime_ns != original.stat().st_mtime_ns \
                or target.stat().st_size != original.stat().st_size:
            shutil.copy2(original, target)
    return came_or_went


def build_site(out: Path = DEFAULT_OUT, root: Path = REPO, lab_url: str | None = None,
               fresh: bool = False) -> SiteBuild:
    """Stage, build with Sphinx into ``out/html``, audit. A site that leaks is deleted."""
    from sphinx.application import Sphinx
    from sphinx.util.console import nocolor

    from course.student_kit import audit_files, kit_files

    out, root = Path(out).resolve(), Path(root).resolve()
    src, html, doctrees = out / "src", out / "html", out / "doctrees"
    if fresh:
        for folder in (src, html, doctrees):
            shutil.rmtree(folder, ignore_errors=True)
    started = time.perf_counter()
    if stage(root, src) and not fresh:
        fresh = True
        shutil.rmtree(html, ignore_errors=True)
    overrides = {"course_lab_url": lab_url} if lab_url else {}
    warnings = io.StringIO()
    if not sys.stdout.isatty():
        nocolor()  # a log file or a test's captured output: no terminal colour codes
    app = Sphinx(str(src), str(src), str(html), str(doctrees), "html", confoverrides=overrides,
                 status=sys.stdout, warning=warnings, freshenv=fresh)
    app.build()
    seconds = time.perf_counter() - started
    leaks = audit_files(html, root)
    if leaks:
        shutil.rmtree(html, ignore_errors=True)
        shutil.rmtree(doctrees, ignore_errors=True)
    source_pages = len(list((html / "_modules").rglob("*.html"))) if html.is_dir() else 0
    return SiteBuild(html=html, pages=len(app.env.found_docs), source_pages=source_pages,
                     files=len(kit_files(html)) if html.is_dir() else 0, seconds=seconds,
                     warnings=[w for w in warnings.getvalue().splitlines() if w.strip()], leaks=leaks)


# -- `course site` -----------------------------------------------------------------------------

def register(subparsers) -> None:
    site = subparsers.add_parser(
        "site", help="build the course website (lessons, assignments, reftorch reference)",
        description="Build the course website with Sphinx into OUT/html: every lesson from its stored "
                    "outputs, every student release, the reftorch reference, the get-started pages. "
                    "The result is audited for solution lines and hidden tests like the student kit.")
    site.add_argument("--out", default=str(DEFAULT_OUT), help="build folder (default: build/site)")
    site.add_argument("--lab-url", help="where the 'open in JupyterLab' links point; {path} is the "
                      "notebook's path in the repository (default: http://localhost:8888/lab/tree/{path})")
    site.add_argument("--fresh", action="store_true", help="build everything again, not only what changed")
    site.set_defaults(func=run_site)


def run_site(args) -> int:
    result = build_site(Path(args.out), lab_url=args.lab_url, fresh=args.fresh)
    if result.leaks:
        print("course site: the site would leak instructor material; it was deleted:", file=sys.stderr)
        for problem in result.leaks:
            print(f"  {problem}", file=sys.stderr)
        return 1
    if result.warnings:
        print(f"course site: {len(result.warnings)} Sphinx warning(s):", file=sys.stderr)
        for warning in result.warnings:
            print(f"  {warning}", file=sys.stderr)
        return 1
    print(f"built {result.html}/index.html in {result.seconds:.1f} s: {result.pages} pages "
          f"(+ {result.source_pages} reftorch source pages), {result.files} files, "
          "audited clean (no solution or hidden-test line, no instructor file)")
    return 0
