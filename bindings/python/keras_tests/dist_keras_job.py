"""One process of the data-parallel Keras check (test_keras_dist.py runs it under mpirun): an MLP
trained by unmodified Keras 2.2.4 with kbackend.keras_dist on n processes, batch b each, must end
with the weights of the same MLP trained in one process with batch n*b, equal on every process,
though each process drew its own initial weights. Prints "rank R of N: ok" when it holds."""
import os
import sys

import numpy as np

os.environ.setdefault("KERAS_BACKEND", "kbackend.keras_backend")
import keras  # noqa: E402
import kbackend.keras_dist as kd  # noqa: E402
from keras import backend as K  # noqa: E402
from keras.layers import Dense  # noqa: E402
from keras.models import Sequential  # noqa: E402
from keras.optimizers import SGD  # noqa: E402

BATCH, STEPS = 8, 20


def build(seed):
    np.random.seed(seed)
    model = Sequential([Dense(16, activation="tanh", input_shape=(5,)), Dense(3)])
    return model


def main():
    distributed = kd.init(required=sys.argv[1:] != ["optional"])
    rank, size = kd.rank(), kd.size()
    rows = np.random.RandomState(3).normal(size=(STEPS * BATCH * size, 5)).astype(np.float32)
    targets = np.random.RandomState(4).normal(size=(STEPS * BATCH * size, 3)).astype(np.float32)
    x, y = kd.shard(rows, targets)

    model = build(100 + rank)  # a different start on every process
    reference = build(0)
    reference.set_weights(model.get_weights())
    K.dist_broadcast_variables(reference.weights, 0)  # rank 0's start, as the callback will give

    model.compile(kd.DistributedOptimizer(SGD(lr=0.05, momentum=0.9)), "mse")
    history = model.fit(x, y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0,
                        callbacks=[kd.BroadcastGlobalVariablesCallback(0),
                                   kd.MetricAverageCallback()])
    # The one-process run: step j takes every process' j-th batch.
    order = np.concatenate([np.arange(BATCH) + j * BATCH + r * STEPS * BATCH
                            for j in range(STEPS) for r in range(size)])
    reference.compile(SGD(lr=0.05, momentum=0.9), "mse")
    reference.fit(rows[order], targets[order], batch_size=BATCH * size, epochs=1, shuffle=False,
                  verbose=0)

    for i, (got, want) in enumerate(zip(model.get_weights(), reference.get_weights())):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg="weight %d" % i)
        root = K.eval(K.broadcast(K.constant(got), 0))
        assert root.tobytes() == got.tobytes(), "weight %d differs from rank 0's" % i
    loss = history.history["loss"][0]
    assert kd.allreduce(loss, average=True) == loss, "the averaged loss differs between ranks"
    assert isinstance(model.optimizer, SGD) and model.optimizer.__class__.__name__ == "SGD"
    print("rank %d of %d: ok (%s, loss %.6f)" % (rank, size,
                                                "distributed" if distributed else "alone", loss))
    # kd.init leaves the job at exit.


if __name__ == "__main__":
    assert keras.backend.backend() == "kbackend.keras_backend"
    main()
