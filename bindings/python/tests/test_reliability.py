"""Defects an outside test found through Python, each fixed in the core: a deep graph released on
a thread with a small stack, and bool arrays whose bytes are neither 0 nor 1 (NumPy views)."""
import threading

import numpy as np

import kbackend as K


def test_releasing_a_deep_graph_on_a_small_stack():
    # 60k ops: the node destructor used to recurse once per op, past 1 MiB (the JVM's default).
    x = K.placeholder(shape=(2,))
    y = x
    for _ in range(60000):
        y = -y
    holder = [y]
    del y
    errors = []

    def release():
        try:
            holder.clear()  # drops the chain's last reference on this thread
        except Exception as e:  # pragma: no cover - a crash would not get here anyway
            errors.append(e)

    old = threading.stack_size(1 << 20)
    try:
        t = threading.Thread(target=release)
        t.start()
        t.join()
    finally:
        threading.stack_size(old)
    assert not errors and not holder
    assert np.array_equal(K.eval(-K.constant([1.0, -2.0])), [-1.0, 2.0])


def test_bool_views_of_other_bytes_are_true():
    raw = np.array([0, 1, 2, 254, 0, 128], dtype=np.uint8)
    b = raw.view(np.bool_)
    want = np.array([0, 1, 1, 1, 0, 1], dtype=np.int32)
    assert np.array_equal(K.eval(K.cast(K.constant(b), "int32")), want)
    assert np.array_equal(K.eval(K.equal(K.constant(b), K.constant(np.ones(6, np.bool_)))),
                          want.astype(bool))
    v = K.variable(b)
    assert np.array_equal(K.eval(K.cast(v, "int32")), want)
    K.set_value(v, b[::-1].copy())
    assert np.array_equal(K.eval(K.cast(v, "int32")), want[::-1])
    p = K.placeholder(shape=(6,), dtype="bool")
    f = K.function([p], [K.cast(p, "int32")])
    assert np.array_equal(f([b])[0], want)
