"""The storage picture of lesson 01 (reftorch.viz.storage_diagram) draws what torch does.

Every view below is built twice, in torch and in reftorch, over an ``arange`` base, so the
value of each torch element *is* its storage position: that is the oracle the picture's
arrows are checked against, independent of the strides reftorch computes. The picture is
also rendered by the real ``dot`` program, and checked as rendered (SVG).
"""
from __future__ import annotations

import html
import itertools
import re
import subprocess

import pytest
import torch

import reftorch
from reftorch.viz import storage_diagram

VIEWS = {
    "contiguous": lambda lib: lib.arange(12).view(3, 4),
    "transpose": lambda lib: lib.arange(12).view(3, 4).t(),
    "step slice with offset": lambda lib: lib.arange(12).view(3, 4)[1:, ::2],
    "expand (stride 0)": lambda lib: lib.arange(4).expand(3, 4),
    "1-d steps from an offset": lambda lib: lib.arange(10)[3::3],
    "0-d": lambda lib: lib.arange(12).view(3, 4)[1, 2],
    "3-d permute": lambda lib: lib.arange(12).view(2, 2, 3).permute(2, 0, 1),
    "3-d expand": lambda lib: lib.arange(3).view(3, 1).expand(2, 3, 2),
}
EDGE = re.compile(r"^\s*(row[\d_]*):i([\d_]*):s -> storage:p(\d+):n", re.MULTILINE)
CELL = re.compile(r'<td port="i([\d_]*)"[^>]*>.*?<b>([^<]*)</b>')
REACHED = re.compile(r'<td port="p(\d+)" bgcolor="#9fd3a8"')


def index_of(port: str) -> tuple:
    return tuple(int(i) for i in port.split("_")) if port else ()


def arrows(source: str) -> list[tuple[tuple, int]]:
    """(logical index, storage position) of every arrow in the DOT source."""
    return [(index_of(port), int(position)) for _, port, position in EDGE.findall(source)]


@pytest.mark.parametrize("name", VIEWS)
def test_one_arrow_per_element_into_the_position_torch_reads(name):
    expected_view = VIEWS[name](torch)
    source = storage_diagram(VIEWS[name](reftorch), name).source
    drawn = arrows(source)
    assert len(drawn) == expected_view.numel()
    all_indices = sorted(itertools.product(*(range(n) for n in expected_view.shape)))
    assert sorted(index for index, _ in drawn) == all_indices  # each element exactly once
    for index, position in drawn:
        assert position == expected_view[index].item(), index  # arange: value == position


@pytest.mark.parametrize("name", VIEWS)
def test_grid_cells_show_the_values_and_storage_marks_what_is_reached(name):
    expected_view = VIEWS[name](torch)
    source = storage_diagram(VIEWS[name](reftorch), name).source
    cells = {index_of(port): int(value) for port, value in CELL.findall(source)}
    assert cells == {index: expected_view[index].item()
                     for index in itertools.product(*(range(n) for n in expected_view.shape))}
    assert {int(p) for p in REACHED.findall(source)} == set(expected_view.flatten().tolist())
    caption = (f"size={list(expected_view.shape)} stride={list(expected_view.stride())} "
               f"offset={expected_view.storage_offset()} contiguous={expected_view.is_contiguous()}")
    assert caption in html.unescape(source)


@pytest.mark.parametrize("name", VIEWS)
def test_a_torch_tensor_draws_the_same_picture(name):
    assert storage_diagram(VIEWS[name](torch), name).source == storage_diagram(VIEWS[name](reftorch), name).source


@pytest.mark.parametrize("name", ["transpose", "3-d permute", "expand (stride 0)"])
def test_rendered_by_dot_every_port_is_found_one_arrow_per_element_no_text_below_12pt(name):
    expected_view = VIEWS[name](torch)
    source = storage_diagram(VIEWS[name](reftorch), name).source
    # the real dot program; a port it does not find is only a warning, so stderr must be empty
    done = subprocess.run(["dot", "-Tsvg"], input=source, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    svg = done.stdout
    drawn = re.findall(r'<g id="edge\d+" class="edge">', svg)
    assert len(drawn) == expected_view.numel()  # invisible layout edges are not drawn
    sizes = [float(s) for s in re.findall(r'font-size="([\d.]+)"', svg)]
    assert sizes and min(sizes) >= 12


def test_refuses_what_it_cannot_draw_readably():
    with pytest.raises(ValueError, match=r"0 to 3 dims, got 4 dims"):
        storage_diagram(reftorch.zeros(1, 1, 1, 1))
    with pytest.raises(ValueError, match=r"max_elements=48 elements \(one arrow each\), got 49"):
        storage_diagram(reftorch.zeros(7, 7))
    with pytest.raises(ValueError, match=r"max_cells=40 storage cells, got a storage of 48"):
        storage_diagram(reftorch.zeros(6, 8)[:1])
