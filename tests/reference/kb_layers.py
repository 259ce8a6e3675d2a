"""The helpers the tests of the paddings, resizing, normalization, random tensors and dropout, and
locally connected parts of include/kbackend.h share (test_padding.py,
test_resize.py, test_batch_normalization.py, test_batch_norm.py, test_random.py,
test_local_conv.py): data formats, the finite-difference step, and the
normalize_batch_in_training wrapper (the gradient check itself is kb.fd_check)."""
import ctypes
from ctypes import c_int32, c_void_p

import kb
from kb import i64

from kb_conv import FIRST, LAST
FORMAT = {None: -1, LAST: kb.CHANNELS_LAST, FIRST: kb.CHANNELS_FIRST}

lib = kb.lib


def enum(table, v):
    """A string option through its table; an int passes through (to test bad values)."""
    return v if isinstance(v, int) else table[v]


def image_data_format():
    f = c_int32()
    kb.check(lib.kb_image_data_format(ctypes.byref(f)))
    return f.value


# ---- gradients by central finite differences (float64) ------------------------------------------
H = 1e-6


# ---- batch normalization (also test_batch_norm.py) ----------------------------------------------
FUSED_EPS = 1.001e-5


def normalize_batch_in_training(x, gamma, beta, axes, epsilon=1e-3):
    outs = [c_void_p() for _ in range(3)]
    kb.check(lib.kb_normalize_batch_in_training(x, gamma, beta, i64(list(axes) or [0]),
                                                len(axes), epsilon,
                                                *[ctypes.byref(o) for o in outs]))
    return [kb.Tensor(o.value) for o in outs]


def np_moments(x, axes):
    return x.mean(axis=tuple(axes)), x.var(axis=tuple(axes))
