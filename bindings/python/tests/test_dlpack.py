"""DLPack both ways: kbackend tensors to NumPy and JAX (Tensor.__dlpack__) and their arrays to
kbackend (kbackend.from_dlpack, compiled functions' inputs), sharing memory and freeing it once.
NumPy 1.x speaks the unversioned protocol, NumPy >= 2.1 and JAX the versioned one; the JAX tests
run where JAX is installed (bindings/python/keras3_tests/run.sh runs this file in its venv)."""
import sys

import numpy as np
import pytest

import kbackend as K

NUMPY_VERSIONED = tuple(int(p) for p in np.__version__.split(".")[:2]) >= (2, 1)


def address(a):
    return a.__array_interface__["data"][0]


class Lender:
    """A producer that is not a NumPy array: lends an array's memory through the protocol."""

    def __init__(self, array, device=(1, 0)):
        self.array, self.device, self.asked = array, device, 0

    def __dlpack__(self, **kwargs):
        capsule = self.array.__dlpack__(**kwargs)
        self.asked += 1
        return capsule

    def __dlpack_device__(self):
        return self.device


def test_numpy_memory_is_shared_and_kept_alive():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    base = sys.getrefcount(a)
    t = K.from_dlpack(a)
    assert sys.getrefcount(a) == base + 1  # the managed tensor holds the array
    a[0, 0] = 42  # a write on NumPy's side is seen by kbackend
    np.testing.assert_array_equal(t.numpy(), [[42, 1, 2], [3, 4, 5]])
    assert address(np.from_dlpack(t)) == address(a)  # lent on: the same memory
    t.close()
    import gc
    gc.collect()
    assert sys.getrefcount(a) == base  # the deleter ran once


def test_numpy_reads_a_tensor_in_place():
    t = K.constant(np.arange(12, dtype=np.float64).reshape(3, 4), dtype="float64")
    a, b = np.from_dlpack(t), np.from_dlpack(t)
    np.testing.assert_array_equal(a, np.arange(12).reshape(3, 4))
    assert a.dtype == np.float64
    assert address(a) == address(b)  # the constant's own memory, not copies
    assert not a.flags.writeable  # a constant is read-only
    del t  # the arrays keep the memory
    np.testing.assert_array_equal(a.ravel(), np.arange(12))


@pytest.mark.skipif(not NUMPY_VERSIONED, reason="NumPy < 2.1 makes every import read-only")
def test_a_variable_lent_is_writable_and_its_value():
    v = K.variable(np.ones((2, 2), np.float32))
    a = np.from_dlpack(v)
    assert a.flags.writeable
    a[1, 1] = 5
    np.testing.assert_array_equal(K.get_value(v), [[1, 1], [1, 5]])
    K.set_value(v, np.zeros((2, 2), np.float32))  # new memory: what was lent keeps its values
    np.testing.assert_array_equal(a, [[1, 1], [1, 5]])


def test_computed_values_and_copies():
    x = K.constant(np.array([1, 2, 3], np.float32))
    np.testing.assert_array_equal(np.from_dlpack(x * 2), [2, 4, 6])
    shared = np.from_dlpack(x)
    if NUMPY_VERSIONED:
        copied = np.from_dlpack(x, copy=True)
        assert address(copied) != address(shared)
    capsule = x.__dlpack__(copy=True)
    assert "dltensor" in repr(capsule)
    assert x.__dlpack_device__() == (1, 0)


def test_strided_views_are_copied_only_where_allowed():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(K.from_dlpack(a.T).numpy(), a.T)  # copy=None: copied
    with pytest.raises(ValueError, match="strides"):
        K.from_dlpack(a.T, copy=False)
    np.testing.assert_array_equal(K.from_dlpack(a[:, ::2]).numpy(), a[:, ::2])
    tail = a[1:]  # an offset view, compact: read in place
    t = K.from_dlpack(tail, copy=False)
    assert address(np.from_dlpack(t)) == address(tail)
    c = K.from_dlpack(a, copy=True)
    a[0, 0] = -1
    assert c.numpy()[0, 0] == 0


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int16", "int32",
                                   "int64", "uint8", "bool"])
