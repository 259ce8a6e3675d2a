"""The Tensor and Function classes and the conversions between Python values and the C ABI.

The SWIG layer (kbackend.kbackend, generated from include/kbackend.h) does the C calls: its
functions take and return SWIG proxies that own one kb_tensor reference each, raise the Python
error of a failed kb_status, and accept any object whose ``.this`` is a proxy. This module wraps
those proxies in ``Tensor`` objects, the type users see.

Names in this module must not shadow builtins (``max``, ``sum``, ...): the Keras-named functions
are assembled in kbackend/_api.py.
"""
import ctypes
import gc
import operator

import numpy as np

from . import kbackend as _c

# kb_data_type codes and names, from the library itself.
DTYPE_NAMES = {}
_code = 0
while _c.kb_dtype_name(_code) is not None:
    DTYPE_NAMES[_code] = _c.kb_dtype_name(_code)
    _code += 1
DTYPE_CODES = {name: code for code, name in DTYPE_NAMES.items()}
del _code


def dtype_arg(dtype):
    """A dtype argument for the C layer: None (the C default), a name, or a kb_data_type code.

    Accepts NumPy dtypes and scalar types (np.float32, np.dtype('int64'), float, bool)."""
    if dtype is None or isinstance(dtype, (str, int)) and not isinstance(dtype, bool):
        return dtype
    return np.dtype(dtype).name


def numpy_dtype(code_or_name):
    name = DTYPE_NAMES.get(code_or_name, code_or_name)
    if name == "bfloat16":  # NumPy has none of its own
        try:
            import ml_dtypes
        except ImportError:
            raise TypeError("a bfloat16 value needs the ml_dtypes package for its NumPy type "
                            "(pip install ml_dtypes), or cast it to float32 first") from None
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def floatx_name():
    return DTYPE_NAMES[_c.kb_floatx()]


def live_tensors():
    """How many native tensor references Python objects hold right now (the SWIG proxies that
    own one; every Tensor holds one until it is closed or collected). For leak checks: it walks
    the garbage collector's objects."""
    return sum(1 for o in gc.get_objects() if type(o) is _c.Tensor and o.thisown)


