"""Trains a two-layer MLP (64 -> 64 relu -> 10 softmax) on the bundled 8x8 digits with SGD, using
the kbackend Python binding the way Keras' training loop uses a backend: placeholders, variables,
operators, gradients, (variable, new_value) updates and a compiled function.

Usage: python3 train_mlp.py [examples/data/digits.csv]   (exit status 0 when accuracy > 90%)
"""
import os
import sys

import numpy as np

import kbackend as K

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.join(HERE, "..", "..", "..", "examples", "data", "digits.csv")


def load(path):
    data = np.loadtxt(path, delimiter=",", comments="#", dtype=np.float32)
    return data[:, 1:] / 16.0, data[:, 0].astype(np.int64)


def main(path=DEFAULT_DATA, epochs=30, batch=32, lr=0.5):
    x_all, y_all = load(path)
    rng = np.random.default_rng(42)
    order = rng.permutation(len(x_all))
    n_test = len(x_all) // 5
    test, train = order[:n_test], order[n_test:]
    print("kbackend %s: %d training and %d test digits" % (K.__version__, len(train), len(test)))

    x = K.placeholder(shape=(None, 64), name="x")
    y = K.placeholder(shape=(None, 10), name="y")
    w1 = K.random_normal_variable((64, 64), 0.0, 0.125, seed=1, name="w1")
    b1 = K.zeros((64,), name="b1")
    w2 = K.random_normal_variable((64, 10), 0.0, 0.125, seed=2, name="w2")
    b2 = K.zeros((10,), name="b2")
    hidden = K.relu(K.bias_add(x @ w1, b1))
    probs = K.softmax(K.bias_add(K.dot(hidden, w2), b2))
    loss = K.mean(K.categorical_crossentropy(y, probs))

    params = [w1, b1, w2, b2]
    grads = K.gradients(loss, params)
    updates = [(p, p - lr * g) for p, g in zip(params, grads)]
    train_step = K.function([x, y], [loss], updates=updates)
    predict = K.function([x], [probs])

    eye = np.eye(10, dtype=np.float32)
    for epoch in range(1, epochs + 1):
        rng.shuffle(train)
        losses = []
        for s in range(0, len(train), batch):
            idx = train[s:s + batch]
            losses.append(train_step([x_all[idx], eye[y_all[idx]]])[0])
        if epoch == 1 or epoch % 5 == 0:
            print("epoch %2d  loss %.4f" % (epoch, np.mean(losses)))

    predicted = predict([x_all[test]])[0].argmax(axis=1)
    accuracy = float(np.mean(predicted == y_all[test]))
    print("test accuracy %.2f%% (%d/%d)" % (100 * accuracy, int(np.sum(predicted == y_all[test])),
                                            len(test)))
    return accuracy


if __name__ == "__main__":
    acc = main(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_DATA)
    sys.exit(0 if acc > 0.9 else 2)
