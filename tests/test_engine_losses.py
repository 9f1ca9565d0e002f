"""cross_entropy and nll_loss against torch 2.13 over every input and target shape torch accepts
(class indices or probabilities, ignore_index=-100), their node names, and softmax given no dim."""
from __future__ import annotations

import numpy as np
import torch
from hypothesis import given
from hypothesis import strategies as st

import reftorch
from engine_support import (
    ENGINE, LIBS, assert_same, make_array, node_chain, same_error, same_program, same_warnings, seeds, shapes,
)


# -- cross_entropy, nll_loss and the softmax they start from -------------------------------
def test_cross_entropy_ignores_target_minus_100():
    def program(lib):
        x = lib.tensor([[1.0, 2.0, 0.5], [0.1, 0.2, 0.3], [2.0, -1.0, 0.0]], requires_grad=True)
        t = lib.tensor([1, -100, 2])
        losses = [lib.nn.functional.cross_entropy(x, t, reduction=r) for r in ("mean", "sum", "none")]
        sum(loss.sum() for loss in losses).backward()
        return losses, x.grad, type(losses[0].grad_fn).__name__
    same_program(program)
    same_error(lambda lib: lib.nn.functional.nll_loss(lib.zeros(2, 3), lib.tensor([1, -100]), ignore_index=3))


def test_softmax_without_dim_warns_and_picks_torchs_dim():
    for shape in ((3,), (2, 3), (2, 3, 4), (2, 2, 2, 2)):
        same_warnings(lambda lib: lib.nn.functional.softmax(lib.ones(shape)))
        same_program(lambda lib: (lib.nn.functional.softmax(lib.arange(float(np.prod(shape))).reshape(shape)),
                                  lib.nn.functional.log_softmax(lib.arange(float(np.prod(shape))).reshape(shape)),
                                  lib.nn.Softmax()(lib.arange(float(np.prod(shape))).reshape(shape))))


@ENGINE
@given(seed=seeds, batch=st.integers(1, 3), classes=st.integers(2, 4), extra=shapes(0, 2, max_side=3),
       reduction=st.sampled_from(["mean", "sum", "none"]), unbatched=st.booleans(),
       probabilities=st.booleans())
def test_cross_entropy_matches_for_every_accepted_shape(seed, batch, classes, extra, reduction, unbatched,
                                                        probabilities):
    """(C,), (N, C) and (N, C, d1, ...) inputs; class-index or class-probability targets."""
    input_shape = (classes,) if unbatched else (batch, classes) + extra
    target_shape = () if unbatched else (batch,) + extra
    logits = make_array(seed, input_shape, "float32")
    rng = np.random.default_rng(seed + 1)
    labels = rng.integers(0, classes, size=target_shape)
    scores = make_array(seed + 2, input_shape, "float32")

    def program(lib):
        x = lib.tensor(logits, requires_grad=True)
        if probabilities:
            target = lib.softmax(lib.tensor(scores), 0 if unbatched else 1)
        else:
            target = lib.tensor(labels)
        loss = lib.nn.functional.cross_entropy(x, target, reduction=reduction)
        loss.sum().backward()
        return loss, x.grad, node_chain(loss.grad_fn)
    theirs, mine = (program(lib) for lib in LIBS)
    assert_same(mine[:2], theirs[:2], name="cross_entropy")
    assert mine[2] == theirs[2], f"graph {mine[2]} != torch {theirs[2]}"


def test_nll_loss_node_names_match():
    def program(lib):
        names = []
        for shape, target in (((2, 3), [0, 2]), ((3,), 1), ((2, 3, 2, 2), [[[0, 1], [2, 0]], [[1, 1], [0, 2]]])):
            x = lib.ones(shape, requires_grad=True)
            names.append(lib.nn.functional.nll_loss(x, lib.tensor(target)).grad_fn.name())
        return names
    assert program(reftorch) == program(torch)
