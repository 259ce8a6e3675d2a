"""The Tensor class: identity semantics, attributes, operators, slicing, lifetime."""
import numpy as np
import pytest

import kbackend as K

A = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def test_identity_equality_and_hashing():
    a, b = K.constant([1.0, 2.0]), K.constant([1.0, 2.0])
    assert (a == a) is True and (a == b) is False and (a != b) is True
    assert None not in [a, b]  # Keras: `None in grads`
    assert a in [b, a] and len({a, b, a}) == 2
    assert {a: 1}[a] == 1


def test_attribute_assignment():
    x = K.placeholder(shape=(None, 4))
    x._keras_shape = (None, 4)
    x._uses_learning_phase = False
    x._keras_history = ("layer", 0, 0)
    assert x._keras_shape == (None, 4) and x._keras_history[0] == "layer"


def test_properties():
    x = K.placeholder(shape=(None, 4), dtype="float64", name="inp")
    assert x.shape == (None, 4) and x.ndim == 2 and x.dtype == "float64"
    assert "inp" in x.name and "inp" in repr(x)
    assert K.placeholder().shape is None  # unknown rank
    assert K.placeholder(ndim=3).shape == (None, None, None)
    assert isinstance(x.id, int) and K.identity(x).id != x.id
    c = K.constant(A)
    np.testing.assert_array_equal(np.asarray(c), A)
    np.testing.assert_array_equal(c.numpy(), A)
    assert K.int_shape(c) == (2, 3, 4) and K.ndim(c) == 3 and K.dtype(c) == "float32"
    assert K.count_params(c) == 24 and K.get_variable_shape(c) == (2, 3, 4)


def test_operators_with_numbers_on_both_sides():
    a = np.array([[1.0, -2.0], [3.0, 4.0]], np.float32)
    t = K.constant(a)
    cases = [
        (t + 1, a + 1), (1 + t, 1 + a), (t - 2, a - 2), (2 - t, 2 - a), (t * 3, a * 3),
        (3 * t, 3 * a), (t / 2, a / 2), (2 / t, 2 / a), (t ** 2, a ** 2), (-t, -a),
        (abs(t), abs(a)), (t + t, a + a), (t * t - t / t, a * a - a / a), (t @ t, a @ a),
        (np.float32(2) * t, 2 * a), (t + np.ones(2, np.float32), a + 1), (t + [1.0, 2.0],
                                                                          a + [1, 2]),
    ]
    for got, ref in cases:
        assert isinstance(got, K.Tensor)
        assert got.dtype == "float32"
        np.testing.assert_allclose(got.numpy(), ref, rtol=1e-6)
    np.testing.assert_array_equal((t > 1).numpy(), a > 1)
    np.testing.assert_array_equal((t <= 3).numpy(), a <= 3)


def test_operators_keep_integer_dtypes():
    i = K.constant([1, 2, 3], dtype="int32")
    assert (i + 1).dtype == "int32" and (i * 2).numpy().tolist() == [2, 4, 6]
    assert (K.constant([1.0], dtype="float64") * 2).dtype == "float64"


def test_operator_errors():
    t = K.constant([1.0])
    with pytest.raises(TypeError):
        t + "a"
    with pytest.raises(TypeError):
        t ** t
    with pytest.raises(TypeError):
        iter(t)


@pytest.mark.parametrize("key", [
    1, -1, (0, 1), (1, -1, -2), slice(None), slice(1, None), slice(None, None, -1),
    slice(None, None, -2), (slice(None), slice(2, 0, -1)), (Ellipsis, 1), (Ellipsis, slice(1, 3)),
    (1, Ellipsis), (None, 0), (slice(None), None, 1), (Ellipsis, None), (0, None, Ellipsis, 2),
    (slice(-1, None), slice(None, -1), slice(None, None, 3)), (np.int64(1), slice(0, 2)),
    slice(5, 10), (slice(None, None, -1), Ellipsis, slice(3, 0, -2)),
], ids=repr)
def test_slicing_like_numpy(key):
    got = K.constant(A)[key].numpy()
    np.testing.assert_array_equal(got, A[key])


def test_slicing_a_placeholder_in_a_function():
    x = K.placeholder(shape=(None, 3, 4))
    f = K.function([x], [x[:, -1, ::-1], x[..., 0]])
    out = f([A])
    np.testing.assert_array_equal(out[0], A[:, -1, ::-1])
    np.testing.assert_array_equal(out[1], A[..., 0])


def test_slicing_errors():
    t = K.constant(A)
    with pytest.raises(ValueError, match="strided_slice"):
        t[5]
    with pytest.raises(IndexError):
        t[..., ...]
    with pytest.raises(TypeError):
        t["a"]
    with pytest.raises(ValueError):
        t[::0]
    with pytest.raises(IndexError):  # tensor indices take no ellipsis
        t[..., K.constant(1, dtype="int32")]
    with pytest.raises(ValueError):  # nor slices of other steps than 1 with tensor bounds
        t[:K.constant(1, dtype="int32"):2]


def test_tensor_indices():
    """Scalar tensors as indices (through gather) and as slice bounds (through slice_to)."""
    t = K.constant(A)
    i = K.constant(1, dtype="int32")
    np.testing.assert_array_equal(t[i].numpy(), A[1])
    np.testing.assert_array_equal(t[:, i].numpy(), A[:, 1])
    np.testing.assert_array_equal(t[i:, :i].numpy(), A[1:, :1])
    np.testing.assert_array_equal(t[None, i, 1:].numpy(), A[None, 1, 1:])


def test_context_manager_and_close():
    before = K.live_tensors()
    with K.constant([1.0, 2.0]) as t:
        assert K.live_tensors() == before + 1
        assert (t * 2).numpy().tolist() == [2.0, 4.0]
    assert t.closed and K.live_tensors() == before
    assert "closed" in repr(t)
    with pytest.raises(ValueError, match="closed"):
        t.numpy()
    with pytest.raises(TypeError):  # the SWIG layer refuses a closed tensor
        K.exp(t)
    t.close()  # twice is fine


def test_raw_layer_is_reachable():
    raw = K.kbackend
    h = raw.kb_tensor_from_data(np.array([1.0, 4.0], np.float32))
    assert isinstance(h, raw.Tensor)
    t = K.sqrt(h)  # raw handles are accepted too
    assert t.numpy().tolist() == [1.0, 2.0]
