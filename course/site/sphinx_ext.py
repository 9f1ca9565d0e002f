"""The course's Sphinx extension: the reftorch reference pages, "open in JupyterLab" links,
and MathJax served from the site itself.

Loaded by docs/site/conf.py. Settings (``-D`` or ``course site --lab-url``):

``course_lab_url``
    Where a reader opens a notebook. ``{path}`` is replaced by the notebook's path in the
    course repository (``lessons/01_tensors.ipynb``); without ``{path}`` the path is appended.
    Default: ``http://localhost:8888/lab/tree/{path}``, the JupyterLab of ``make lab``.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from docutils import nodes

DEFAULT_LAB_URL = "http://localhost:8888/lab/tree/{path}"
# Pages that are notebooks of the course repository, by their folder in it.
NOTEBOOK_FOLDERS = ("lessons/", "assignments/")


def lab_link(template: str, path: str) -> str:
    """The address that opens ``path`` (relative to the course repository) in JupyterLab."""
    return template.replace("{path}", path) if "{path}" in template else template.rstrip("/") + "/" + path


def _write_reference(app) -> None:
    """api/*.rst from reftorch's public names; a file is rewritten only when it changes, so an
    unchanged reference is not read again."""
    from course.site.reference import reference_pages, walk

    folder = Path(app.srcdir) / "api"
    folder.mkdir(exist_ok=True)
    pages = reference_pages(walk())
    for stale in set(folder.glob("*.rst")) - {folder / f"{name}.rst" for name in pages}:
        stale.unlink()
    for name, text in pages.items():
        path = folder / f"{name}.rst"
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)


def _add_lab_link(app, doctree) -> None:
    docname = app.env.docname
    source = Path(app.env.doc2path(docname)).relative_to(app.srcdir).as_posix()
    if not (source.endswith(".ipynb") and source.startswith(NOTEBOOK_FOLDERS)):
        return
    url = lab_link(app.config.course_lab_url, source)
    link = nodes.reference("", "Open this notebook in JupyterLab", refuri=url, classes=["course-lab-link"])
    paragraph = nodes.paragraph("", "", link, nodes.Text(f" ({source})"), classes=["course-lab"])
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is None:
        doctree.insert(0, paragraph)
    else:
        title = next(iter(section.findall(nodes.title)))
        section.insert(section.index(title) + 1, paragraph)


def _viewcode_anchors(app, doctree, docname) -> None:
    """viewcode's [docs] links on a source page point at ``<name>.<object>``, with one module
    name per source file: the first under which any of its objects was documented. The
    reference documents a file's objects under several names (``reftorch.device`` and
    ``reftorch.utils.rename_privateuse1_backend`` both live in one engine file), so each entry
    also gets the id those links use."""
    from sphinx import addnodes
    from sphinx.ext.viewcode import _get_full_modname

    modules = getattr(app.env, "_viewcode_modules", {})
    for signature in doctree.findall(addnodes.desc_signature):
        module, fullname = signature.get("module"), signature.get("fullname")
        if not module or not fullname:
            continue
        source = _get_full_modname(module, fullname)
        entry = modules.get(source)
        if isinstance(entry, tuple) and f"{entry[3]}.{fullname}" not in signature["ids"]:
            signature["ids"].append(f"{entry[3]}.{fullname}")


def _copy_mathjax(app, exception) -> None:
    """MathJax 2 from the jupyter-server-mathjax package, so formulas render with no network."""
    if exception is not None or app.builder.format != "html":
        return
    import jupyter_server_mathjax

    static = Path(jupyter_server_mathjax.__file__).parent / "static"
    target = Path(app.outdir) / "_static" / "mathjax"
    if not (target / "MathJax.js").is_file():
        shutil.copytree(static, target, dirs_exist_ok=True)


def setup(app):
    app.add_config_value("course_lab_url", DEFAULT_LAB_URL, "env", types=[str])
    app.connect("builder-inited", _write_reference)
    app.connect("doctree-read", _add_lab_link)
    app.connect("doctree-resolved", _viewcode_anchors)
    app.connect("build-finished", _copy_mathjax)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