def test_every_dtype_both_ways(dtype, rng):
    a = (rng.integers(0, 2, (3, 5)) if dtype == "bool" else rng.integers(-50, 50, (3, 5)))
    a = a.astype(dtype)
    try:
        a.__dlpack__()
    except BufferError:  # NumPy < 1.25 lends no bools
        pytest.skip("this NumPy lends no %s through DLPack" % dtype)
    t = K.from_dlpack(a)
    assert t.dtype == dtype
    np.testing.assert_array_equal(t.numpy(), a)
    back = np.from_dlpack(K.constant(a, dtype=dtype))
    assert back.dtype == a.dtype
    np.testing.assert_array_equal(back, a)


@pytest.mark.parametrize("dtype", ["complex64", "uint16", "uint32"])
def test_types_kbackend_lacks_are_refused(dtype):
    a = np.zeros(4, dtype)
    base = sys.getrefcount(a)
    with pytest.raises(ValueError, match="no dtype for DLPack's"):
        K.from_dlpack(a)
    import gc
    gc.collect()
    assert sys.getrefcount(a) == base  # the capsule nobody took released the array


def test_a_capsule_is_taken_once():
    a = np.arange(3.0)
    capsule = a.__dlpack__()
    t = K.from_dlpack(capsule)
    np.testing.assert_array_equal(t.numpy(), [0, 1, 2])
    with pytest.raises(ValueError, match="taken once"):
        K.from_dlpack(capsule)
    with pytest.raises(TypeError, match="no __dlpack__"):
        K.from_dlpack([1, 2, 3])


def test_protocol_refusals():
    t = K.constant(np.ones(2, np.float32))
    with pytest.raises(BufferError, match="stream"):
        t.__dlpack__(stream=1)
    with pytest.raises(BufferError, match="device"):
        t.__dlpack__(dl_device=(2, 0))
    gpu = Lender(np.ones(2, np.float32), device=(2, 0))
    with pytest.raises(BufferError, match="host memory"):
        K.from_dlpack(gpu)
    assert gpu.asked == 0  # refused before any capsule was made
    with pytest.raises(ValueError, match="placeholder|value"):
        K.placeholder(shape=(2,)).__dlpack__()


def test_functions_read_dlpack_objects_in_place():
    x = K.placeholder(shape=(None, 3))
    f = K.function([x], [K.sum(x * 2, axis=1)])
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    lender = Lender(data)
    np.testing.assert_allclose(f([lender])[0], [6, 24])
    assert lender.asked == 1
    data[1] = 0  # the function reads the producer's memory
    np.testing.assert_allclose(f([Lender(data)])[0], [6, 0])
    # A float64 producer for a float32 input: converted, as an array would be.
    np.testing.assert_allclose(f([Lender(np.ones((1, 3)))])[0], [6])


try:
    import jax
    import jax.numpy as jnp
except ImportError:  # Debian's Python has no JAX
    jax = None


@pytest.mark.skipif(jax is None, reason="JAX is not installed")
def test_jax_both_ways():
    j = jnp.arange(12, dtype=jnp.float32).reshape(3, 4)
    t = K.from_dlpack(j)
    np.testing.assert_array_equal(t.numpy(), np.arange(12).reshape(3, 4))
    back = jnp.from_dlpack(K.constant(np.eye(3, dtype=np.float32)))
    np.testing.assert_array_equal(np.asarray(back), np.eye(3))
    b16 = jnp.linspace(-2, 2, 8, dtype=jnp.bfloat16)
    t16 = K.from_dlpack(b16)
    assert t16.dtype == "bfloat16"
    np.testing.assert_array_equal(np.asarray(jnp.from_dlpack(t16)).astype(np.float32),
                                  np.asarray(b16).astype(np.float32))
    x = K.placeholder(shape=(None, 4))
    f = K.function([x], [K.mean(x, axis=0)])
    np.testing.assert_allclose(f([j])[0], np.asarray(j).mean(axis=0))
