"""What a student reads sends them to the student kit or the class hub, never to `make lab`
in the instructor's repository (issue 27 item 15): the README's top commands and its
Students section, and the site's "Get started: students" page with what it includes."""
from __future__ import annotations

import re
from pathlib import Path

from coursebase.paths import REPO   # the instructor's repository (and so not a test the kit ships)


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    following = re.search(r"^## ", text[start + len(heading):], re.MULTILINE)
    return text[start:start + len(heading) + following.start()] if following else text[start:]


def _included(page: Path) -> list[str]:
    """The repository files a site page includes (MyST's ```{include} _repo/PATH```)."""
    return re.findall(r"```\{include\} _repo/(\S+)", page.read_text())


def test_the_readme_sends_students_to_the_kit_or_the_hub():
    readme = (REPO / "README.md").read_text()
    first_block = readme[readme.index("```bash"):readme.index("```", readme.index("```bash") + 7)]
    make_lab = next(line for line in first_block.splitlines() if line.startswith("make lab"))
    assert "student" not in make_lab.lower(), f"the instructor's make lab is offered to students: {make_lab!r}"
    students = _section(readme, "## Students")
    clone, lab = students.find("git clone <the kit"), students.find("make lab")
    assert 0 <= clone < lab, "the Students section must clone the kit before its first `make lab`"
    assert "make update" in students and "class hub" in students
    assert "do not clone it" in readme[:readme.index("## Students")]


def test_the_sites_student_page_is_the_kits_start_not_the_instructors_readme():
    page = REPO / "docs" / "site" / "students.md"
    included = _included(page)
    assert "README.md" not in included, "the students' page includes the instructor's README (make lab there)"
    assert included == ["course/kit/README.md"], included
    text = page.read_text()
    assert "student kit" in text and "class hub" in text and "do not clone it" in text
    kit_start = (REPO / "course" / "kit" / "README.md").read_text()
    assert "git clone <the kit's address>" in kit_start and "make update" in kit_start
