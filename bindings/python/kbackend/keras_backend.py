"""kbackend as a Keras 2.2 backend: set ``"backend": "kbackend.keras_backend"`` in keras.json (or
``KERAS_BACKEND=kbackend.keras_backend``) and unmodified Keras 2.2.x builds and trains its models on
kbackend. See docs/keras_contract.md for what Keras expects of such a module.

Every function of the kbackend package is here under its Keras name; the functions below add what
Keras relies on beyond the C semantics: ``_keras_shape`` / ``_uses_learning_phase`` attributes,
the learning-phase placeholder Keras feeds, ``in_train_phase`` / ``switch`` with callables,
``variable`` from tensors / NumPy / numbers, and ValueError on bad arguments.

floatx, epsilon and image_data_format are Keras' own (``keras.backend.common``): they are read at
call time and pushed into the library before each call, so ``keras.backend.set_floatx`` takes
effect. Nothing of Keras is imported here (Keras is half-initialised while it imports this
module); without Keras loaded, the library's own settings apply.

``switch`` / ``in_train_phase`` / ``in_test_phase`` are kb_switch / kb_in_train_phase: a scalar
condition (the learning phase) is a lazy choice, and a compiled function computes only the branch
it takes, so a non-finite value in the other branch does not propagate.
"""
import builtins as _builtins
import functools as _functools
import sys as _sys

import numpy as _np

from . import kbackend as _c
from . import _signatures
from ._api import API as _API
from ._core import DTYPE_NAMES as _DTYPE_NAMES
from ._core import Function as _Function
from ._core import Tensor as _Tensor
from ._core import as_tensor as _as_tensor
from ._core import dtype_arg as _dtype_arg
from ._core import int64_vector as _int64_vector
from ._core import is_scipy_sparse as _is_scipy_sparse
from ._core import sparse_from_scipy as _sparse_from_scipy
from ._core import to_numpy as _to_numpy

_FORMATS = ("channels_last", "channels_first")


# ---- Keras' configuration, read at call time ------------------------------------------------
def _common():
    """keras.backend.common when Keras is loaded (never imported from here), else None."""
    return _sys.modules.get("keras.backend.common")


def floatx():
    m = _common()
    return m.floatx() if m is not None else _DTYPE_NAMES[_c.kb_floatx()]


def epsilon():
    m = _common()
    return m.epsilon() if m is not None else _c.kb_epsilon()


def image_data_format():
    m = _common()
    if m is not None:
        return m.image_data_format()
    return _FORMATS[0] if _c.kb_image_data_format() == _c.KB_CHANNELS_LAST else _FORMATS[1]


def set_floatx(value):
    m = _common()
    if m is not None:
        m.set_floatx(value)
    _c.kb_set_floatx(str(value))


def set_epsilon(e):
    m = _common()
    if m is not None:
        m.set_epsilon(e)
    _c.kb_set_epsilon(float(e))


def set_image_data_format(data_format):
    if data_format not in _FORMATS:
        raise ValueError("Unknown data_format: " + str(data_format))
    m = _common()
    if m is not None:
        m.set_image_data_format(data_format)
    _c.kb_set_image_data_format(data_format)


def normalize_data_format(value):
    if value is None:
        value = image_data_format()
    data_format = value.lower()
    if data_format not in _FORMATS:
        raise ValueError("The `data_format` argument must be one of \"channels_first\", "
                         "\"channels_last\". Received: " + str(value))
    return data_format


def cast_to_floatx(x):
    return _np.asarray(x, dtype=floatx())


def _sync():
    """Pushes Keras' floatx / epsilon / image_data_format into the library (C defaults)."""
    m = _common()
    if m is None:
        return
    fx = m.floatx()
    if _DTYPE_NAMES[_c.kb_floatx()] != fx:
        _c.kb_set_floatx(fx)
    eps = m.epsilon()
    if _c.kb_epsilon() != eps:
        _c.kb_set_epsilon(float(eps))
    fmt = _c.KB_CHANNELS_LAST if m.image_data_format() == "channels_last" else _c.KB_CHANNELS_FIRST
    if _c.kb_image_data_format() != fmt:
        _c.kb_set_image_data_format(fmt)


def _synced(fn):
    @_functools.wraps(fn)
    def call(*args, **kwargs):
        _sync()
        return fn(*args, **kwargs)
    call.__module__ = __name__
    return call


