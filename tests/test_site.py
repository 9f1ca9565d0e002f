"""The course website (`course site`, `make site`): built once per run, then read in Chromium.

The module's fixture builds the site from the repository into a temporary folder (a fresh
build, as `make site` does on a new clone) and serves it on loopback; one walk then opens
every page it can reach from the home page. Screenshots of the home page and a lesson go to a
temporary folder; `COURSE_SCREENSHOTS=docs/img` refreshes the README's pictures instead (a test
never writes into the checkout by itself).
"""
from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from browser.chromium import launch
from browser.site_walk import serve, walk
from course.site.reference import walk as reference_entries
from course.site.sphinx_ext import DEFAULT_LAB_URL, lab_link
from course.student_kit import audit_files, secret_lines

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(600)]

from coursebase.paths import REPO as REPO_ROOT
LESSONS = sorted((REPO_ROOT / "lessons").glob("[0-9]*.ipynb"))
RELEASES = sorted(p for p in (REPO_ROOT / "assignments").glob("*/*.ipynb") if p.stem == p.parent.name)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    started = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "course.site", "--out", str(out), "--fresh"],
                         cwd=REPO_ROOT, capture_output=True, text=True, timeout=480)
    assert run.returncode == 0, f"course site failed:\n{run.stderr[-6000:]}\n{run.stdout[-2000:]}"
    print(f"\n{run.stdout.splitlines()[-1]} (command: {time.perf_counter() - started:.1f} s)")
    return out / "html"


@pytest.fixture(scope="module")
def browser(site, tmp_path_factory):
    """(base URL, a Chromium page) with the site served on loopback."""
    with serve(site) as base, sync_playwright() as playwright:
        context = launch(playwright, tmp_path_factory.mktemp("chromium-profile"))
        try:
            yield base, context.new_page()
        finally:
            context.close()


@pytest.fixture(scope="module")
def site_walk(site, browser):
    """From the home page, then any page no link reaches (the index, the search page)."""
    base, page = browser
    started = time.perf_counter()
    result = walk(page, base, ["index.html", *sorted(_built_pages(site))])
    print(f"\nwalked {len(result.pages)} pages in {time.perf_counter() - started:.1f} s")
    return result


def _built_pages(site: Path) -> set[str]:
    return {p.relative_to(site).as_posix() for p in site.rglob("*.html")
            if p.relative_to(site).parts[0] != "_static"}


def test_every_page_opens_cleanly(site, site_walk):
    """No console error, no failed or outside request, no broken link, picture or formula."""
    assert not site_walk.problems, "\n".join(site_walk.problems)
    assert set(site_walk.pages) == _built_pages(site)
    assert len(site_walk.pages) == len(set(site_walk.pages))


def test_every_lesson_and_release_is_a_page_with_a_lab_link(site):
    for notebook in [*LESSONS, *RELEASES]:
        path = notebook.relative_to(REPO_ROOT).as_posix()
        page = site / path.replace(".ipynb", ".html")
        assert page.is_file(), f"{path}: no page"
        text = page.read_text()
        assert f'href="{html.escape(lab_link(DEFAULT_LAB_URL, path))}"' in text, f"{path}: no JupyterLab link"
        assert 'class="right-next"' in text or 'class="left-prev"' in text, f"{path}: no previous/next link"
    assert not list(site.rglob("*solution*")), "a page named after solutions"


def test_lessons_keep_every_picture(site):
    """A lesson page shows as many pictures as its notebook stored (PNG and SVG outputs)."""
    for lesson in LESSONS:
        outputs = [output for cell in json.loads(lesson.read_text())["cells"] for output in cell.get("outputs", [])]
        stored = sum(1 for o in outputs if {"image/png", "image/svg+xml"} & set(o.get("data", {})))
        page = (site / "lessons" / f"{lesson.stem}.html").read_text()
        shown = len(re.findall(r'<img [^>]*src="\.\./_images/', page))
        assert shown == stored, f"{lesson.name}: {stored} pictures stored, {shown} on the page"


def test_lab_link_takes_a_hub_address():
    assert lab_link("https://hub.example.edu/hub/user-redirect/lab/tree/kit/{path}", "lessons/01_tensors.ipynb") \
        == "https://hub.example.edu/hub/user-redirect/lab/tree/kit/lessons/01_tensors.ipynb"
    assert lab_link("http://127.0.0.1:8888/lab/tree/", "lessons/02_devices.ipynb") \
        == "http://127.0.0.1:8888/lab/tree/lessons/02_devices.ipynb"


