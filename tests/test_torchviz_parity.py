"""torchviz's make_dot draws a reftorch graph unchanged, and it is the same picture as torch's."""
from __future__ import annotations

import re

import pytest
import torch
from torchviz import make_dot

import reftorch


def canonical(dot) -> tuple:
    """Node labels and labelled edges of a make_dot graph, independent of object ids."""
    labels, edges = {}, []
    for line in dot.body:
        node = re.match(r'\s*(\d+) \[label=(?:"(.*?)"|(\S+?))(?: fillcolor=(\S+))?\]', line, re.S)
        if node:
            labels[node.group(1)] = ((node.group(2) if node.group(2) is not None else node.group(3)).strip(), node.group(4))
            continue
        edge = re.match(r"\s*(\d+) -> (\d+)(.*)", line)
        if edge:
            edges.append((edge.group(1), edge.group(2), edge.group(3).strip()))
    named_edges = sorted((labels[a], labels[b], style) for a, b, style in edges)
    return sorted(labels.values(), key=str), named_edges


def programs(lib):
    nn = lib.nn
    x = lib.ones(3, requires_grad=True)
    W = lib.full((2, 3), 0.5, requires_grad=True)
    b = lib.zeros(2, requires_grad=True)
    yield "mv + add + sum", ((W @ x + b).relu().sum())
    yield "clone and detach", (x + x.clone() + lib.ones(3).detach()).sum()
    model = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2))
    yield "linear layers", nn.functional.cross_entropy(model(lib.ones(5, 4)), lib.zeros(5, dtype=lib.int64))
    y = x * 2
    yield "view of a non-leaf", (y.view(3, 1).t()[0] * y[1]).sum()
    yield "in-place on a non-leaf", (x.exp().mul_(2)).sum()


@pytest.mark.parametrize("index", range(5))
def test_make_dot_draws_the_same_graph(index):
    name_t, out_t = list(programs(torch))[index]
    name_r, out_r = list(programs(reftorch))[index]
    assert name_t == name_r
    assert canonical(make_dot(out_r)) == canonical(make_dot(out_t)), name_t


def test_canonical_form_tells_graphs_apart():
    x = reftorch.ones(3, requires_grad=True)
    assert canonical(make_dot((x * 2).sum())) != canonical(make_dot((x + 2).sum()))
