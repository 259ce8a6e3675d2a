"""A sample of functions compared with NumPy."""
import math

import numpy as np
import pytest

import kbackend as K


def value(t):
    return t.numpy()


X = np.array([[0.5, -1.5, 2.0], [3.0, -0.25, 1.0]], np.float32)
Y = np.array([[1.0, 2.0, -3.0], [0.5, 4.0, 2.0]], np.float32)
P = np.abs(X) + 0.5  # positive

UNARY = [
    ("square", X, np.square),
    ("abs", X, np.abs),
    ("sqrt", P, np.sqrt),
    ("exp", X, np.exp),
    ("log", P, np.log),
    ("round", np.array([0.5, 1.5, 2.4, -0.5, -1.6], np.float32), np.round),
    ("sign", X, np.sign),
    ("sin", X, np.sin),
    ("cos", X, np.cos),
    ("negative", X, np.negative),
    ("sigmoid", X, lambda a: 1 / (1 + np.exp(-a))),
    ("tanh", X, np.tanh),
    ("softplus", X, lambda a: np.log1p(np.exp(a))),
    ("softsign", X, lambda a: a / (1 + np.abs(a))),
    ("hard_sigmoid", X, lambda a: np.clip(0.2 * a + 0.5, 0, 1)),
    ("flatten", X, np.ravel),
    ("transpose", X, np.transpose),
]


@pytest.mark.parametrize("name,x,ref", UNARY, ids=[u[0] for u in UNARY])
def test_unary(name, x, ref):
    got = value(getattr(K, name)(K.constant(x)))
    np.testing.assert_allclose(got, ref(x), rtol=1e-5, atol=1e-6)


