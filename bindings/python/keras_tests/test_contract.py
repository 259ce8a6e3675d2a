"""Points of docs/keras_contract.md that the training tests do not reach directly."""
import numpy as np
import pytest

keras = pytest.importorskip("keras")
K = keras.backend
from kbackend import keras_backend as KB  # noqa: E402


def test_tensor_attributes_and_errors():
    x = K.placeholder(shape=(None, 3))
    assert x._keras_shape == (None, 3) and x._uses_learning_phase is False
    assert K.int_shape(K.placeholder(ndim=2)) == (None, None)
    with pytest.raises(ValueError):
        K.is_keras_tensor(np.zeros(3))
    assert not K.is_keras_tensor(x)
    v = K.variable(K.constant(2.0, shape=(2, 2)), constraint=None)
    assert v.constraint is None and K.int_shape(v) == (2, 2)
    np.testing.assert_array_equal(K.get_value(v), np.full((2, 2), 2, np.float32))
    assert K.dtype(K.variable(3)) == "float32"
    scipy_sparse = pytest.importorskip("scipy.sparse")
    sparse = K.variable(scipy_sparse.eye(3, format="csr"))  # a sparse variable
    assert K.is_sparse(sparse) and K.int_shape(sparse) == (3, 3)
    np.testing.assert_array_equal(K.eval(K.to_dense(sparse)), np.eye(3))
    with pytest.raises(ValueError):
        K.pool2d(K.placeholder(shape=(1, 4, 4, 1)), (2, 2), pool_mode="median")
    with pytest.raises(ValueError):
        K.conv2d(K.placeholder(shape=(1, 4, 4, 1)), K.zeros((2, 2, 1, 1)), data_format="nhwc")
    with pytest.raises(ValueError):
        K.dropout(x, 1.0)


def test_learning_phase_and_in_train_phase():
    lp = K.learning_phase()
    assert K.is_tensor(lp) and lp is K.learning_phase()
    x = K.placeholder(shape=(2,))
    out = K.in_train_phase(lambda: x * 2, x, training=None)
    assert out._uses_learning_phase
    f = K.function([x, lp], [out], name="f", unknown_kwarg=1)
    np.testing.assert_allclose(f([np.ones(2), 1])[0], [2, 2])
    np.testing.assert_allclose(f([np.ones(2), 0])[0], [1, 1])
    assert K.in_train_phase(1, 2, training=1) == 1 and K.in_test_phase(1, 2, training=1) == 2
    with pytest.raises(ValueError):
        K.set_learning_phase(2)
    # The library's phase is kept by a scope around the test (its pop restores "not fixed"), so
    # later tests (and native models) see the placeholder again.
    KB._c.kb_learning_phase_scope_push(0)
    try:
        K.set_learning_phase(0)
        assert K.learning_phase() == 0
        assert K.in_train_phase(x * 2, x) is x
    finally:
        KB._c.kb_learning_phase_scope_pop()
        KB._learning_phase_value = None  # back to the placeholder for the other tests


def test_function_updates_pairs_and_ops():
    v, w = K.variable(np.zeros(2)), K.variable(np.zeros(2))
    x = K.placeholder(shape=(2,))
    f = K.function([x], [v], updates=[(v, v + x), K.update_add(w, 2 * x)])
    f([np.ones(2, np.float32)])
    np.testing.assert_allclose(K.get_value(v), [1, 1])
    np.testing.assert_allclose(K.get_value(w), [2, 2])
    assert K.pow(K.variable(2.0), K.variable(3.0)).numpy() == pytest.approx(8.0)
    assert K.prod([K.shape(v)[0], K.constant(3, dtype="int32")]).numpy() == 6


def test_switch_and_in_train_phase_choose_without_arithmetic():
    x = K.placeholder(shape=(None, 3))
    lp = K.learning_phase()
    v = np.array([[-1.0, 1.0, 4.0]], np.float32)
    # the branch not taken is not computed: log(-1) = NaN does not leak into the test phase
    out = K.in_train_phase(lambda: K.log(x), x * 2)
    f = K.function([x, lp], [out])
    np.testing.assert_array_equal(f([v, 0])[0], v * 2)
    np.testing.assert_array_equal(f([v, 1])[0][:, 1:], np.log(v[:, 1:]))
    # branches of different shapes under the learning phase (the phase is known per call)
    g = K.function([x, lp], [K.in_test_phase(K.sum(x), x)])
    assert g([v, 0])[0] == pytest.approx(4.0) and g([v, 1])[0].shape == (1, 3)
    # a rank-1 condition picks rows; callables are called; Python conditions pick at once
    c = K.placeholder(shape=(None,), dtype="bool")
    s = K.switch(c, lambda: x, lambda: -x)
    rows = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    np.testing.assert_array_equal(K.function([x, c], [s])([rows, np.array([True, False])])[0],
                                  [[1, 2, 3], [-4, -5, -6]])
    # a scalar tensor condition with a Python number branch (the optimizers' clipnorm)
    n = K.sqrt(K.sum(K.square(x)))
    clipped = K.switch(K.greater_equal(n, 1.0), x / n, x)
    np.testing.assert_allclose(K.function([x], [clipped])([v])[0], v / np.linalg.norm(v),
                               rtol=1e-6)
    assert K.switch(True, lambda: 1, 2) == 1 and K.switch(0, 1, lambda: 2) == 2
    assert K.in_train_phase(3, 4, training=np.int64(0)) == 4


