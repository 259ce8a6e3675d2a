"""ctc_batch_cost and ctc_decode (docs/keras_semantics.md section 12) against NumPy.

The loss is checked against two independent references: the CTC forward recursion in
probability space with per-step scaling, and brute-force enumeration of every alignment (tiny
T and C); plus the closed form for uniform probabilities (C(T + L, 2L) alignments of a label
of L distinct symbols). Gradients by central finite differences in float64. Decoding: greedy and
beam search on inputs whose answer is known, beam search against the exact prefix
probabilities by enumeration (a beam wider than the number of prefixes prunes nothing), top
paths in order, beam_width 1 against greedy. Bad input: build-time and run-time errors.
"""
import ctypes
import itertools
import math
from ctypes import c_void_p

import numpy as np
import pytest

import kb
from kb import F32, F64, Tensor, const, op

lib = kb.lib

NP = {F32: np.float32, F64: np.float64}


# ---- the functions under test ----------------------------------------------------------------
def ctc_batch_cost(y_true, y_pred, input_length, label_length):
    return op("ctc_batch_cost", y_true, y_pred, input_length, label_length)


def ctc_decode(y_pred, input_length, greedy=True, beam_width=100, top_paths=1):
    """Returns (list of decoded tensors, log_prob tensor)."""
    lst, lp = c_void_p(), c_void_p()
    kb.check(lib.kb_ctc_decode(y_pred, input_length, int(greedy), beam_width, top_paths,
                               ctypes.byref(lst), ctypes.byref(lp)))
    return kb.list_items(lst.value), Tensor(lp.value)


def decode_values(probs, lengths, greedy=True, beam_width=100, top_paths=1, mode="const"):
    """Evaluates ctc_decode; returns (list of int64 arrays, log_prob array)."""
    probs, lengths = np.asarray(probs), np.asarray(lengths)
    ts, feeds = kb.feed_tensors([probs, lengths], mode)
    decoded, lp = ctc_decode(ts[0], ts[1], greedy, beam_width, top_paths)
    res = kb.run(decoded + [lp], feeds)
    return res[:-1], res[-1]


def cost_values(y_true, probs, input_length, label_length, mode="const"):
    arrays = [np.asarray(a) for a in (y_true, probs, input_length, label_length)]
    ts, feeds = kb.feed_tensors(arrays, mode)
    return kb.run(ctc_batch_cost(*ts), feeds)


# ---- NumPy references ------------------------------------------------------------------------
def effective_probs(p, eps):
    """What TensorFlow's ctc_loss sees: softmax(log(p + eps)) = (p + eps) / sum(p + eps)."""
    q = np.asarray(p, np.float64) + eps
    return q / q.sum(-1, keepdims=True)


def label_seq(row, n, classes):
    """TensorFlow's label sequence: the first n labels, cut at the first label >= blank."""
    out = []
    for v in row[:n]:
        if v >= classes - 1:
            break
        out.append(int(v))
    return out


def ref_nll_recursion(label, probs):
    """-log p(label | probs) by the CTC forward recursion in probability space, rescaled at
    every step. probs (T, C), already normalized."""
    steps, classes = probs.shape
    blank = classes - 1
    lp = [blank]
    for v in label:
        lp += [v, blank]
    lp = np.array(lp)
    u = len(lp)
    skip = np.zeros(u, bool)
    for i in range(2, u):
        skip[i] = lp[i] != blank and lp[i] != lp[i - 2]
    alpha = np.zeros(u)
    alpha[0] = probs[0, blank]
    if u > 1:
        alpha[1] = probs[0, lp[1]]
    log_scale = 0.0
    for t in range(steps):
        if t > 0:
            new = alpha.copy()
            new[1:] += alpha[:-1]
            new[2:] += np.where(skip[2:], alpha[:-2], 0.0)
            alpha = new * probs[t, lp]
        s = alpha.sum()
        if s == 0:
            return math.inf
        log_scale += math.log(s)
        alpha = alpha / s
    end = alpha[-1] + (alpha[-2] if u > 1 else 0.0)
    return math.inf if end == 0 else -(log_scale + math.log(end))


