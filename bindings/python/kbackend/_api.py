"""The module-level functions of kbackend, with Keras' names and defaults.

Every function of the C header becomes a Python function without its ``kb_`` prefix, generated
here from the SWIG layer: the parameter names come from the SWIG wrapper's signature, their C
types from _signatures.C_TYPES (generated from the header, so a new C function needs no hand
work), and _SIGNATURES (generated from api/kbackend.toml) gives Keras' parameter names and
defaults where they differ from the C ones. Tensor
parameters accept Tensors, NumPy arrays and Python numbers; dtype and option parameters accept
Keras' strings. A few functions whose Keras contract is more than one C call are written out at
the end (variable, placeholder, function, eval, ...).
"""
import ast
import contextlib
import inspect

import numpy as np

from . import _signatures
from . import kbackend as _c
from ._core import (DTYPE_NAMES, Function, Tensor, as_tensor, dtype_arg, from_dlpack,
                    numpy_dtype, to_numpy, wrap)

# Keras signatures where they differ from the C ones (api/kbackend.toml): `keras_name: "c_name"`
# renames a parameter, `= default` is Keras' default. Functions not listed keep the C parameter
# names, all required.
_SIGNATURES = _signatures.SIGNATURES

# Results that are codes in C and names in Keras.
_FORMATS = {_c.KB_CHANNELS_LAST: "channels_last", _c.KB_CHANNELS_FIRST: "channels_first"}
_ORDERINGS = {_c.KB_DIM_ORDERING_TF: "tf", _c.KB_DIM_ORDERING_TH: "th"}
_RESULTS = {
    "floatx": DTYPE_NAMES.get,
    "dtype": DTYPE_NAMES.get,
    "image_data_format": _FORMATS.get,
    "image_dim_ordering": _ORDERINGS.get,
    "is_sparse": bool,
    "is_keras_tensor": bool,
    "is_tensor": bool,
    "is_placeholder": bool,
    "tensor_uses_learning_phase": bool,
}

# C functions with no Python function of their own (api/kbackend.toml says why): the error state
# is the exceptions' business, data crosses through Tensor.numpy() / NumPy arguments, lists are
# Python lists, and devices and the learning phase / name scopes have the Python forms below.
_NOT_EXPOSED = _signatures.NOT_EXPOSED

_TENSOR_TYPES = ("kb_tensor *",)
_TENSOR_LIST_TYPES = ("kb_tensor *const *",)
_SHAPE_NAMES = ("shape", "output_shape")


def _c_parameters(name, cfunc):
    """[(name, C type)] of a SWIG wrapper: the parameters its signature shows, with the header's
    types (_signatures.C_TYPES, generated)."""
    types = _signatures.C_TYPES.get(name, {})
    return [(n, types.get(n, "")) for n in inspect.signature(cfunc).parameters]


def _parse_signatures(text):
    """{name: [(keras_name, c_name, default or inspect.Parameter.empty)]}"""
    specs = {}
    for line in text.strip().splitlines():
        fn = ast.parse("def " + line + ": pass").body[0]
        args = fn.args.args
        defaults = [ast.literal_eval(d) for d in fn.args.defaults]
        defaults = [inspect.Parameter.empty] * (len(args) - len(defaults)) + defaults
        specs[fn.name] = [(a.arg, a.annotation.value if a.annotation else a.arg, d)
                          for a, d in zip(args, defaults)]
    return specs


def _shape_arg(shape):
    """A shape argument: None stays None (unknown); None dimensions become -1."""
    if shape is None or isinstance(shape, (int, np.integer)):
        return shape
    return [-1 if d is None else d for d in shape]


