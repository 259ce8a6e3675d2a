"""A small ctypes binding of include/kbackend.h for the NumPy reference tests."""
import ctypes
import importlib.util
import os
from ctypes import c_double, c_int32, c_int64, c_size_t, c_void_p

import numpy as np

_here = os.path.dirname(os.path.abspath(__file__))
lib = ctypes.CDLL(os.environ.get("KBACKEND_LIB",
                                 os.path.join(_here, "..", "..", "build", "libkbackend.so")))

# dtype codes of kb_data_type
DEFAULT, F16, F32, F64, I8, I16, I32, I64, U8, BOOL, BF16 = range(-1, 10)
# NumPy has no bfloat16: here a bfloat16 tensor's values are uint16 arrays of its bits (kbackend
# has no uint16 type, so the mapping is unambiguous); see bf16_bits / bf16_values.
NP_OF = {F16: np.float16, F32: np.float32, F64: np.float64, I8: np.int8, I16: np.int16,
         I32: np.int32, I64: np.int64, U8: np.uint8, BOOL: np.bool_, BF16: np.uint16}
CODE_OF = {np.dtype(v): k for k, v in NP_OF.items()}
CHANNELS_LAST, CHANNELS_FIRST = 0, 1

# Every C function's signature, from the header (the Python package's generated _native.py,
# loaded by its path: the package itself needs its SWIG extension).
_spec = importlib.util.spec_from_file_location(
    "kb_native", os.path.join(_here, "..", "..", "bindings", "python", "kbackend", "_native.py"))
native = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(native)
native.bind(lib)


class KBError(Exception):
    def __init__(self, status, message):
        super().__init__(f"[{status}] {message}")
        self.status, self.message = status, message


def check(status):
    if status != 0:
        raise KBError(status, lib.kb_last_error_message().decode())


class Tensor:
    """Owns one kb_tensor* reference."""

    def __init__(self, handle):
        self.h = c_void_p(handle)

    def __del__(self):
        if lib is not None and self.h:
            lib.kb_tensor_release(self.h)
            self.h = c_void_p()

    @property
    def _as_parameter_(self):
        return self.h

    @property
    def dtype(self):
        d = c_int32()
        check(lib.kb_dtype(self, ctypes.byref(d)))
        return d.value

    @property
    def shape(self):
        """int_shape: a tuple with None for unknown dims, or None for an unknown rank."""
        dims, n = (c_int64 * 16)(), c_int64()
        check(lib.kb_int_shape(self, dims, 16, ctypes.byref(n)))
        return None if n.value < 0 else tuple(None if d < 0 else d for d in dims[:n.value])


def i64(seq):
    """An int64 array argument (None stays NULL)."""
    if seq is None:
        return None
    seq = [int(v) for v in np.atleast_1d(seq)]
    return (c_int64 * max(len(seq), 1))(*seq)


def handles(ts):
    return (c_void_p * max(len(ts), 1))(*[t.h.value if t is not None else None for t in ts])


def op(name, *args):
    """Calls kb_<name>(*args, &out) and returns the new tensor."""
    out = c_void_p()
    check(getattr(lib, "kb_" + name)(*args, ctypes.byref(out)))
    return Tensor(out.value)


def status_of(name, *args):
    """Calls kb_<name>(*args, &out), expecting a failure; returns (status, message)."""
    out = c_void_p()
    st = getattr(lib, "kb_" + name)(*args, ctypes.byref(out))
    if st == 0:
        lib.kb_tensor_release(out)
        return 0, ""
    return st, lib.kb_last_error_message().decode()


def const(a, dtype=None):
    a = np.require(np.asarray(a, dtype), requirements="C")  # keeps rank 0
    return op("tensor_from_data", a.ctypes.data, CODE_OF[a.dtype], i64(a.shape), a.ndim)


def placeholder(shape, dtype=F32, ndim=0):
    shape_arr = i64(shape) if shape is not None else None
    n = len(shape) if shape is not None else 0
    return op("placeholder", shape_arr, n, ndim, dtype, 0, None)


def variable(a, dtype=DEFAULT):
    a = np.require(np.asarray(a), requirements="C")
    return op("variable", a.ctypes.data, CODE_OF[a.dtype], i64(a.shape), a.ndim, dtype, None)


def to_numpy(t):
    """The value of a tensor with a concrete value (constant, variable, function result)."""
    nbytes = c_size_t()
    check(lib.kb_tensor_nbytes(t, ctypes.byref(nbytes)))
    out = np.empty(t.shape, NP_OF[t.dtype])
    assert out.nbytes == nbytes.value
    check(lib.kb_tensor_copy_to(t, out.ctypes.data, out.nbytes))
    return out


def list_items(handle):
    try:
        out = []
        for i in range(lib.kb_tensor_list_size(handle)):
            t = c_void_p()
            check(lib.kb_tensor_list_get(handle, i, ctypes.byref(t)))
            out.append(Tensor(t.value))
        return out
    finally:
        lib.kb_tensor_list_release(handle)