# Library functions that are not Keras backend functions, or that Keras defines itself.
_SKIP = {"floatx", "epsilon", "image_data_format", "set_floatx", "set_epsilon",
         "set_image_data_format", "cast_to_floatx", "backend", "learning_phase",
         "set_learning_phase", "learning_phase_scope_push", "learning_phase_scope_pop",
         "name_scope_push", "name_scope_pop", "parse_data_format", "parse_dtype", "parse_padding",
         "parse_pool_mode", "parse_interpolation", "tensor_from_data", "tensor_id",
         "tensor_name", "tensor_set_keras_tensor", "tensor_uses_learning_phase",
         "set_value_data", "variable_from_tensor", "abi_version", "version", "dtype_name",
         "set_print_sink", "cuda_unavailable_reason", "device_count"}
for _name, _fn in _API.items():
    if _name not in _SKIP:
        globals()[_name] = _synced(_fn)
del _name, _fn

_kb = dict(_API)  # the package's functions, for the overrides below


def _set_keras_attrs(x, shape):
    x._keras_shape = shape
    x._uses_learning_phase = False
    return x


# ---- tensors ----------------------------------------------------------------------------------
def is_tensor(x):
    return isinstance(x, (_Tensor, _c.Tensor))


def is_keras_tensor(x):
    if not is_tensor(x):
        raise ValueError("Unexpectedly found an instance of type `" + str(type(x)) + "`. "
                         "Expected a symbolic tensor instance.")
    return hasattr(x, "_keras_history")


def is_placeholder(x):
    return is_tensor(x) and bool(_c.kb_is_placeholder(x))


def int_shape(x):
    if hasattr(x, "_keras_shape"):
        return x._keras_shape
    if is_tensor(x):
        return _c.kb_int_shape(x)
    try:
        return tuple(_np.shape(x))
    except Exception:  # noqa: BLE001
        return None


@_synced
def placeholder(shape=None, ndim=None, dtype=None, sparse=False, name=None):
    if dtype is None:
        dtype = floatx()
    if shape is None and ndim is not None:
        shape = (None,) * int(ndim)
    if shape is not None:
        shape = tuple(shape)
    x = _kb["placeholder"](shape=shape, ndim=ndim, dtype=dtype, sparse=sparse, name=name)
    return _set_keras_attrs(x, shape if shape is not None else x.shape)


@_synced
def variable(value, dtype=None, name=None, constraint=None):
    if dtype is None:
        dtype = floatx()
    if _is_scipy_sparse(value):  # Keras: a sparse tensor of the COO entries, not a variable
        v = _sparse_from_scipy(value, _np.dtype(dtype))
        v._keras_shape = tuple(value.shape)
        v._uses_learning_phase = False
        return v
    if constraint is not None and not callable(constraint):
        raise ValueError("variable: constraint must be None or a callable, not %r"
                         % (constraint,))
    if is_tensor(value):
        v = _Tensor(_c.kb_variable_from_tensor(value, _dtype_arg(dtype), name))
    else:
        arr = _np.asarray(value)
        if arr.dtype == object or arr.dtype.kind not in "biuf":
            raise ValueError("variable: cannot make a variable of %r" % (value,))
        v = _Tensor(_c.kb_variable(arr, _dtype_arg(dtype), name))
    v.constraint = constraint
    return _set_keras_attrs(v, v.shape)


@_synced
def constant(value, dtype=None, shape=None, name=None):
    if dtype is None:
        dtype = floatx()
    return _kb["constant"](value, dtype=dtype, shape=shape, name=name)


def _to_tensor(x, dtype=None):
    if is_tensor(x):
        return x
    return _as_tensor(_np.asarray(x, dtype=dtype or floatx()))


@_synced
def prod(x, axis=None, keepdims=False):
    if isinstance(x, (list, tuple)):  # Keras: K.prod([K.shape(x)[i] for i in axes])
        x = _kb["stack"]([_to_tensor(t) for t in x], axis=0)
    return _kb["prod"](x, axis=axis, keepdims=keepdims)


class _ShapeTensor(_Tensor):
    """``shape(x)``: indexing it with an int gives a scalar tensor that remembers it is that
    dimension of x (``_dim_of = (x, i)``), so that reshape can read Keras' idiom
    ``K.reshape(x, (K.shape(x)[0], -1))``."""

    def __getitem__(self, key):
        out = _Tensor.__getitem__(self, key)
        if isinstance(key, (int, _np.integer)):
            out._dim_of = (self._shape_of, int(key))
        return out


@_synced
def shape(x):
    s = _kb["shape"](x)
    out = _ShapeTensor(s._handle)
    out._shape_of = x
    return out


