"""What one submission may cost the host, bounded before anything is parsed or rendered
(issue 31): a flood of empty cells is refused on its bytes, a markdown formatting bomb
renders as much HTML as an honest cell. No timing here (bench/ measures): the bounds are
on what is built, each shown against the unbounded code path once (commit message)."""
from __future__ import annotations

import json
import tracemalloc

import nbformat
import pytest

from attacks import inject

ASSIGNMENT = "04_autograd_advanced"


def _builder(name: str, function: str):
    source, _ = inject.attack_source(name)
    namespace: dict = {}
    exec(source, namespace)  # noqa: S102 - our own attack file
    return namespace[function]


@pytest.fixture(scope="module")
def spec():
    from autograder.plan import load_spec
    return load_spec(ASSIGNMENT, ASSIGNMENT, inject.REPO / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")


def _honest(tmp_path):
    notebook = nbformat.read(str(inject.REPO / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"), as_version=4)
    path = tmp_path / "honest.ipynb"
    nbformat.write(notebook, str(path))
    return notebook, path


def _peak_bytes(function, *args):
    tracemalloc.start()
    try:
        result = function(*args)
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_flood_of_empty_cells_is_refused_before_it_is_parsed(tmp_path):
    from autograder.plan import UnreadableNotebook, read_submission

    _, honest_path = _honest(tmp_path)
    honest, honest_peak = _peak_bytes(read_submission, honest_path)
    flood = tmp_path / "flood.ipynb"
    flood.write_bytes(_builder("cell_flood", "flooded")(honest_path.read_bytes()))
    assert 15 * 2**20 < flood.stat().st_size < 64 * 2**20   # under the size limit: not what stops it
    tracemalloc.start()
    try:
        with pytest.raises(UnreadableNotebook, match="more than 250000 JSON objects and arrays"):
            read_submission(flood)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # the file itself and one copy without its strings, not 5.5 million parsed objects
    assert peak < 4 * flood.stat().st_size, peak   # the bytes and two copies, not 3.6 GiB of objects
    assert len(honest.cells) > 10 and honest_peak < 3 * 2**20


@pytest.mark.parametrize("text, message", [
    ('{"cells": [' + "[" * 100 + "]" * 100 + "]}", "nested 102 levels deep, more than 64"),
    ('{"cells": [' + ",".join(["{}"] * 5001) + "]}", "5001 cells, more than 5000"),
])
def test_deep_or_overlong_notebooks_are_refused_with_the_reason(tmp_path, text, message):
    from autograder.plan import UnreadableNotebook, read_submission

    path = tmp_path / "bad.ipynb"
    path.write_text(text)
    with pytest.raises(UnreadableNotebook, match=message):
        read_submission(path)


def test_honest_outputs_strings_and_braces_in_text_are_not_counted(tmp_path):
    """A long printed output full of braces (a dict printed in a loop) is text, not structure;
    outputs are dropped on reading (the notebook runs again)."""
    from autograder.plan import read_submission

    notebook, _ = _honest(tmp_path)
    printed = "{'a': [1, {'b': 2}]}\n" * 200_000      # 4 MB of braces inside one string
    notebook.cells[-1].outputs = [nbformat.v4.new_output("stream", name="stdout", text=printed)]
    notebook.cells[-1].cell_type = "code"
    path = tmp_path / "long_output.ipynb"
    nbformat.write(notebook, str(path))
    read = read_submission(path)
    assert len(read.cells) == len(notebook.cells) and "outputs" not in json.dumps(read.cells[-1])


def test_a_markdown_formatting_bomb_renders_no_more_than_an_honest_cell(spec):
    from autograder import autograded_notebook

    bomb = _builder("markdown_formatting_bomb", "formatting_bomb_cell")()
    assert len(bomb) <= autograded_notebook.MARKDOWN_CELL_BYTES   # within the rendering limits
    submission = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(bomb)])
    notebook, notes = autograded_notebook.build(spec, submission)
    rendered = notebook.cells[0].source
    assert len(rendered) < 4 * len(bomb), len(rendered)    # was 16 MB
    assert "&lt;i title" in rendered   # its raw HTML shown as text; no tag of it is live
    # an honest cell with a little HTML still renders it
    honest = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("Some <b>bold</b> and *text*")])
    assert "<b>bold</b>" in autograded_notebook.build(spec, honest)[0].cells[0].source