class Function:
    """kb_function(inputs, outputs); calling it with NumPy arrays returns NumPy arrays."""

    def __init__(self, inputs, outputs, updates=()):
        f = c_void_p()
        check(lib.kb_function(handles(inputs), len(inputs), handles(outputs), len(outputs),
                              handles(updates), len(updates), ctypes.byref(f)))
        self.f, self.inputs = f, list(inputs)

    def __del__(self):
        if lib is not None and self.f:
            lib.kb_function_release(self.f)

    def __call__(self, *values):
        consts = [const(np.asarray(v)) for v in values]
        out = c_void_p()
        check(lib.kb_function_call(self.f, handles(consts), len(consts), ctypes.byref(out)))
        return [to_numpy(t) for t in list_items(out)]


def run(outputs, feeds=()):
    """Evaluates one tensor or a list of tensors; feeds: [(placeholder, array), ...]."""
    single = isinstance(outputs, Tensor)
    outs = [outputs] if single else list(outputs)
    feeds = list(feeds.items()) if isinstance(feeds, dict) else list(feeds)
    res = Function([p for p, _ in feeds], outs)(*[v for _, v in feeds])
    return res[0] if single else res


def gradients(loss, wrt):
    out = c_void_p()
    check(lib.kb_gradients(loss, handles(wrt), len(wrt), ctypes.byref(out)))
    return list_items(out.value)


def epsilon():
    e = c_double()
    check(lib.kb_epsilon(ctypes.byref(e)))
    return e.value


def bf16_bits(a):
    """The bfloat16 bits of float32 values: round to nearest, ties to even; NaN -> 0x7fff."""
    f = np.ascontiguousarray(a, np.float32)
    u = f.view(np.uint32).astype(np.uint64)
    sixteen = np.uint64(16)
    r = ((u + np.uint64(0x7FFF) + ((u >> sixteen) & np.uint64(1))) >> sixteen).astype(np.uint16)
    return np.where(np.isnan(f), np.uint16(0x7FFF), r).astype(np.uint16)


def bf16_values(bits):
    """The float32 values of bfloat16 bits (exact)."""
    b = np.asarray(bits, np.uint16)
    return (np.atleast_1d(b).astype(np.uint32) << np.uint32(16)).view(np.float32).reshape(b.shape)


# A 16-bit float dtype's storage as kb.py holds it (a float16 array, bfloat16 bits) from values
# rounded through float32, and its float32 values (exact).
_NARROW = {F16: (lambda a: np.asarray(a, np.float32).astype(np.float16),
                 lambda s: np.asarray(s).astype(np.float32)),
           BF16: (bf16_bits, bf16_values)}


def native_bf16_products():
    """Whether this CPU has bfloat16 arithmetic (avx512_bf16 or AMX), on which the library's
    bfloat16 products run oneDNN's bf16 kernels: like the instructions, they treat subnormal
    operands and results (below 2^-126) as zero."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = f.read()
    except OSError:
        return False
    return " avx512_bf16" in flags or " amx_bf16" in flags


def flush_subnormals(values):
    """float32 values with the subnormal ones (nonzero, below 2^-126 in magnitude) made zero."""
    v = np.asarray(values, np.float32)
    return np.where(np.abs(v) < np.float32(2.0 ** -126), np.float32(0) * v, v)


def narrow_store(a, dtype):
    return _NARROW[dtype][0](a)


def narrow_values(s, dtype):
    return _NARROW[dtype][1](s)

# ---- test helpers ----------------------------------------------------------------------------
def tol(dtype):
    return dict(rtol=2e-5, atol=2e-6) if dtype in (F32, np.float32) else dict(rtol=1e-12,
                                                                               atol=1e-12)


def assert_close(actual, expected, dtype, **kw):
    """actual has the dtype code `dtype`, and is close to expected (cast to that dtype)."""
    assert actual.dtype == np.dtype(NP_OF[dtype]), (actual.dtype, NP_OF[dtype])
    expected = np.asarray(expected, NP_OF[dtype])
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_allclose(actual, expected, **{**tol(dtype), **kw})


# KB_REFERENCE_FEED=1 (the suite's device runs): inputs given as constants are fed to
# placeholders of their full shape instead, so that no case folds on the CPU when the plan is
# built: every case reaches the device's kernels with the shapes a constant would have.
FEED_CONSTANTS = os.environ.get("KB_REFERENCE_FEED") == "1"


def feed_tensors(arrays, mode):
    """'const': constants; 'ph': placeholders, the first dim unknown (rank >= 1)."""
    if mode == "const" and FEED_CONSTANTS:
        phs = [placeholder(list(a.shape), CODE_OF[a.dtype]) for a in arrays]
        return phs, list(zip(phs, arrays))
    if mode == "const":
        return [const(a) for a in arrays], []
    phs = [placeholder(([-1] + list(a.shape[1:])) if a.ndim else [], CODE_OF[a.dtype])
           for a in arrays]
    return phs, list(zip(phs, arrays))


def ev(fn, *arrays, mode="const"):
    """fn(*tensors) evaluated with arrays as constants or fed to placeholders."""
    arrays = [np.asarray(a) for a in arrays]
    ts, feeds = feed_tensors(arrays, mode)
    return run(fn(*ts), feeds)


def central_differences(loss_f, inputs, i, h=1e-6):
    """d loss / d inputs[i] by central differences, one element at a time (loss_f(*inputs)[0] is
    the scalar loss; inputs float64 arrays)."""
    fd = np.zeros_like(inputs[i])
    for j in range(inputs[i].size):
        xp = [a.copy() for a in inputs]
        xm = [a.copy() for a in inputs]
        xp[i].flat[j] += h
        xm[i].flat[j] -= h
        fd.flat[j] = (loss_f(*xp)[0] - loss_f(*xm)[0]) / (2 * h)
    return fd


def reduce_sum(t):
    return op("sum", t, None, 0, 0)


def weighted(y, seed):
    """sum(y * w) for a fixed random w of y's (concrete) shape and dtype."""
    w = np.random.default_rng(seed).standard_normal(y.shape) + 0.3
    return reduce_sum(op("multiply", y, const(w.astype(NP_OF[y.dtype]))))