@_synced
def reshape(x, shape):
    """Keras' reshape. A shape of numbers is kb_reshape's; one given as a tensor, or as a tuple
    holding scalar tensors (TimeDistributed writes ``(-1, K.shape(x)[1]) + dims``), is
    kb_reshape_to's, whose entries are known when the function runs. ``K.shape(x)[i]`` of a dim of
    x known now is that number, and ``(K.shape(x)[0], -1)`` a plain reshape where x's other dims
    are known, so that the result's static shape keeps what Keras' layers expect."""
    if is_tensor(shape):
        return _kb["reshape_to"](x, shape)
    entries = list(shape)
    dynamic = [i for i, d in enumerate(entries) if is_tensor(d)]
    x_dims = _kb["int_shape"](x) if dynamic else None
    for i in list(dynamic):  # x's own dimensions of known size are numbers
        src, axis = getattr(entries[i], "_dim_of", (None, None))
        if src is x and x_dims is not None and x_dims[axis] is not None:
            entries[i] = x_dims[axis]
            dynamic.remove(i)
    if len(dynamic) == 1 and -1 in [d for d in entries if not is_tensor(d)]:
        # K.reshape(x, (K.shape(x)[0], -1)): the free entry is known when x's other dims are
        src, axis = getattr(entries[dynamic[0]], "_dim_of", (None, None))
        rest = [d for j, d in enumerate(x_dims or ()) if j != axis]
        if src is x and _builtins.all(d is not None for d in rest):
            known = 1
            for d in entries:
                if not is_tensor(d) and d != -1:
                    known *= int(d)
            size = 1
            for d in rest:
                size *= d
            entries[entries.index(-1)] = size // known if known else 0
    if len(dynamic) == 1 and -1 not in [d for d in entries if not is_tensor(d)]:
        entries[dynamic[0]] = -1  # the only unknown: a plain reshape infers it
        dynamic = []
    if not dynamic:
        return _kb["reshape"](x, [int(d) for d in entries])
    return _kb["reshape_to"](x, _int64_vector(entries))


def _has_tensors(value):
    return is_tensor(value) or isinstance(value, (list, tuple)) and _builtins.any(
        is_tensor(v) for v in value)


@_synced
def arange(start, stop=None, step=1, dtype="int32"):
    """Keras' arange; start, stop and step may be scalar tensors (K.arange(K.shape(x)[1]))."""
    if not _has_tensors([start, stop, step]):
        return _kb["arange"](start, stop, step, dtype)
    start, step = (_kb["constant"](v) if not is_tensor(v) else v for v in (start, step))
    if stop is not None and not is_tensor(stop):
        stop = _kb["constant"](stop)
    return _kb["arange_to"](start, stop, step, dtype)


@_synced
def one_hot(indices, num_classes):
    """Keras' one_hot; num_classes may be a scalar tensor."""
    if is_tensor(num_classes):
        return _kb["one_hot_to"](indices, num_classes)
    return _kb["one_hot"](indices, num_classes)


@_synced
def tile(x, n):
    """Keras' tile; n may hold scalar tensors or be an integer vector tensor."""
    if _has_tensors(n):
        return _kb["tile_to"](x, _int64_vector(n))
    return _kb["tile"](x, n)


@_synced
def repeat(x, n):
    """Keras' repeat; n may be a scalar tensor."""
    if is_tensor(n):
        return _kb["tile_to"](_kb["expand_dims"](x, 1), _int64_vector([1, n, 1]))
    return _kb["repeat"](x, n)


@_synced
def slice(x, start, size):  # noqa: A001 - Keras' name
    """Keras' slice; start and size may hold scalar tensors or be integer vector tensors."""
    if _has_tensors(start) or _has_tensors(size):
        return _kb["slice_to"](x, _int64_vector(start), _int64_vector(size))
    return _kb["slice"](x, start, size)


@_synced
def pow(x, a):  # noqa: A001 - Keras' name
    if is_tensor(a):  # Adam: K.pow(beta, t) with a tensor exponent
        x = _to_tensor(x)
        return _kb["exp"](_kb["cast"](a, _kb["dtype"](x)) * _kb["log"](x))
    return _kb["pow"](x, a)


def _static_dim(d):
    """A scalar tensor's value when static shapes determine it (kb_static_value), else -1."""
    try:
        return int(_np.asarray(_to_numpy(_c.kb_static_value(d))).reshape(()))
    except Exception:  # noqa: BLE001 - known only when a function runs
        return -1


def _dims_of_x(dims):
    """A shape whose entries may be ints, None or scalar tensors (Keras' layers compute them from
    ``K.shape(x)``, e.g. Conv2DTranspose's output height ``K.shape(x)[1] * 2``): a tensor becomes
    its value when static shapes determine it; None and the other tensors become -1, x's
    dimension there (the C functions take shapes as numbers)."""
    return [-1 if d is None else _static_dim(d) if is_tensor(d) else int(d) for d in dims]


