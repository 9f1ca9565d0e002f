"""On the host: the notebook formgrader shows, ``autograded/<student>/<a>/<nb>.ipynb``.

It is the submission as graded, rebuilt from plain parts so that nothing a student wrote
can act in the instructor's browser or break the page:

- the nbgrader metadata of every cell comes from the instructor's source notebook (matched
  by ``grade_id``, first copy only); a student's own copy, of any type, is never kept,
  since formgrader's template writes ``grade_id`` into HTML attributes unescaped;
- locked and test cells get the instructor's source back, as nbgrader's autograde does;
- a student's markdown cell (up to 16 KiB, 48 KiB a notebook; beyond that shown as escaped text) is rendered here, with nbconvert's own markdown renderer but
  harmful link protocols refused (nbconvert allows ``javascript:`` links), the HTML is
  cleaned with bleach (an allow-list of tags, attributes and protocols: event handlers,
  scripts, styles and ``javascript:`` are escaped or removed) and stored as one raw HTML
  block without blank lines, which formgrader's markdown pass leaves as it is;
- raw cells go through nbconvert's ``SanitizeHTML`` and lose their ``raw_mimetype``, so
  formgrader does not emit them as HTML;
- code cells lose their outputs; other cell metadata and attachments that are not
  plain images are dropped.

Built before the gradebook commit (in the worker), so a submission whose cells are of
the wrong types is described in the row's message instead of failing after the commit.
"""
from __future__ import annotations

import copy
import functools
import html
import re

import bleach
import nbformat
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbconvert.preprocessors.sanitize import SanitizeHTML

from .plan import AssignmentSpec

_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif")
_TAGS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "pre", "code", "em", "strong",
         "b", "i", "blockquote", "a", "img", "table", "thead", "tbody", "tr", "th", "td", "hr", "br",
         "del", "span", "div", "sup", "sub", "dl", "dt", "dd", "input"}
# Student markdown rendered per cell and per notebook; the rest is shown as escaped text.
MARKDOWN_CELL_BYTES = 16 * 1024
MARKDOWN_NOTEBOOK_BYTES = 48 * 1024
_IMAGE_DATA = re.compile(r"^data:image/(png|jpeg|gif);base64,[A-Za-z0-9+/=\s]*$")
# Raw HTML in a student's markdown: the HTML parser behind bleach re-opens every open
# formatting element at each new block, so 300 distinct <i title=N> then thousands of <p>
# made 60 MB of HTML in 112 s from 16 KiB. Past this many tags a cell's raw HTML is shown
# as text (its markdown still renders); the result is bounded again after cleaning.
MAX_RAW_TAGS = 64
_RAW_TAG = re.compile(r"<[A-Za-z!/?]")
MAX_RENDERED_GROWTH = 16      # rendered HTML at most this many times the cell, plus 64 KiB


def _url(value: str) -> str:
    # Browsers ignore whitespace and control characters inside a URL's scheme.
    return re.sub(r"[\x00-\x20]", "", value).lower()


def _allowed_attribute(tag: str, name: str, value: str) -> bool:
    """bleach keeps only http(s), mailto and data URLs; data only for images, here."""
    if name in ("title", "alt"):
        return True
    if name == "class":
        return tag in ("span", "div", "pre", "code", "a") and "mermaid" not in value.lower()
    if tag == "a" and name == "href":
        return not _url(value).startswith("data:")
    if tag == "img" and name == "src":
        return not _url(value).startswith("data:") or bool(_IMAGE_DATA.match(value))
    if tag in ("th", "td") and name == "align":
        return True
    return tag == "input" and name in ("type", "checked", "disabled") and (name != "type" or value == "checkbox")


def safe_markdown(source: str, attachments: dict) -> str:
    """A student's markdown as cleaned HTML that formgrader's markdown pass will not touch."""
    if not attachments:
        return _safe_markdown_cached(source)   # most cells are the release's own, unchanged
    return _safe_markdown(source, attachments)


def as_text(source: str) -> str:
    """Markdown too large to render, shown as its text (escaping is linear and quick)."""
    lines = "\n".join(line.rstrip() for line in html.escape(source).strip().split("\n"))
    while "\n\n" in lines:
        lines = lines.replace("\n\n", "\n&#10;")
    return f'<div class="student-markdown"><pre>\n{lines}\n</pre></div>'


@functools.lru_cache(maxsize=4096)
def _safe_markdown_cached(source: str) -> str:
    return _safe_markdown(source, {})


