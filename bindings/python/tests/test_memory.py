"""Tensors dropped without close() are released: no growth over 100k of them."""
import gc
import os
import tracemalloc

import numpy as np

import kbackend as K


def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


def churn(n, a):
    for i in range(n):
        b = a * 2.0 + float(i)  # three new tensors (two constants' worth of graph)
        b[1:]  # a slice, dropped at once
        if i % 3 == 0:
            K.constant(np.ones(64, np.float32))


def test_100k_dropped_tensors_do_not_grow_memory():
    a = K.constant(np.ones(16, np.float32))
    churn(5000, a)  # warm up allocator pools and caches
    gc.collect()
    live0, rss0 = K.live_tensors(), rss_mib()
    tracemalloc.start()
    snap0 = tracemalloc.take_snapshot()
    churn(25000, a)  # about 100k tensors made and dropped
    gc.collect()
    py_growth = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(snap0, "filename"))
    tracemalloc.stop()
    assert K.live_tensors() == live0
    assert rss_mib() - rss0 < 8, "native memory grew by %.1f MiB" % (rss_mib() - rss0)
    assert py_growth < 256 * 1024


def test_the_live_count_sees_held_tensors():
    """The counter the test above relies on does count what is kept."""
    before = K.live_tensors()
    kept = [K.constant([float(i)]) for i in range(100)]
    assert K.live_tensors() == before + 100
    del kept
    gc.collect()
    assert K.live_tensors() == before


def test_held_graphs_do_grow_memory():
    """And RSS does see native tensors that are kept (so the no-growth check can fail)."""
    rss0 = rss_mib()
    kept = [K.constant(np.ones(1 << 16, np.float32)) for _ in range(100)]  # 25 MiB
    assert rss_mib() - rss0 > 16
    del kept


def test_functions_and_results_are_released():
    x = K.placeholder(shape=(None, 8))
    y = K.sum(x * 2.0, axis=1)
    data = [np.ones((4, 8), np.float32)]
    for _ in range(200):
        K.function([x], [y])(data)
    gc.collect()
    live0, rss0 = K.live_tensors(), rss_mib()
    for _ in range(3000):
        f = K.function([x], [y])
        f(data)
    gc.collect()
    assert K.live_tensors() == live0
    assert rss_mib() - rss0 < 8