class Tensor:
    """A kbackend graph value (placeholder, variable, constant or the result of an operation).

    A Tensor owns one reference to the native value; it is released when the Tensor is garbage
    collected, or at once by ``close()`` / the end of a ``with`` block. Tensors compare and hash
    by identity (``==`` is not elementwise: use ``kbackend.equal``), accept new attributes (Keras
    sets ``_keras_shape`` and ``_keras_history``), and support ``+ - * / ** @``, unary ``-``,
    ``abs()``, ``< <= > >=`` (elementwise) and NumPy-style ``x[...]`` slicing.
    """

    # NumPy defers to our reflected operators (np.float32(2) * t) instead of evaluating t.
    __array_ufunc__ = None
    __array_priority__ = 100

    def __init__(self, handle):
        if not isinstance(handle, _c.Tensor):
            raise TypeError("Tensor() wraps a handle returned by the library; use "
                            "kbackend.constant, variable or placeholder to make one")
        self._handle = handle

    # The SWIG layer accepts any object whose .this is a proxy, so a Tensor can be passed
    # straight to the generated functions.
    @property
    def this(self):
        """The SWIG proxy's pointer, for the generated functions."""
        if self._handle is None:
            raise ValueError("the tensor is closed")
        return self._handle.this

    @property
    def closed(self):
        """Whether close() released the native reference."""
        return self._handle is None

    def close(self):
        """Releases the native reference now (the Tensor is unusable afterwards)."""
        handle, self._handle = self._handle, None
        del handle  # the proxy's destructor calls kb_tensor_release

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # ---- properties --------------------------------------------------------------------------
    @property
    def shape(self):
        """The static shape: a tuple with None for unknown dimensions (None for unknown rank)."""
        return _c.kb_int_shape(self)

    @property
    def ndim(self):
        """The rank (Keras' ndim); -1 when it is unknown."""
        return _c.kb_ndim(self)

    @property
    def dtype(self):
        """Keras' dtype string ("float32")."""
        return DTYPE_NAMES[_c.kb_dtype(self)]

    @property
    def name(self):
        """The tensor's name."""
        return _c.kb_tensor_name(self)

    @property
    def id(self):
        """Equal ids mean the same graph value (two Tensor objects may share one)."""
        return _c.kb_tensor_id(self)

    def numpy(self):
        """The value as a new NumPy array (constants, variables, and tensors that depend on no
        placeholder)."""
        return to_numpy(self._handle if self._handle is not None else self.this)

    # ---- DLPack (the array API's protocol): the value lent without a copy -------------------
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """The tensor's value as a DLPack capsule (include/kbackend.h, DLPack): the memory of a
        constant (read-only) or variable itself, else of the value computed now. A versioned
        capsule when max_version is (1, 0) or later, else the unversioned one; copy=True lends a
        copy. The value is in host memory: stream must be None and dl_device the CPU's."""
        if stream is not None:
            raise BufferError("__dlpack__: the value is in host memory, which takes no stream "
                              "(got stream=%r)" % (stream,))
        if dl_device is not None and tuple(dl_device) != DLPACK_CPU:
            raise BufferError("__dlpack__: the value is in host memory %r; a copy to device %r "
                              "is not made" % (DLPACK_CPU, tuple(dl_device)))
        how = DLPACK_COPY_ALWAYS if copy else DLPACK_COPY_NEVER
        if max_version is not None and tuple(max_version)[0] >= 1:
            return _c.kb_tensor_to_dlpack(self, how)
        return _c.kb_tensor_to_dlpack_unversioned(self, how)

    def __dlpack_device__(self):
        """(device type, index) of the memory __dlpack__ lends: (1, 0), kDLCPU."""
        return DLPACK_CPU

    def __array__(self, dtype=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def __repr__(self):
        if self._handle is None:
            return "<kbackend.Tensor (closed)>"
        try:
            return "<kbackend.Tensor %r shape=%s dtype=%s>" % (self.name, self.shape, self.dtype)
        except Exception:  # noqa: BLE001 - a repr must not raise
            return "<kbackend.Tensor>"

    def __iter__(self):
        raise TypeError("kbackend.Tensor objects are not iterable")

    __hash__ = object.__hash__  # identity, as Keras expects

    # ---- operators -----------------------------------------------------------------------------
    def __add__(self, other):
        return _binary(_c.kb_add, self, other)

    def __radd__(self, other):
        return _binary(_c.kb_add, other, self)

    def __sub__(self, other):
        return _binary(_c.kb_subtract, self, other)

    def __rsub__(self, other):
        return _binary(_c.kb_subtract, other, self)

    def __mul__(self, other):
        return _binary(_c.kb_multiply, self, other)

    def __rmul__(self, other):
        return _binary(_c.kb_multiply, other, self)

    def __truediv__(self, other):
        return _binary(_c.kb_divide, self, other)

    def __rtruediv__(self, other):
        return _binary(_c.kb_divide, other, self)

    def __matmul__(self, other):
        return _binary(_c.kb_dot, self, other)

    def __rmatmul__(self, other):
        return _binary(_c.kb_dot, other, self)

    def __lt__(self, other):
        return _binary(_c.kb_less, self, other)

    def __le__(self, other):
        return _binary(_c.kb_less_equal, self, other)

    def __gt__(self, other):
        return _binary(_c.kb_greater, self, other)

    def __ge__(self, other):
        return _binary(_c.kb_greater_equal, self, other)

    def __pow__(self, a):
        if isinstance(a, Tensor):
            raise TypeError("kbackend: the exponent of ** must be a number (pow(x, a))")
        return Tensor(_c.kb_pow(self, float(a)))

    def __neg__(self):
        return Tensor(_c.kb_negative(self))

    def __pos__(self):
        return self

    def __abs__(self):
        return Tensor(_c.kb_abs(self))

    def __getitem__(self, key):
        return Tensor(_strided_slice(self, key))


def _is_operand(v):
    return isinstance(v, (Tensor, _c.Tensor, int, float, bool, np.ndarray, np.generic, list,
                          tuple))


def _binary(cfunc, x, y):
    if not (_is_operand(x) and _is_operand(y)):
        return NotImplemented
    like = x if isinstance(x, Tensor) else y
    return Tensor(cfunc(as_tensor(x, like), as_tensor(y, like)))


def as_tensor(value, like=None):
    """A Tensor (or SWIG proxy) for value: tensors pass through; Python numbers take the dtype of
    `like` (a Tensor) as TensorFlow converts them; other array-likes keep their NumPy dtype, except
    that Python float lists become floatx and Python int lists int32."""
    if value is None or isinstance(value, (Tensor, _c.Tensor)):
        return value
    if is_scipy_sparse(value):
        return sparse_from_scipy(value)
    dtype = None
    if isinstance(value, (bool, int, float, np.generic)) and like is not None:
        code = _c.kb_dtype(like)
        if DTYPE_NAMES[code] == "bfloat16" and not isinstance(value, (bool, np.bool_)):
            # NumPy has no bfloat16 of its own: the number goes in as float32, rounded by the
            # library's cast.
            return Tensor(_c.kb_cast(_c.kb_tensor_from_data(_contiguous(value, np.float32)), code))
        ref = numpy_dtype(code)
        is_float = isinstance(value, (float, np.floating))
        if not is_float or ref.kind == "f":
            dtype = ref
    if dtype is None and not isinstance(value, (np.ndarray, np.generic)):
        natural = np.asarray(value)
        if natural.dtype == np.float64:
            dtype = floatx_name()
        elif natural.dtype == np.int64:
            dtype = np.int32
    arr = _contiguous(value, dtype)
    return Tensor(_c.kb_tensor_from_data(arr))


def is_scipy_sparse(value):
    return hasattr(value, "tocoo") and hasattr(value, "nnz")


def sparse_from_scipy(value, dtype=None):
    """A sparse tensor with the entries of a scipy.sparse matrix (values in `dtype`, default:
    their own dtype)."""
    coo = value.tocoo()
    indices = np.stack([coo.row, coo.col], axis=1).astype(np.int64).reshape(-1, 2)
    values = np.asarray(coo.data, dtype=dtype)
    return Tensor(_c.kb_sparse_tensor(_c.kb_tensor_from_data(np.ascontiguousarray(indices)),
                                      _c.kb_tensor_from_data(np.ascontiguousarray(values)),
                                      [int(d) for d in coo.shape], None))


def _contiguous(value, dtype=None):
    """A C-contiguous array of value; unlike np.ascontiguousarray, 0-d stays 0-d (a Python number
    is a scalar, not a (1,) vector); a copy only where needed, on NumPy 1 and 2 alike."""
    return np.asarray(value, dtype=dtype, order="C")


def to_numpy(handle):
    """The value of a tensor (SWIG proxy or Tensor) as a new NumPy array."""
    shape = _c.kb_int_shape(handle)
    if shape is None or None in shape:  # evaluate first: the value has a concrete shape
        handle = _c.kb_eval(handle)
        shape = _c.kb_int_shape(handle)
    out = np.empty(shape, dtype=numpy_dtype(_c.kb_dtype(handle)))
    _c.kb_tensor_copy_to(handle, out)
    return out


DLPACK_CPU = (1, 0)  # (kDLCPU, 0)
# kb_dlpack_copy
DLPACK_COPY_NEVER, DLPACK_COPY_IF_NEEDED, DLPACK_COPY_ALWAYS = 0, 1, 2
_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype = ctypes.c_char_p
_capsule_name.argtypes = [ctypes.py_object]
# DLDeviceType codes whose memory the host reads: kDLCPU, kDLCUDAHost, kDLCUDAManaged.
_DLPACK_HOST_DEVICES = (1, 3, 13)


def from_dlpack(x, *, copy=None):
    """A constant over the memory of x, an object with __dlpack__ (NumPy >= 1.22, PyTorch, JAX,
    CuPy, ...) or a DLPack capsule, without copying it. copy=None copies only what kbackend
    cannot read in place (strides other than row-major, misaligned data), copy=False refuses
    that, copy=True always copies. The tensor keeps x's memory alive; a write to x is seen by
    the functions that read the tensor afterwards."""
    how = {None: DLPACK_COPY_IF_NEEDED, False: DLPACK_COPY_NEVER, True: DLPACK_COPY_ALWAYS}[copy]
    if type(x).__name__ == "PyCapsule":
        capsule = x
    else:
        if not hasattr(x, "__dlpack__"):
            raise TypeError("from_dlpack: %s has no __dlpack__ method" % type(x).__name__)
        if hasattr(x, "__dlpack_device__"):
            device = tuple(x.__dlpack_device__())
            if device[0] not in _DLPACK_HOST_DEVICES:
                raise BufferError("from_dlpack: the %s is on DLPack device %r; kbackend reads "
                                  "host memory (kDLCPU, kDLCUDAHost, kDLCUDAManaged)"
                                  % (type(x).__name__, device))
        try:
            capsule = x.__dlpack__(max_version=(1, 1))
        except TypeError:  # a producer of the protocol before max_version (NumPy < 2.1)
            capsule = x.__dlpack__()
    if _capsule_name(capsule) == b"dltensor_versioned":
        return Tensor(_c.kb_tensor_from_dlpack(capsule, how))
    return Tensor(_c.kb_tensor_from_dlpack_unversioned(capsule, how))


def wrap(result):
    """Turns SWIG proxies in a C result (one, a list or a tuple) into Tensors."""
    if isinstance(result, _c.Tensor):
        return Tensor(result)
    if isinstance(result, list):
        return [wrap(r) for r in result]
    if isinstance(result, tuple):
        return tuple(wrap(r) for r in result)
    return result


def _is_tensor(v):
    return isinstance(v, (Tensor, _c.Tensor))


def _strided_slice(x, key):
    """x[key] through kb_strided_slice: ints, slices (any step), None (new axis), Ellipsis; and,
    as Keras' code and map_fn step functions write them, scalar int tensors as indices (x[i],
    through kb_gather) and as bounds of slices of step 1 (x[:, 1:n], through kb_slice_to)."""
    if not isinstance(key, tuple):
        key = (key,)
    if any(_is_tensor(k) or isinstance(k, slice) and (_is_tensor(k.start) or _is_tensor(k.stop))
           for k in key):
        return _tensor_indexed(x, key)
    return _static_strided_slice(x, key)


def _tensor_indexed(x, key):
    """x[key] for keys with tensors: the static entries first (a tensor entry keeps its axis),
    then the tensor slices on their axes, then the tensor indices, last axis first."""
    static, axis, slices, indices = [], 0, [], []
    for k in key:
        if k is Ellipsis:
            raise IndexError("x[...]: an ellipsis cannot be combined with tensor indices")
        if _is_tensor(k):
            static.append(slice(None))
            indices.append((axis, k))
        elif isinstance(k, slice) and (_is_tensor(k.start) or _is_tensor(k.stop)):
            if k.step not in (None, 1):
                raise ValueError("x[...]: a slice with tensor bounds needs step 1")
            static.append(slice(None))
            slices.append((axis, k))
        else:
            static.append(k)
        if k is None or not isinstance(k, (int, np.integer)) or _is_tensor(k):
            axis += 1  # int indices drop their axis; None adds one, slices keep theirs
    y = _static_strided_slice(x, tuple(static)) if static else x
    rank = _c.kb_ndim(y)
    if slices:
        start, size = [0] * rank, [-1] * rank
        for a, k in slices:
            start[a] = 0 if k.start is None else k.start
            if k.stop is not None:
                begin = as_tensor(np.int64(start[a])) if not _is_tensor(start[a]) else start[a]
                stop = k.stop if _is_tensor(k.stop) else as_tensor(np.int64(k.stop))
                size[a] = _c.kb_subtract(_c.kb_cast(stop, _c.KB_INT64),
                                         _c.kb_cast(begin, _c.KB_INT64))
        y = _c.kb_slice_to(y, int64_vector(start), int64_vector(size))
    for a, k in sorted(indices, key=lambda e: -e[0]):
        perm = [a] + [i for i in range(rank) if i != a]
        y = _c.kb_gather(_c.kb_permute_dimensions(y, perm), k)
        rank -= 1
    return y


def int64_vector(entries):
    """ints and scalar tensors as an int64 vector (a stack of scalars, which the library reads
    entry by entry for what is known now); a tensor passes through."""
    if _is_tensor(entries):
        return entries
    parts = [_c.kb_cast(e, _c.KB_INT64) if _is_tensor(e) else as_tensor(np.int64(e))
             for e in entries]
    return Tensor(_c.kb_stack(parts, 0))


def _static_strided_slice(x, key):
    n_ellipsis = sum(1 for k in key if k is Ellipsis)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if n_ellipsis:
        rank = _c.kb_ndim(x)
        if rank < 0:
            raise ValueError("x[...]: the rank of x is unknown")
        consumed = sum(1 for k in key if k is not None and k is not Ellipsis)
        at = key.index(Ellipsis)
        key = key[:at] + (slice(None),) * max(rank - consumed, 0) + key[at + 1:]
    begin, end, strides = [], [], []
    begin_mask = end_mask = shrink = new_axis = 0
    for i, k in enumerate(key):
        bit = 1 << i
        if k is None:
            new_axis |= bit
            begin.append(0), end.append(0), strides.append(1)
        elif isinstance(k, slice):
            step = 1 if k.step is None else _index(k.step)
            if step == 0:
                raise ValueError("x[...]: slice step cannot be zero")
            if k.start is None:
                begin_mask |= bit
            if k.stop is None:
                end_mask |= bit
            begin.append(0 if k.start is None else _index(k.start))
            end.append(0 if k.stop is None else _index(k.stop))
            strides.append(step)
        else:
            j = _index(k)
            shrink |= bit
            begin.append(j), end.append(j + 1), strides.append(1)
    return _c.kb_strided_slice(x, begin, end, strides, begin_mask, end_mask, shrink, new_axis)


def _index(k):
    if isinstance(k, (bool, np.bool_)):
        raise TypeError("x[...]: boolean indices are not supported")
    try:
        return operator.index(k)
    except TypeError:
        raise TypeError("x[...]: indices must be ints, slices, None or Ellipsis, not %s"
                        % type(k).__name__) from None


class Function:
    """A compiled function: ``f(list of arrays) -> list of arrays`` (kbackend.function)."""

    def __init__(self, inputs, outputs, updates=None, name=None, **kwargs):
        if not isinstance(inputs, (list, tuple)):
            raise TypeError("function: inputs must be a list of placeholders")
        self._single = not isinstance(outputs, (list, tuple))
        outputs = [outputs] if self._single else list(outputs)
        update_ops = []
        for u in updates or []:
            if isinstance(u, (list, tuple)):  # (variable, new_value)
                if len(u) != 2:
                    raise ValueError("function: an update must be an op or a (variable, value) "
                                     "pair")
                u = Tensor(_c.kb_update(u[0], as_tensor(u[1], u[0])))
            update_ops.append(u)
        self.inputs = list(inputs)
        self.outputs = outputs
        self.updates = update_ops
        self.name = name
        # NumPy types of the inputs, found once; bfloat16's (ml_dtypes) only when a value is fed,
        # so that a function of bfloat16 inputs can be built without ml_dtypes.
        self._input_codes = [_c.kb_dtype(x) for x in self.inputs]
        self._input_dtypes = [None if DTYPE_NAMES[c] == "bfloat16" else numpy_dtype(c)
                              for c in self._input_codes]
        self._f = _c.kb_function(self.inputs, outputs, update_ops)

    def __call__(self, inputs):
        if not isinstance(inputs, (list, tuple)):
            raise TypeError("a kbackend function takes a list of arrays")
        if len(inputs) != len(self.inputs):
            raise ValueError("the function takes %d inputs, got %d" % (len(self.inputs),
                                                                      len(inputs)))
        feed = []
        for value, code, dtype in zip(inputs, self._input_codes, self._input_dtypes):
            if isinstance(value, (Tensor, _c.Tensor)):
                feed.append(value)
                continue
            if hasattr(value, "__dlpack__") and not isinstance(value, np.ndarray):
                feed.append(from_dlpack(value))  # JAX, PyTorch, ...: read in place
                continue
            if dtype is None:
                dtype = numpy_dtype(code)
            if is_scipy_sparse(value):  # for a sparse placeholder
                feed.append(sparse_from_scipy(value, dtype))
            else:
                feed.append(_c.kb_tensor_from_data(_contiguous(value, dtype)))
        results = [to_numpy(r) for r in _c.kb_function_call(self._f, feed)]
        return results[0] if self._single else results

    @property
    def device(self):
        """'cpu' or 'cuda:N'; assign 'cpu', 'cuda' or 'cuda:N' to move the function (N must be
        this process' GPU; an unusable device raises with the reason)."""
        return _c.kb_function_device_name(self._f)

    @device.setter
    def device(self, name):
        _c.kb_function_set_device_name(self._f, name)

    def close(self):
        """Releases the compiled function now (it is unusable afterwards)."""
        self._f = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