def test_reshape_with_a_tensor_dimension():
    x = K.placeholder(shape=(None, 6))
    y = K.reshape(x, (K.shape(x)[0], 2, 3))  # as keras.layers.Reshape writes it
    v = np.arange(12, dtype=np.float32).reshape(2, 6)
    np.testing.assert_array_equal(K.function([x], [y])([v])[0], v.reshape(2, 2, 3))
    # x's own batch size with -1: the -1 is x's other dims over the given ones
    z = K.reshape(x, (K.shape(x)[0], -1, 3))
    np.testing.assert_array_equal(K.function([x], [z])([v])[0], v.reshape(2, 2, 3))
    # several dims known only when the function runs, as the TensorFlow backend takes them
    w = K.placeholder(shape=(None, None))
    a = K.reshape(w, (K.shape(w)[0], -1, 3))
    assert K.int_shape(a) == (None, None, 3)
    u = np.arange(12, dtype=np.float32).reshape(2, 6)
    np.testing.assert_array_equal(K.function([w], [a])([u])[0], u.reshape(2, 2, 3))
    b = K.reshape(x, (K.shape(x)[0], K.shape(w)[0], 3))
    np.testing.assert_array_equal(K.function([x, w], [b])([v, u])[0], v.reshape(2, 2, 3))


# The TensorFlow backend's functions that are TensorFlow's own business.
_TF_ONLY = {"get_session", "set_session"}


def test_signatures_are_the_tensorflow_backends():
    """Every public function of Keras 2.2.4's TensorFlow backend exists here with the same
    parameter names and defaults (read from its source, which run.sh extracts from the sdist)."""
    import ast
    import inspect
    import os
    source = os.environ.get("KERAS_TF_BACKEND_SOURCE", "")
    if not os.path.isfile(source):
        pytest.skip("the Keras 2.2.4 sdist's tensorflow_backend.py is not available")
    with open(source, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    differences = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
            continue
        if node.name in _TF_ONLY:
            continue
        args, defaults = node.args.args, node.args.defaults
        theirs = [(a.arg, inspect.Parameter.empty) for a in args[:len(args) - len(defaults)]]
        theirs += [(a.arg, ast.literal_eval(d)) for a, d in zip(args[len(args) - len(defaults):],
                                                                defaults)]
        ours = getattr(K, node.name, None)
        if ours is None:
            differences.append("%s: missing" % node.name)
            continue
        params = [(p.name, p.default) for p in inspect.signature(ours).parameters.values()
                  if p.kind is p.POSITIONAL_OR_KEYWORD]
        if params != theirs:
            differences.append("%s: %s, TensorFlow's %s" % (node.name, params, theirs))
    assert not differences, "\n".join(differences)


def test_ints_where_the_backend_documents_tuples():
    """As the TensorFlow backend: 1-tuples for the 1-D functions' ints, an int for a tuple of
    strides or a pool size, NumPy integers, and the padding functions' defaults."""
    x1 = K.variable(np.ones((1, 8, 2), "float32"))
    k1 = K.variable(np.ones((3, 2, 1), "float32"))
    pk1 = K.variable(np.ones((1, 2, 3), "float32"))
    x = K.variable(np.ones((1, 4, 4, 2), "float32"))
    k = K.variable(np.ones((3, 3, 2, 1), "float32"))
    assert K.int_shape(K.conv1d(x1, k1, (1,), dilation_rate=(2,))) == (1, 4, 1)
    assert K.int_shape(K.separable_conv1d(x1, k1, pk1, (2,), dilation_rate=(1,))) == (1, 3, 3)
    assert K.int_shape(K.conv2d(x, k, 1, dilation_rate=np.int64(1))) == (1, 2, 2, 1)
    assert K.int_shape(K.pool2d(x, 2, 2)) == (1, 2, 2, 2)
    assert K.int_shape(K.pool3d(K.zeros((1, 4, 4, 4, 1)), 2, np.int32(2))) == (1, 2, 2, 2, 1)
    assert K.int_shape(K.temporal_padding(x1)) == (1, 10, 2)
    assert K.int_shape(K.spatial_2d_padding(x)) == (1, 6, 6, 2)
    assert K.int_shape(K.spatial_3d_padding(K.zeros((1, 2, 2, 2, 1)))) == (1, 4, 4, 4, 1)