BINARY = [
    ("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
    ("divide", np.divide), ("maximum", np.maximum), ("minimum", np.minimum),
    ("equal", np.equal), ("not_equal", np.not_equal), ("greater", np.greater),
    ("greater_equal", np.greater_equal), ("less", np.less), ("less_equal", np.less_equal),
]


@pytest.mark.parametrize("name,ref", BINARY, ids=[b[0] for b in BINARY])
def test_binary(name, ref):
    y = Y.copy()
    y[0, 0] = X[0, 0]  # one equal pair
    got = value(getattr(K, name)(K.constant(X), K.constant(y)))
    np.testing.assert_allclose(got, ref(X, y), rtol=1e-6)


def test_binary_broadcasts_and_takes_numbers():
    np.testing.assert_allclose(value(K.add(K.constant(X), K.constant([1.0, 2.0, 3.0]))),
                               X + np.array([1, 2, 3], np.float32))
    np.testing.assert_allclose(value(K.maximum(K.constant(X), 0.0)), np.maximum(X, 0))


REDUCTIONS = ["max", "min", "sum", "prod", "mean", "var", "std", "logsumexp"]
NP_REDUCE = {"max": np.max, "min": np.min, "sum": np.sum, "prod": np.prod, "mean": np.mean,
             "var": np.var, "std": np.std,
             "logsumexp": lambda a, axis=None, keepdims=False: np.log(
                 np.sum(np.exp(a), axis=axis, keepdims=keepdims))}


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("axis,keepdims", [(None, False), (1, False), (0, True), ([0, 1], True),
                                           (-1, True)])
def test_reductions(name, axis, keepdims):
    a = np.arange(1, 13, dtype=np.float64).reshape(3, 4) / 4
    got = value(getattr(K, name)(K.constant(a, dtype="float64"), axis=axis, keepdims=keepdims))
    np_axis = tuple(axis) if isinstance(axis, list) else axis
    np.testing.assert_allclose(got, NP_REDUCE[name](a, axis=np_axis, keepdims=keepdims),
                               rtol=1e-12)


def test_any_all_argmax_cumsum():
    b = np.array([[True, False], [False, False]])
    c = K.constant(b, dtype="bool")
    np.testing.assert_array_equal(value(K.any(c, axis=1)), b.any(axis=1))
    np.testing.assert_array_equal(value(K.all(c, axis=0)), b.all(axis=0))
    np.testing.assert_array_equal(value(K.argmax(K.constant(X))), X.argmax(axis=-1))
    np.testing.assert_array_equal(value(K.argmin(K.constant(X), axis=0)), X.argmin(axis=0))
    np.testing.assert_allclose(value(K.cumsum(K.constant(X))), np.cumsum(X, axis=0))
    np.testing.assert_allclose(value(K.cumprod(K.constant(X), axis=1)), np.cumprod(X, axis=1))


def test_shapes():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = K.constant(a)
    np.testing.assert_array_equal(value(K.reshape(t, (4, -1))), a.reshape(4, -1))
    np.testing.assert_array_equal(value(K.permute_dimensions(t, (2, 0, 1))), a.transpose(2, 0, 1))
    np.testing.assert_array_equal(value(K.concatenate([t, t])), np.concatenate([a, a], axis=-1))
    np.testing.assert_array_equal(value(K.concatenate([t, t], axis=0)), np.concatenate([a, a]))
    np.testing.assert_array_equal(value(K.stack([t, t], axis=1)), np.stack([a, a], axis=1))
    np.testing.assert_array_equal(value(K.tile(t, (1, 2, 1))), np.tile(a, (1, 2, 1)))
    np.testing.assert_array_equal(value(K.repeat_elements(t, 2, axis=1)), a.repeat(2, axis=1))
    np.testing.assert_array_equal(value(K.expand_dims(t)), a[..., None])
    np.testing.assert_array_equal(value(K.squeeze(K.expand_dims(t, 1), 1)), a)
    np.testing.assert_array_equal(value(K.batch_flatten(t)), a.reshape(2, -1))
    np.testing.assert_array_equal(value(K.reverse(t, axes=[0, 2])), a[::-1, :, ::-1])
    np.testing.assert_array_equal(value(K.slice(t, (0, 1, 1), (2, 2, 2))), a[0:2, 1:3, 1:3])
    np.testing.assert_array_equal(value(K.repeat(K.constant(X), 3)), np.repeat(X[:, None], 3, 1))
    idx = K.constant([2, 0], dtype="int32")
    np.testing.assert_array_equal(value(K.gather(K.constant(a[0]), idx)), a[0][[2, 0]])
    np.testing.assert_array_equal(value(K.one_hot(K.constant([1, 3], dtype="int32"), 4)),
                                  np.eye(4, dtype=np.float32)[[1, 3]])


def test_linalg():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_allclose(value(K.dot(K.constant(a), K.constant(b))), a @ b)
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    y = np.arange(40, dtype=np.float32).reshape(2, 4, 5)
    np.testing.assert_allclose(value(K.batch_dot(K.constant(x), K.constant(y), axes=(2, 1))),
                               np.einsum("bij,bjk->bik", x, y))
    v = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(value(K.batch_dot(K.constant(v), K.constant(v), axes=1)),
                               np.sum(v * v, axis=1, keepdims=True))


def test_nn():
    t = K.constant(X)
    np.testing.assert_allclose(value(K.relu(t)), np.maximum(X, 0))
    np.testing.assert_allclose(value(K.relu(t, alpha=0.1, max_value=1.5)),
                               np.minimum(np.where(X > 0, X, 0.1 * X), 1.5), rtol=1e-6)
    np.testing.assert_allclose(value(K.elu(t)), np.where(X > 0, X, np.exp(X) - 1), rtol=1e-6)
    e = np.exp(X - X.max(axis=-1, keepdims=True))
    soft = e / e.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(value(K.softmax(t)), soft, rtol=1e-6)
    target = np.eye(3, dtype=np.float32)[[0, 2]]
    cce = K.categorical_crossentropy(K.constant(target), K.constant(soft))
    np.testing.assert_allclose(value(cce), -np.sum(target * np.log(soft), axis=-1), rtol=1e-5)
    np.testing.assert_allclose(
        value(K.categorical_crossentropy(K.constant(target), t, from_logits=True)),
        -np.sum(target * np.log(soft), axis=-1), rtol=1e-5)
    p = np.array([0.2, 0.9], np.float32)
    tb = np.array([0.0, 1.0], np.float32)
    np.testing.assert_allclose(value(K.binary_crossentropy(K.constant(tb), K.constant(p))),
                               -(tb * np.log(p) + (1 - tb) * np.log(1 - p)), rtol=1e-5)
    np.testing.assert_allclose(value(K.l2_normalize(t, axis=1)),
                               X / np.sqrt(np.sum(X * X, axis=1, keepdims=True)), rtol=1e-6)
    np.testing.assert_allclose(value(K.bias_add(t, K.constant([1.0, 2.0, 3.0]))),
                               X + np.array([1, 2, 3], np.float32))
    np.testing.assert_array_equal(
        value(K.in_top_k(K.constant(X), K.constant([2, 1], dtype="int32"), 1)), [True, False])


def test_bias_add_channels_first():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    got = value(K.bias_add(K.constant(x), K.constant([1.0, 2.0, 3.0]),
                           data_format="channels_first"))
    np.testing.assert_allclose(got, x + np.array([1, 2, 3], np.float32)[None, :, None])


def test_pooling_and_conv():
    x = np.arange(32, dtype=np.float32).reshape(1, 4, 4, 2)
    got = value(K.pool2d(K.constant(x), (2, 2), strides=(2, 2), pool_mode="max"))
    np.testing.assert_allclose(got, x.reshape(1, 2, 2, 2, 2, 2).max(axis=(2, 4)))
    got = value(K.pool2d(K.constant(x), (2, 2), strides=(2, 2), pool_mode="avg"))
    np.testing.assert_allclose(got, x.reshape(1, 2, 2, 2, 2, 2).mean(axis=(2, 4)))
    k = np.arange(2 * 2 * 2 * 3, dtype=np.float32).reshape(2, 2, 2, 3) / 10
    ref = np.zeros((1, 3, 3, 3), np.float32)
    for i in range(3):
        for j in range(3):
            ref[0, i, j] = np.tensordot(x[0, i:i + 2, j:j + 2, :], k, axes=3)
    np.testing.assert_allclose(value(K.conv2d(K.constant(x), K.constant(k))), ref, rtol=1e-5)
    same = value(K.conv2d(K.constant(x), K.constant(k), padding="same"))
    assert same.shape == (1, 4, 4, 3)
    np.testing.assert_allclose(same[:, :3, :3], ref, rtol=1e-5)


def test_creation():
    np.testing.assert_array_equal(value(K.zeros((2, 3))), np.zeros((2, 3), np.float32))
    np.testing.assert_array_equal(value(K.ones((2,), dtype="int64")), np.ones(2, np.int64))
    np.testing.assert_array_equal(value(K.eye(3)), np.eye(3, dtype=np.float32))
    np.testing.assert_array_equal(value(K.arange(5)), np.arange(5, dtype=np.int32))
    np.testing.assert_allclose(value(K.arange(1, 2, 0.25, dtype="float32")),
                               np.arange(1, 2, 0.25, dtype=np.float32))
    like = K.constant(X)
    np.testing.assert_array_equal(value(K.zeros_like(like)), np.zeros_like(X))
    np.testing.assert_array_equal(value(K.ones_like(like, dtype="int32")),
                                  np.ones(X.shape, np.int32))
    np.testing.assert_array_equal(value(K.constant(2.5, shape=(2, 2))), np.full((2, 2), 2.5))
    assert K.constant(1, dtype="int8").dtype == "int8"
    assert K.constant([1.0]).dtype == "float32"  # floatx
    u = value(K.random_uniform_variable((1000,), -2.0, 3.0, seed=3))
    assert u.min() >= -2 and u.max() < 3 and abs(u.mean() - 0.5) < 0.2
    n = value(K.random_normal_variable((4000,), 1.0, 2.0, seed=4))
    assert abs(n.mean() - 1) < 0.15 and abs(n.std() - 2) < 0.15
    np.testing.assert_array_equal(value(K.cast(K.constant([1.7, -2.2]), "int32")), [1, -2])
    np.testing.assert_allclose(value(K.pow(K.constant(P), 1.5)), P ** 1.5, rtol=1e-6)
    np.testing.assert_allclose(value(K.clip(K.constant(X), -1.0, None)), np.clip(X, -1, None))
    np.testing.assert_allclose(value(K.clip(K.constant(X), 0.0, 1.0)), np.clip(X, 0, 1))


def test_float64_and_floatx():
    K.set_floatx("float64")
    assert K.floatx() == "float64"
    assert K.constant([1.0]).dtype == "float64"
    assert K.cast_to_floatx(np.array([1, 2], np.int32)).dtype == np.float64
    K.set_floatx("float32")
    out = K.cast_to_floatx([1.5, 2.5])
    assert out.dtype == np.float32 and out.tolist() == [1.5, 2.5]


def test_config():
    assert K.backend() == "kbackend"
    assert math.isclose(K.epsilon(), 1e-7, rel_tol=1e-6)
    K.set_epsilon(1e-4)
    assert math.isclose(K.epsilon(), 1e-4, rel_tol=1e-6)
    assert K.image_data_format() == "channels_last"
    K.set_image_data_format("channels_first")
    assert K.image_data_format() == "channels_first"
    K.set_image_dim_ordering("tf")
    assert K.image_dim_ordering() == "tf"
    a, b = K.get_uid("dense"), K.get_uid("dense")
    assert b == a + 1
    K.reset_uids()
    assert K.get_uid("dense") == 1
    assert K.version() == K.__version__ and K.abi_version() == 1


def test_num_threads():
    default = K.num_threads()
    assert default >= 1
    x = np.random.default_rng(0).standard_normal((300, 500)).astype(np.float32)
    f = K.function([], [K.softmax(K.constant(x)), K.sum(K.constant(x), axis=-1)])
    K.set_num_threads(1)
    assert K.num_threads() == 1
    one = f([])
    K.set_num_threads(2)
    for a, b in zip(one, f([])):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(Exception, match="set_num_threads"):
        K.set_num_threads(-1)
    K.set_num_threads(0)
    assert K.num_threads() == default


def test_ctc():
    # uniform probabilities: C(4 + 2, 4) = 15 alignments of "0 1" in 4 steps, each 3^-4
    p = np.full((1, 4, 3), 1 / 3, np.float32)
    cost = K.ctc_batch_cost(np.array([[0, 1]], np.int32), p, np.array([[4]], np.int32),
                            np.array([[2]], np.int32))
    np.testing.assert_allclose(value(cost), [[4 * math.log(3) - math.log(15)]], rtol=1e-5)
    # GravesTh fig. 7.5: the beam finds "a" (0.58), the best path is blank blank (0.42)
    g = np.array([[[0.3, 0.7], [0.4, 0.6]]])
    decoded, log_prob = K.ctc_decode(g, np.array([2], np.int32), greedy=False, beam_width=3,
                                     top_paths=2)
    assert [value(d).tolist() for d in decoded] == [[[0]], [[]]]
    np.testing.assert_allclose(value(log_prob), [[math.log(0.58 / 0.42), 0.0]], atol=1e-6)
    decoded, log_prob = K.ctc_decode(g, np.array([2], np.int32))
    assert len(decoded) == 1 and value(decoded[0]).shape == (1, 0)
    np.testing.assert_allclose(value(log_prob), [[-math.log(0.7) - math.log(0.6)]], rtol=1e-6)
