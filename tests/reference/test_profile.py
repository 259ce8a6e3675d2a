"""KB_PROFILE: per-primitive step times printed to stderr at exit (KB_PROFILE=2: per shape)."""
import os
import subprocess
import sys

import kb

SCRIPT = """
import numpy as np, kb, test_loops as tl
W = kb.variable(np.ones((4, 6)), kb.F64)
xp = kb.placeholder([3, 5, 4], kb.F64)
_, outs, _ = tl.rnn(tl.simple_cell(W, kb.variable(np.eye(6), kb.F64)), xp,
                    [kb.const(np.zeros((3, 6)))])
f = kb.Function([xp], [kb.op("softmax", outs, -1)])
for _ in range(3):
    f(np.zeros((3, 5, 4)))
"""


def profile(level):
    env = dict(os.environ, KB_PROFILE=level, PYTHONPATH=os.path.dirname(kb.__file__))
    r = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                       check=True)
    return r.stderr


def test_profile_per_primitive():
    err = profile("1")
    assert "kbackend step profile" in err
    rows = {ln.split()[0]: ln for ln in err.splitlines()[1:] if ln.startswith("  ")}
    assert "3 calls" in rows["Loop"]  # one Loop step per call
    # h U inside the body (5 steps per call) and x W hoisted before the loop (once per call)
    assert " 18 calls" in rows["MatMul"]
    assert rows["Softmax"].rstrip().endswith("%")


def test_profile_per_shape():
    err = profile("2")
    assert any(ln.strip().startswith("Softmax (3, 5, 6)") for ln in err.splitlines())


def test_no_profile_by_default():
    assert "step profile" not in profile("0")