def collapse(path, blank, merge_blank_separated=False):
    """Best-path collapse: merge repeats, drop blanks."""
    out, prev = [], None
    for c in path:
        if c != blank and c != prev:
            out.append(int(c))
        prev = c
    return out


def labelling_probs(probs):
    """Exact probability of every labelling by enumerating all C^T paths."""
    steps, classes = probs.shape
    table = {}
    for path in itertools.product(range(classes), repeat=steps):
        pr = np.prod(probs[np.arange(steps), path])
        key = tuple(collapse(path, classes - 1))
        table[key] = table.get(key, 0.0) + pr
    return table


def ref_nll_brute(label, probs):
    p = labelling_probs(probs).get(tuple(label), 0.0)
    return math.inf if p == 0 else -math.log(p)


def merged(seq):
    """The beam decoder's merge_repeated: consecutive equal labels of a prefix collapse."""
    return [v for i, v in enumerate(seq) if i == 0 or seq[i - 1] != v]


def dense(seqs):
    """Label sequences as TensorFlow's dense decoding: as wide as the longest, padded with -1."""
    width = max((len(q) for q in seqs), default=0)
    out = np.full((len(seqs), width), -1, np.int64)
    for i, q in enumerate(seqs):
        out[i, :len(q)] = q
    return out


def random_probs(rng, shape, peaked=1.0):
    z = rng.standard_normal(shape) * peaked
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


# ==== ctc_batch_cost =============================================================================
def test_cost_matches_both_references(dt, mode, rng):
    eps = kb.epsilon()
    b, steps, classes = 4, 5, 3
    probs = random_probs(rng, (b, steps, classes)).astype(NP[dt])
    # variable input and label lengths, a repeated label (needs a blank between), padding
    # beyond label_length that must be ignored
    y_true = np.array([[0, 1, 0], [1, 1, 7], [0, 0, 0], [1, 9, 9]], np.int32)
    label_length = np.array([[3], [2], [1], [1]], np.int32)
    input_length = np.array([[5], [4], [3], [1]], np.int32)
    got = cost_values(y_true, probs, input_length, label_length, mode)
    assert got.shape == (b, 1) and got.dtype == NP[dt]
    want_rec, want_brute = [], []
    for i in range(b):
        q = effective_probs(probs[i, :input_length[i, 0]], eps)
        lab = label_seq(y_true[i], label_length[i, 0], classes)
        want_rec.append(ref_nll_recursion(lab, q))
        want_brute.append(ref_nll_brute(lab, q))
    np.testing.assert_allclose(want_rec, want_brute, rtol=1e-10)
    kb.assert_close(got[:, 0], want_rec, dt, rtol=2e-5 if dt == F32 else 1e-10)


@pytest.mark.parametrize("steps,label", [(1, [0]), (4, [0, 1]), (6, [2, 0, 1]), (9, [1, 2, 3, 0])])
def test_cost_uniform_closed_form(steps, label, dt):
    classes = 5
    probs = np.full((1, steps, classes), 1.0 / classes, NP[dt])
    got = cost_values(np.array([label], np.int32), probs, [[steps]], [[len(label)]])
    n = len(label)
    want = steps * math.log(classes) - math.log(math.comb(steps + n, 2 * n))
    kb.assert_close(got[:, 0], [want], dt, rtol=1e-6 if dt == F32 else 1e-12)


def test_cost_repeats_need_blanks():
    # 'a a' in 2 steps has no alignment (TensorFlow: +inf); in 3 steps exactly one (a - a).
    probs = np.full((2, 3, 3), 1.0 / 3)
    got = cost_values(np.array([[0, 0], [0, 0]]), probs, [[2], [3]], [[2], [2]])
    assert got[0, 0] == np.inf
    np.testing.assert_allclose(got[1, 0], 3 * math.log(3), rtol=1e-12)


