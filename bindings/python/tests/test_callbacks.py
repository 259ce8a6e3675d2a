"""rnn, map_fn, foldl, foldr take Python callables."""
import numpy as np

import kbackend as K


def test_map_fn_and_folds():
    e = np.arange(6, dtype=np.float32).reshape(3, 2)
    np.testing.assert_array_equal(K.map_fn(lambda t: t * t, K.constant(e)).numpy(), e * e)
    np.testing.assert_array_equal(K.map_fn(K.sum, e).numpy(), e.sum(axis=1))
    np.testing.assert_array_equal(K.foldl(lambda a, t: a + t, K.constant(e)).numpy(), e.sum(0))
    np.testing.assert_array_equal(
        K.foldr(lambda a, t: a * 2 + t, K.constant(e), initializer=K.zeros((2,))).numpy(),
        (e[0] + 2 * (e[1] + 2 * e[2])))


def test_rnn_matches_a_numpy_loop():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, 5, 3)).astype(np.float32)
    w = rng.normal(size=(3, 4)).astype(np.float32)
    u = rng.normal(size=(4, 4)).astype(np.float32) * 0.5
    bias = np.float32(0.25)

    def step(inp, states):
        assert len(states) == 2  # the state, then the constant
        h = K.tanh(K.dot(inp, K.constant(w)) + K.dot(states[0], K.constant(u)) + states[1])
        return h, [h]

    inputs = K.placeholder(shape=(None, 5, 3))
    last, outputs, states = K.rnn(step, inputs, [K.zeros((2, 4))],
                                  constants=[K.constant(bias)])
    f = K.function([inputs], [last, outputs, states[0]])
    got_last, got_outputs, got_state = f([x])
    h = np.zeros((2, 4), np.float32)
    ref = []
    for t in range(5):
        h = np.tanh(x[:, t] @ w + h @ u + bias)
        ref.append(h)
    np.testing.assert_allclose(got_outputs, np.stack(ref, axis=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_last, h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_state, h, rtol=1e-5, atol=1e-6)


def test_rnn_backwards_unrolled():
    x = np.arange(12, dtype=np.float32).reshape(1, 4, 3)

    def step(inp, states):
        s = states[0] * 10 + inp
        return s, [s]

    last, outputs, _ = K.rnn(step, K.constant(x), [K.zeros((1, 3))], go_backwards=True,
                             unroll=True)
    ref = np.zeros((1, 3), np.float32)
    for t in reversed(range(4)):
        ref = ref * 10 + x[:, t]
    np.testing.assert_allclose(last.numpy(), ref)
    assert outputs.shape == (1, 4, 3)


def test_rnn_step_errors():
    x = K.constant(np.ones((1, 2, 3)))
    try:
        K.rnn(lambda i, s: (i, "no list"), x, [K.zeros((1, 3))])
    except TypeError as e:
        assert "not a tensor" in str(e) or "sequence" in str(e)
    else:
        raise AssertionError("a bad new_states must raise")