def _converter(c_name, c_type, rank=None):
    """The conversion of a Keras argument for a C parameter; rank: how many spatial dims the
    function's tuple parameters have (the length of its tuple defaults), where it has them."""
    if c_type in _TENSOR_TYPES:
        return lambda v, like: as_tensor(v, like)
    if c_type in _TENSOR_LIST_TYPES:
        return lambda v, like: None if v is None else [as_tensor(t, like) for t in v]
    if c_type == "kb_data_type":
        return lambda v, like: dtype_arg(v)
    if c_type == "kb_data_format":  # Keras' None: the current image_data_format()
        return lambda v, like: _c.kb_image_data_format() if v is None else v
    if c_name in _SHAPE_NAMES:
        return lambda v, like: _shape_arg(_flat_ints(v))
    if c_type == "int64_t const *":  # also nested, as Keras' paddings ((1, 2), (0, 1))
        if rank and not c_name.startswith("padding"):  # strides=2 for (2, 2), as TensorFlow's
            return lambda v, like: _flat_ints((v,) * rank if _is_int(v) else v)
        return lambda v, like: _flat_ints(v)
    if c_type in ("double", "double const *"):
        return lambda v, like: _number(v, float)
    if c_type in ("int64_t", "int32_t"):  # Keras' 1-D layers pass strides as 1-tuples
        return lambda v, like: _number(v[0] if _is_one_tuple(v) else v, int)
    return None


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _is_one_tuple(v):
    return isinstance(v, (list, tuple)) and len(v) == 1


def _number(v, kind):
    """NumPy numbers and 0-d arrays as Python numbers (Keras' cast_to_floatx gives 0-d arrays)."""
    if isinstance(v, np.generic) or isinstance(v, np.ndarray) and v.ndim == 0:
        return kind(v)
    return v


def _flat_ints(v):
    """A nested tuple/list of ints (or NumPy ints) as one flat list; anything else unchanged."""
    if not isinstance(v, (list, tuple)):
        return _number(v, int)
    if not any(isinstance(e, (list, tuple, np.generic)) for e in v):
        return v
    out = []
    for e in v:
        if isinstance(e, (list, tuple)):
            out.extend(_flat_ints(e))
        else:
            out.append(_number(e, int))
    return out