def _noise_shape(noise_shape):
    if noise_shape is None:
        return None
    return _dims_of_x(noise_shape)


@_synced
def dropout(x, level, noise_shape=None, seed=None):
    if not 0.0 <= level < 1.0:
        raise ValueError("dropout: level must be in interval [0, 1), got %r" % (level,))
    return _kb["dropout"](x, float(level), _noise_shape(noise_shape), seed)


def _shape_source(shape):
    """x when shape is K.shape(x) (Keras' GaussianNoise: random_normal(shape=K.shape(inputs))),
    else None."""
    return getattr(shape, "_shape_of", None) if is_tensor(shape) else None


def _random(name):
    cfn, like_fn = _kb[name], _kb[name + "_like"]

    def fn(shape, a, b, dtype=None, seed=None):
        if dtype is None:
            dtype = floatx()
        if seed is None:
            seed = _np.random.randint(10e6)
        like = _shape_source(shape)
        if like is not None:
            return like_fn(like, a, b, dtype, int(seed))
        return cfn(tuple(int(d) for d in shape), a, b, dtype, int(seed))
    return fn


_random_uniform = _random("random_uniform")
_random_normal = _random("random_normal")
_truncated_normal = _random("truncated_normal")


@_synced
def random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    return _random_uniform(shape, float(minval), float(maxval), dtype, seed)


@_synced
def random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    return _random_normal(shape, float(mean), float(stddev), dtype, seed)


@_synced
def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    return _truncated_normal(shape, float(mean), float(stddev), dtype, seed)


@_synced
def random_binomial(shape, p=0.0, dtype=None, seed=None):
    if dtype is None:
        dtype = floatx()
    if seed is None:
        seed = _np.random.randint(10e6)
    like = _shape_source(shape)
    if like is not None:
        return _kb["random_binomial_like"](like, float(p), dtype, int(seed))
    return _kb["random_binomial"](tuple(int(d) for d in shape), float(p), dtype, int(seed))


@_synced
def normalize_batch_in_training(x, gamma, beta, reduction_axes, epsilon=1e-3):
    return tuple(_kb["normalize_batch_in_training"](x, gamma, beta, list(reduction_axes),
                                                    float(epsilon)))


@_synced
def batch_normalization(x, mean, var, beta, gamma, axis=-1, epsilon=1e-3):
    return _kb["batch_normalization"](x, mean, var, beta, gamma, int(axis), float(epsilon))


@_synced
def function(inputs, outputs, updates=None, **kwargs):
    """A callable taking a list of NumPy arrays and returning a list of NumPy arrays. updates:
    update ops or (variable, new_value) pairs; Keras' other keyword arguments (name, fetches,
    feed_dict, options, ...) are accepted and ignored."""
    if not isinstance(inputs, (list, tuple)):
        raise ValueError("function: inputs must be a list or tuple of placeholders")
    if not isinstance(outputs, (list, tuple)):
        raise ValueError("function: outputs must be a list or tuple of tensors")
    flat = []
    for u in updates or []:
        if isinstance(u, list) and u and all(isinstance(e, (list, tuple)) for e in u):
            flat.extend(u)  # a nested list of pairs
        else:
            flat.append(u)
    return _Function(list(inputs), list(outputs), flat, name=kwargs.get("name"))


# ---- the learning phase -----------------------------------------------------------------------
_learning_phase_value = None  # None: the placeholder; 0 / 1 after set_learning_phase
_learning_phase_tensor = None


def learning_phase():
    """The learning phase: a scalar placeholder that Keras feeds (0 = test, 1 = train), or the
    int given to set_learning_phase."""
    global _learning_phase_tensor
    if _learning_phase_value is not None:
        return _learning_phase_value
    if _learning_phase_tensor is None or _learning_phase_tensor.closed:
        _learning_phase_tensor = _Tensor(_c.kb_learning_phase())
        _set_keras_attrs(_learning_phase_tensor, ())
    return _learning_phase_tensor


def set_learning_phase(value):
    global _learning_phase_value
    if value not in {0, 1} or isinstance(value, float) and value not in (0.0, 1.0):
        raise ValueError("Expected learning phase to be 0 or 1.")
    _c.kb_set_learning_phase(int(value))
    _learning_phase_value = int(value)


@_synced
def clear_session():
    global _learning_phase_value, _learning_phase_tensor
    _kb["clear_session"]()
    _learning_phase_value = None
    _learning_phase_tensor = None


