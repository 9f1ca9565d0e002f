"""Losses against torch 2.13: cross_entropy and nll_loss over every input and target shape torch
accepts (class indices or probabilities, ignore_index=-100), their node names, and softmax given no
dim; cross_entropy's class weights and label smoothing, binary cross-entropy (with and without
logits, weights, pos_weight, the loss modules) with the gradients of every input, and the inputs
and targets torch refuses."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import reftorch
from engine_support import (
    ENGINE, LIBS, assert_same, grads_and_chain, make_array, node_chain, same_error, same_program, same_warnings,
    seeds, shapes,
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


# -- binary cross-entropy and cross_entropy's options, with their gradients -------------------
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy_losses(reduction, weighted):
    x = make_array(7, (4, 3), "float64")
    y = np.random.default_rng(7).uniform(0, 1, size=(4, 3))
    w = np.random.default_rng(8).uniform(0.5, 2, size=(4, 3))
    pw = np.random.default_rng(9).uniform(0.5, 2, size=(3,))
    weight = (lambda lib: lib.tensor(w)) if weighted else (lambda lib: None)
    grads_and_chain(lambda lib, x, y: lib.nn.functional.binary_cross_entropy_with_logits(
        x, y, weight(lib), reduction=reduction), x, y)
    grads_and_chain(lambda lib, x, y: lib.nn.functional.binary_cross_entropy_with_logits(
        x, y, pos_weight=lib.tensor(pw), reduction=reduction), x, y)
    grads_and_chain(lambda lib, x, y: lib.nn.functional.binary_cross_entropy(
        x.sigmoid(), y, weight(lib), reduction=reduction), x, y)
    same_error(lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(
        lib.ones(2), lib.ones(2), pos_weight=lib.ones(2, requires_grad=True)))


def test_binary_cross_entropy_errors_and_modules():
    same_error(lambda lib: lib.nn.functional.binary_cross_entropy(lib.tensor([1.5]), lib.tensor([1.0])))
    same_error(lambda lib: lib.nn.functional.binary_cross_entropy_with_logits(lib.ones(3, 1), lib.ones(3)))
    same_error(lambda lib: lib.nn.functional.binary_cross_entropy(lib.ones(3, 1) / 2, lib.ones(3)))

    def modules(lib):
        x, y = lib.tensor([[0.2, -1.0], [3.0, 0.5]]), lib.tensor([[1.0, 0.0], [1.0, 1.0]])
        return (lib.nn.BCEWithLogitsLoss()(x, y), lib.nn.BCEWithLogitsLoss(pos_weight=lib.tensor([2.0, 1.0]))(x, y),
                lib.nn.BCELoss(reduction="sum")(x.sigmoid(), y), lib.nn.L1Loss()(x, y), repr(lib.nn.BCELoss()))
    same_program(modules)


@pytest.mark.parametrize("options", [dict(), dict(weight=True), dict(label_smoothing=0.1),
                                     dict(weight=True, label_smoothing=0.2), dict(ignore_index=2),
                                     dict(reduction="sum", label_smoothing=0.1), dict(reduction="none", weight=True)])
def test_cross_entropy_weight_ignore_index_and_label_smoothing(options):
    x = make_array(3, (5, 4), "float64")
    target = np.array([1, 3, -100, 2, 0])
    weight = np.array([1.0, 2.0, 0.5, 1.5])

    def program(lib, x):
        opts = dict(options)
        if opts.pop("weight", False):
            opts["weight"] = lib.tensor(weight)  # (a class weight that requires grad is refused)
        t = lib.tensor(target if "ignore_index" not in opts else np.where(target < 0, 2, target))
        return lib.nn.functional.cross_entropy(x, t, **opts) * 1.0
    grads_and_chain(program, x)
    probs = np.random.default_rng(1).dirichlet(np.ones(4), size=5)
    grads_and_chain(lambda lib, x, p: lib.nn.functional.cross_entropy(
        x, p, weight=lib.tensor(weight) if options.get("weight") else None,
        label_smoothing=options.get("label_smoothing", 0.0), reduction=options.get("reduction", "mean")) * 1.0,
        x, probs)
    same_error(lambda lib: lib.nn.functional.cross_entropy(lib.ones(2, 3), lib.tensor([0, 1]),
                                                           weight=lib.ones(3, requires_grad=True)))


@pytest.mark.parametrize("values", [([0.5], [2.0]), ([0.5], [-0.1]), ([1.5, 0.5], [0.5, 2.0]), ([0.5, 1.5], [2.0, 0.5])])
def test_binary_cross_entropy_refuses_targets_outside_0_1_as_torch(values):
    same_error(lambda lib: lib.nn.functional.binary_cross_entropy(lib.tensor(values[0]), lib.tensor(values[1])))