def _make_function(name, cfunc, spec):
    c_params = _c_parameters(name, cfunc)
    c_types = dict(c_params)
    if spec is None:
        spec = [(n, n, inspect.Parameter.empty) for n, _ in c_params]
    missing = set(c_types) - {c for _, c, _ in spec}
    unknown = {c for _, c, _ in spec} - set(c_types)
    if missing or unknown:
        raise ImportError("kbackend: the Keras signature of %s does not match the C function "
                          "(missing %s, unknown %s)" % (name, sorted(missing), sorted(unknown)))
    signature = inspect.Signature([
        inspect.Parameter(k, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=d)
        for k, _, d in spec])
    tuples = [len(d) for _, _, d in spec if isinstance(d, tuple) and all(_is_int(e) for e in d)]
    rank = tuples[0] if tuples and len(set(tuples)) == 1 else None
    plan = [(k, c, _converter(c, c_types[c], rank)) for k, c, _ in spec]
    post = _RESULTS.get(name)

    def function(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        values = bound.arguments
        like = next((v for v in values.values() if isinstance(v, Tensor)), None)
        c_args = {}
        for k, c, convert in plan:
            v = values[k]
            c_args[c] = convert(v, like) if convert else v
        result = wrap(cfunc(**c_args))
        return post(result) if post else result

    function.__name__ = function.__qualname__ = name
    function.__signature__ = signature
    function.__doc__ = "%s\n\nkbackend.%s%s over kb_%s (C: %s)." % (
        _signatures.DOCS.get(name, ""), name, signature, name,
        ", ".join("%s %s" % (t, n) for n, t in c_params))
    function.__module__ = "kbackend"
    return function


def _generated_functions():
    specs = _parse_signatures(_SIGNATURES)
    api = {}
    for attr in dir(_c):
        cfunc = getattr(_c, attr)
        if not attr.startswith("kb_") or not callable(cfunc) or isinstance(cfunc, type):
            continue
        name = attr[3:]
        if name in _NOT_EXPOSED:
            continue
        api[name] = _make_function(name, cfunc, specs.get(name))
    return api


API = _generated_functions()


# ---- functions whose Keras contract is more than one C call --------------------------------
def _register(fn):
    API[fn.__name__.lstrip("_")] = fn
    fn.__module__ = "kbackend"
    fn.__name__ = fn.__qualname__ = fn.__name__.lstrip("_")
    return fn


@_register
def _variable(value, dtype=None, name=None, constraint=None):
    """A variable holding value (an array-like, a number, or a tensor that needs no
    placeholder); dtype None means floatx. The variable's .constraint is set."""
    if isinstance(value, (Tensor, _c.Tensor)):
        v = Tensor(_c.kb_variable_from_tensor(value, dtype_arg(dtype), name))
    else:
        v = Tensor(_c.kb_variable(np.asarray(value), dtype_arg(dtype), name))
    v.constraint = constraint
    return v


@_register
def _placeholder(shape=None, ndim=None, dtype=None, sparse=False, name=None):
    """A placeholder; shape None with ndim None has unknown rank; None dims are unknown."""
    return Tensor(_c.kb_placeholder(_shape_arg(shape), -1 if ndim is None else ndim,
                                    dtype_arg(dtype), sparse, name))


@_register
def _function(inputs, outputs, updates=None, **kwargs):
    """A callable taking a list of NumPy arrays (one per input) and returning a list of NumPy
    arrays. updates: update ops or (variable, new_value) pairs. Other keyword arguments (name,
    ...) are accepted as Keras passes them."""
    return Function(inputs, outputs, updates, **kwargs)


@_register
def _eval(x):
    """The value of x as a NumPy array."""
    return to_numpy(x)


@_register
def _get_value(x):
    """Keras' get_value: the value of a variable (or any tensor) as a NumPy array."""
    return to_numpy(x)


@_register
def _batch_get_value(ops):
    """Keras' batch_get_value: the values of several tensors as NumPy arrays."""
    return [to_numpy(t) for t in _c.kb_batch_get_value(list(ops))] if ops else []


@_register
def _set_value(x, value):
    """Keras' set_value: assigns a NumPy value (or a tensor's) to a variable."""
    if isinstance(value, (Tensor, _c.Tensor)):
        _c.kb_set_value(x, value)
    else:
        _c.kb_set_value_data(x, np.asarray(value, dtype=numpy_dtype(_c.kb_dtype(x))))


@_register
def _batch_set_value(tuples):
    """Keras' batch_set_value: assigns each (variable, value) pair's value."""
    tuples = list(tuples)
    if not tuples:
        return
    xs = [x for x, _ in tuples]
    values = [v if isinstance(v, (Tensor, _c.Tensor))
              else as_tensor(np.asarray(v, dtype=numpy_dtype(_c.kb_dtype(x))))
              for x, v in tuples]
    _c.kb_batch_set_value(xs, values)


@_register
def _clip(x, min_value, max_value):
    """As Keras: max_value None is +inf, and a max_value below min_value becomes min_value."""
    if min_value is None:
        min_value = -np.inf
    if max_value is None:
        max_value = np.inf
    if max_value < min_value:
        max_value = min_value
    return Tensor(_c.kb_clip(as_tensor(x), float(min_value), float(max_value)))


@_register
def _stop_gradient(variables):
    """A tensor (or a list of tensors) whose gradient is zero."""
    if isinstance(variables, (list, tuple)):
        return [Tensor(_c.kb_stop_gradient(v)) for v in variables]
    return Tensor(_c.kb_stop_gradient(variables))


@_register
def _map_fn(fn, elems, name=None, dtype=None):
    """fn applied to every element of elems along its first axis (fn gets and returns Tensors)."""
    return Tensor(_c.kb_map_fn(lambda x: fn(Tensor(x)), as_tensor(elems), name,
                               dtype_arg(dtype)))


def _fold(cfunc):
    def fold(fn, elems, initializer=None, name=None):
        return Tensor(cfunc(lambda acc, x: fn(Tensor(acc), Tensor(x)), as_tensor(elems),
                            as_tensor(initializer), name))
    return fold


for _name in ("foldl", "foldr"):
    if hasattr(_c, "kb_" + _name):
        _f = _fold(getattr(_c, "kb_" + _name))
        _f.__name__ = _f.__qualname__ = _name
        _f.__module__ = "kbackend"
        _f.__doc__ = "Keras' %s: fn(acc, x) -> acc over elems' first axis." % _name
        API[_name] = _f


@_register
def _rnn(step_function, inputs, initial_states, go_backwards=False, mask=None, constants=None,
         unroll=False, input_length=None):
    """Keras' rnn: step_function(input, states) -> (output, new_states) is called with Tensors
    (states followed by the constants). Returns (last_output, outputs, new_states); as the
    TensorFlow backend's, last_output has _uses_learning_phase where the steps depend on the
    learning phase (the recurrent layers' dropout), which Keras' RNN layer then passes on."""
    step_uses_phase = []

    def step(x, states):
        output, new_states = step_function(Tensor(x), [Tensor(s) for s in states])
        step_uses_phase.append(getattr(output, "_uses_learning_phase", False))
        return output, list(new_states)

    last, outputs, states = _c.kb_rnn(step, as_tensor(inputs), list(initial_states),
                                      go_backwards, as_tensor(mask), list(constants or []),
                                      unroll, input_length)
    last = Tensor(last)
    last._uses_learning_phase = any(step_uses_phase) or bool(
        _c.kb_tensor_uses_learning_phase(last))
    return last, Tensor(outputs), [Tensor(s) for s in states]


@_register
def _ctc_decode(y_pred, input_length, greedy=True, beam_width=100, top_paths=1):
    """Keras' ctc_decode: (a list of top_paths int64 (batch, width) Tensors padded with -1, one
    when greedy; the (batch, top_paths) log-probabilities)."""
    y_pred = as_tensor(y_pred)
    res = _c.kb_ctc_decode(y_pred, as_tensor(input_length), int(bool(greedy)), int(beam_width),
                           int(top_paths))
    return [Tensor(t) for t in res[:-1]], Tensor(res[-1])


@_register
def _learning_phase_scope(value):
    """with learning_phase_scope(0 or 1): the learning phase is fixed inside the block."""
    return _scope(_c.kb_learning_phase_scope_push, _c.kb_learning_phase_scope_pop, value)


@_register
def _name_scope(name):
    """with name_scope('block'): new tensors are named 'block/...'."""
    return _scope(_c.kb_name_scope_push, _c.kb_name_scope_pop, name)


@contextlib.contextmanager
def _scope(push, pop, value):
    push(value)
    try:
        yield
    finally:
        pop()


@_register
def _sparse_from_coo(indices, values, dense_shape, dtype=None, name=None):
    """A sparse tensor from COO data: indices (nnz, rank) coordinates, values nnz values
    converted to dtype (None: floatx). Functions see its dense value except dot (sparse x dense
    matrix) and concatenate (all sparse), which keep it sparse."""
    flat = np.asarray(indices, np.int64).reshape(-1).tolist()
    return Tensor(_c.kbpy_sparse_from_coo(flat, values, [int(d) for d in dense_shape],
                                          dtype_arg(dtype), name))


@_register
def _sparse_from_csr(indptr, col_indices, values, cols, dtype=None, name=None):
    """A (rows, cols) sparse matrix in CSR form (scipy.sparse.csr_matrix's indptr, indices,
    data): row r's entries are col_indices / values from indptr[r] to indptr[r + 1]."""
    return Tensor(_c.kbpy_sparse_from_csr(np.asarray(indptr, np.int64).tolist(),
                                          np.asarray(col_indices, np.int64).tolist(), values,
                                          int(cols), dtype_arg(dtype), name))


API["from_dlpack"] = from_dlpack


@_register
def _devices():
    """{'cpu': n, 'cuda': n}: the devices the library can use."""
    return {"cpu": _c.kb_device_count("cpu"), "cuda": _c.kb_device_count("cuda")}


@_register
def _list_devices():
    """The devices this process can run on: dicts of kind ('cpu', 'cuda'), index (the N of
    cuda:N), name (the product's) and memory (bytes; the machine's for the CPU)."""
    out = []
    for kind in ("cpu", "cuda"):
        for position in range(_c.kb_device_count(kind)):
            out.append({"kind": kind, "index": _c.kb_device_index(kind, position),
                        "name": _c.kb_device_name(kind, position),
                        "memory": _c.kb_device_memory(kind, position)})
    return out


for _name in ("map_fn", "rnn"):
    if not hasattr(_c, "kb_" + _name):
        API.pop(_name, None)
