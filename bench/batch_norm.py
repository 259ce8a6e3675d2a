"""normalize_batch_in_training on a 32x56x56x64 float32 batch (W4's activation), channels_last
(axes 0, 1, 2) and channels_first (axes 0, 2, 3): the forward pass (normalized values and
moments), then forward and backward (the gradients of x, gamma and beta of a weighted sum), each
output summed so that no full-size result is copied out. Milliseconds per call, the best of 5
rounds of 10 calls.

    KBACKEND_LIB=build/libkbackend.so python3 bench/batch_norm.py
    python3 bench/batch_norm.py OLD.so NEW.so   # several libraries, interleaved
"""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = {"channels_last": ((32, 56, 56, 64), [0, 1, 2]),
         "channels_first": ((32, 64, 56, 56), [0, 2, 3])}


def measure(case):
    import ctypes
    from ctypes import c_void_p

    import numpy as np
    sys.path.insert(0, os.path.join(HERE, "..", "tests", "reference"))
    import kb
    shape, axes = CASES[case]
    c = shape[3] if axes == [0, 1, 2] else shape[1]
    rng = np.random.default_rng(0)
    x = kb.variable(rng.standard_normal(shape).astype(np.float32))
    gamma = kb.variable(np.ones(c, np.float32))
    beta = kb.variable(np.zeros(c, np.float32))
    outs = [c_void_p() for _ in range(3)]
    kb.check(kb.lib.kb_normalize_batch_in_training(
        x, gamma, beta, kb.i64(axes), len(axes), ctypes.c_double(1e-3),
        *[ctypes.byref(o) for o in outs]))
    normed, mean, var = [kb.Tensor(o.value) for o in outs]

    def total(t):
        return kb.op("sum", t, None, 0, 0)

    w = kb.const(rng.standard_normal(shape).astype(np.float32))
    grads = kb.gradients(total(kb.op("multiply", normed, w)), [x, gamma, beta])
    res = []
    for outputs in ([normed, mean, var], [normed] + grads):
        f = kb.Function([], [total(t) for t in outputs])
        f()
        best = float("inf")
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(10):
                f()
            best = min(best, (time.perf_counter() - t) / 10 * 1e3)
        res.append(best)
    print("%.2f %.2f" % tuple(res))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--measure":
        measure(sys.argv[2])
        return
    libs = sys.argv[1:] or [os.environ.get("KBACKEND_LIB", "build/libkbackend.so")]
    print("| case | library | forward ms | forward+backward ms |")
    print("|---|---|---|---|")
    for case in CASES:
        for lib in libs:
            env = dict(os.environ, KBACKEND_LIB=os.path.abspath(lib))
            out = subprocess.run([sys.executable, __file__, "--measure", case], env=env,
                                 check=True, capture_output=True, text=True).stdout.split()
            print("| %s | %s | %s | %s |" % (case, lib, out[0], out[1]))


if __name__ == "__main__":
    main()
