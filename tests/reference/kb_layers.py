"""ctypes declarations of the paddings, resizing, normalization, random tensors and dropout, and
locally connected parts of include/kbackend.h, and the helpers their tests share (test_padding.py,
test_resize.py, test_batch_normalization.py, test_batch_norm.py, test_random.py,
test_local_conv.py): data formats, the finite-difference step, and the
normalize_batch_in_training wrapper (the gradient check itself is kb.fd_check)."""
import ctypes
from ctypes import POINTER, c_char_p, c_double, c_int32, c_int64, c_size_t, c_void_p

import kb
from kb import E, I64P, OUT, S, T, i64

from kb_conv import FIRST, LAST
FORMAT = {None: -1, LAST: kb.CHANNELS_LAST, FIRST: kb.CHANNELS_FIRST}

lib = kb.lib
_sig = {
    "kb_parse_interpolation": (S, [c_char_p, POINTER(c_int32)]),
    "kb_image_data_format": (S, [POINTER(c_int32)]),
    "kb_set_image_data_format": (S, [E]),
    "kb_temporal_padding": (S, [T, I64P, c_size_t, OUT]),
    "kb_spatial_2d_padding": (S, [T, I64P, c_size_t, E, OUT]),
    "kb_spatial_3d_padding": (S, [T, I64P, c_size_t, E, OUT]),
    "kb_resize_images": (S, [T, c_int64, c_int64, E, E, OUT]),
    "kb_resize_volumes": (S, [T, c_int64, c_int64, c_int64, E, OUT]),
    "kb_batch_normalization": (S, [T, T, T, T, T, c_int64, c_double, OUT]),
    "kb_normalize_batch_in_training": (S, [T, T, T, I64P, c_size_t, c_double, OUT, OUT, OUT]),
    "kb_random_normal": (S, [I64P, c_size_t, c_double, c_double, E, I64P, OUT]),
    "kb_truncated_normal": (S, [I64P, c_size_t, c_double, c_double, E, I64P, OUT]),
    "kb_random_binomial": (S, [I64P, c_size_t, c_double, E, I64P, OUT]),
    "kb_random_uniform_like": (S, [T, c_double, c_double, E, I64P, OUT]),
    "kb_random_normal_like": (S, [T, c_double, c_double, E, I64P, OUT]),
    "kb_truncated_normal_like": (S, [T, c_double, c_double, E, I64P, OUT]),
    "kb_random_binomial_like": (S, [T, c_double, E, I64P, OUT]),
    "kb_dropout": (S, [T, c_double, I64P, c_size_t, I64P, OUT]),
    "kb_local_conv1d": (S, [T, T, I64P, c_size_t, I64P, c_size_t, E, OUT]),
    "kb_local_conv2d": (S, [T, T, I64P, c_size_t, I64P, c_size_t, I64P, c_size_t, E, OUT]),
}
for _n, (_res, _args) in _sig.items():
    getattr(lib, _n).restype = _res
    getattr(lib, _n).argtypes = _args


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