def test_search_finds_a_lesson_by_a_term(browser):
    base, page = browser
    page.goto(f"{base}search.html?q=strides")
    page.wait_for_selector("#search-results ul.search li a", timeout=30_000)
    found = page.eval_on_selector_all("#search-results ul.search li a", "links => links.map(a => a.href)")
    assert f"{base}lessons/01_tensors.html" in {link.split("#")[0].split("?")[0] for link in found}
    # and the check can fail: a word in no page finds nothing
    page.goto(f"{base}search.html?q=qqxqzzyq")
    page.wait_for_function("() => document.querySelector('#search-results p') && "
                           "/did not match/.test(document.querySelector('#search-results').innerText)",
                           timeout=30_000)
    assert page.locator("#search-results ul.search li").count() == 0


def test_the_reference_is_the_same_whatever_the_process_imported():
    """The site is built in a fresh process; a test process may have imported reftorch.fx
    (lesson 09's tracer) already, which once gave it 22 more entries than the built pages."""
    names = "import json; from course.site.reference import walk; print(json.dumps([e.name for e in walk()]))"
    fresh = subprocess.run([sys.executable, "-c", names], capture_output=True, text=True, check=True)
    warmed = subprocess.run([sys.executable, "-c", "import reftorch.fx; " + names],
                            capture_output=True, text=True, check=True)
    assert json.loads(fresh.stdout) == json.loads(warmed.stdout)
    assert "reftorch.fx.GraphModule" in json.loads(fresh.stdout)


def test_reference_links_every_entry_to_torch(site):
    entries = reference_entries()
    mirrored = [e for e in entries if e.torch_name] + [m for e in entries for m in e.members if m.torch_name]
    pages = {p: p.read_text() for p in (site / "api").glob("*.html")}
    links = [link for text in pages.values() for link in re.findall(r'Mirrors <a class="reference external" href="([^"]+)"', text)]
    assert len(links) == len(mirrored)
    assert all(link.startswith("https://docs.pytorch.org/docs/stable/") for link in links)
    top = pages[site / "api" / "reftorch.html"]
    assert 'id="reftorch.add"' in top
    assert 'href="https://docs.pytorch.org/docs/stable/generated/torch.add.html"' in top
    assert 'href="https://docs.pytorch.org/docs/stable/generated/torch.nn.Linear.html"' in pages[site / "api" / "reftorch.nn.html"]


def test_site_passes_the_student_kit_audit_and_the_audit_can_fail(site, tmp_path):
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    secrets = secret_lines(REPO_ROOT)
    assert audit_files(site, REPO_ROOT, secrets) == []
    # a solution line as Sphinx would show it (each token in its own tag) on a copied page
    line, secret = next(iter(sorted(secrets.items())))
    page = (site / "assignments" / RELEASES[0].parent.name / f"{RELEASES[0].stem}.html").read_text()
    leaked = page.replace("</main>", highlight(line, PythonLexer(), HtmlFormatter()) + "</main>", 1)
    (tmp_path / "page.html").write_text(leaked)
    assert audit_files(tmp_path, REPO_ROOT, secrets) == [f"page.html: holds a line of {secret.origin}: {line!r}"]


def test_walk_reports_a_broken_link_picture_and_anchor(site, browser):
    base, page = browser
    home = (site / "index.html").read_text()
    broken = home.replace("</main>", '<a href="lessons/99_missing.html">gone</a>'
                          '<a href="lessons/01_tensors.html#no-such-section">nowhere</a>'
                          '<img src="_images/missing.png" alt="missing"></main>', 1)
    (site / "broken.html").write_text(broken)
    try:
        problems = walk(page, base, "broken.html", follow=False).problems
    finally:
        (site / "broken.html").unlink()
    assert "broken.html: broken link: lessons/99_missing.html (HTTP 404)" in problems
    assert "broken.html: picture does not load: _images/missing.png" in problems
    assert "broken.html: broken link: lessons/01_tensors.html#no-such-section (no such anchor)" in problems
    assert any(p.startswith("broken.html: HTTP 404:") for p in problems)


def test_screenshots_of_home_and_a_lesson(browser, tmp_path):
    base, page = browser
    SCREENSHOTS = Path(os.environ.get("COURSE_SCREENSHOTS") or tmp_path)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size({"width": 1400, "height": 900})
    for name, url in (("site_home.png", "index.html"), ("site_lesson.png", f"lessons/{LESSONS[0].stem}.html")):
        page.goto(base + url)
        page.evaluate("() => document.fonts.ready")
        page.screenshot(path=str(SCREENSHOTS / name))
        assert (SCREENSHOTS / name).stat().st_size > 20_000, f"{name}: an empty-looking screenshot"