def test_cost_label_dtypes_and_terminator(rng):
    probs = random_probs(rng, (2, 6, 4))
    eps = kb.epsilon()
    labels_f = np.array([[2.0, 0.0, 1.0], [1.0, 3.0, 5.0]])  # 3 = blank ends the sequence
    got_f = cost_values(labels_f, probs, [[6], [6]], [[3], [3]])
    got_i = cost_values(labels_f.astype(np.int64), probs, [[6], [6]], [[3], [3]])
    want = [ref_nll_recursion([2, 0, 1], effective_probs(probs[0], eps)),
            ref_nll_recursion([1], effective_probs(probs[1], eps))]
    np.testing.assert_allclose(got_f[:, 0], want, rtol=1e-10)
    np.testing.assert_allclose(got_i[:, 0], want, rtol=1e-10)
    # lengths may be float (Keras casts them to int32)
    got = cost_values(labels_f, probs, np.array([[6.0], [6.0]]), np.array([[3.0], [3.0]]))
    np.testing.assert_allclose(got[:, 0], want, rtol=1e-10)


def test_cost_epsilon_is_added(rng):
    # A zero probability stays finite: log(0 + eps).
    probs = np.zeros((1, 3, 3))
    probs[0, :, 2] = 1.0
    old = kb.epsilon()
    kb.check(lib.kb_set_epsilon(1e-3))
    got = cost_values(np.array([[0]]), probs, [[3]], [[1]])
    want = ref_nll_recursion([0], effective_probs(probs[0], 1e-3))
    kb.check(lib.kb_set_epsilon(old))
    np.testing.assert_allclose(got[0, 0], want, rtol=1e-10)
    assert np.isfinite(got[0, 0])


def test_cost_long_sequence_is_stable(rng):
    # Probabilities of 1e-300 and below: the log-space recursion must stay finite.
    steps, classes = 400, 6
    probs = random_probs(rng, (2, steps, classes), peaked=3.0)
    y_true = rng.integers(0, classes - 1, (2, 50))
    got = cost_values(y_true, probs, [[steps], [300]], [[50], [40]])
    eps = kb.epsilon()
    want = [ref_nll_recursion(list(y_true[0]), effective_probs(probs[0], eps)),
            ref_nll_recursion(list(y_true[1, :40]), effective_probs(probs[1, :300], eps))]
    assert np.all(np.isfinite(got)) and got.min() > 300
    np.testing.assert_allclose(got[:, 0], want, rtol=1e-9)


def test_cost_shapes_with_unknown_batch():
    y = kb.placeholder([-1, 4], kb.I32)
    p = kb.placeholder([-1, 7, 5], F32)
    n = kb.placeholder([-1, 1], kb.I32)
    assert ctc_batch_cost(y, p, n, n).shape == (None, 1)
    assert ctc_batch_cost(y, p, n, n).dtype == F32


def fd_gradient(f, x, h=1e-6):
    g = np.zeros_like(x)
    for j in range(x.size):
        xp, xm = x.copy(), x.copy()
        xp.flat[j] += h
        xm.flat[j] -= h
        g.flat[j] = (f(xp) - f(xm)) / (2 * h)
    return g


def test_cost_gradient_finite_differences(rng):
    b, steps, classes = 3, 5, 4
    probs = random_probs(rng, (b, steps, classes))
    y_true = np.array([[1, 1, 0], [2, 0, 0], [0, 2, 1]], np.int32)
    il = np.array([[5], [3], [5]], np.int32)
    ll = np.array([[2], [1], [3]], np.int32)
    w = np.array([[0.7], [-1.3], [2.0]])
    p = kb.placeholder([b, steps, classes], F64)
    cost = ctc_batch_cost(const(y_true), p, const(il), const(ll))
    loss = op("sum", op("multiply", cost, const(w)), None, 0, 0)
    grad = kb.gradients(loss, [p])[0]
    g, = kb.Function([p], [grad])(probs)
    loss_f = kb.Function([p], [loss])
    fd = fd_gradient(lambda x: loss_f(x)[0], probs)
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-7)
    # steps past input_length get no gradient
    assert np.all(g[1, 3:] == 0)