def _safe_markdown(source: str, attachments: dict) -> str:
    raw_html = len(_RAW_TAG.findall(source)) <= MAX_RAW_TAGS
    renderer = IPythonRenderer(escape=not raw_html, allow_harmful_protocols=False, attachments=attachments)
    rendered = MarkdownWithMath(renderer=renderer).render(source)
    cleaned = bleach.clean(rendered, tags=_TAGS, attributes=_allowed_attribute,
                           protocols={"http", "https", "mailto", "data"}, strip=False, strip_comments=True)
    if len(cleaned) > MAX_RENDERED_GROWTH * len(source) + 64 * 1024:
        return as_text(source)
    # One HTML block (CommonMark type 6) ends at the first blank line: keep every line
    # non-blank, writing a newline that follows another as an entity (same text).
    lines = "\n".join(line.rstrip() for line in cleaned.strip().split("\n"))
    while "\n\n" in lines:
        lines = lines.replace("\n\n", "\n&#10;")
    return f'<div class="student-markdown">\n{lines}\n</div>'


def _text(value) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(part, str) for part in value):
        return "".join(value)
    return None


def _instructor_cells(spec: AssignmentSpec) -> dict[str, dict]:
    cells = {}
    for cell in spec.source_notebook.cells:
        meta = cell.get("metadata", {}).get("nbgrader")
        if isinstance(meta, dict) and isinstance(meta.get("grade_id"), str):
            cells.setdefault(meta["grade_id"], cell)
    return cells


def _attachments(cell: dict) -> dict:
    kept = {}
    attachments = cell.get("attachments")
    if isinstance(attachments, dict):
        for name, bundle in attachments.items():
            if isinstance(name, str) and isinstance(bundle, dict):
                images = {k: v for k, v in bundle.items() if k in _IMAGE_TYPES and isinstance(v, str)}
                if images:
                    kept[name] = images
    return kept


def build(spec: AssignmentSpec, submission: nbformat.NotebookNode | None) -> tuple[nbformat.NotebookNode, list[str]]:
    """(the notebook to write, notes on what was wrong with the submission's cells)."""
    instructor = _instructor_cells(spec)
    notes: list[str] = []
    rendered, shown_as_text = 0, 0
    seen: set[str] = set()
    cells = []
    for number, cell in enumerate(submission.cells if submission is not None else [], start=1):
        kind = cell.get("cell_type")
        source = _text(cell.get("source", ""))
        if kind not in ("code", "markdown", "raw") or source is None:
            notes.append(f"cell {number}: not a notebook cell (cell_type {str(kind)[:20]!r}, "
                         f"source of type {type(cell.get('source')).__name__}): left out of the autograded notebook")
            continue
        metadata = cell.get("metadata", {})
        claimed = metadata.get("nbgrader") if isinstance(metadata, dict) else None
        if claimed is not None and not isinstance(claimed, dict):
            notes.append(f"cell {number}: metadata.nbgrader is a {type(claimed).__name__}, not a mapping: ignored")
        grade_id = claimed.get("grade_id") if isinstance(claimed, dict) else None
        trusted = instructor.get(grade_id) if isinstance(grade_id, str) and grade_id not in seen else None
        if trusted is not None:
            seen.add(grade_id)
            kind = trusted.cell_type
            if not trusted.metadata.nbgrader.get("solution"):
                source = trusted.source   # locked and test cells: the instructor's own text
        if kind == "markdown" and (trusted is None or trusted.metadata.nbgrader.get("solution")):
            # Rendering costs ~20 ms a kilobyte for a table: a bounded amount per notebook.
            attachments = _attachments(cell)
            size = len(source) + sum(len(data) for bundle in attachments.values() for data in bundle.values())
            if source in spec.markdown_sources and not attachments:
                source = safe_markdown(source, {})
            elif size <= MARKDOWN_CELL_BYTES and rendered + size <= MARKDOWN_NOTEBOOK_BYTES:
                rendered += size
                source = safe_markdown(source, attachments)
            else:
                source = as_text(source)
                shown_as_text += 1
        new = nbformat.NotebookNode(id=f"cell-{len(cells)}", cell_type=kind, source=source,
                                    metadata=nbformat.NotebookNode())
        if kind == "code":
            new.outputs, new.execution_count = [], None
        if trusted is not None:
            new.metadata["nbgrader"] = copy.deepcopy(trusted.metadata.nbgrader)
        cells.append(new)
    notebook = nbformat.v4.new_notebook(cells=cells, metadata=copy.deepcopy(spec.source_notebook.metadata))
    for cell in notebook.cells:
        if cell.cell_type == "raw":
            if len(cell.source) <= MARKDOWN_CELL_BYTES and rendered + len(cell.source) <= MARKDOWN_NOTEBOOK_BYTES:
                rendered += len(cell.source)
                cell.source = SanitizeHTML().sanitize_html_tags(cell.source)
            else:   # no HTML left to clean: escaped as text
                cell.source = html.escape(cell.source)
                shown_as_text += 1
    if shown_as_text:
        notes.append(f"{shown_as_text} markdown or raw cell(s) shown as plain text: larger than "
                     f"{MARKDOWN_CELL_BYTES // 1024} KiB, or past {MARKDOWN_NOTEBOOK_BYTES // 1024} KiB rendered")
    nbformat.validate(notebook)
    return notebook, notes
