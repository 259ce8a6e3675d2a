"""Compiled functions, updates, gradients, variables, scopes."""
import numpy as np
import pytest

import kbackend as K


def test_function_returns_lists_of_arrays():
    x = K.placeholder(shape=(None, 3))
    y = K.placeholder(shape=(None, 3), dtype="float64")
    f = K.function([x, y], [K.sum(x * 2, axis=1), K.cast(y, "float32") + x], name="f")
    a = np.arange(6).reshape(2, 3)  # int64: converted to each placeholder's dtype
    out = f([a, a])
    assert isinstance(out, list) and len(out) == 2
    np.testing.assert_array_equal(out[0], a.sum(axis=1) * 2)
    assert out[0].dtype == np.float32 and out[1].dtype == np.float32
    np.testing.assert_array_equal(out[1], 2 * a)
    assert f.device == "cpu" or f.device.startswith("cuda:")


def test_list_devices():
    devices = K.list_devices()
    cpu = [d for d in devices if d["kind"] == "cpu"]
    assert len(cpu) == 1 and cpu[0]["index"] == 0
    assert cpu[0]["name"] and cpu[0]["memory"] > 2**26
    assert len(devices) - 1 == K.devices()["cuda"]
    for d in devices[1:]:
        assert d["kind"] == "cuda" and d["name"] and d["memory"] > 0


def test_updates_as_pairs_and_ops():
    v = K.variable(np.zeros(2), name="v")
    w = K.variable(np.ones(2), name="w")
    x = K.placeholder(shape=(2,))
    f = K.function([x], [v + 0.0], updates=[(v, v + x), K.update_sub(w, x)])
    f([np.array([1.0, 2.0])])
    f([np.array([1.0, 2.0])])
    np.testing.assert_array_equal(K.get_value(v), [2.0, 4.0])
    np.testing.assert_array_equal(K.eval(w), [-1.0, -3.0])
    g = K.function([], [], updates=[K.update_add(v, K.constant([0.5, 0.5])),
                                    K.update(w, K.zeros((2,)))])
    assert g([]) == []
    np.testing.assert_array_equal(K.get_value(v), [2.5, 4.5])
    np.testing.assert_array_equal(K.get_value(w), [0.0, 0.0])


def test_gradients():
    x = K.variable(np.array([1.0, -2.0, 3.0]))
    w = K.variable(np.array([2.0, 2.0, 2.0]))
    unused = K.variable(np.array([5.0]))
    loss = K.sum(K.square(x) * w)
    grads = K.gradients(loss, [x, w, unused])
    assert None not in grads and len(grads) == 3
    np.testing.assert_allclose(grads[0].numpy(), 2 * np.array([1, -2, 3]) * 2)
    np.testing.assert_allclose(grads[1].numpy(), np.square([1, -2, 3]))
    np.testing.assert_array_equal(grads[2].numpy(), [0.0])  # not connected
    stopped = K.gradients(K.sum(K.stop_gradient(x) * x), [x])[0]
    np.testing.assert_allclose(stopped.numpy(), [1.0, -2.0, 3.0])
    assert isinstance(K.stop_gradient([x, w]), list)


def test_variables_values():
    v = K.variable([[1, 2], [3, 4]], dtype="float64", name="m")
    assert v.dtype == "float64" and "m" in v.name and v.constraint is None
    K.set_value(v, np.full((2, 2), 7))
    np.testing.assert_array_equal(K.get_value(v), np.full((2, 2), 7.0))
    a, b = K.variable(np.zeros(3)), K.variable(np.zeros(1), dtype="int32")
    K.batch_set_value([(a, [1, 2, 3]), (b, [9])])
    va, vb = K.batch_get_value([a, b])
    np.testing.assert_array_equal(va, [1, 2, 3])
    assert vb.dtype == np.int32 and vb.tolist() == [9]
    assert K.batch_get_value([]) == []
    t = K.variable(K.ones((2,)) * 3)  # from a tensor, as Keras initializers do
    np.testing.assert_array_equal(K.get_value(t), [3.0, 3.0])
    c = K.variable(1.0, constraint=abs)
    assert c.constraint is abs and c.shape == ()
    m = K.variable(np.array([1.0, 1.0]))
    p = K.placeholder(shape=(2,))
    step = K.function([p], [], updates=[K.moving_average_update(m, p, 0.5)])
    step([np.array([3.0, 5.0])])  # zero-debiased, as TensorFlow: the first value itself
    np.testing.assert_allclose(K.get_value(m), [3.0, 5.0])
    step([np.array([1.0, 1.0])])
    np.testing.assert_allclose(K.get_value(m), np.array([1.25, 1.75]) / 0.75, rtol=1e-6)


def test_learning_phase_and_scopes():
    lp = K.learning_phase()
    assert isinstance(lp, K.Tensor)
    with K.name_scope("block"):
        t = K.constant([1.0], name="c")
    assert t.name.startswith("block/")
    with K.learning_phase_scope(1):
        pass
    with pytest.raises(ValueError):
        K.set_learning_phase(2)


def test_print_tensor_goes_to_the_python_sink():
    lines = []
    K.set_print_sink(lines.append)
    try:
        x = K.placeholder(shape=(2,))
        f = K.function([x], [K.print_tensor(x * 2, message="value: ")])
        np.testing.assert_array_equal(f([np.array([1.0, 2.0])])[0], [2.0, 4.0])
    finally:
        K.set_print_sink(None)
    assert len(lines) == 1 and lines[0].startswith("value: ")
    with pytest.raises(TypeError):
        K.set_print_sink(3)


def test_single_output_and_tensor_inputs():
    x = K.placeholder(shape=(2,))
    f = K.function([x], x + 1)
    np.testing.assert_array_equal(f([np.zeros(2)]), [1.0, 1.0])
    np.testing.assert_array_equal(f([K.constant([1.0, 1.0])]), [2.0, 2.0])