def test_cost_gradient_float32_and_unknown_batch(rng):
    probs = random_probs(rng, (2, 4, 3))
    p = kb.placeholder([-1, 4, 3], F32)
    y = kb.placeholder([-1, 2], kb.I32)
    n_in = kb.placeholder([-1, 1], kb.I32)
    n_lab = kb.placeholder([-1, 1], kb.I32)
    cost = ctc_batch_cost(y, p, n_in, n_lab)
    grad = kb.gradients(op("sum", cost, None, 0, 0), [p])[0]
    args = [probs.astype(np.float32), np.array([[0, 1], [1, 0]], np.int32),
            np.array([[4], [3]], np.int32), np.array([[2], [1]], np.int32)]
    g32, = kb.Function([p, y, n_in, n_lab], [grad])(*args)
    p64 = kb.placeholder([-1, 4, 3], F64)
    cost64 = ctc_batch_cost(y, p64, n_in, n_lab)
    grad64 = kb.gradients(op("sum", cost64, None, 0, 0), [p64])[0]
    g64, = kb.Function([p64, y, n_in, n_lab], [grad64])(probs, *args[1:])
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, g64, rtol=1e-4, atol=1e-5)


def test_cost_no_second_derivative(rng):
    probs = random_probs(rng, (1, 3, 3))
    p = kb.placeholder([1, 3, 3], F64)
    cost = ctc_batch_cost(const(np.array([[0]])), p, const(np.array([[3]])),
                          const(np.array([[1]])))
    g = kb.gradients(op("sum", cost, None, 0, 0), [p])[0]
    with pytest.raises(kb.KBError) as e:
        kb.gradients(op("sum", op("square", g), None, 0, 0), [p])
    assert e.value.status == 4 and "no second derivative" in e.value.message
    assert kb.Function([p], [g])(probs)[0].shape == (1, 3, 3)


def test_cost_no_gradient_to_labels(rng):
    probs = random_probs(rng, (1, 3, 3))
    yt = kb.placeholder([1, 1], F64)
    cost = ctc_batch_cost(yt, const(probs), const(np.array([[3]])), const(np.array([[1]])))
    g = kb.gradients(op("sum", cost, None, 0, 0), [yt])[0]
    np.testing.assert_array_equal(kb.Function([yt], [g])(np.array([[1.0]]))[0], [[0.0]])


# ==== ctc_decode =================================================================================
def test_greedy_hand_made(dt, mode):
    # argmax per step (blank = 3): a a - b b - - a | b - b
    am = [[0, 0, 3, 1, 1, 3, 3, 0], [1, 3, 1, 2, 2, 2, 0, 0]]
    probs = np.full((2, 8, 4), 0.1)
    for b in range(2):
        for t in range(8):
            probs[b, t, am[b][t]] = 0.7
    probs = probs.astype(NP[dt])
    decoded, lp = decode_values(probs, np.array([8, 4], np.int32), mode=mode)
    assert len(decoded) == 1
    d = decoded[0]
    assert d.dtype == np.int64 and d.shape == (2, 3)  # as wide as the longest sequence
    np.testing.assert_array_equal(d, [[0, 1, 0], [1, 1, 2]])
    decoded, _ = decode_values(probs, np.array([2, 1], np.int32), mode=mode)
    np.testing.assert_array_equal(decoded[0], [[0], [1]])
    decoded, _ = decode_values(probs, np.array([2, 3], np.int32), mode=mode)
    np.testing.assert_array_equal(decoded[0], [[0, -1], [1, 1]])
    decoded, _ = decode_values(probs, np.array([2, 4], np.int32), mode=mode)
    np.testing.assert_array_equal(decoded[0], [[0, -1, -1], [1, 1, 2]])
    eps = kb.epsilon()
    want = [-8 * math.log(0.7 + eps), -4 * math.log(0.7 + eps)]
    assert lp.shape == (2, 1) and lp.dtype == NP[dt]
    kb.assert_close(lp[:, 0], want, dt, rtol=1e-6 if dt == F32 else 1e-12)
    assert np.all(lp >= 0)


