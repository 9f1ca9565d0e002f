"""Sphinx settings of the course website (`make site`, course/site/build.py).

The source folder Sphinx reads is staged by `course site`: these files, the lessons and the
released assignments as they are in the repository, README.md and docs/ for the pages that
include them. Notebooks are rendered from their stored outputs, never executed.
"""
project = "PyTorch from the inside"
author = "the reftorch course"

extensions = [
    "myst_nb",              # notebooks and Markdown (MyST)
    "sphinx.ext.autodoc",   # the reftorch reference, from its docstrings
    "sphinx.ext.viewcode",  # [source] beside each entry: reftorch is meant to be read
    "course.site.sphinx_ext",
]

root_doc = "index"
# _repo/ holds files that pages include (README.md, docs/...): never pages themselves
exclude_patterns = ["_repo", "lessons/README.md"]

# Stored outputs only: a lesson runs for up to a minute and some need a GPU to mean anything.
nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
add_module_names = False

html_theme = "sphinx_book_theme"
html_title = "PyTorch from the inside"
html_static_path = ["_static"]
html_css_files = ["course.css"]
html_copy_source = False       # no _sources/: the notebooks are opened in JupyterLab instead
html_show_sourcelink = False
html_last_updated_fmt = None
html_show_copyright = False
html_favicon = "_static/favicon.svg"
# The theme's script reads the reader's light/dark choice, falling back on this; left
# empty it logs a console error on a reader's first visit.
html_context = {"default_mode": "light"}
html_theme_options = {
    "show_toc_level": 2,
    "use_download_button": False,     # it offers _sources/, which the site does not copy
    "use_fullscreen_button": True,
    "home_page_in_toc": True,
    "show_navbar_depth": 1,
    # The sidebar's deepest page is at level 3 (Reference > API > a class). The theme's default,
    # 4, gives the same sidebar on every page but resolves every page's sections for each of
    # them: with 3 the build took 52 s instead of 129 s, same links on all 153 pages.
    "max_navbar_depth": 3,
}

# MathJax 2 from the jupyter-server-mathjax package, copied into _static/mathjax by the
# course extension: formulas render with no network. Its only web font is STIX-Web.
mathjax_path = "mathjax/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"
mathjax2_config = {
    # MathJax_Blank (a font that must not load, to measure with) defaults to url(about:blank),
    # which Chromium refuses with a console error; a local() font that is not there does not.
    "HTML-CSS": {"availableFonts": [], "webFont": "STIX-Web", "imageFont": None, "preferredFont": None,
                 "styles": {"@font-face": {"font-family": "MathJax_Blank", "src": "local('MathJax_Blank')"}}},
    # MyST marks each page "tex2jax_ignore" (so that a stray $ in prose stays a dollar) and
    # each formula "math": MathJax 2 typesets only those, as MyST sets up MathJax 3 to.
    "tex2jax": {"inlineMath": [["\\(", "\\)"]], "displayMath": [["\\[", "\\]"]],
                "processClass": "tex2jax_process|mathjax_process|math|output_area",
                "processEscapes": True, "processEnvironments": True},
    "menuSettings": {"zoom": "None"},
}