def _branches(then_expression, else_expression):
    """The two branches as tensors: callables are called; a Python number takes the dtype of the
    other branch when that is a tensor, floatx otherwise."""
    then_t = then_expression() if callable(then_expression) else then_expression
    else_t = else_expression() if callable(else_expression) else else_expression
    like = then_t if is_tensor(then_t) else else_t if is_tensor(else_t) else None
    if like is None:
        return _to_tensor(then_t), _to_tensor(else_t)
    return _as_tensor(then_t, like), _as_tensor(else_t, like)


@_synced
def switch(condition, then_expression, else_expression):
    """then_expression where condition, else else_expression (kb_switch). Callables are called. A
    Python bool/int condition picks a branch at once. A scalar tensor condition chooses lazily
    (branches may differ in shape; a compiled function computes only the branch taken); a tensor
    condition of rank >= 1 lines up with the leading axes of the branches (size-1 dims tiled)."""
    if not is_tensor(condition):
        chosen = then_expression if condition else else_expression
        return chosen() if callable(chosen) else chosen
    then_t, else_t = _branches(then_expression, else_expression)
    return _kb["switch"](condition, then_t, else_t)


def in_train_phase(x, alt, training=None):
    """x in the training phase, alt otherwise (either may be a callable). training None: the
    learning phase, and the result has _uses_learning_phase = True; 1/True and 0/False choose at
    once; a tensor chooses as switch does (kb_in_train_phase)."""
    if training is None:
        training = learning_phase()
        uses_learning_phase = True
    else:
        uses_learning_phase = False
    # Keras' identity test (`training is 1 or training is True`): NumPy numbers do not match
    if training is True or type(training) is int and training == 1:
        return x() if callable(x) else x
    if training is False or type(training) is int and training == 0:
        return alt() if callable(alt) else alt
    if not is_tensor(training):  # a NumPy number, say: Keras hands it to switch
        return switch(training, x, alt)
    _sync()
    x_t, alt_t = _branches(x, alt)
    out = _kb["in_train_phase"](x_t, alt_t, training, _c.KB_TRAINING_TENSOR)
    if uses_learning_phase:
        out._uses_learning_phase = True
    return out


def in_test_phase(x, alt, training=None):
    return in_train_phase(alt, x, training=training)


# ---- argument checks Keras relies on (ValueError) -------------------------------------------
def _check_format(data_format):
    if data_format is not None and data_format not in _FORMATS:
        raise ValueError("Unknown data_format: " + str(data_format))


def _check_padding(padding):
    if padding not in ("same", "valid", "causal", "full"):
        raise ValueError("Invalid padding: " + str(padding))


def _checked(name, pool=False):
    fn = _kb.get(name)
    if fn is None:
        return
    import inspect
    sig = inspect.signature(fn)

    @_functools.wraps(fn)
    def call(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        a = bound.arguments
        if "data_format" in a:
            _check_format(a["data_format"])
        if "padding" in a and isinstance(a["padding"], str):
            _check_padding(a["padding"])
        if pool and a.get("pool_mode") not in ("max", "avg"):
            raise ValueError("Invalid pooling mode: " + str(a.get("pool_mode")))
        if name.endswith("_transpose") and isinstance(a.get("output_shape"), (list, tuple)):
            a["output_shape"] = _dims_of_x(a["output_shape"])  # (K.shape(x)[0], h, w, c)
        _sync()
        return fn(*bound.args, **bound.kwargs)
    call.__module__ = __name__
    globals()[name] = call


for _name in ("conv1d", "conv2d", "conv3d", "conv2d_transpose", "conv3d_transpose",
              "separable_conv1d", "separable_conv2d", "depthwise_conv2d", "bias_add",
              "spatial_2d_padding", "spatial_3d_padding", "resize_images", "resize_volumes",
              "local_conv1d", "local_conv2d"):
    _checked(_name)
for _name in ("pool2d", "pool3d"):
    _checked(_name, pool=True)
del _name


def _document():
    """Functions written here without a docstring take the description's line
    (api/kbackend.toml, as every binding's docs do) and the function they stand for."""
    for name, fn in list(globals().items()):
        if name.startswith("_") or not callable(fn) or getattr(fn, "__module__", "") != __name__:
            continue
        if not (fn.__doc__ or "").strip():
            line = _signatures.DOCS.get(name)
            fn.__doc__ = (f"{line}\n\nKeras' backend.{name} on kbackend." if line
                          else f"Keras' backend.{name} on kbackend.")


_document()