def test_greedy_against_numpy(rng):
    probs = random_probs(rng, (5, 9, 4))
    lengths = np.array([9, 0, 4, 7, 1], np.int32)
    decoded, lp = decode_values(probs, lengths)
    logits = np.log(probs + kb.epsilon())
    seqs = [collapse(np.argmax(logits[b, :lengths[b]], -1), 3) for b in range(5)]
    np.testing.assert_array_equal(decoded[0], dense(seqs))
    for b in range(5):
        np.testing.assert_allclose(lp[b, 0], -logits[b, :lengths[b]].max(-1).sum(), rtol=1e-12)


def test_beam_graves_example(dt):
    # GravesTh fig. 7.5: P(a) = 0.58 beats the best path '--' (0.42).
    probs = np.array([[[0.3, 0.7], [0.4, 0.6]]], NP[dt])
    n = np.array([2], np.int32)
    decoded, lp = decode_values(probs, n)
    assert decoded[0].shape == (1, 0)  # the best path is blank blank
    decoded, lp = decode_values(probs, n, greedy=False, beam_width=4, top_paths=2)
    np.testing.assert_array_equal(decoded[0], [[0]])
    assert decoded[1].shape == (1, 0) and decoded[1].dtype == np.int64
    e = kb.epsilon()
    q = probs.astype(np.float64) + e
    offset = math.log(q[0, 0, 1]) + math.log(q[0, 1, 1])
    p_a = q[0, 0, 0] * q[0, 1, 0] + q[0, 0, 0] * q[0, 1, 1] + q[0, 0, 1] * q[0, 1, 0]
    p_blank = q[0, 0, 1] * q[0, 1, 1]
    want = [math.log(p_a) - offset, math.log(p_blank) - offset]
    assert lp.shape == (1, 2)
    kb.assert_close(lp[0], want, dt, rtol=1e-6 if dt == F32 else 1e-12, atol=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_beam_against_enumeration(seed, dt, mode):
    rng = np.random.default_rng(seed)
    b, steps, classes = 3, 4, 3
    probs = random_probs(rng, (b, steps, classes), peaked=1.5).astype(NP[dt])
    lengths = np.array([4, 3, 2], np.int32)
    top = 3
    decoded, lp = decode_values(probs, lengths, greedy=False, beam_width=64, top_paths=top,
                                mode=mode)
    assert len(decoded) == top and lp.shape == (b, top)
    q = probs.astype(np.float64) + kb.epsilon()
    want = [[None] * b for _ in range(top)]
    for i in range(b):
        n = lengths[i]
        table = labelling_probs(q[i, :n])
        ranked = sorted(table.items(), key=lambda kv: -kv[1])[:top]
        offset = np.log(q[i, :n]).max(-1).sum()
        for k, (seq, pr) in enumerate(ranked):
            want[k][i] = merged(list(seq))
            np.testing.assert_allclose(lp[i, k], math.log(pr) - offset,
                                       rtol=1e-5 if dt == F32 else 1e-10,
                                       atol=1e-6 if dt == F32 else 1e-12)
        assert np.all(np.diff(lp[i]) <= 0)  # best first
    for k in range(top):
        np.testing.assert_array_equal(decoded[k], dense(want[k]))


def test_beam_merges_repeats_greedy_does_not():
    # best path a - a: greedy keeps both, the beam output merges the prefix 'a a' to 'a'.
    probs = np.full((1, 3, 3), 0.02)
    for t, c in enumerate([0, 2, 0]):
        probs[0, t, c] = 0.96
    n = np.array([3], np.int32)
    g, _ = decode_values(probs, n)
    bm, _ = decode_values(probs, n, greedy=False, beam_width=8, top_paths=1)
    np.testing.assert_array_equal(g[0], [[0, 0]])
    np.testing.assert_array_equal(bm[0], [[0]])


def test_beam_width_one_agrees_with_greedy(rng):
    # Peaked distributions whose best paths have no label repeated across a blank.
    b, steps, classes = 4, 10, 5
    probs = np.full((b, steps, classes), 0.05)
    for i in range(b):
        last = None
        for t in range(steps):
            c = int(rng.integers(0, classes))
            while c != classes - 1 and c == last:
                c = int(rng.integers(0, classes))
            if c != classes - 1:
                last = c
            probs[i, t, c] = 0.8
    lengths = np.array([10, 7, 3, 10], np.int32)
    g, g_lp = decode_values(probs, lengths)
    bm, b_lp = decode_values(probs, lengths, greedy=False, beam_width=1, top_paths=1)
    np.testing.assert_array_equal(g[0], bm[0])
    # greedy: -sum_t max log(p + eps) > 0; the beam score sums over alignments instead
    logits = np.log(probs + kb.epsilon())
    want = [-logits[i, :lengths[i]].max(-1).sum() for i in range(b)]
    np.testing.assert_allclose(g_lp[:, 0], want, rtol=1e-12)
    assert np.all(g_lp > 0) and not np.allclose(b_lp, -g_lp)


def test_beam_fewer_prefixes_than_top_paths():
    probs = np.full((1, 2, 2), 0.5)
    # input_length 0: only the empty prefix
    with pytest.raises(kb.KBError) as e:
        decode_values(probs, np.array([0], np.int32), greedy=False, beam_width=4, top_paths=2)
    assert e.value.status == 1 and "ctc_decode: " in e.value.message
    decoded, lp = decode_values(probs, np.array([0], np.int32), greedy=False, beam_width=4)
    assert decoded[0].shape == (1, 0)
    np.testing.assert_array_equal(lp, [[0.0]])


def test_decode_unknown_batch_shapes():
    p = kb.placeholder([-1, 6, 4], F64)
    n = kb.placeholder([-1], kb.I32)
    decoded, lp = ctc_decode(p, n, greedy=False, beam_width=5, top_paths=2)
    assert [d.shape for d in decoded] == [(None, None), (None, None)]
    assert all(d.dtype == kb.I64 for d in decoded)
    assert lp.shape == (None, 2) and lp.dtype == F64
    decoded, lp = ctc_decode(p, n)
    assert len(decoded) == 1 and lp.shape == (None, 1)


# ==== bad input ==================================================================================
def test_cost_build_errors():
    p = const(np.full((2, 5, 3), 1 / 3, np.float32))
    y = const(np.zeros((2, 2), np.int32))
    n = const(np.full((2, 1), 2, np.int32))
    cases = [
        (y, const(np.ones((2, 5), np.float32)), n, n, 2, "rank 3"),
        (const(np.zeros((2,), np.int32)), p, n, n, 2, "y_true must have rank 2"),
        (const(np.zeros((3, 2), np.int32)), p, n, n, 2, "batch sizes"),
        (y, p, const(np.full((3, 1), 2, np.int32)), n, 2, "batch sizes"),
        (y, p, n, const(np.full((2,), 2, np.int32)), 2, "label_length must have shape"),
        (y, p, const(np.full((2, 2), 2, np.int32)), n, 2, "input_length must have shape"),
        (y, const(np.ones((2, 5, 3), np.int32)), n, n, 3, "float32 or float64"),
        (const(np.zeros((2, 2), np.bool_)), p, n, n, 3, "numeric"),
    ]
    for args in cases:
        st, msg = kb.status_of("ctc_batch_cost", *args[:4])
        assert st == args[4], msg
        assert msg.startswith("ctc_batch_cost: ") and args[5] in msg, msg


@pytest.mark.parametrize("y_true,il,ll,text", [
    ([[0, 1], [1, 0]], [[5], [6]], [[2], [2]], "input_length[1] = 6 is outside [0, 5]"),
    ([[0, 1], [1, 0]], [[5], [-1]], [[2], [1]], "input_length[1] = -1"),
    ([[0, 1], [1, 0]], [[5], [5]], [[2], [3]], "label_length[1] = 3 exceeds"),
    ([[0, 1], [1, 0]], [[5], [5]], [[-2], [2]], "label_length[0] = -2 is negative"),
    ([[0, 1], [1, 0]], [[5], [5]], [[0], [2]], "label_length[0] is 0"),
    ([[0, 1], [1, 0]], [[1], [5]], [[2], [2]], "is shorter than label_length[0] = 2"),
    ([[0, -1], [1, 0]], [[5], [5]], [[2], [2]], "y_true[0, 1] = -1 is negative"),
    ([[2, 1], [1, 0]], [[5], [5]], [[2], [2]], "follows a label >= the blank"),
])
def test_cost_run_errors(y_true, il, ll, text, mode):
    probs = np.full((2, 5, 3), 1 / 3)
    with pytest.raises(kb.KBError) as e:
        cost_values(np.array(y_true, np.int32), probs, np.array(il, np.int32),
                    np.array(ll, np.int32), mode)
    assert e.value.status == 1
    assert "ctc_batch_cost: " in e.value.message and text in e.value.message, e.value.message


def test_decode_errors():
    p = const(np.full((2, 5, 3), 1 / 3, np.float32))
    n = const(np.array([5, 5], np.int32))

    def status(y_pred, lengths, greedy, width, top):
        lst, lp = c_void_p(), c_void_p()
        st = lib.kb_ctc_decode(y_pred, lengths, greedy, width, top, ctypes.byref(lst),
                               ctypes.byref(lp))
        assert lst.value is None and lp.value is None  # untouched
        return st, lib.kb_last_error_message().decode()

    cases = [
        (p, n, 0, 2, 3, 1, "top_paths (3) must not exceed beam_width (2)"),
        (p, n, 0, 0, 1, 1, "beam_width must be at least 1"),
        (p, n, 0, -3, 1, 1, "beam_width must be at least 1"),
        (p, n, 0, 5, 0, 1, "top_paths must be at least 1"),
        (const(np.ones((2, 5), np.float32)), n, 1, 1, 1, 2, "rank 3"),
        (p, const(np.array([[5], [5]], np.int32)), 1, 1, 1, 2, "input_length must have shape"),
        (p, const(np.array([5, 5, 5], np.int32)), 1, 1, 1, 2, "batch sizes"),
        (None, n, 1, 1, 1, 1, "y_pred is NULL"),
        (p, None, 1, 1, 1, 1, "input_length is NULL"),
    ]
    for y_pred, lengths, greedy, width, top, want, text in cases:
        st, msg = status(y_pred, lengths, greedy, width, top)
        assert st == want, msg
        assert msg.startswith("ctc_decode: ") and text in msg, msg
    # greedy ignores beam_width and top_paths
    decoded, _ = ctc_decode(p, n, greedy=True, beam_width=0, top_paths=7)
    assert len(decoded) == 1


@pytest.mark.parametrize("greedy", [True, False])
def test_decode_run_errors(greedy, mode):
    probs = np.full((2, 4, 3), 1 / 3)
    for lengths, text in [([4, 5], "input_length[1] = 5 is outside [0, 4]"),
                          ([-1, 2], "input_length[0] = -1")]:
        with pytest.raises(kb.KBError) as e:
            decode_values(probs, np.array(lengths, np.int32), greedy, 3, 1, mode)
        assert e.value.status == 1 and "ctc_decode: " in e.value.message
        assert text in e.value.message, e.value.message
