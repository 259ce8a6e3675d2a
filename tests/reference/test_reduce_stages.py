"""Reductions over axes that do not form one block (NCHW's (0, 2, 3), three separate blocks,
size-1 and size-0 axes between them): the CPU reduces one block at a time, the results kept in the
accumulation type between stages, so the result is still rounded once and does not depend on the
thread count."""

import numpy as np
import pytest

import kb
from kb import assert_close, ev, i64, op

CASES = [((4, 5, 6, 7), [0, 2, 3]),
         ((4, 5, 6, 7), [0, 2]),
         ((3, 4, 5, 6, 7), [0, 2, 4]),
         ((3, 4, 5, 6, 7), [1, 3]),
         ((2, 3, 1, 4, 5, 6), [0, 2, 3, 5]),
         ((2, 3, 1, 4, 5, 6), [0, 1, 5]),
         ((6, 1, 5, 4), [0, 3]),
         ((64, 16, 40, 40), [0, 2, 3]),
         ((9, 300, 7, 50), [0, 2]),
         ((3, 0, 4, 5), [0, 2]),
         ((0, 3, 4), [0, 2])]
NP_REDUCE = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod, "mean": np.mean}


def reduce(name, axes):
    return lambda t: op(name, t, i64(axes), len(axes), 0)


@pytest.mark.parametrize("shape,axes", CASES, ids=str)
@pytest.mark.parametrize("name", sorted(NP_REDUCE))
def test_separate_blocks(name, shape, axes, dt, rng):
    if 0 in shape and name in ("max", "min", "mean"):
        pytest.skip("an empty max/min/mean: test_reduce_empty's business")
    x = rng.standard_normal(shape)
    if name == "prod":
        x = 1 + x * 1e-3
    x = x.astype(kb.NP_OF[dt])
    expected = NP_REDUCE[name](x.astype(np.float64), axis=tuple(axes))
    assert_close(ev(reduce(name, axes), x), expected, dt,
                 rtol=1e-5 if dt == kb.F32 else 1e-12)


@pytest.mark.parametrize("shape,axes", [((4, 5, 6, 7), [0, 2, 3]), ((3, 4, 5, 6, 7), [0, 2, 4])],
                         ids=str)
def test_integers_and_booleans(shape, axes):
    rng = np.random.default_rng(5)
    x8 = rng.integers(-128, 128, shape).astype(np.int8)
    # int8 sums wrap as in the type itself (modular: the same at every term or at the end)
    want = np.sum(x8.astype(np.int64), axis=tuple(axes)).astype(np.int8)
    assert_close(ev(reduce("sum", axes), x8), want, kb.I8)
    x32 = rng.integers(-10**6, 10**6, shape).astype(np.int32)
    for name in ("max", "min", "sum"):
        assert_close(ev(reduce(name, axes), x32), NP_REDUCE[name](x32, axis=tuple(axes)), kb.I32)
    b = rng.random(shape) < 0.02
    for name, ref in (("any", np.any), ("all", np.all)):
        assert_close(ev(reduce(name, axes), b), ref(b, axis=tuple(axes)), kb.BOOL)
        assert_close(ev(reduce(name, axes), ~b), ref(~b, axis=tuple(axes)), kb.BOOL)


@pytest.mark.parametrize("dtype", [kb.F16, kb.BF16], ids=["float16", "bfloat16"])
def test_16_bit_floats_round_once(dtype):
    # 16-bit values summed in double are exact here: the result is the exact sum rounded once
    # (a stage that rounded its partial sums to 16 bits would miss it).
    rng = np.random.default_rng(6)
    shape, axes = (64, 16, 20, 30), (0, 2, 3)
    # zero-mean values: 64 partial sums of 600 values rounded to 16 bits each would miss the
    # once-rounded sum in several of the 16 results
    stored = kb.narrow_store(rng.standard_normal(shape) * 3, dtype)
    exact = np.sum(kb.narrow_values(stored, dtype).astype(np.float64), axis=axes)
    x = kb.variable(stored, dtype)
    got = kb.narrow_values(kb.run([reduce("sum", list(axes))(x)])[0], dtype)
    want = kb.narrow_values(kb.narrow_store(exact.astype(np.float32), dtype), dtype)
    np.testing.assert_array_equal(got, want)


def test_bias_gradient_of_channels_first(rng):
    # d/db sum(w * (x + b)), b of shape (1, C, 1, 1): w summed over (0, 2, 3) (SumToLike)
    w = rng.standard_normal((16, 8, 20, 20)).astype(np.float32)
    x = kb.const(rng.standard_normal(w.shape).astype(np.float32))
    b = kb.variable(np.zeros((1, 8, 1, 1), np.float32))
    loss = op("sum", op("multiply", op("add", x, b), kb.variable(w)), None, 0, 0)
    got = kb.run(kb.gradients(loss, [b]))[0]
    assert_close(got, np.sum(w.astype(np.float64), axis=(0, 2, 3), keepdims=True), kb.F32,
                 rtol=1e-5, atol=1e-5)


THREADS_SCRIPT = r"""
import sys
import numpy as np
import kb
kb.lib.kb_set_num_threads(int(sys.argv[1]))
rng = np.random.default_rng(8)
out = []
for dtype, shape, axes in [(np.float32, (64, 16, 40, 40), [0, 2, 3]),
                           (np.float64, (64, 16, 40, 40), [0, 2, 3]),
                           (np.float32, (6, 200, 5, 300), [0, 2]),
                           (np.float64, (5, 40, 6, 30, 20), [0, 2, 4])]:
    x = kb.const((rng.standard_normal(shape) + 2).astype(dtype))
    for name in ("sum", "max"):
        out += kb.run([kb.op(name, x, kb.i64(axes), len(axes), 0)])
np.save(sys.argv[2], np.concatenate([a.astype(np.float64).ravel() for a in out]))
"""


def test_results_do_not_depend_on_the_thread_count(tmp_path):
    one, two = kb.results_by_thread_count(THREADS_SCRIPT, tmp_path)
    np.testing.assert_array_equal(one, two)
