"""A loop's gradient reads the forward step's values that change with the states (the gates'
activations, tanh(c)) from what the forward loop stacked, instead of computing them again
(core/ops/loop_hoist.cpp state_values, core/ops/loop_ops.cpp grad_loop); the forward loop
computes and stores them only where a gradient reads them. Values: test_loops.py checks the
gradients of such loops against unrolled loops and finite differences.
"""
import kb

SCRIPT = """
import sys
import numpy as np
import kb
from test_loops import lstm_like, rnn
from kb import F64, const, placeholder
x, h = placeholder([3, 5, 4], F64), placeholder([3, 6], F64)
W = kb.variable(np.full((4, 6), 0.1), F64)
U = kb.variable(np.full((6, 6), 0.2), F64)
last, outs, states = rnn(lstm_like(W, U), x, [h, kb.op("multiply", h, const(np.float64(0.5)))])
loss = kb.op("sum", outs, None, 0, 0)
outputs = [loss] + (kb.gradients(loss, [x, W, U, h]) if sys.argv[1] == "train" else [])
kb.Function([x, h], outputs)(np.ones((3, 5, 4)), np.ones((3, 6)))
"""


def plans(case):
    """The op names of every plan logged, in order: the loop bodies', then the function's."""
    return kb.logged_plans(SCRIPT, case, KB_FUSE="0")


def test_the_gradient_loop_reads_the_stored_activations():
    forward_body, gradient_body, outer = plans("train")
    assert outer.count("Loop") == 2
    assert "Sigmoid" in forward_body and "Tanh" in forward_body
    # No activation computed again: the gradient step multiplies and adds stored values.
    assert "Sigmoid" not in gradient_body and "Tanh" not in gradient_body, gradient_body
    assert "MatMul" in gradient_body  # dz U^T


def test_a_loop_without_gradient_stores_nothing_extra():
    body, outer = plans("forward")
    assert outer.count("Loop") == 1
    assert body.count("Sigmoid") == 1 and body.count("Tanh") == 2, body