def grads_of(build, inputs, dt, seed=0, nonlinear=False):
    """Gradients of sum(build(...) * w) (of tanh(build(...)) with nonlinear) w.r.t. every input."""
    phs = [placeholder(list(a.shape), dt) for a in inputs]
    y = build(*phs)
    if nonlinear:
        y = op("tanh", y)
    loss = weighted(y, seed)
    return phs, loss, gradients(loss, phs)


def fd_check(build, *inputs, seed=0, rtol=1e-5, atol=1e-7, nonlinear=False):
    """The float64 gradients of grads_of against central finite differences; returns them."""
    inputs = [np.asarray(a, np.float64) for a in inputs]
    phs, loss, grads = grads_of(build, inputs, F64, seed, nonlinear)
    res = Function(phs, grads)(*inputs)
    loss_f = Function(phs, [loss])
    for i, g in enumerate(res):
        assert g.shape == inputs[i].shape
        fd = central_differences(loss_f, inputs, i)
        np.testing.assert_allclose(g, fd, rtol=rtol, atol=atol, err_msg=f"input {i}")
    return res


def error_of(name, *args):
    """Calls kb_<name>(*args, &out) which must fail; returns its message."""
    st, msg = status_of(name, *args)
    assert st != 0, f"kb_{name} unexpectedly succeeded"
    assert lib.kb_last_error_code() == st
    return msg


# ---- plan rewrites (KB_FUSE) -----------------------------------------------------------------
def unfused(fn, *args):
    """Calls fn (e.g. a Function whose plan is built on this call) with the plan rewrites off."""
    old = os.environ.get("KB_FUSE")
    os.environ["KB_FUSE"] = "0"
    try:
        return fn(*args)
    finally:
        if old is None:
            del os.environ["KB_FUSE"]
        else:
            os.environ["KB_FUSE"] = old


def results_by_thread_count(script, tmp_path, counts=(1, 2)):
    """Runs `python -c script N PATH` for each thread count N (the script sets it with
    kb_set_num_threads and saves its results to PATH with np.save); returns the loaded arrays."""
    import subprocess
    import sys
    env = dict(os.environ, PYTHONPATH=_here + os.pathsep + os.environ.get("PYTHONPATH", ""))
    results = []
    for threads in counts:
        path = str(tmp_path / f"t{threads}.npy")
        subprocess.run([sys.executable, "-c", script, str(threads), path], env=env, check=True)
        results.append(np.load(path))
    return results


def _plan_log(script, case, **env):
    """The plan lines that `python -c script case` logs (KB_LOG_PLAN=1):
    "kbackend plan (<device>): <op>@<device> ..."."""
    import subprocess
    import sys
    e = dict(os.environ, KB_LOG_PLAN="1", PYTHONPATH=_here)
    e.pop("KB_FUSE", None)
    e.update(env)
    r = subprocess.run([sys.executable, "-c", script, case], env=e, capture_output=True,
                       text=True, check=True)
    return [ln for ln in r.stderr.splitlines() if ln.startswith("kbackend plan")]


def logged_plans(script, case, **env):
    """The op names of every plan that `python -c script case` builds (KB_LOG_PLAN=1), in the
    order they are logged (a function's loop bodies before the function's own)."""
    return [[s.split("@")[0] for s in ln.split(":", 1)[1].split()]
            for ln in _plan_log(script, case, **env)]


def plan_devices(script, case, **env):
    """The device of every plan that `python -c script case` builds, as logged."""
    return [ln.split("(", 1)[1].split(")", 1)[0] for ln in _plan_log(script, case, **env)]


def plan_steps(script, case, outermost=False, **env):
    """The op names of the one plan that `python -c script case` builds (KB_LOG_PLAN=1); with
    outermost, of the last plan logged (a function's own, after its loop bodies')."""
    plans = logged_plans(script, case, **env)
    assert len(plans) == 1 or (outermost and plans), plans
    return plans[-1]
