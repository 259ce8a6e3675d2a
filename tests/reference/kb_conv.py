"""Thin Python wrappers of the convolution and pooling part of include/kbackend.h with Keras' argument conventions (strings for padding, data_format and pool_mode)."""
import ctypes
from ctypes import c_int32

import numpy as np

import kb
from kb import i64, op

lib = kb.lib

VALID, SAME, CAUSAL = 0, 1, 2
MAX, AVG = 0, 1
DEFAULT_FORMAT = -1
PADDING = {"valid": VALID, "same": SAME, "causal": CAUSAL}
FORMAT = {None: DEFAULT_FORMAT, "channels_last": kb.CHANNELS_LAST,
          "channels_first": kb.CHANNELS_FIRST}
POOL = {"max": MAX, "avg": AVG}


def enum(table, v):
    """A string option through its table; an int passes through (to test bad values)."""
    return v if isinstance(v, int) else table[v]


def tup(v):
    """(array, count) for a tuple argument; None -> (NULL, 0)."""
    if v is None:
        return None, 0
    v = list(v)
    return i64(v), len(v)


def image_data_format():
    f = c_int32()
    kb.check(lib.kb_image_data_format(ctypes.byref(f)))
    return f.value


def set_image_data_format(f):
    kb.check(lib.kb_set_image_data_format(f))


# Argument tuples for kb_<name> (without the output pointer), so tests can call op() or
# error_of() with the same arguments.
def conv1d_args(x, k, strides=1, padding="valid", data_format=None, dilation_rate=1):
    return (x, k, strides, enum(PADDING, padding), enum(FORMAT, data_format), dilation_rate)


def convnd_args(x, k, strides=None, padding="valid", data_format=None, dilation_rate=None):
    return (x, k, *tup(strides), enum(PADDING, padding), enum(FORMAT, data_format),
            *tup(dilation_rate))


def transpose2d_args(x, k, output_shape, strides=None, padding="valid", data_format=None,
                     dilation_rate=None):
    return (x, k, *tup(output_shape), *tup(strides), enum(PADDING, padding),
            enum(FORMAT, data_format), *tup(dilation_rate))


def transpose3d_args(x, k, output_shape, strides=None, padding="valid", data_format=None):
    return (x, k, *tup(output_shape), *tup(strides), enum(PADDING, padding),
            enum(FORMAT, data_format))


def separable1d_args(x, dk, pk, strides=1, padding="valid", data_format=None, dilation_rate=1):
    return (x, dk, pk, strides, enum(PADDING, padding), enum(FORMAT, data_format), dilation_rate)


def separable2d_args(x, dk, pk, strides=None, padding="valid", data_format=None,
                     dilation_rate=None):
    return (x, dk, pk, *tup(strides), enum(PADDING, padding), enum(FORMAT, data_format),
            *tup(dilation_rate))


def pool_args(x, pool_size, strides=None, padding="valid", data_format=None, pool_mode="max"):
    return (x, *tup(pool_size), *tup(strides), enum(PADDING, padding), enum(FORMAT, data_format),
            enum(POOL, pool_mode))


def conv1d(*a, **kw):
    return op("conv1d", *conv1d_args(*a, **kw))


def conv2d(*a, **kw):
    return op("conv2d", *convnd_args(*a, **kw))


def conv3d(*a, **kw):
    return op("conv3d", *convnd_args(*a, **kw))


def depthwise_conv2d(*a, **kw):
    return op("depthwise_conv2d", *convnd_args(*a, **kw))


def conv2d_transpose(*a, **kw):
    return op("conv2d_transpose", *transpose2d_args(*a, **kw))


def deconv2d(*a, **kw):
    return op("deconv2d", *transpose2d_args(*a, **kw))


def conv3d_transpose(*a, **kw):
    return op("conv3d_transpose", *transpose3d_args(*a, **kw))


def separable_conv1d(*a, **kw):
    return op("separable_conv1d", *separable1d_args(*a, **kw))


def separable_conv2d(*a, **kw):
    return op("separable_conv2d", *separable2d_args(*a, **kw))


def pool2d(*a, **kw):
    return op("pool2d", *pool_args(*a, **kw))


def pool3d(*a, **kw):
    return op("pool3d", *pool_args(*a, **kw))


# Data formats: arrays are made channels last and moved for channels first.
LAST, FIRST = "channels_last", "channels_first"


def to_first(a):
    return np.ascontiguousarray(np.moveaxis(a, -1, 1))


def to_last(a):
    return np.ascontiguousarray(np.moveaxis(a, 1, -1))


def fmt_in(a, df):
    return to_first(a) if df == FIRST else a


def fmt_out(a, df):
    return to_last(a) if df == FIRST else a


def randn(rng, shape, dt, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(kb.NP_OF[dt])
